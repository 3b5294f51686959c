//! The real libc functions behind our interposers, found lazily with `dlsym(RTLD_NEXT)`.
//!
//! Each wrapper caches the resolved address in a static, so after the first call forwarding
//! costs one relaxed load. Where glibc exports several versions of a symbol with different
//! behaviour, `dlvsym` picks the one a freshly compiled program links against: on x86-64 the
//! `pthread_cond_*` family has an old `GLIBC_2.2.5` implementation (the pre-2.3.2 condvar
//! layout) next to the current `GLIBC_2.3.2` one, and plain `dlsym` may return the old one.
//! Every other function we forward has a single implementation (checked with `objdump -T`
//! on glibc 2.36: its compat versions are aliases of the same address).
//!
//! Safety of every wrapper: exactly that of the C function it forwards to.
#![allow(clippy::missing_safety_doc)]

use libc::{c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Resolve `name` (NUL-terminated) in the objects after libpos, trying `versions` in order
/// with `dlvsym` and falling back to `dlsym`. Aborts with a message if it does not exist:
/// forwarding is impossible then, and continuing would misbehave silently.
pub fn lookup(cache: &AtomicUsize, name: &'static str, versions: &[&'static str]) -> usize {
    lookup_or_in(cache, name, versions, None)
}

/// [`lookup`], and when nothing after libpos defines `name`, the already loaded `library`
/// (`dlopen(RTLD_NOLOAD)`): a library loaded with `RTLD_LOCAL` (a plugin, a Python extension
/// module's dependency) is not in the global scope, while its callers still reach libpos's
/// interposer first. The cached address stays valid only for a library never unloaded.
pub fn lookup_or_in(
    cache: &AtomicUsize,
    name: &'static str,
    versions: &[&'static str],
    library: Option<&std::ffi::CStr>,
) -> usize {
    debug_assert!(name.ends_with('\0') && versions.iter().all(|v| v.ends_with('\0')));
    let f = cache.load(Ordering::Relaxed);
    if f != 0 {
        return f;
    }
    let cname = name.as_ptr() as *const c_char;
    let mut p: *mut c_void = std::ptr::null_mut();
    for v in versions {
        // SAFETY: both strings are NUL-terminated literals.
        p = unsafe { libc::dlvsym(libc::RTLD_NEXT, cname, v.as_ptr() as *const c_char) };
        if !p.is_null() {
            break;
        }
    }
    if p.is_null() {
        // SAFETY: NUL-terminated literal.
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, cname) };
    }
    if let (true, Some(lib)) = (p.is_null(), library) {
        // SAFETY: NUL-terminated strings; the handle of a library loaded before is closed
        // once used (the library stays loaded).
        unsafe {
            let h = libc::dlopen(lib.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if !h.is_null() {
                p = libc::dlsym(h, cname);
                libc::dlclose(h);
            }
        }
    }
    if p.is_null() {
        crate::conn::die(&format!(
            "cannot find the real {}",
            name.trim_end_matches('\0')
        ));
    }
    cache.store(p as usize, Ordering::Relaxed);
    p as usize
}

/// Define `real::NAME(args)` forwarding to the next definition of `NAME`.
macro_rules! real_fns {
    ($( $(#[versions($($ver:literal),*)])? fn $name:ident($($arg:ident: $t:ty),*) -> $r:ty; )*) => {
        $(
            /// Forward to the real function of this name.
            pub unsafe fn $name($($arg: $t),*) -> $r {
                let f = lookup(
                    &caches::$name,
                    concat!(stringify!($name), "\0"),
                    &[$($(concat!($ver, "\0")),*)?],
                );
                // SAFETY: the symbol has this C signature (see the libc headers).
                let f: unsafe extern "C" fn($($t),*) -> $r = std::mem::transmute(f);
                f($($arg),*)
            }
        )*

        /// The resolved address of each function above, under its name (0: not yet).
        #[allow(non_upper_case_globals)]
        mod caches {
            use std::sync::atomic::AtomicUsize;
            $( pub static $name: AtomicUsize = AtomicUsize::new(0); )*
        }

        /// Each function above: its cache, name and versions, as [`lookup`] takes them.
        static TABLE: &[(&AtomicUsize, &str, &[&str])] = &[
            $( (&caches::$name, concat!(stringify!($name), "\0"), &[$($(concat!($ver, "\0")),*)?]), )*
        ];
    };
}

/// The real functions that every controlled run calls (a run's start, a thread's creation
/// and join, a mutex, a yield), all defined by every glibc since 2.17.
const FOR_EVERY_RUN: &[&str] = &[
    "recvmsg\0",
    "dup2\0",
    "sched_getaffinity\0",
    "sched_setaffinity\0",
    "pthread_create\0",
    "pthread_detach\0",
    "pthread_join\0",
    "pthread_setcancelstate\0",
    "pthread_mutex_lock\0",
    "pthread_mutex_unlock\0",
    "pthread_sigmask\0",
    "sched_yield\0",
    "clock_gettime\0",
    "close\0",
];

/// Resolve [`FOR_EVERY_RUN`] now, in libpos's constructor under the runner: a fork server
/// does it once and every run it forks inherits the addresses, where each run looked a
/// dozen of them up with `dlsym` again (symbol-table walks and page faults in every run,
/// issue 15). A spawned run does the same at the same point, so both start with the same
/// heap (a lookup may record a dependency in the loader's heap). Only functions every
/// glibc defines: a failed lookup would leave an error message in the heap, and abort.
pub fn resolve_for_every_run() {
    for (cache, name, versions) in TABLE {
        if FOR_EVERY_RUN.contains(name) {
            lookup(cache, name, versions);
        }
    }
}

type Mutex = libc::pthread_mutex_t;
type Cond = libc::pthread_cond_t;
type RwLock = libc::pthread_rwlock_t;
type Ts = *const libc::timespec;
type StartFn = extern "C" fn(*mut c_void) -> *mut c_void;

real_fns! {
    fn pthread_create(t: *mut libc::pthread_t, a: *const libc::pthread_attr_t, f: StartFn, arg: *mut c_void) -> c_int;
    fn pthread_join(t: libc::pthread_t, ret: *mut *mut c_void) -> c_int;
    fn pthread_detach(t: libc::pthread_t) -> c_int;
    fn pthread_mutex_lock(m: *mut Mutex) -> c_int;
    fn pthread_mutex_trylock(m: *mut Mutex) -> c_int;
    fn pthread_mutex_timedlock(m: *mut Mutex, t: Ts) -> c_int;
    fn pthread_mutex_clocklock(m: *mut Mutex, c: libc::clockid_t, t: Ts) -> c_int;
    fn pthread_mutex_unlock(m: *mut Mutex) -> c_int;
    fn pthread_mutex_consistent(m: *mut Mutex) -> c_int;
    fn pthread_mutex_init(m: *mut Mutex, a: *const libc::pthread_mutexattr_t) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_wait(c: *mut Cond, m: *mut Mutex) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_timedwait(c: *mut Cond, m: *mut Mutex, t: Ts) -> c_int;
    fn pthread_cond_clockwait(c: *mut Cond, m: *mut Mutex, k: libc::clockid_t, t: Ts) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_signal(c: *mut Cond) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_broadcast(c: *mut Cond) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_init(c: *mut Cond, a: *const libc::pthread_condattr_t) -> c_int;
    #[versions("GLIBC_2.3.2")]
    fn pthread_cond_destroy(c: *mut Cond) -> c_int;
    fn pthread_rwlock_rdlock(l: *mut RwLock) -> c_int;
    fn pthread_rwlock_wrlock(l: *mut RwLock) -> c_int;
    fn pthread_rwlock_tryrdlock(l: *mut RwLock) -> c_int;
    fn pthread_rwlock_trywrlock(l: *mut RwLock) -> c_int;
    fn pthread_rwlock_timedrdlock(l: *mut RwLock, t: Ts) -> c_int;
    fn pthread_rwlock_timedwrlock(l: *mut RwLock, t: Ts) -> c_int;
    fn pthread_rwlock_clockrdlock(l: *mut RwLock, c: libc::clockid_t, t: Ts) -> c_int;
    fn pthread_rwlock_clockwrlock(l: *mut RwLock, c: libc::clockid_t, t: Ts) -> c_int;
    fn pthread_rwlock_unlock(l: *mut RwLock) -> c_int;
    fn pthread_rwlock_init(l: *mut RwLock, a: *const libc::pthread_rwlockattr_t) -> c_int;
    fn pthread_spin_init(s: *mut libc::pthread_spinlock_t, pshared: c_int) -> c_int;
    fn sem_init(s: *mut libc::sem_t, pshared: c_int, value: c_uint) -> c_int;
    fn sem_open(name: *const libc::c_char, oflag: c_int, mode: libc::mode_t, value: c_uint) -> *mut libc::sem_t;
    fn sem_getvalue(s: *mut libc::sem_t, v: *mut c_int) -> c_int;
    fn sem_wait(s: *mut libc::sem_t) -> c_int;
    fn sem_trywait(s: *mut libc::sem_t) -> c_int;
    fn sem_timedwait(s: *mut libc::sem_t, t: Ts) -> c_int;
    fn sem_clockwait(s: *mut libc::sem_t, c: libc::clockid_t, t: Ts) -> c_int;
    fn sem_post(s: *mut libc::sem_t) -> c_int;
    fn pthread_barrier_init(b: *mut libc::pthread_barrier_t, a: *const libc::pthread_barrierattr_t, n: c_uint) -> c_int;
    fn pthread_barrier_wait(b: *mut libc::pthread_barrier_t) -> c_int;
    fn pthread_spin_lock(s: *mut libc::pthread_spinlock_t) -> c_int;
    fn pthread_spin_trylock(s: *mut libc::pthread_spinlock_t) -> c_int;
    fn pthread_spin_unlock(s: *mut libc::pthread_spinlock_t) -> c_int;
    fn pthread_once(o: *mut libc::pthread_once_t, f: extern "C" fn()) -> c_int;
    fn sched_yield() -> c_int;
    fn execve(p: *const libc::c_char, a: *const *const libc::c_char, e: *const *const libc::c_char) -> c_int;
    fn execv(p: *const libc::c_char, a: *const *const libc::c_char) -> c_int;
    fn execvp(p: *const libc::c_char, a: *const *const libc::c_char) -> c_int;
    fn posix_spawn(pid: *mut libc::pid_t, p: *const libc::c_char, fa: *const libc::posix_spawn_file_actions_t, at: *const libc::posix_spawnattr_t, a: *const *const libc::c_char, e: *const *const libc::c_char) -> c_int;
    fn posix_spawnp(pid: *mut libc::pid_t, f: *const libc::c_char, fa: *const libc::posix_spawn_file_actions_t, at: *const libc::posix_spawnattr_t, a: *const *const libc::c_char, e: *const *const libc::c_char) -> c_int;
    fn execvpe(p: *const libc::c_char, a: *const *const libc::c_char, e: *const *const libc::c_char) -> c_int;
    fn system(cmd: *const libc::c_char) -> c_int;
    fn popen(cmd: *const libc::c_char, mode: *const libc::c_char) -> *mut libc::FILE;
    #[versions("GLIBC_2.3.4")]
    fn sched_getaffinity(pid: libc::pid_t, size: libc::size_t, mask: *mut libc::cpu_set_t) -> c_int;
    #[versions("GLIBC_2.3.4")]
    fn sched_setaffinity(pid: libc::pid_t, size: libc::size_t, mask: *const libc::cpu_set_t) -> c_int;
    #[versions("GLIBC_2.32", "GLIBC_2.3.4")]
    fn pthread_getaffinity_np(t: libc::pthread_t, size: libc::size_t, mask: *mut libc::cpu_set_t) -> c_int;
    #[versions("GLIBC_2.34", "GLIBC_2.3.4")]
    fn pthread_setaffinity_np(t: libc::pthread_t, size: libc::size_t, mask: *const libc::cpu_set_t) -> c_int;
    fn pthread_cancel(t: libc::pthread_t) -> c_int;
    fn pthread_testcancel() -> ();
    fn pthread_setcancelstate(state: c_int, old: *mut c_int) -> c_int;
    fn pthread_setcanceltype(kind: c_int, old: *mut c_int) -> c_int;
    fn sleep(s: c_uint) -> c_uint;
    fn usleep(u: libc::useconds_t) -> c_int;
    fn nanosleep(req: Ts, rem: *mut libc::timespec) -> c_int;
    fn clock_nanosleep(c: libc::clockid_t, flags: c_int, req: Ts, rem: *mut libc::timespec) -> c_int;
    fn clock_gettime(c: libc::clockid_t, t: *mut libc::timespec) -> c_int;
    fn time(t: *mut libc::time_t) -> libc::time_t;
    fn timespec_get(t: *mut libc::timespec, base: c_int) -> c_int;
    fn gettimeofday(tv: *mut libc::timeval, tz: *mut c_void) -> c_int;
    fn pthread_timedjoin_np(t: libc::pthread_t, ret: *mut *mut c_void, abs: Ts) -> c_int;
    fn pthread_clockjoin_np(t: libc::pthread_t, ret: *mut *mut c_void, c: libc::clockid_t, abs: Ts) -> c_int;
    fn pthread_tryjoin_np(t: libc::pthread_t, ret: *mut *mut c_void) -> c_int;
    fn close(fd: c_int) -> c_int;
    fn fork() -> libc::pid_t;
    fn waitpid(pid: libc::pid_t, status: *mut c_int, options: c_int) -> libc::pid_t;
    fn wait(status: *mut c_int) -> libc::pid_t;
    fn wait4(pid: libc::pid_t, status: *mut c_int, options: c_int, usage: *mut libc::rusage) -> libc::pid_t;
    fn waitid(idtype: libc::idtype_t, id: libc::id_t, info: *mut libc::siginfo_t, options: c_int) -> c_int;
    fn dup2(old: c_int, new: c_int) -> c_int;
    fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int;
    fn sigaction(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) -> c_int;
    fn signal(sig: c_int, h: libc::sighandler_t) -> libc::sighandler_t;
    fn sigprocmask(how: c_int, set: *const libc::sigset_t, old: *mut libc::sigset_t) -> c_int;
    fn pthread_sigmask(how: c_int, set: *const libc::sigset_t, old: *mut libc::sigset_t) -> c_int;
    fn alarm(seconds: c_uint) -> c_uint;
    fn pthread_kill(t: libc::pthread_t, sig: c_int) -> c_int;
    fn poll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: c_int) -> c_int;
    fn ppoll(fds: *mut libc::pollfd, n: libc::nfds_t, timeout: *const libc::timespec, mask: *const libc::sigset_t) -> c_int;
    fn select(nfds: c_int, r: *mut libc::fd_set, w: *mut libc::fd_set, e: *mut libc::fd_set, tv: *mut libc::timeval) -> c_int;
    fn pselect(nfds: c_int, r: *mut libc::fd_set, w: *mut libc::fd_set, e: *mut libc::fd_set, timeout: *const libc::timespec, mask: *const libc::sigset_t) -> c_int;
    fn epoll_wait(epfd: c_int, events: *mut libc::epoll_event, max: c_int, timeout: c_int) -> c_int;
    fn epoll_pwait(epfd: c_int, events: *mut libc::epoll_event, max: c_int, timeout: c_int, mask: *const libc::sigset_t) -> c_int;
    fn pthread_sigqueue(t: libc::pthread_t, sig: c_int, value: libc::sigval) -> c_int;
    fn kill(pid: libc::pid_t, sig: c_int) -> c_int;
    fn setitimer(which: c_int, new: *const libc::itimerval, old: *mut libc::itimerval) -> c_int;
    fn getitimer(which: c_int, cur: *mut libc::itimerval) -> c_int;
    fn timer_create(clk: libc::clockid_t, ev: *mut libc::sigevent, id: *mut libc::timer_t) -> c_int;
    fn timer_settime(id: libc::timer_t, flags: c_int, new: *const libc::itimerspec, old: *mut libc::itimerspec) -> c_int;
    fn timer_gettime(id: libc::timer_t, cur: *mut libc::itimerspec) -> c_int;
    fn timer_getoverrun(id: libc::timer_t) -> c_int;
    fn timer_delete(id: libc::timer_t) -> c_int;
    fn timerfd_create(clk: libc::clockid_t, flags: c_int) -> c_int;
    fn timerfd_settime(fd: c_int, flags: c_int, new: *const libc::itimerspec, old: *mut libc::itimerspec) -> c_int;
    fn timerfd_gettime(fd: c_int, cur: *mut libc::itimerspec) -> c_int;
    fn read(fd: c_int, buf: *mut c_void, n: usize) -> isize;
    fn recv(fd: c_int, buf: *mut c_void, n: usize, flags: c_int) -> isize;
    fn recvfrom(fd: c_int, buf: *mut c_void, n: usize, flags: c_int, from: *mut libc::sockaddr, len: *mut libc::socklen_t) -> isize;
    fn recvmsg(fd: c_int, msg: *mut libc::msghdr, flags: c_int) -> isize;
    fn setsockopt(fd: c_int, level: c_int, name: c_int, val: *const c_void, len: libc::socklen_t) -> c_int;
    fn __read_chk(fd: c_int, buf: *mut c_void, n: usize, size: usize) -> isize;
    fn pause() -> c_int;
    fn sigsuspend(mask: *const libc::sigset_t) -> c_int;
    fn sigwait(set: *const libc::sigset_t, sig: *mut c_int) -> c_int;
    fn sigwaitinfo(set: *const libc::sigset_t, info: *mut libc::siginfo_t) -> c_int;
    fn sigtimedwait(set: *const libc::sigset_t, info: *mut libc::siginfo_t, timeout: *const libc::timespec) -> c_int;
    fn semtimedop(id: c_int, sops: *mut libc::sembuf, n: libc::size_t, timeout: Ts) -> c_int;
    fn mq_timedreceive(q: libc::mqd_t, msg: *mut c_char, len: libc::size_t, prio: *mut c_uint, abs: Ts) -> libc::ssize_t;
    fn mq_timedsend(q: libc::mqd_t, msg: *const c_char, len: libc::size_t, prio: c_uint, abs: Ts) -> c_int;
    fn syscall(nr: libc::c_long, a1: libc::c_long, a2: libc::c_long, a3: libc::c_long, a4: libc::c_long, a5: libc::c_long, a6: libc::c_long) -> libc::c_long;
}

/// The real `exit` (runs atexit handlers, never returns).
pub unsafe fn exit(code: c_int) -> ! {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let f = lookup(&CACHE, "exit\0", &[]);
    let f: unsafe extern "C" fn(c_int) -> ! = std::mem::transmute(f);
    f(code)
}

/// The real `_exit`.
pub unsafe fn _exit(code: c_int) -> ! {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let f = lookup(&CACHE, "_exit\0", &[]);
    let f: unsafe extern "C" fn(c_int) -> ! = std::mem::transmute(f);
    f(code)
}

/// The real `_Exit`.
#[allow(non_snake_case)]
pub unsafe fn _Exit(code: c_int) -> ! {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let f = lookup(&CACHE, "_Exit\0", &[]);
    let f: unsafe extern "C" fn(c_int) -> ! = std::mem::transmute(f);
    f(code)
}

/// The real `pthread_exit`; it unwinds (forced unwind) through the caller's frames.
pub unsafe fn pthread_exit(ret: *mut c_void) -> ! {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let f = lookup(&CACHE, "pthread_exit\0", &[]);
    let f: unsafe extern "C-unwind" fn(*mut c_void) -> ! = std::mem::transmute(f);
    f(ret)
}

/// The real `__assert_fail` (prints the message and aborts).
pub unsafe fn __assert_fail(
    expr: *const c_char,
    file: *const c_char,
    line: c_uint,
    func: *const c_char,
) -> ! {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    let f = lookup(&CACHE, "__assert_fail\0", &[]);
    let f: unsafe extern "C" fn(*const c_char, *const c_char, c_uint, *const c_char) -> ! =
        std::mem::transmute(f);
    f(expr, file, line, func)
}

/// The program's `main`, as `__libc_start_main` receives it.
pub type MainFn = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

/// The real `__libc_start_main` (the `GLIBC_2.34` one that current binaries reference).
pub unsafe fn __libc_start_main(
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    static CACHE: AtomicUsize = AtomicUsize::new(0);
    // NUL-terminated: dlvsym reads a C string (without the NUL it read on into whatever
    // followed the literal, so the versioned lookup failed or not depending on the build,
    // and with it the dynamic loader's allocations before `main`).
    let f = lookup(&CACHE, "__libc_start_main\0", &["GLIBC_2.34\0"]);
    let f: unsafe extern "C" fn(
        MainFn,
        c_int,
        *mut *mut c_char,
        *mut c_void,
        *mut c_void,
        *mut c_void,
        *mut c_void,
    ) -> c_int = std::mem::transmute(f);
    f(main, argc, argv, init, fini, rtld_fini, stack_end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_resolved_for_every_run_is_forwarded_here() {
        for name in FOR_EVERY_RUN {
            assert!(
                TABLE.iter().any(|(_, n, _)| n == name),
                "{name} is not among the real functions"
            );
        }
    }
}
