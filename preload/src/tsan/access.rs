//! Plain memory-access callbacks: `__tsan_{read,write}{1,2,4,8,16}`, their `unaligned_` and
//! `volatile_` forms, the range forms, the C++ vptr hooks, and the bookkeeping entry points
//! (`__tsan_init`, `__tsan_func_entry/exit`) that need no work here. The instrumented code
//! performs the access itself after the callback returns, so a callback is only a point.

use super::{entry, point, Kind};
use libc::c_void;

extern "C" fn read<const N: usize>(addr: *const c_void) {
    point(addr as usize, N, Kind::Read);
}

extern "C" fn write<const N: usize>(addr: *const c_void) {
    point(addr as usize, N, Kind::Write);
}

extern "C" fn read_range(addr: *const c_void, size: usize) {
    point(addr as usize, size, Kind::Read);
}

extern "C" fn write_range(addr: *const c_void, size: usize) {
    point(addr as usize, size, Kind::Write);
}

/// A vtable pointer store (object construction/destruction): a write of the pointer.
extern "C" fn vptr_update(vptr_p: *const *const c_void, _new: *const c_void) {
    point(vptr_p as usize, 8, Kind::Write);
}

/// A vtable pointer load (virtual call): a read of the pointer.
extern "C" fn vptr_read(vptr_p: *const *const c_void) {
    point(vptr_p as usize, 8, Kind::Read);
}

entry! {
    __tsan_read1 => read::<1>;
    __tsan_read2 => read::<2>;
    __tsan_read4 => read::<4>;
    __tsan_read8 => read::<8>;
    __tsan_read16 => read::<16>;
    __tsan_write1 => write::<1>;
    __tsan_write2 => write::<2>;
    __tsan_write4 => write::<4>;
    __tsan_write8 => write::<8>;
    __tsan_write16 => write::<16>;
    __tsan_unaligned_read2 => read::<2>;
    __tsan_unaligned_read4 => read::<4>;
    __tsan_unaligned_read8 => read::<8>;
    __tsan_unaligned_read16 => read::<16>;
    __tsan_unaligned_write2 => write::<2>;
    __tsan_unaligned_write4 => write::<4>;
    __tsan_unaligned_write8 => write::<8>;
    __tsan_unaligned_write16 => write::<16>;
    __tsan_volatile_read1 => read::<1>;
    __tsan_volatile_read2 => read::<2>;
    __tsan_volatile_read4 => read::<4>;
    __tsan_volatile_read8 => read::<8>;
    __tsan_volatile_read16 => read::<16>;
    __tsan_volatile_write1 => write::<1>;
    __tsan_volatile_write2 => write::<2>;
    __tsan_volatile_write4 => write::<4>;
    __tsan_volatile_write8 => write::<8>;
    __tsan_volatile_write16 => write::<16>;
    __tsan_read_range => read_range;
    __tsan_write_range => write_range;
    __tsan_vptr_update => vptr_update;
    __tsan_vptr_read => vptr_read;
}

/// `__tsan_init`: called by every instrumented module's constructor; libpos initialises in
/// its own constructor, so this is idempotent and empty.
#[no_mangle]
pub extern "C" fn __tsan_init() {}

/// `__tsan_func_entry`: function entry (shadow call stack in libtsan); not needed here.
#[no_mangle]
pub extern "C" fn __tsan_func_entry(_call_pc: *const c_void) {}

/// `__tsan_func_exit`: function exit; not needed here.
#[no_mangle]
pub extern "C" fn __tsan_func_exit() {}
