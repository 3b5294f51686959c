//! Process control: starting the program under test (fork server, ASLR off, process group),
//! the per-run session with its coordinator and message pump, the ptrace backend, cleanup
//! on signals, and the ELF inspection that decides how a program can be run.

pub mod cleanup;
pub mod elf;
pub mod forkserver;
pub mod inproc;
pub mod journal;
pub mod libpos;
pub mod process;
pub mod ptrace;
pub mod pump;
pub mod rundirs;
pub mod session;
pub mod silence;
