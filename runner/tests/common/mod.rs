//! Helpers shared by the end-to-end test files (each includes this as `mod common;` and
//! uses what it needs).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

/// The `poscheck` binary under test.
pub const POSCHECK: &str = env!("CARGO_BIN_EXE_poscheck");

/// A command's exit status and both outputs, for assertion messages and `contains` checks.
pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// libpos.so next to `poscheck`, where the runner looks for it; fails the test with the
/// way to build it otherwise.
pub fn require_libpos() -> PathBuf {
    let lib = Path::new(POSCHECK).with_file_name("libpos.so");
    assert!(
        lib.is_file(),
        "{} is missing: build it with `cargo build -p pos-preload` (same profile)",
        lib.display()
    );
    lib
}
