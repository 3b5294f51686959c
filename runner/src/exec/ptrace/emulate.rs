//! Stepping over a breakpoint without a single step: the first instruction of a
//! synchronisation function, when it is one of a few simple forms that read no memory, is
//! carried out on the stopped thread's registers by the tracer (one `SETREGS`, plus one
//! write of the thread's own stack for a `push`) instead of putting the original byte back,
//! single-stepping, waiting for the step's stop and putting the breakpoint back. Every
//! other instruction (a memory load among them: the tracer's read of a word another thread
//! may be writing is not one atomic load) is single-stepped as before.

use libc::user_regs_struct;

/// What carrying out one instruction does besides setting the registers.
#[derive(Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing else.
    None,
    /// Write this 8-byte value at this address (the new stack top of a `push`).
    Push(u64, u64),
}

const CF: u64 = 0x1;
const PF: u64 = 0x4;
const AF: u64 = 0x10;
const ZF: u64 = 0x40;
const SF: u64 = 0x80;
const OF: u64 = 0x800;
const ARITH_FLAGS: u64 = CF | PF | AF | ZF | SF | OF;

/// General register `n` (the x86-64 encoding: rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15).
fn reg(r: &mut user_regs_struct, n: u8) -> &mut u64 {
    match n & 15 {
        0 => &mut r.rax,
        1 => &mut r.rcx,
        2 => &mut r.rdx,
        3 => &mut r.rbx,
        4 => &mut r.rsp,
        5 => &mut r.rbp,
        6 => &mut r.rsi,
        7 => &mut r.rdi,
        8 => &mut r.r8,
        9 => &mut r.r9,
        10 => &mut r.r10,
        11 => &mut r.r11,
        12 => &mut r.r12,
        13 => &mut r.r13,
        14 => &mut r.r14,
        _ => &mut r.r15,
    }
}

/// The flags of `a - b = res` (64-bit): CF, PF, AF, ZF, SF, OF as `sub` sets them.
fn sub_flags(a: u64, b: u64, res: u64) -> u64 {
    let mut f = 0;
    if a < b {
        f |= CF;
    }
    if (res as u8).count_ones().is_multiple_of(2) {
        f |= PF;
    }
    if (a ^ b ^ res) & 0x10 != 0 {
        f |= AF;
    }
    if res == 0 {
        f |= ZF;
    }
    if res >> 63 != 0 {
        f |= SF;
    }
    if ((a ^ b) & (a ^ res)) >> 63 != 0 {
        f |= OF;
    }
    f
}

/// Carry out the instruction whose first bytes are `code` (little-endian, at `regs.rip`) on
/// `regs`: the registers after it and its other effect, or `None` when it is not one of the
/// forms done here:
///
/// - `endbr64`;
/// - `push r64` (`50+r`, `41 50+r`);
/// - `mov $imm32, r32` (`b8+r`, `41 b8+r`: zero-extended);
/// - `jmp rel8` / `jmp rel32`;
/// - `mov r, r` between registers (`89`/`8b` with mod 11, 32-bit zero-extended or with
///   REX.W 64-bit);
/// - `xor r32, r32` / `xor r64, r64` of a register with itself (zero; CF, OF, SF, AF clear,
///   ZF and PF set);
/// - `sub $imm8, r64` (`REX.W 83 /5 ib`, mod 11).
pub fn step(regs: &user_regs_struct, code: u64) -> Option<(user_regs_struct, Effect)> {
    let b = code.to_le_bytes();
    let mut r = *regs;
    let rip = regs.rip;
    if b[..4] == [0xf3, 0x0f, 0x1e, 0xfa] {
        r.rip = rip + 4;
        return Some((r, Effect::None));
    }
    // One optional REX prefix.
    let (rex, i) = if b[0] & 0xf0 == 0x40 {
        (b[0], 1)
    } else {
        (0, 0)
    };
    let (w, rx, bx) = (rex & 8 != 0, (rex >> 2) & 1, rex & 1);
    let op = b[i];
    match op {
        0x50..=0x57 if rex == 0 || rex & !1 == 0x40 => {
            let v = *reg(&mut r, (op - 0x50) | (bx << 3));
            r.rsp = regs.rsp.wrapping_sub(8);
            r.rip = rip + i as u64 + 1;
            Some((r, Effect::Push(r.rsp, v)))
        }
        0xb8..=0xbf if rex & 0x0e == 0 => {
            let imm = u32::from_le_bytes([b[i + 1], b[i + 2], b[i + 3], b[i + 4]]);
            *reg(&mut r, (op - 0xb8) | (bx << 3)) = u64::from(imm);
            r.rip = rip + i as u64 + 5;
            Some((r, Effect::None))
        }
        0xeb if rex == 0 => {
            r.rip = (rip + 2).wrapping_add(b[1] as i8 as i64 as u64);
            Some((r, Effect::None))
        }
        0xe9 if rex == 0 => {
            let rel = i32::from_le_bytes([b[1], b[2], b[3], b[4]]);
            r.rip = (rip + 5).wrapping_add(rel as i64 as u64);
            Some((r, Effect::None))
        }
        0x89 | 0x8b | 0x31 | 0x33 | 0x83 => {
            let modrm = b[i + 1];
            if modrm >> 6 != 3 {
                return None; // a memory operand
            }
            let regf = ((modrm >> 3) & 7) | (rx << 3);
            let rm = (modrm & 7) | (bx << 3);
            let len = i as u64 + 2;
            let trunc = |v: u64| if w { v } else { v & 0xffff_ffff };
            match op {
                0x89 => {
                    let v = trunc(*reg(&mut r, regf));
                    *reg(&mut r, rm) = v;
                }
                0x8b => {
                    let v = trunc(*reg(&mut r, rm));
                    *reg(&mut r, regf) = v;
                }
                0x31 | 0x33 if regf == rm => {
                    *reg(&mut r, rm) = 0;
                    r.eflags = (r.eflags & !ARITH_FLAGS) | ZF | PF;
                }
                0x83 if w && (modrm >> 3) & 7 == 5 => {
                    let imm = b[i + 2] as i8 as i64 as u64;
                    let a = *reg(&mut r, rm);
                    let res = a.wrapping_sub(imm);
                    *reg(&mut r, rm) = res;
                    r.eflags = (r.eflags & !ARITH_FLAGS) | sub_flags(a, imm, res);
                    r.rip = rip + len + 1;
                    return Some((r, Effect::None));
                }
                _ => return None,
            }
            r.rip = rip + len;
            Some((r, Effect::None))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs() -> user_regs_struct {
        // SAFETY: all-zero is a valid user_regs_struct.
        let mut r: user_regs_struct = unsafe { std::mem::zeroed() };
        r.rip = 0x1000;
        r.rsp = 0x7000;
        r.rax = 0xdead_beef_0000_0001;
        r.rbx = 0x1111;
        r.rsi = 0xffff_ffff_ffff_ffff;
        r.rdx = 0x2222_3333_4444_5555;
        r.r12 = 0x1212;
        r.r15 = 0x1515;
        r.eflags = 0x202 | CF | SF;
        r
    }

    fn code(bytes: &[u8]) -> u64 {
        let mut b = [0x90u8; 8];
        b[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(b)
    }

    #[test]
    fn moves_of_an_immediate_and_between_registers() {
        // mov $0x1,%esi
        let (r, e) = step(&regs(), code(&[0xbe, 1, 0, 0, 0])).unwrap();
        assert_eq!((r.rsi, r.rip, e), (1, 0x1005, Effect::None));
        assert_eq!(r.eflags, regs().eflags);
        // mov $0x10,%r10d
        let (r, _) = step(&regs(), code(&[0x41, 0xba, 0x10, 0, 0, 0])).unwrap();
        assert_eq!((r.r10, r.rip), (0x10, 0x1006));
        // mov %rsi,%rdx (48 89 f2)
        let (r, _) = step(&regs(), code(&[0x48, 0x89, 0xf2])).unwrap();
        assert_eq!((r.rdx, r.rip), (u64::MAX, 0x1003));
        // mov %esi,%edx (89 f2): zero-extended
        let (r, _) = step(&regs(), code(&[0x89, 0xf2])).unwrap();
        assert_eq!((r.rdx, r.rip), (0xffff_ffff, 0x1002));
        // mov %rdx,%r12 via 8b: mov r64 <- r/m64 (4c 8b e2: mov %rdx,%r12)
        let (r, _) = step(&regs(), code(&[0x4c, 0x8b, 0xe2])).unwrap();
        assert_eq!(r.r12, regs().rdx);
    }

    #[test]
    fn pushes_write_the_new_stack_top() {
        // push %r15 (41 57)
        let (r, e) = step(&regs(), code(&[0x41, 0x57])).unwrap();
        assert_eq!((r.rsp, r.rip), (0x6ff8, 0x1002));
        assert_eq!(e, Effect::Push(0x6ff8, 0x1515));
        // push %rbx (53)
        let (r, e) = step(&regs(), code(&[0x53])).unwrap();
        assert_eq!(
            (r.rsp, r.rip, e),
            (0x6ff8, 0x1001, Effect::Push(0x6ff8, 0x1111))
        );
    }

    #[test]
    fn xor_of_a_register_with_itself_and_sub_set_the_flags() {
        // xor %eax,%eax
        let (r, _) = step(&regs(), code(&[0x31, 0xc0])).unwrap();
        assert_eq!((r.rax, r.rip), (0, 0x1002));
        assert_eq!(r.eflags & ARITH_FLAGS, ZF | PF);
        assert_eq!(r.eflags & !ARITH_FLAGS, 0x202);
        // xor %eax,%edx is not done here
        assert!(step(&regs(), code(&[0x31, 0xc2])).is_none());
        // sub $0x8,%rsp (48 83 ec 08)
        let (r, _) = step(&regs(), code(&[0x48, 0x83, 0xec, 0x08])).unwrap();
        assert_eq!((r.rsp, r.rip), (0x6ff8, 0x1004));
        // 0x7000 - 8: a borrow out of bit 3 only, 0xf8 has odd parity.
        assert_eq!(r.eflags & ARITH_FLAGS, AF);
    }

    #[test]
    fn sub_flags_match_the_hardware_rules() {
        assert_eq!(sub_flags(1, 1, 0), ZF | PF);
        assert_eq!(sub_flags(0, 1, u64::MAX), CF | SF | PF | AF);
        let min = 1u64 << 63;
        assert_eq!(sub_flags(min, 1, min - 1) & OF, OF);
    }

    #[test]
    fn jumps_endbr_and_what_is_not_done() {
        // jmp rel32 back by 0x100
        let rel = (-0x100i32).to_le_bytes();
        let (r, _) = step(&regs(), code(&[0xe9, rel[0], rel[1], rel[2], rel[3]])).unwrap();
        assert_eq!(r.rip, 0x1005 - 0x100);
        let (r, _) = step(&regs(), code(&[0xeb, 0x1e])).unwrap();
        assert_eq!(r.rip, 0x1002 + 0x1e);
        let (r, _) = step(&regs(), code(&[0xf3, 0x0f, 0x1e, 0xfa])).unwrap();
        assert_eq!(r.rip, 0x1004);
        // Memory operands and everything else: single-stepped.
        for c in [
            &[0x8b, 0x47, 0x10][..],   // mov 0x10(%rdi),%eax
            &[0x8b, 0x07],             // mov (%rdi),%eax
            &[0xf0, 0xff, 0x0f],       // lock decl (%rdi)
            &[0xc7, 0x07, 1, 0, 0, 0], // movl $1,(%rdi)
            &[0x48, 0x83, 0x3f, 0x00], // cmpq $0,(%rdi)
            &[0x83, 0xfe, 0x01],       // cmp $1,%esi
            &[0x48, 0x83, 0xc4, 0x08], // add $8,%rsp
            &[0x66, 0x90],             // a prefix
        ] {
            assert!(step(&regs(), code(c)).is_none(), "{c:x?}");
        }
    }
}
