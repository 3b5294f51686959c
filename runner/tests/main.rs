//! The runner's end-to-end tests: each file of this folder is a module of this one test
//! binary, so that all of them (39) are compiled and linked once (CI's test build took 38
//! crates, each with its own copy of `common` and of serde_json's code). Run one file's tests
//! with a filter: `cargo test --release -p poscheck --test end_to_end -- explore::`;
//! `scripts/run-tests.py` runs each module as a process of its own, as before.

mod common;

mod baseline;
mod cli;
mod compare;
mod corpus_affinity;
mod corpus_atomics;
mod corpus_blocked;
mod corpus_cancel;
mod corpus_compute;
mod corpus_fork;
mod corpus_futex;
mod corpus_glib;
mod corpus_limits;
mod corpus_omp;
mod corpus_outside;
mod corpus_robust;
mod corpus_rust_mem;
mod corpus_sanitizers;
mod corpus_signals;
mod corpus_spin;
mod corpus_stdlib;
mod corpus_thread_exit;
mod corpus_timers;
mod corpus_vtime;
mod debug_gdb;
mod defects;
mod e2e;
mod explore;
mod install;
mod junit;
mod points;
mod progress;
mod ptrace_backend;
mod races_auto;
mod races_classify;
mod report_html;
mod rff_auto;
mod thread_warning;
mod trace_minimize;
mod transport;
