//! Raw `futex` system calls that libpos cannot interpose (libgomp's inline `syscall`
//! instructions, a program's own inline assembly) become scheduling points through a
//! seccomp-BPF filter (x86-64 only).
//!
//! At install time the executable mappings of the program and of every library loaded with
//! it, except libc, the dynamic loader, libpos and the vDSO, are the *trapped ranges*. The
//! filter returns `SECCOMP_RET_TRAP` for a `futex` call whose instruction pointer lies in
//! one of them and lets every other system call through, so libc's own futexes (including
//! those the kernel wakes itself, such as `pthread_join`'s) and everything libpos does pass
//! untouched. The trap lands in [`on_sigsys`], which reads the arguments from the ucontext
//! and either models the call exactly as the `syscall()` interposer does
//! ([`crate::futex::futex`]) or, for a thread that is not controlled, is inside libpos, or
//! for an operation that is not modelled, re-issues it through libc's `syscall` (outside
//! the trapped ranges, so it passes). The result goes to the context's `rax`.
//!
//! The filter cannot be removed: forked children inherit it (a controlled child's futexes
//! are modelled, an uncontrolled one's pass through the handler), and so do exec'd images.
//! An exec'd image that loads libpos (runner mode keeps libpos in `LD_PRELOAD` with
//! [`ENV_INERT`] once a filter is installed; `execve`, `execvpe` and `posix_spawn*` given an
//! environment without libpos get it put back, [`env_for_exec`]) installs a pass-through
//! handler. One that still does not load libpos (a static binary, `execle`/`execl` of a
//! cleared environment, which glibc does not route through an interposable call) is killed
//! by SIGSYS if it makes a futex call from an address that was a trapped range in the
//! original program: a documented limitation.
//!
//! The program cannot take SIGSYS away: a trap while SIGSYS is blocked or ignored would kill
//! the process (the kernel forces it with the default action), so `sigaction`/`signal` on
//! SIGSYS are recorded but not installed (a SIGSYS that is not a trap goes to the
//! program's handler), SIGSYS is removed from masks given to `sigprocmask`,
//! `pthread_sigmask` and `sigaction`.

use crate::conn;
use crate::real;
use libc::{c_int, c_long, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set in the environment of exec'd images once a filter is installed: their libpos only
/// installs the pass-through handler (the inherited filter may trap their futexes).
pub const ENV_INERT: &str = "POSCHECK_TRAP_INHERITED";

/// Most trapped ranges kept (each costs six BPF instructions for futex calls only).
const MAX_RANGES: usize = 32;

/// The trapped ranges `[start, end)` (pairs), and how many are set.
static RANGES: [AtomicUsize; 2 * MAX_RANGES] = [const { AtomicUsize::new(0) }; 2 * MAX_RANGES];
static N_RANGES: AtomicUsize = AtomicUsize::new(0);

/// A SIGSYS handler of libpos is installed: SIGSYS stays ours.
pub static GUARDING: AtomicBool = AtomicBool::new(false);

/// The program's own SIGSYS action (recorded by our `sigaction`), for SIGSYS that is not a trap.
static PROGRAM_HANDLER: AtomicUsize = AtomicUsize::new(0);
static PROGRAM_FLAGS: AtomicUsize = AtomicUsize::new(0);

/// `LD_PRELOAD=<this libpos>`, set once the filter is installed: an exec'd image given an
/// environment without libpos gets it back, inert (see [`env_for_exec`]).
static EXEC_PRELOAD: std::sync::OnceLock<std::ffi::CString> = std::sync::OnceLock::new();

/// The environment an exec'd image gets: `envp` itself when no filter is installed or it
/// already loads libpos; otherwise (a cleared or hand-made environment: `execve`, `execle`
/// through `execve`, `posix_spawn` with its own `envp`) a copy with libpos put first in
/// `LD_PRELOAD` and [`ENV_INERT`] set, so that the inherited filter cannot kill the image
/// with a SIGSYS it has no handler for. The copy is leaked (the image replaces this one;
/// a failed exec loses a few bytes).
///
/// # Safety
/// `envp` is null or a NULL-terminated array of C strings, as `execve(2)` requires.
pub unsafe fn env_for_exec(envp: *const *const libc::c_char) -> *const *const libc::c_char {
    let Some(preload) = EXEC_PRELOAD.get() else {
        return envp;
    };
    if envp.is_null() {
        return envp;
    }
    let ours = &preload.as_bytes()["LD_PRELOAD=".len()..];
    let mut kept: Vec<*const libc::c_char> = Vec::new();
    let mut old_preload: Option<&[u8]> = None;
    // SAFETY: envp is a NULL-terminated array of C strings (exec's contract).
    unsafe {
        let mut i = 0;
        loop {
            let e = *envp.add(i);
            if e.is_null() {
                break;
            }
            let bytes = std::ffi::CStr::from_ptr(e).to_bytes();
            if bytes.starts_with(ENV_INERT.as_bytes()) && bytes.get(ENV_INERT.len()) == Some(&b'=')
            {
                return envp; // already prepared (the runner's environment)
            }
            if let Some(v) = bytes.strip_prefix(b"LD_PRELOAD=") {
                if v.windows(ours.len()).any(|w| w == ours) {
                    return envp; // loads libpos already (standalone mode)
                }
                old_preload = Some(v);
            } else {
                kept.push(e);
            }
            i += 1;
        }
    }
    let mut line = preload.as_bytes().to_vec();
    if let Some(v) = old_preload.filter(|v| !v.is_empty()) {
        line.push(b':');
        line.extend_from_slice(v);
    }
    let inert = format!("{ENV_INERT}=1");
    for s in [line, inert.into_bytes()] {
        match std::ffi::CString::new(s) {
            Ok(c) => kept.push(c.into_raw()),
            Err(_) => return envp,
        }
    }
    kept.push(std::ptr::null());
    let out = kept.as_ptr();
    std::mem::forget(kept);
    out
}

/// Whether `pc` is in one of this image's trapped ranges.
fn trapped(pc: usize) -> bool {
    let n = N_RANGES.load(Ordering::Relaxed);
    (0..n).any(|i| {
        let s = RANGES[2 * i].load(Ordering::Relaxed);
        let e = RANGES[2 * i + 1].load(Ordering::Relaxed);
        s <= pc && pc < e
    })
}

/// The executable file-backed mappings of `/proc/self/maps` text that are not excluded by
/// `skip(path)`; adjacent ones are merged and ranges crossing a 4 GiB boundary are split
/// (the filter compares the two 32-bit halves of the instruction pointer separately).
pub fn ranges_of(maps: &str, skip: impl Fn(&str) -> bool) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        let path = f.nth(3).unwrap_or("");
        if !perms.contains('x') || path.is_empty() || path.starts_with('[') || skip(path) {
            continue;
        }
        let Some((s, e)) = range.split_once('-') else {
            continue;
        };
        let (Ok(s), Ok(e)) = (u64::from_str_radix(s, 16), u64::from_str_radix(e, 16)) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if last.1 == s => last.1 = e,
            _ => out.push((s, e)),
        }
    }
    let mut split = Vec::new();
    for (mut s, e) in out {
        while (s >> 32) != ((e - 1) >> 32) {
            let cut = ((s >> 32) + 1) << 32;
            split.push((s, cut));
            s = cut;
        }
        split.push((s, e));
    }
    split
}

/// The span of a sanitizer runtime linked into the executable, as the runner gives it
/// ([`pos_sched::protocol::ENV_UNTRAPPED`], offsets from the executable's first mapping in
/// `maps`), in addresses. Its futex calls are its own locks, like those of the shared
/// runtimes in [`SANITIZER_RUNTIMES`], and must not trap: LeakSanitizer's tracer, which
/// blocks every signal, was killed by its first trapped futex.
fn runtime_in_executable(maps: &str) -> Option<(u64, u64)> {
    let spec = std::env::var(pos_sched::protocol::ENV_UNTRAPPED).ok()?;
    let (lo, hi) = spec.split_once('-')?;
    let (lo, hi) = (
        u64::from_str_radix(lo, 16).ok()?,
        u64::from_str_radix(hi, 16).ok()?,
    );
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    let exe = exe.to_str()?;
    let start = maps.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (range, offset, path) = (f.first()?, f.get(2)?, f.get(5)?);
        if *path != exe || u64::from_str_radix(offset, 16).ok()? != 0 {
            return None;
        }
        u64::from_str_radix(range.split_once('-')?.0, 16).ok()
    })?;
    Some((start + lo, start + hi))
}

/// `ranges` without the addresses in `[a, b)`.
pub fn without(ranges: Vec<(u64, u64)>, (a, b): (u64, u64)) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for (s, e) in ranges {
        if e <= a || b <= s {
            out.push((s, e));
            continue;
        }
        if s < a {
            out.push((s, a));
        }
        if b < e {
            out.push((b, e));
        }
    }
    out
}

const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_TRAP: u32 = 0x0003_0000;
const SECCOMP_SET_MODE_FILTER: c_long = 1;
const SECCOMP_FILTER_FLAG_TSYNC: c_long = 1;
/// `si_code` of a seccomp trap.
const SYS_SECCOMP: c_int = 1;
/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_IP_LO: u32 = 8;
const OFF_IP_HI: u32 = 12;

/// The BPF program: non-futex calls (and other architectures) are allowed after four
/// instructions; a futex call traps iff its instruction pointer is in one of `ranges`.
pub fn program(ranges: &[(u64, u64)]) -> Vec<libc::sock_filter> {
    let ld = |k| bpf(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0, 0, k);
    let ret = |k| bpf(libc::BPF_RET | libc::BPF_K, 0, 0, k);
    let jeq = |k, jt, jf| bpf(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, jt, jf, k);
    let jge = |k, jt, jf| bpf(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, jt, jf, k);
    let blocks = ranges.len() as u8 * 6;
    let mut p = vec![
        ld(OFF_ARCH),
        jeq(AUDIT_ARCH_X86_64, 0, blocks + 2),
        ld(OFF_NR),
        jeq(libc::SYS_futex as u32, 0, blocks),
    ];
    for &(s, e) in ranges {
        // Same upper half (ranges are split at 4 GiB); an end at the boundary is 0 in
        // the lower half, i.e. "no upper bound" within this half.
        let e_lo = (e & 0xffff_ffff) as u32;
        p.push(ld(OFF_IP_HI));
        p.push(jeq((s >> 32) as u32, 0, 4));
        p.push(ld(OFF_IP_LO));
        p.push(jge(s as u32, 0, 2));
        if e_lo == 0 {
            p.push(jeq(0, 0, 0));
        } else {
            p.push(jge(e_lo, 1, 0));
        }
        p.push(ret(SECCOMP_RET_TRAP));
    }
    p.push(ret(SECCOMP_RET_ALLOW));
    p
}

fn bpf(code: u32, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

/// The file name of the object that holds `addr`.
fn object_path(addr: *const c_void) -> Option<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr with a valid out-pointer; dli_fname is NUL-terminated.
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    let p = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let p = p.to_string_lossy().into_owned();
    Some(std::fs::canonicalize(&p).map_or(p, |c| c.to_string_lossy().into_owned()))
}

/// Sanitizer runtimes with a leak checker (gcc's shared ones), whose futexes are their own
/// locks, not the program's synchronisation: never trapped. LeakSanitizer's tracer, cloned
/// at the exit's leak check with every signal blocked, was killed by the kernel at its first
/// trapped futex (a SIGSYS it blocks is delivered with the default action), and the exiting
/// thread then waited for it for ever: a `hang` in a few runs in a hundred of a correct gcc
/// `-fsanitize=address` program. ThreadSanitizer's stay trapped: its `pthread_create`
/// interceptor waits on a futex for the new thread to start, and modelled, that wait lets
/// the new thread be scheduled; left to the kernel, the creating thread was set aside after
/// 30 ms in every run.
const SANITIZER_RUNTIMES: &[&str] = &["libasan.so", "liblsan.so", "libhwasan.so"];

/// Install the filter and the handler (the process is under control). Returns an error
/// text when the kernel refuses; the caller says it once.
pub fn install() -> Result<(), String> {
    let maps = std::fs::read_to_string("/proc/self/maps")
        .map_err(|e| format!("cannot read /proc/self/maps: {e}"))?;
    let ours = object_path(install as *const c_void);
    let libc_path = object_path(libc::getpid as *const c_void);
    let skip = |path: &str| {
        let base = path.rsplit('/').next().unwrap_or(path);
        Some(path) == ours.as_deref()
            || Some(path) == libc_path.as_deref()
            || base.starts_with("ld-linux")
            || base.starts_with("libc.so")
            || base.starts_with("libpthread")
            || SANITIZER_RUNTIMES.iter().any(|r| base.starts_with(r))
    };
    let mut ranges = ranges_of(&maps, skip);
    if let Some(span) = runtime_in_executable(&maps) {
        ranges = without(ranges, span);
    }
    ranges.truncate(MAX_RANGES);
    for (i, &(s, e)) in ranges.iter().enumerate() {
        RANGES[2 * i].store(s as usize, Ordering::Relaxed);
        RANGES[2 * i + 1].store(e as usize, Ordering::Relaxed);
    }
    N_RANGES.store(ranges.len(), Ordering::SeqCst);
    install_handler();
    let prog = program(&ranges);
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl/seccomp calls with a valid filter program.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!(
                "PR_SET_NO_NEW_PRIVS: {}",
                std::io::Error::last_os_error()
            ));
        }
        let r = real::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_TSYNC,
            &fprog as *const libc::sock_fprog as c_long,
            0,
            0,
            0,
        );
        if r != 0 {
            return Err(format!("seccomp: {}", std::io::Error::last_os_error()));
        }
    }
    if let Some(c) = ours.and_then(|p| std::ffi::CString::new(format!("LD_PRELOAD={p}")).ok()) {
        let _ = EXEC_PRELOAD.set(c);
    }
    Ok(())
}

/// In an image that inherited a filter (exec'd from a trapped process): a handler that
/// re-issues every trapped call. No trapped ranges of its own, so nothing is modelled.
pub fn install_inherited() {
    // SAFETY: PR_GET_SECCOMP has no preconditions (2 = a filter is in force).
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } == 2 {
        install_handler();
    }
}

fn install_handler() {
    // SAFETY: a zeroed sigaction with our handler and an empty mask is valid.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_sigsys as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        real::sigaction(libc::SIGSYS, &sa, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGSYS);
        real::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
    }
    GUARDING.store(true, Ordering::SeqCst);
}

/// `siginfo_t` fields of a seccomp trap (`_sigsys`: call address, syscall number, arch).
#[repr(C)]
struct SigSys {
    signo: c_int,
    errno: c_int,
    code: c_int,
    _pad: c_int,
    call_addr: *mut c_void,
    syscall: c_int,
    arch: u32,
}

/// The SIGSYS handler: model or re-issue the trapped call, result into `rax`.
extern "C" fn on_sigsys(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo (with the `_sigsys` layout for a seccomp
    // trap) and ucontext to SA_SIGINFO handlers.
    let si = unsafe { &*(info as *const SigSys) };
    if si.code != SYS_SECCOMP || uc.is_null() {
        forward(sig, info, uc);
        return;
    }
    let saved_errno = conn::errno();
    let uc = uc as *mut libc::ucontext_t;
    // SAFETY: as above; gregs of the interrupted context.
    let g = unsafe { &mut (*uc).uc_mcontext.gregs };
    let a = |r: c_int| g[r as usize] as c_long;
    let nr = si.syscall as c_long;
    let (a1, a2, a3, a4, a5, a6) = (
        a(libc::REG_RDI),
        a(libc::REG_RSI),
        a(libc::REG_RDX),
        a(libc::REG_R10),
        a(libc::REG_R8),
        a(libc::REG_R9),
    );
    let mut result = None;
    // A task that shares this process's memory (and so its thread-locals) without being one
    // of its threads, such as LeakSanitizer's tracer (cloned without `CLONE_THREAD` at the
    // exit's leak check), is no controlled thread: its futex calls, modelled as the calls of
    // the thread whose thread-locals it sees, deadlocked that check in a few runs in a
    // hundred of a correct `-fsanitize=address` program.
    // SAFETY: getpid has no preconditions (a system call: a task's own process id).
    let ours = unsafe { libc::getpid() } as u32 == conn::PID.load(Ordering::Relaxed);
    if nr == libc::SYS_futex && ours && trapped(si.call_addr as usize) {
        if let Some(me) = conn::me() {
            let args = crate::futex::Args {
                uaddr: a1,
                op: a2 as c_int,
                val: a3 as c_int,
                timeout: a4,
                uaddr2: a5,
                val3: a6 as u32,
            };
            // SAFETY: the arguments of the program's own futex call.
            result = unsafe { crate::futex::futex(me, args) };
        }
    }
    // SAFETY: re-issuing the program's own call through libc (outside the trapped ranges).
    let r = result.unwrap_or_else(|| unsafe { real::syscall(nr, a1, a2, a3, a4, a5, a6) });
    g[libc::REG_RAX as usize] = if r == -1 { -conn::errno() as c_long } else { r };
    conn::set_errno(saved_errno);
}

/// A SIGSYS that is not our trap: the program's handler if it set one, else the default.
fn forward(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void) {
    let h = PROGRAM_HANDLER.load(Ordering::SeqCst);
    if h == libc::SIG_IGN {
        return;
    }
    if h == libc::SIG_DFL {
        // SAFETY: restore the default action and let the signal end the process.
        unsafe {
            real::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        return;
    }
    // SAFETY: the program's handler, with the signature its flags declare.
    unsafe {
        if PROGRAM_FLAGS.load(Ordering::SeqCst) as c_int & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = std::mem::transmute(h);
            f(sig, info, uc);
        } else {
            let f: extern "C" fn(c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// A copy of `set` without SIGSYS (when guarding).
unsafe fn without_sigsys(set: *const libc::sigset_t) -> Option<libc::sigset_t> {
    if set.is_null() || !GUARDING.load(Ordering::Relaxed) {
        return None;
    }
    let mut s = *set;
    libc::sigdelset(&mut s, libc::SIGSYS);
    Some(s)
}

/// `sigaction`: SIGSYS stays libpos's while guarding (the program's action is recorded and
/// reported back); other actions lose SIGSYS from their masks; the handlers of the signals
/// [`crate::signal`] runs under control go through it.
///
/// # Safety
/// As `sigaction(2)`.
#[no_mangle]
pub unsafe extern "C" fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    let guarding = GUARDING.load(Ordering::Relaxed);
    if guarding && sig == libc::SIGSYS {
        if !old.is_null() {
            let mut o: libc::sigaction = std::mem::zeroed();
            o.sa_sigaction = PROGRAM_HANDLER.load(Ordering::SeqCst);
            o.sa_flags = PROGRAM_FLAGS.load(Ordering::SeqCst) as c_int;
            *old = o;
        }
        if !act.is_null() {
            PROGRAM_FLAGS.store((*act).sa_flags as usize, Ordering::SeqCst);
            PROGRAM_HANDLER.store((*act).sa_sigaction, Ordering::SeqCst);
        }
        return 0;
    }
    let mut a: libc::sigaction;
    let act = if act.is_null() || !guarding {
        act
    } else {
        a = *act;
        libc::sigdelset(&mut a.sa_mask, libc::SIGSYS);
        &a as *const libc::sigaction
    };
    if crate::signal::wrapped(sig) {
        return crate::signal::sigaction(sig, act, old);
    }
    real::sigaction(sig, act, old)
}

/// `signal`: see [`sigaction`].
///
/// # Safety
/// As `signal(2)`.
#[no_mangle]
pub unsafe extern "C" fn signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t {
    if sig == libc::SIGSYS && GUARDING.load(Ordering::Relaxed) {
        PROGRAM_FLAGS.store(0, Ordering::SeqCst);
        return PROGRAM_HANDLER.swap(h, Ordering::SeqCst);
    }
    if crate::signal::wrapped(sig) {
        return crate::signal::signal(sig, h);
    }
    real::signal(sig, h)
}

/// After a controlled thread changed its mask: mirror it for `pthread_kill`
/// ([`crate::signal::note_mask`]).
fn mask_changed(r: c_int, set: *const libc::sigset_t) {
    if r == 0 && !set.is_null() {
        if let Some(tid) = conn::controlled_tid() {
            crate::signal::note_mask(tid);
        }
    }
}

/// `sigprocmask`: SIGSYS is never blocked while guarding.
///
/// # Safety
/// As `sigprocmask(2)`.
#[no_mangle]
pub unsafe extern "C" fn sigprocmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    let r = match without_sigsys(set) {
        Some(s) if how != libc::SIG_UNBLOCK => real::sigprocmask(how, &s, old),
        _ => real::sigprocmask(how, set, old),
    };
    mask_changed(r, set);
    r
}

/// `pthread_sigmask`: see [`sigprocmask`].
///
/// # Safety
/// As `pthread_sigmask(3)`.
#[no_mangle]
pub unsafe extern "C" fn pthread_sigmask(
    how: c_int,
    set: *const libc::sigset_t,
    old: *mut libc::sigset_t,
) -> c_int {
    let r = match without_sigsys(set) {
        Some(s) if how != libc::SIG_UNBLOCK => real::pthread_sigmask(how, &s, old),
        _ => real::pthread_sigmask(how, set, old),
    };
    mask_changed(r, set);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_keep_executable_file_mappings_and_merge_neighbours() {
        let maps = "\
555555554000-555555555000 r--p 00000000 08:01 1 /bin/prog
555555555000-555555556000 r-xp 00001000 08:01 1 /bin/prog
7ffff7a00000-7ffff7a10000 r-xp 00000000 08:01 2 /lib/libgomp.so.1
7ffff7a10000-7ffff7a20000 r-xp 00010000 08:01 2 /lib/libgomp.so.1
7ffff7c00000-7ffff7d00000 r-xp 00000000 08:01 3 /lib/libc.so.6
7ffff7fc0000-7ffff7fc2000 r-xp 00000000 00:00 0 [vdso]
";
        let r = ranges_of(maps, |p| p.ends_with("libc.so.6"));
        assert_eq!(
            r,
            vec![
                (0x555555555000, 0x555555556000),
                (0x7ffff7a00000, 0x7ffff7a20000)
            ]
        );
    }

    #[test]
    fn a_span_is_cut_out_of_the_ranges() {
        let r = vec![(0x1000, 0x9000), (0xa000, 0xb000)];
        assert_eq!(
            without(r.clone(), (0x2000, 0x8000)),
            vec![(0x1000, 0x2000), (0x8000, 0x9000), (0xa000, 0xb000)]
        );
        assert_eq!(without(r.clone(), (0x0, 0x9800)), vec![(0xa000, 0xb000)]);
        assert_eq!(without(r.clone(), (0x9000, 0xa000)), r);
    }

    #[test]
    fn ranges_crossing_4g_are_split() {
        let maps = "fffff000-100001000 r-xp 0 0:0 1 /x\n";
        assert_eq!(
            ranges_of(maps, |_| false),
            vec![(0xfffff000, 0x100000000), (0x100000000, 0x100001000)]
        );
    }

    #[test]
    fn the_program_allows_everything_but_futex_in_ranges() {
        let p = program(&[(0x1000, 0x2000), (0x7000_0000_0000, 0x7000_0001_0000)]);
        assert_eq!(p.len(), 4 + 2 * 6 + 1);
        // Jumps out of the arch/nr checks land on the final ALLOW.
        assert_eq!(1 + 1 + p[1].jf as usize, p.len() - 1);
        assert_eq!(3 + 1 + p[3].jf as usize, p.len() - 1);
        assert_eq!(p.last().unwrap().k, SECCOMP_RET_ALLOW);
    }
}
