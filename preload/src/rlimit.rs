//! Address-space limits (`RLIMIT_AS`, `RLIMIT_DATA`) set by the program: libpos's own
//! mappings are not charged to it.
//!
//! libpos reserves address space the program never has natively: its private heap (16 GiB,
//! `MAP_NORESERVE`, see [`crate::alloc`]), the run's journal, libpos.so itself, its hidden
//! thread's stack and the malloc arenas its own allocations open. A program that limits itself, say
//! `setrlimit(RLIMIT_AS, 256 MiB)`, was then over its limit at once under poscheck: its next
//! `pthread_create` failed with `EAGAIN` and the run was reported as a bug that never
//! happens natively. Here a limit the program sets is raised by what libpos holds, and the
//! program reads back the value it set.

use std::sync::atomic::{AtomicU64, Ordering};

/// The limits this process set through us: per resource (0: `RLIMIT_AS`, 1: `RLIMIT_DATA`)
/// the kernel's (cur, max) and the program's (cur, max); all zero if none.
static SET: [[AtomicU64; 4]; 2] = [const { [const { AtomicU64::new(0) }; 4] }; 2];

/// The hidden thread's stack (2 MiB, with its guard page: `standalone::spawn_hidden`).
const HIDDEN_STACK: u64 = (2 << 20) + 4096;

/// One glibc malloc arena's reservation (`HEAP_MAX_SIZE` on 64-bit).
const ARENA: u64 = 64 << 20;

/// What `/proc/self/maps` does not tell apart from the program's own mappings: the hidden
/// thread's stack, and the malloc arenas libpos's allocations may open. The hidden thread
/// and the threads' start records no longer open any (they use libpos's private region and
/// static slots), but a start record past the slots goes through glibc's heap and opens an
/// arena for a thread that allocates nothing natively. Counted as many as glibc may open
/// (`8 × online CPUs`, its default `M_ARENA_MAX`) plus one: a program near its own limit
/// natively then gets at most that much more room, never less.
fn unseen() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(1) as u64;
    HIDDEN_STACK + ARENA * (8 * cpus + 1)
}

fn slot(resource: libc::c_int) -> Option<usize> {
    match resource as u32 {
        libc::RLIMIT_AS => Some(0),
        libc::RLIMIT_DATA => Some(1),
        _ => None,
    }
}

/// Bytes of address space that libpos's own mappings take: those in its private region and
/// the journal after it, those of libpos.so, and what [`unseen`] counts. Read from
/// `/proc/self/maps` without the heap.
///
/// Never inlined: its 64 KiB buffer would make `prlimit`'s own frame that large, and the
/// stack probe of every `getrlimit` (libpos's descriptor moves make three per run) then
/// touched 16 fresh stack pages, 16 page faults in each run of a fork server.
#[inline(never)]
#[cold]
fn ours() -> u64 {
    let mut buf = [0u8; 65536];
    let Some(n) = crate::procfs::read_proc(c"/proc/self/maps", &mut buf) else {
        return unseen();
    };
    let (lo_ours, hi_ours) = (crate::alloc::BASE, crate::alloc::END + (1 << 30));
    let mut total = unseen();
    for line in buf[..n].split(|&c| c == b'\n') {
        let mut fields = line.split(|&c| c == b' ').filter(|f| !f.is_empty());
        let Some(range) = fields.next() else { continue };
        let path = fields.nth(4).unwrap_or(b"");
        let Some(dash) = range.iter().position(|&c| c == b'-') else {
            continue;
        };
        let hex = |s: &[u8]| usize::from_str_radix(std::str::from_utf8(s).ok()?, 16).ok();
        let (Some(lo), Some(hi)) = (hex(&range[..dash]), hex(&range[dash + 1..])) else {
            continue;
        };
        if (lo >= lo_ours && hi <= hi_ours) || path.ends_with(b"/libpos.so") {
            total += (hi - lo) as u64;
        }
    }
    total
}

/// `prlimit64(pid, ...)`, through the system call (glibc's `setrlimit`, `getrlimit` and
/// `prlimit` are this call).
unsafe fn prlimit_raw(
    pid: libc::pid_t,
    resource: libc::c_int,
    new: *const libc::rlimit,
    old: *mut libc::rlimit,
) -> libc::c_int {
    crate::real::syscall(
        libc::SYS_prlimit64,
        pid as libc::c_long,
        resource as libc::c_long,
        new as libc::c_long,
        old as libc::c_long,
        0,
        0,
    ) as libc::c_int
}

fn raise(v: u64, by: u64) -> u64 {
    if v == libc::RLIM_INFINITY {
        v
    } else {
        v.checked_add(by)
            .filter(|&r| r != libc::RLIM_INFINITY)
            .unwrap_or(libc::RLIM_INFINITY)
    }
}

/// Set `new` (raised by [`ours`]) and read the old limit (as the program set it) for an
/// address-space resource of this process; `None` for any other.
unsafe fn limit(
    resource: libc::c_int,
    new: *const libc::rlimit,
    old: *mut libc::rlimit,
) -> Option<libc::c_int> {
    let i = slot(resource)?;
    let mut kernel_old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let mut set = None;
    if !new.is_null() {
        let by = ours();
        let want = *new;
        set = Some((
            libc::rlimit {
                rlim_cur: raise(want.rlim_cur, by),
                rlim_max: raise(want.rlim_max, by),
            },
            want,
        ));
    }
    let r = prlimit_raw(
        0,
        resource,
        set.as_ref().map_or(std::ptr::null(), |(k, _)| k),
        &mut kernel_old,
    );
    if r != 0 {
        return Some(r);
    }
    if !old.is_null() {
        *old = as_set(i, kernel_old);
    }
    if let Some((k, p)) = set {
        for (a, v) in SET[i]
            .iter()
            .zip([k.rlim_cur, k.rlim_max, p.rlim_cur, p.rlim_max])
        {
            a.store(v, Ordering::SeqCst);
        }
    }
    Some(0)
}

/// The limit the program set, if the kernel still holds what we set for it; else `k`.
fn as_set(i: usize, k: libc::rlimit) -> libc::rlimit {
    let s = |j: usize| SET[i][j].load(Ordering::SeqCst);
    if s(0) == k.rlim_cur && s(1) == k.rlim_max && (s(0) | s(1)) != 0 {
        libc::rlimit {
            rlim_cur: s(2),
            rlim_max: s(3),
        }
    } else {
        k
    }
}

/// `setrlimit`: see the module doc.
///
/// # Safety
/// As `setrlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn setrlimit(
    resource: libc::c_int,
    rlim: *const libc::rlimit,
) -> libc::c_int {
    prlimit(0, resource, rlim, std::ptr::null_mut())
}

/// `setrlimit64` (the same call on 64-bit).
///
/// # Safety
/// As `setrlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn setrlimit64(
    resource: libc::c_int,
    rlim: *const libc::rlimit,
) -> libc::c_int {
    prlimit(0, resource, rlim, std::ptr::null_mut())
}

/// `getrlimit`: an address-space limit reads as the program set it.
///
/// # Safety
/// As `getrlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn getrlimit(resource: libc::c_int, rlim: *mut libc::rlimit) -> libc::c_int {
    prlimit(0, resource, std::ptr::null(), rlim)
}

/// `getrlimit64` (the same call on 64-bit).
///
/// # Safety
/// As `getrlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn getrlimit64(
    resource: libc::c_int,
    rlim: *mut libc::rlimit,
) -> libc::c_int {
    prlimit(0, resource, std::ptr::null(), rlim)
}

/// `prlimit`: on this process (pid 0 or its own), an address-space limit as the module doc
/// says; anything else unchanged.
///
/// # Safety
/// As `prlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn prlimit(
    pid: libc::pid_t,
    resource: libc::c_int,
    new: *const libc::rlimit,
    old: *mut libc::rlimit,
) -> libc::c_int {
    let own = pid == 0 || pid == libc::getpid();
    match own.then(|| limit(resource, new, old)).flatten() {
        Some(r) => r,
        None => prlimit_raw(pid, resource, new, old),
    }
}

/// `prlimit64` (the same call on 64-bit).
///
/// # Safety
/// As `prlimit(2)`.
#[no_mangle]
pub unsafe extern "C" fn prlimit64(
    pid: libc::pid_t,
    resource: libc::c_int,
    new: *const libc::rlimit,
    old: *mut libc::rlimit,
) -> libc::c_int {
    prlimit(pid, resource, new, old)
}
