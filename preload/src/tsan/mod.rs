//! Memory-access scheduling points for programs compiled with `-fsanitize=thread` and linked
//! against libpos instead of libtsan: every `__tsan_*` entry point gcc 12 and clang 14 emit.
//!
//! Which accesses are points is chosen by `POSCHECK_POINTS`:
//! - `sync` (default): none; the callbacks return at once (atomics still do their operation).
//! - `mem`: every access of a controlled thread posts `Op::Read/Write{addr, size}` or
//!   `Op::AtomicLoad/AtomicStore/AtomicRmw{addr, size, mo..}` (with the memory order the
//!   program asked for) before it happens, except a plain access to the thread's own stack.
//! - `races`: atomic operations and the accesses whose instrumented pc is listed in
//!   `POSCHECK_RACES_FILE` post; the others are decided locally, with no round trip.
//! - `auto`: as `races` (the races file may be empty), and every other plain access off the
//!   thread's stack is *observed*: appended to a per-thread buffer of [`Msg::Observed`]
//!   frames that goes to the coordinator, with no reply, just before the thread's next post
//!   ([`flush_observed`]). Only the granted thread runs between two posts, so the
//!   coordinator sees the observed accesses in execution order, and its race detector
//!   learns new racing sites from every try (`runner/src/points.rs`).
//!
//! Every post carries the instrumented pc (the return address of the `__tsan_*` call) for the
//! coordinator's race detector ([`pos_sched::protocol::frame_pc`]). To get it without frame
//! pointers, each entry point is a three-instruction naked stub ([`entry`]) that stores its
//! return address in a thread-local slot and tail-jumps to the Rust implementation with the
//! arguments untouched. x86-64 only (the stubs and the 128-bit atomics use its assembly).

pub mod access;
pub mod atomic;
pub mod mem;

use crate::conn::{self, Busy};
use pos_sched::protocol::{Msg, MSG_LEN};
use pos_sched::{MemOrder, Op};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// `POSCHECK_POINTS` values.
pub const SYNC: u8 = 0;
pub const MEM: u8 = 1;
pub const RACES: u8 = 2;
pub const AUTO: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(SYNC);

/// Sorted absolute pcs that are points in `races` mode.
static RACE_PCS: OnceLock<Vec<u64>> = OnceLock::new();

// The per-thread slot for the pc of the current `__tsan_*` call (initial-exec TLS: libpos is
// always loaded at start-up, by LD_PRELOAD or as a dependency of the program).
std::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl pos_tsan_pc",
    ".hidden pos_tsan_pc",
    ".type pos_tsan_pc, @object",
    ".size pos_tsan_pc, 8",
    "pos_tsan_pc:",
    ".zero 8",
    ".popsection",
);

/// Define exported `__tsan_*` entry points: each records its return address (the
/// instrumented pc) in `pos_tsan_pc`, then jumps to its implementation, whose C signature
/// is the entry point's (rax and r11 are scratch in the SysV ABI and carry no argument).
macro_rules! entry {
    ($($name:ident => $imp:expr;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: records the pc, then the implementation.")]
        ///
        /// # Safety
        /// Called by instrumented code only, with the arguments of libtsan's function.
        #[unsafe(naked)]
        #[no_mangle]
        pub unsafe extern "C" fn $name() {
            std::arch::naked_asm!(
                "mov r11, qword ptr [rsp]",
                "mov rax, qword ptr [rip + pos_tsan_pc@GOTTPOFF]",
                "mov qword ptr fs:[rax], r11",
                "jmp {imp}",
                imp = sym $imp,
            )
        }
    )*};
}
pub(crate) use entry;

/// The pc recorded by the current thread's last `__tsan_*` entry.
#[unsafe(naked)]
extern "C" fn last_pc() -> u64 {
    std::arch::naked_asm!(
        "mov rax, qword ptr [rip + pos_tsan_pc@GOTTPOFF]",
        "mov rax, qword ptr fs:[rax]",
        "ret",
    )
}

/// What an access does, for the posted [`Op`]; atomics carry the memory order the program
/// asked for (recorded in the event; the operation itself is performed `seq_cst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    AtomicLoad(MemOrder),
    AtomicStore(MemOrder),
    /// Exchange, fetch-op, compare-exchange (with its failure order).
    AtomicRmw(MemOrder, Option<MemOrder>),
}

impl Kind {
    fn is_atomic(self) -> bool {
        !matches!(self, Kind::Read | Kind::Write)
    }

    fn op(self, addr: u64, size: u32) -> Op {
        match self {
            Kind::Read => Op::Read { addr, size },
            Kind::Write => Op::Write { addr, size },
            Kind::AtomicLoad(mo) => Op::AtomicLoad { addr, size, mo },
            Kind::AtomicStore(mo) => Op::AtomicStore { addr, size, mo },
            Kind::AtomicRmw(mo, fail) => Op::AtomicRmw {
                addr,
                size,
                mo,
                fail,
            },
        }
    }
}

/// Parse a `POSCHECK_POINTS` value.
pub fn parse_mode(s: &str) -> Result<u8, String> {
    match s {
        "" | "sync" => Ok(SYNC),
        "mem" => Ok(MEM),
        "races" => Ok(RACES),
        "auto" => Ok(AUTO),
        _ => Err(format!(
            "bad POSCHECK_POINTS {s:?} (expected sync, mem, races or auto)"
        )),
    }
}

/// Parse a races file: one pc per line in hex (`0x` optional). A plain value is an absolute
/// address (the runner disables ASLR, so pcs recorded in a profiling run are valid in later
/// runs); `+OFF` is an offset from the executable's load base (`base`). Empty lines and
/// lines starting with `#` are ignored. Returns the sorted set.
pub fn parse_races(text: &str, base: u64) -> Result<Vec<u64>, String> {
    let mut pcs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (rel, hex) = match line.strip_prefix('+') {
            Some(h) => (true, h),
            None => (false, line),
        };
        let hex = hex.trim_start_matches("0x").trim_start_matches("0X");
        let v = u64::from_str_radix(hex, 16)
            .map_err(|_| format!("races file line {}: bad pc {line:?}", i + 1))?;
        pcs.push(if rel { base.wrapping_add(v) } else { v });
    }
    pcs.sort_unstable();
    pcs.dedup();
    Ok(pcs)
}

/// Load bias of the main executable (0 for a non-PIE one).
fn exe_base() -> u64 {
    extern "C" fn first(info: *mut libc::dl_phdr_info, _: usize, out: *mut libc::c_void) -> i32 {
        // SAFETY: dl_iterate_phdr passes valid pointers; out is our u64.
        unsafe { *(out as *mut u64) = (*info).dlpi_addr };
        1 // the first object is the executable: stop
    }
    let mut base = 0u64;
    // SAFETY: the callback only writes to `base`.
    unsafe { libc::dl_iterate_phdr(Some(first), (&mut base as *mut u64).cast()) };
    base
}

/// Read `POSCHECK_POINTS` and `POSCHECK_RACES_FILE` (from the constructor).
pub fn configure() -> Result<(), String> {
    let mode = parse_mode(&std::env::var("POSCHECK_POINTS").unwrap_or_default())?;
    if mode == RACES || mode == AUTO {
        let path = std::env::var("POSCHECK_RACES_FILE")
            .map_err(|_| "POSCHECK_POINTS=races/auto needs POSCHECK_RACES_FILE".to_string())?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read POSCHECK_RACES_FILE {path}: {e}"))?;
        let _ = RACE_PCS.set(parse_races(&text, exe_base())?);
    }
    MODE.store(mode, Ordering::Relaxed);
    Ok(())
}

thread_local! {
    /// This thread's stack `[lo, hi)`, computed on first use; (0, 0) = not yet.
    static STACK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

fn stack_bounds() -> (u64, u64) {
    let (lo, hi) = STACK.with(|s| s.get());
    if hi != 0 {
        return (lo, hi);
    }
    let _b = Busy::enter();
    // SAFETY: attr is initialised by pthread_getattr_np before use and destroyed after.
    let bounds = unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: usize = 0;
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
            libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
            libc::pthread_attr_destroy(&mut attr);
        }
        (addr as u64, addr as u64 + size as u64)
    };
    // Unknown bounds: an empty range that is still "computed".
    let bounds = if bounds.1 == 0 { (1, 1) } else { bounds };
    STACK.with(|s| s.set(bounds));
    bounds
}

/// Compute the calling thread's stack bounds now when memory accesses may be points (see
/// `init` in lib.rs: the main thread, before a fork server forks its runs).
pub fn prime_stack() {
    if MODE.load(Ordering::Relaxed) != SYNC {
        stack_bounds();
    }
}

/// A memory access of `size` bytes at `addr` is about to happen: in `mem`/`races` mode a
/// controlled thread posts it (with its pc) and waits for the grant.
#[inline(always)]
pub fn point(addr: usize, size: usize, kind: Kind) {
    let mode = MODE.load(Ordering::Relaxed);
    if mode != SYNC {
        slow_point(addr as u64, size, kind, mode);
    }
}

/// libpos is about to read (a futex wait's comparison) or update (`FUTEX_WAKE_OP`) the futex
/// word at `addr` on the program's behalf: in `mem`, `races` and `auto` mode that access is
/// an atomic one of the word, a point like the program's own atomics, so the exploration
/// orders it against the other threads' accesses. Done at the previous point instead, a
/// store that came before it in one run and after it in the next turned an `EAGAIN` into a
/// sleep, and the run left its forced prefix (a libstdc++ `atomic::wait` diverged under
/// `--points mem`). No point in `sync` mode, where the program's own accesses are none.
pub fn futex_word(addr: u64, update: bool) {
    if MODE.load(Ordering::Relaxed) == SYNC {
        return;
    }
    let Some(me) = conn::me() else { return };
    let (size, mo) = (4, MemOrder::SeqCst);
    me.post(if update {
        Op::AtomicRmw {
            addr,
            size,
            mo,
            fail: None,
        }
    } else {
        Op::AtomicLoad { addr, size, mo }
    });
}

/// Whether `pc` is listed in the races file.
fn is_race_pc(pc: u64) -> bool {
    RACE_PCS
        .get()
        .is_some_and(|pcs| pcs.binary_search(&pc).is_ok())
}

#[inline(never)]
fn slow_point(addr: u64, size: usize, kind: Kind, mode: u8) {
    let Some(me) = conn::me() else { return };
    let pc = last_pc();
    // In `races` and `auto`, atomics are always points: lock-free code's bugs lie between
    // atomic operations, which never race and so are never learned as racing sites.
    let post = mode == MEM || kind.is_atomic() || is_race_pc(pc);
    if !post && mode != AUTO {
        return;
    }
    // A plain access to the thread's own stack is taken as private to it; an atomic one is
    // not: a `std::atomic` local that `main` shares with its threads (a lambda capturing by
    // reference) is on main's stack, and main's loads and stores of it must be points too.
    if !kind.is_atomic() {
        let (lo, hi) = stack_bounds();
        if (lo..hi).contains(&addr) {
            return;
        }
    }
    let size = u32::try_from(size).unwrap_or(u32::MAX);
    if post {
        me.post_at(kind.op(addr, size), pc);
    } else {
        observe(me, kind == Kind::Write, addr, size, pc);
    }
}

/// Frames a thread buffers before sending them in one write.
const OBS_FRAMES: usize = 64;

/// A thread's observed accesses not yet sent: frames and the bytes used.
struct Observed {
    buf: [u8; OBS_FRAMES * MSG_LEN],
    len: usize,
}

thread_local! {
    static OBSERVED: RefCell<Observed> = const {
        RefCell::new(Observed {
            buf: [0; OBS_FRAMES * MSG_LEN],
            len: 0,
        })
    };
}

/// Buffer one observed access of the calling thread; a full buffer is sent.
fn observe(me: conn::Me, write: bool, addr: u64, size: u32, pc: u64) {
    let frame = Msg::encode_observed(write, addr, size, pc);
    let _ = OBSERVED.try_with(|o| {
        // Busy only when a signal handler interrupted this very function: drop the access.
        let Ok(mut o) = o.try_borrow_mut() else {
            return;
        };
        if o.len + MSG_LEN > o.buf.len() {
            send(me, &mut o);
        }
        let at = o.len;
        o.buf[at..at + MSG_LEN].copy_from_slice(&frame);
        o.len += MSG_LEN;
    });
}

/// Pass the buffered frames on: over the thread's connection, or, for a thread that posts
/// in-process ([`conn::LOCAL_FD`]), to the run in this process, which logs them for the
/// runner when it asked for a trace (standalone ignores them, as over a connection).
fn send(me: conn::Me, o: &mut Observed) {
    let _b = Busy::enter();
    if me.fd == conn::LOCAL_FD {
        crate::standalone::local_observed(me.tid, &o.buf[..o.len]);
    } else {
        // A lost connection shows at the thread's next post, which handles it.
        let _ = conn::write_all(me.fd, &o.buf[..o.len]);
    }
    o.len = 0;
}

/// Pass on the calling thread's buffered observed accesses before it posts anything: the
/// coordinator must see them before the post they precede.
pub fn flush_observed(me: conn::Me) {
    let _ = OBSERVED.try_with(|o| {
        if let Ok(mut o) = o.try_borrow_mut() {
            if o.len > 0 {
                send(me, &mut o);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_bad_ones_are_errors() {
        assert_eq!(parse_mode(""), Ok(SYNC));
        assert_eq!(parse_mode("sync"), Ok(SYNC));
        assert_eq!(parse_mode("mem"), Ok(MEM));
        assert_eq!(parse_mode("races"), Ok(RACES));
        assert_eq!(parse_mode("auto"), Ok(AUTO));
        assert!(parse_mode("all").is_err());
    }

    #[test]
    fn races_files_parse_absolute_and_relative_pcs() {
        let pcs = parse_races(
            "# profiling run\n0x401a2b\n401000\n\n+0x10\n0x401000\n",
            0x5000,
        )
        .unwrap();
        assert_eq!(pcs, vec![0x5010, 0x401000, 0x401a2b]);
        assert!(parse_races("0xzz\n", 0).is_err());
    }

    #[test]
    fn stack_bounds_contain_a_local() {
        let x = 5u64;
        let (lo, hi) = stack_bounds();
        let a = &x as *const u64 as u64;
        assert!(lo <= a && a < hi, "{lo:#x} {a:#x} {hi:#x}");
    }
}
