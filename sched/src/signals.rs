//! Which signals libpos runs the program's handlers for under control (its trampoline,
//! `preload/src/signal.rs`): every signal but the faults (their handlers must run where the
//! fault happens, and libpos reports them), `SIGABRT` (libpos's crash report), `SIGSYS`
//! (libpos's seccomp trap), glibc's internal 32 and 33, and those no handler can catch. The
//! runner asks the same question of a program's caught signals (`SigCgt`).

/// Linux's numbers (x86-64) of the signals left out (this crate has no libc).
const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGABRT: i32 = 6;
const SIGBUS: i32 = 7;
const SIGFPE: i32 = 8;
const SIGKILL: i32 = 9;
const SIGSEGV: i32 = 11;
const SIGSTOP: i32 = 19;
const SIGSYS: i32 = 31;

/// Whether libpos runs a handler the program installs for `sig` under control.
pub fn handled_under_control(sig: i32) -> bool {
    (1..=64).contains(&sig)
        && !matches!(
            sig,
            SIGSEGV
                | SIGBUS
                | SIGFPE
                | SIGILL
                | SIGTRAP
                | SIGABRT
                | SIGSYS
                | SIGKILL
                | SIGSTOP
                | 32
                | 33
        )
}

/// The signals of [`handled_under_control`] as a mask of the first 64 (bit `sig - 1`, the
/// layout of `/proc/PID/status` masks).
pub fn handled_under_control_mask() -> u64 {
    (1..=64)
        .filter(|&s| handled_under_control(s))
        .fold(0, |m, s| m | 1u64 << (s - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_abort_sys_and_glibc_s_own_are_not_handled_under_control() {
        const SIGUSR1: i32 = 10;
        const SIGCHLD: i32 = 17;
        assert!(handled_under_control(SIGCHLD) && handled_under_control(SIGUSR1));
        assert!(!handled_under_control(SIGSEGV) && !handled_under_control(32));
        assert!(!handled_under_control(0) && !handled_under_control(65));
        let m = handled_under_control_mask();
        assert_eq!(m & 1 << (SIGCHLD - 1), 1 << (SIGCHLD - 1));
        assert_eq!(m & 1 << (SIGABRT - 1), 0);
    }
}
