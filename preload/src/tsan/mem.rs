//! `__wrap_memcpy`, `__wrap_memmove`, `__wrap_memset`: the bulk memory functions of
//! instrumented programs as scheduling points.
//!
//! Compiler instrumentation does not see inside `memcpy` & co. (libtsan intercepts them
//! instead; gcc 12 and clang 14 emit plain `memcpy`/`memset`/`memmove` calls under
//! `-fsanitize=thread -fno-builtin`). Interposing the libc symbols process-wide would also
//! catch libpos's own copies and every library's, so `poscheck cc` links instrumented
//! programs with `-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset`: only the program's own
//! calls reach these functions. Like libtsan's interceptors, a copy is a read of the source
//! range then a write of the destination range (two points in `mem`/`races` mode, both with
//! the call's pc), after which the real function does the work.

use super::{entry, point, Kind};
use libc::{c_int, c_void};

extern "C" fn memcpy_imp(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    if n > 0 {
        point(s as usize, n, Kind::Read);
        point(d as usize, n, Kind::Write);
    }
    // SAFETY: the caller's memcpy contract, passed on unchanged.
    unsafe { libc::memcpy(d, s, n) }
}

extern "C" fn memmove_imp(d: *mut c_void, s: *const c_void, n: usize) -> *mut c_void {
    if n > 0 {
        point(s as usize, n, Kind::Read);
        point(d as usize, n, Kind::Write);
    }
    // SAFETY: the caller's memmove contract, passed on unchanged.
    unsafe { libc::memmove(d, s, n) }
}

extern "C" fn memset_imp(d: *mut c_void, c: c_int, n: usize) -> *mut c_void {
    if n > 0 {
        point(d as usize, n, Kind::Write);
    }
    // SAFETY: the caller's memset contract, passed on unchanged.
    unsafe { libc::memset(d, c, n) }
}

entry! {
    __wrap_memcpy => memcpy_imp;
    __wrap_memmove => memmove_imp;
    __wrap_memset => memset_imp;
    // What LLVM's thread sanitizer pass emits for the memory intrinsics of languages whose
    // front end does not turn them into libc calls (Rust: `poscheck rustc`).
    __tsan_memcpy => memcpy_imp;
    __tsan_memmove => memmove_imp;
    __tsan_memset => memset_imp;
}
