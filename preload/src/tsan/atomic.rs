//! `__tsan_atomic{8,16,32,64,128}_*` and the fences: each is a point (in `mem`/`races`
//! mode) and then performs the real atomic operation on the program's memory.
//!
//! Operations run sequentially consistent whatever order the program asked for: a stronger
//! order is always a correct implementation of a weaker one, and under a serialising
//! scheduler weaker orders would not show their extra behaviours anyway. The order asked for
//! (tsan's `morder` argument, and a compare-exchange's failure order) is recorded in the
//! posted event ([`pos_sched::MemOrder`]) for reports. A weak
//! compare-exchange is implemented as a strong one (it may fail spuriously, it need not).
//! 128-bit operations use `lock cmpxchg16b` on 16-byte aligned objects (as libatomic does)
//! and a global lock otherwise.

use super::{entry, point, Kind};
use libc::c_int;
use pos_sched::MemOrder;
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8};

/// The order of tsan's `morder` argument.
#[inline(always)]
fn order(mo: c_int) -> MemOrder {
    MemOrder::from_tsan(mo)
}

/// A read-modify-write other than a compare-exchange, with order `mo`.
#[inline(always)]
fn rmw(mo: c_int) -> Kind {
    Kind::AtomicRmw(order(mo), None)
}

/// A compare-exchange with success order `mo` and failure order `f`.
#[inline(always)]
fn cas_kind(mo: c_int, f: c_int) -> Kind {
    Kind::AtomicRmw(order(mo), Some(order(f)))
}

/// One family of atomic entry points for an integer type with a native atomic.
macro_rules! family {
    ($m:ident, $t:ty, $atomic:ty, [$load:ident, $store:ident, $xchg:ident, $add:ident,
     $sub:ident, $and:ident, $or:ident, $xor:ident, $nand:ident, $cas_s:ident, $cas_w:ident,
     $cas_v:ident]) => {
        mod $m {
            use super::*;
            type T = $t;
            const N: usize = std::mem::size_of::<T>();

            /// # Safety
            /// `a` is a valid, aligned pointer to an atomic object (the compiler's contract).
            unsafe fn at<'a>(a: *const T, kind: Kind) -> &'a $atomic {
                point(a as usize, N, kind);
                <$atomic>::from_ptr(a as *mut T)
            }

            pub unsafe extern "C" fn load(a: *const T, mo: c_int) -> T {
                at(a, Kind::AtomicLoad(order(mo))).load(SeqCst)
            }
            pub unsafe extern "C" fn store(a: *mut T, v: T, mo: c_int) {
                at(a, Kind::AtomicStore(order(mo))).store(v, SeqCst)
            }
            pub unsafe extern "C" fn exchange(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).swap(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_add(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_add(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_sub(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_sub(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_and(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_and(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_or(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_or(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_xor(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_xor(v, SeqCst)
            }
            pub unsafe extern "C" fn fetch_nand(a: *mut T, v: T, mo: c_int) -> T {
                at(a, rmw(mo)).fetch_nand(v, SeqCst)
            }
            /// Returns 1 on success; on failure stores the current value into `*c`.
            pub unsafe extern "C" fn cas(a: *mut T, c: *mut T, v: T, mo: c_int, f: c_int) -> c_int {
                match at(a, cas_kind(mo, f)).compare_exchange(*c, v, SeqCst, SeqCst) {
                    Ok(_) => 1,
                    Err(cur) => {
                        *c = cur;
                        0
                    }
                }
            }
            /// Returns the previous value.
            pub unsafe extern "C" fn cas_val(a: *mut T, c: T, v: T, mo: c_int, f: c_int) -> T {
                match at(a, cas_kind(mo, f)).compare_exchange(c, v, SeqCst, SeqCst) {
                    Ok(prev) | Err(prev) => prev,
                }
            }
        }
        entry! {
            $load => $m::load;
            $store => $m::store;
            $xchg => $m::exchange;
            $add => $m::fetch_add;
            $sub => $m::fetch_sub;
            $and => $m::fetch_and;
            $or => $m::fetch_or;
            $xor => $m::fetch_xor;
            $nand => $m::fetch_nand;
            $cas_s => $m::cas;
            $cas_w => $m::cas;
            $cas_v => $m::cas_val;
        }
    };
}

family!(
    a8,
    i8,
    AtomicI8,
    [
        __tsan_atomic8_load,
        __tsan_atomic8_store,
        __tsan_atomic8_exchange,
        __tsan_atomic8_fetch_add,
        __tsan_atomic8_fetch_sub,
        __tsan_atomic8_fetch_and,
        __tsan_atomic8_fetch_or,
        __tsan_atomic8_fetch_xor,
        __tsan_atomic8_fetch_nand,
        __tsan_atomic8_compare_exchange_strong,
        __tsan_atomic8_compare_exchange_weak,
        __tsan_atomic8_compare_exchange_val
    ]
);
family!(
    a16,
    i16,
    AtomicI16,
    [
        __tsan_atomic16_load,
        __tsan_atomic16_store,
        __tsan_atomic16_exchange,
        __tsan_atomic16_fetch_add,
        __tsan_atomic16_fetch_sub,
        __tsan_atomic16_fetch_and,
        __tsan_atomic16_fetch_or,
        __tsan_atomic16_fetch_xor,
        __tsan_atomic16_fetch_nand,
        __tsan_atomic16_compare_exchange_strong,
        __tsan_atomic16_compare_exchange_weak,
        __tsan_atomic16_compare_exchange_val
    ]
);
family!(
    a32,
    i32,
    AtomicI32,
    [
        __tsan_atomic32_load,
        __tsan_atomic32_store,
        __tsan_atomic32_exchange,
        __tsan_atomic32_fetch_add,
        __tsan_atomic32_fetch_sub,
        __tsan_atomic32_fetch_and,
        __tsan_atomic32_fetch_or,
        __tsan_atomic32_fetch_xor,
        __tsan_atomic32_fetch_nand,
        __tsan_atomic32_compare_exchange_strong,
        __tsan_atomic32_compare_exchange_weak,
        __tsan_atomic32_compare_exchange_val
    ]
);
family!(
    a64,
    i64,
    AtomicI64,
    [
        __tsan_atomic64_load,
        __tsan_atomic64_store,
        __tsan_atomic64_exchange,
        __tsan_atomic64_fetch_add,
        __tsan_atomic64_fetch_sub,
        __tsan_atomic64_fetch_and,
        __tsan_atomic64_fetch_or,
        __tsan_atomic64_fetch_xor,
        __tsan_atomic64_fetch_nand,
        __tsan_atomic64_compare_exchange_strong,
        __tsan_atomic64_compare_exchange_weak,
        __tsan_atomic64_compare_exchange_val
    ]
);

/// Fallback lock for 128-bit objects that `cmpxchg16b` cannot take (misaligned).
static WIDE_LOCK: AtomicBool = AtomicBool::new(false);

/// Atomically: if `*a == old` then `*a = new`; returns the previous value.
///
/// # Safety
/// `a` points to 16 writable bytes.
pub unsafe fn cas128(a: *mut i128, old: i128, new: i128) -> i128 {
    if (a as usize).is_multiple_of(16) {
        let (lo, hi): (u64, u64);
        // SAFETY: aligned 16-byte object; rbx (reserved by LLVM) is saved in a scratch
        // register around the instruction, as cmpxchg16b takes the new low half in rbx.
        std::arch::asm!(
            "xchg {tmp}, rbx",
            "lock cmpxchg16b xmmword ptr [rdi]",
            "mov rbx, {tmp}",
            tmp = inout(reg) new as u64 => _,
            in("rcx") (new >> 64) as u64,
            inout("rax") old as u64 => lo,
            inout("rdx") (old >> 64) as u64 => hi,
            in("rdi") a,
            options(nostack),
        );
        return ((hi as u128) << 64 | lo as u128) as i128;
    }
    while WIDE_LOCK
        .compare_exchange_weak(false, true, SeqCst, SeqCst)
        .is_err()
    {
        std::hint::spin_loop();
    }
    let prev = a.read_unaligned();
    if prev == old {
        a.write_unaligned(new);
    }
    WIDE_LOCK.store(false, SeqCst);
    prev
}

/// Apply `f` atomically; returns the previous value.
unsafe fn rmw128(a: *mut i128, f: impl Fn(i128) -> i128) -> i128 {
    let mut cur = cas128(a, 0, 0);
    loop {
        let prev = cas128(a, cur, f(cur));
        if prev == cur {
            return prev;
        }
        cur = prev;
    }
}

mod a128 {
    use super::*;
    type T = i128;

    unsafe fn at(a: *const T, kind: Kind) -> *mut T {
        point(a as usize, 16, kind);
        a as *mut T
    }

    pub unsafe extern "C" fn load(a: *const T, mo: c_int) -> T {
        // A compare-exchange of 0 with 0 reads atomically and never changes the value.
        cas128(at(a, Kind::AtomicLoad(order(mo))), 0, 0)
    }
    pub unsafe extern "C" fn store(a: *mut T, v: T, mo: c_int) {
        rmw128(at(a, Kind::AtomicStore(order(mo))), |_| v);
    }
    pub unsafe extern "C" fn exchange(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |_| v)
    }
    pub unsafe extern "C" fn fetch_add(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| x.wrapping_add(v))
    }
    pub unsafe extern "C" fn fetch_sub(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| x.wrapping_sub(v))
    }
    pub unsafe extern "C" fn fetch_and(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| x & v)
    }
    pub unsafe extern "C" fn fetch_or(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| x | v)
    }
    pub unsafe extern "C" fn fetch_xor(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| x ^ v)
    }
    pub unsafe extern "C" fn fetch_nand(a: *mut T, v: T, mo: c_int) -> T {
        rmw128(at(a, rmw(mo)), |x| !(x & v))
    }
    pub unsafe extern "C" fn cas(a: *mut T, c: *mut T, v: T, mo: c_int, f: c_int) -> c_int {
        let expected = *c;
        let prev = cas128(at(a, cas_kind(mo, f)), expected, v);
        if prev == expected {
            1
        } else {
            *c = prev;
            0
        }
    }
    pub unsafe extern "C" fn cas_val(a: *mut T, c: T, v: T, mo: c_int, f: c_int) -> T {
        cas128(at(a, cas_kind(mo, f)), c, v)
    }
}

entry! {
    __tsan_atomic128_load => a128::load;
    __tsan_atomic128_store => a128::store;
    __tsan_atomic128_exchange => a128::exchange;
    __tsan_atomic128_fetch_add => a128::fetch_add;
    __tsan_atomic128_fetch_sub => a128::fetch_sub;
    __tsan_atomic128_fetch_and => a128::fetch_and;
    __tsan_atomic128_fetch_or => a128::fetch_or;
    __tsan_atomic128_fetch_xor => a128::fetch_xor;
    __tsan_atomic128_fetch_nand => a128::fetch_nand;
    __tsan_atomic128_compare_exchange_strong => a128::cas;
    __tsan_atomic128_compare_exchange_weak => a128::cas;
    __tsan_atomic128_compare_exchange_val => a128::cas_val;
}

/// `__tsan_atomic_thread_fence`: a full fence whatever its order (not a scheduling point: it
/// touches no object, and under the sequentially consistent interleavings poscheck explores
/// it orders nothing more, so no event records its order).
#[no_mangle]
pub extern "C" fn __tsan_atomic_thread_fence(_mo: c_int) {
    std::sync::atomic::fence(SeqCst);
}

/// `__tsan_atomic_signal_fence`: a compiler fence.
#[no_mangle]
pub extern "C" fn __tsan_atomic_signal_fence(_mo: c_int) {
    std::sync::atomic::compiler_fence(SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_atomics_have_c11_semantics() {
        let mut x: i32 = 5;
        unsafe {
            assert_eq!(a32::fetch_add(&mut x, 3, 5), 5);
            assert_eq!(a32::load(&x, 5), 8);
            assert_eq!(a32::fetch_nand(&mut x, 12, 5), 8);
            assert_eq!(x, !(8 & 12));
            let mut expected = 0;
            assert_eq!(a32::cas(&mut x, &mut expected, 1, 5, 5), 0);
            assert_eq!(expected, !(8 & 12));
            assert_eq!(a32::cas(&mut x, &mut expected, 1, 5, 5), 1);
            assert_eq!(a32::cas_val(&mut x, 1, 9, 5, 5), 1);
            assert_eq!(a32::exchange(&mut x, 4, 5), 9);
            a32::store(&mut x, -2, 5);
            assert_eq!(x, -2);
            let mut b: i8 = 127;
            assert_eq!(a8::fetch_add(&mut b, 1, 5), 127);
            assert_eq!(b, -128);
        }
    }

    #[test]
    fn wide_atomics_work_aligned_and_misaligned() {
        #[repr(C, align(16))]
        struct Buf([u8; 48]);
        let mut buf = Buf([0; 48]);
        for off in [0usize, 16, 8, 3] {
            let p = unsafe { buf.0.as_mut_ptr().add(off) } as *mut i128;
            let big = (7i128 << 64) | 9;
            unsafe {
                a128::store(p, big, 5);
                assert_eq!(a128::load(p, 5), big, "offset {off}");
                assert_eq!(a128::fetch_add(p, 1 << 64, 5), big);
                assert_eq!(a128::load(p, 5), (8i128 << 64) | 9);
                let mut e = 0i128;
                assert_eq!(a128::cas(p, &mut e, 1, 5, 5), 0);
                assert_eq!(e, (8i128 << 64) | 9);
                assert_eq!(a128::cas(p, &mut e, -1, 5, 5), 1);
                assert_eq!(a128::fetch_nand(p, 0xff, 5), -1);
                assert_eq!(a128::load(p, 5), !0xff);
            }
        }
    }

    #[test]
    fn wide_fetch_add_is_atomic_across_threads() {
        #[repr(C, align(16))]
        struct Cell(std::cell::UnsafeCell<i128>);
        unsafe impl Sync for Cell {}
        impl Cell {
            fn ptr(&self) -> *mut i128 {
                self.0.get()
            }
        }
        let c = Cell(std::cell::UnsafeCell::new(0));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..20_000 {
                        unsafe { a128::fetch_add(c.ptr(), 1, 5) };
                    }
                });
            }
        });
        assert_eq!(unsafe { *c.0.get() }, 40_000);
    }
}
