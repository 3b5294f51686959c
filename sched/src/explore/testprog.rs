//! A tiny interpreter of scripted threads, driven by [`Coordinator`], to test the exploration
//! algorithms on programs with the event structure of the C benchmarks compiled with tsan
//! instrumentation and `--points mem`: every shared memory access and every synchronisation
//! call is an event, main creates the threads and joins them, threads post their exit.
//!
//! Threads run a small instruction list over eight registers (`r[0]` holds the spawn
//! argument) and a shared memory of `i64` cells.

use super::{Execution, Executor};
use crate::coordinator::{Coordinator, Decision};
use crate::event::{MemOrder, MutexKind, Op, Tid};
use crate::state::State;
use crate::strategy::Strategy;
use std::collections::HashMap;
use std::rc::Rc;

pub type Regs = [i64; 8];
/// An expression over the registers of the executing thread.
pub type E = Rc<dyn Fn(&Regs) -> i64>;

pub fn k(v: i64) -> E {
    Rc::new(move |_| v)
}
pub fn reg(i: usize) -> E {
    Rc::new(move |r| r[i])
}
pub fn f(g: impl Fn(&Regs) -> i64 + 'static) -> E {
    Rc::new(g)
}

/// One instruction. Memory cells and synchronisation objects are numbered; each numbering is
/// mapped to its own address range.
#[derive(Clone)]
pub enum I {
    /// `r[dst] = mem[addr]` (a read event).
    Load {
        addr: E,
        dst: usize,
    },
    /// `mem[addr] = val` (a write event).
    Store {
        addr: E,
        val: E,
    },
    /// Compare-and-swap (an atomic read-modify-write event); `r[dst]` = 1 on success.
    Cas {
        addr: E,
        expect: E,
        new: E,
        dst: usize,
    },
    Lock(E),
    /// `pthread_mutex_lock` of a recursive mutex (the owner may lock it again).
    RecLock(E),
    /// `pthread_mutex_unlock` of a recursive mutex.
    RecUnlock(E),
    Unlock(E),
    SemWait(E),
    SemPost(E),
    /// `pthread_cond_wait(c, m)`: the wait and wake events.
    CondWait {
        c: E,
        m: E,
    },
    Signal(E),
    Broadcast(E),
    RdLock(E),
    WrLock(E),
    RwUnlock(E),
    /// `futex(FUTEX_WAIT)` on memory cell `addr`: compared when posted (while the thread runs
    /// alone, as libpos does); a differing word returns at once with no event.
    FutexWait {
        addr: E,
        val: E,
    },
    /// `futex(FUTEX_WAKE)` of up to `n` waiters of cell `addr`.
    FutexWake {
        addr: E,
        n: u32,
    },
    /// `futex(FUTEX_CMP_REQUEUE)` (or `FUTEX_REQUEUE` when `cmp` is `None`) from cell `addr`
    /// to cell `addr2`: the point, then, if the word equals `cmp` when granted, the requeue.
    Requeue {
        addr: E,
        addr2: E,
        n1: u32,
        n2: u32,
        cmp: Option<E>,
    },
    /// `pthread_barrier_wait(b)`: the arrival and the leave events.
    Barrier(E),
    /// `pthread_once(o, ...)` entered: the `OnceBegin` event; when the once was already done
    /// the thread jumps to `done` (past its init and `OnceEnd`).
    OnceBegin {
        o: E,
        done: usize,
    },
    /// The init routine returned: the `OnceEnd` event.
    OnceEnd(E),
    /// `sched_yield()`.
    Yield,
    /// `usleep`, `nanosleep`: a sleep until virtual time `deadline` (ns).
    SleepUntil(u64),
    /// `pthread_mutex_timedlock` until virtual time `deadline`: `r[dst]` = 0 when taken,
    /// `ETIMEDOUT` when it timed out.
    TimedLock {
        m: E,
        deadline: u64,
        dst: usize,
    },
    /// `pthread_mutex_trylock` (of a recursive mutex with `recursive`): `r[dst]` = 0 when
    /// taken, `EBUSY` when held.
    TryLock {
        m: E,
        recursive: bool,
        dst: usize,
    },
    /// `sem_timedwait` until virtual time `deadline`: `r[dst]` as for [`I::TimedLock`].
    SemTimedWait {
        s: E,
        deadline: u64,
        dst: usize,
    },
    /// Create a thread running body `body` with `r[0] = arg`; its tid goes to `r[dst]`.
    Spawn {
        body: usize,
        arg: i64,
        dst: usize,
    },
    Join(E),
    /// `r[dst] = val` (local, no event).
    Set {
        dst: usize,
        val: E,
    },
    /// Jump to `target` when `cond` is zero (local).
    Jz {
        cond: E,
        target: usize,
    },
    Jmp(usize),
    /// A failed assertion ends the run with a bug (local).
    Assert {
        cond: E,
        msg: &'static str,
    },
    /// A non-fatal check (local): a failure is remembered and the run, which goes on with the
    /// same events, ends with a bug.
    Check(E),
}

/// A program: bodies, the main body (or the initial threads in paper mode), semaphores.
#[derive(Clone, Default)]
pub struct Prog {
    pub bodies: Vec<Vec<I>>,
    /// Body of main (tid 0) in normal mode.
    pub main: usize,
    /// Paper mode: these `(body, arg)` threads exist at step 0 and end without exit events.
    pub initial: Vec<(usize, i64)>,
    /// Semaphores and their initial values.
    pub sems: Vec<(i64, u32)>,
    /// Barriers and their counts.
    pub barriers: Vec<(i64, u32)>,
    /// `--points sync`: memory accesses are not scheduling points (run locally).
    pub sync_only: bool,
}

impl Prog {
    /// The barriers' addresses (as their events name them) and counts.
    pub fn barrier_counts(&self) -> HashMap<u64, u32> {
        self.barriers
            .iter()
            .map(|&(b, n)| (BARRIER + b as u64, n))
            .collect()
    }
}

const MEM: u64 = 0x1000;
/// Not a memory cell's address: set when an [`I::Check`] fails.
const CHECK_FAILED: u64 = u64::MAX;
const MUTEX: u64 = 0x10_0000;
const COND: u64 = 0x20_0000;
const SEM: u64 = 0x30_0000;
const RWLOCK: u64 = 0x40_0000;
const BARRIER: u64 = 0x50_0000;
const ONCE: u64 = 0x60_0000;

fn mem_addr(i: i64) -> u64 {
    MEM + 8 * i as u64
}

#[derive(Clone)]
struct Th {
    body: usize,
    pc: usize,
    r: Regs,
    /// The second half of a condition wait is next.
    waking: bool,
    /// Evaluated operands of the posted instruction: (address, value, expected).
    staged: (u64, i64, i64),
    done: bool,
}

/// Executes a [`Prog`] under a strategy.
pub struct Interp {
    pub prog: Prog,
    pub max_steps: u64,
}

impl Interp {
    pub fn new(prog: Prog) -> Self {
        Interp {
            prog,
            max_steps: 10_000,
        }
    }
}

enum Posted {
    Op(Op),
    Finished,
    Bug(String),
}

impl Interp {
    /// Run thread `t` locally up to its next event.
    fn advance(&self, th: &mut Th, t: Tid, mem: &mut HashMap<u64, i64>) -> Posted {
        let body = &self.prog.bodies[th.body];
        loop {
            let Some(ins) = body.get(th.pc) else {
                return if !self.prog.initial.is_empty() {
                    Posted::Finished
                } else if t == 0 {
                    Posted::Op(Op::ProcessExit { code: 0 })
                } else {
                    Posted::Op(Op::Exit)
                };
            };
            let r = th.r;
            let mutex = |e: &E| Op::Lock {
                m: MUTEX + e(&r) as u64,
                kind: MutexKind::Normal,
            };
            let op = match ins {
                I::Set { dst, val } => {
                    th.r[*dst] = val(&r);
                    th.pc += 1;
                    continue;
                }
                I::Jz { cond, target } => {
                    th.pc = if cond(&r) == 0 { *target } else { th.pc + 1 };
                    continue;
                }
                I::Jmp(target) => {
                    th.pc = *target;
                    continue;
                }
                I::Assert { cond, msg } => {
                    if cond(&r) == 0 {
                        return Posted::Bug(format!("assertion failed: {msg}"));
                    }
                    th.pc += 1;
                    continue;
                }
                I::Check(cond) => {
                    if cond(&r) == 0 {
                        mem.insert(CHECK_FAILED, 1);
                    }
                    th.pc += 1;
                    continue;
                }
                I::Load { .. } | I::Store { .. } | I::Cas { .. } if self.prog.sync_only => {
                    self.access(th, ins, mem);
                    th.pc += 1;
                    continue;
                }
                I::Load { addr, .. } => {
                    th.staged.0 = mem_addr(addr(&r));
                    Op::Read {
                        addr: th.staged.0,
                        size: 8,
                    }
                }
                I::Store { addr, val } => {
                    th.staged = (mem_addr(addr(&r)), val(&r), 0);
                    Op::Write {
                        addr: th.staged.0,
                        size: 8,
                    }
                }
                I::Cas {
                    addr, expect, new, ..
                } => {
                    th.staged = (mem_addr(addr(&r)), new(&r), expect(&r));
                    Op::AtomicRmw {
                        addr: th.staged.0,
                        size: 8,
                        mo: MemOrder::SeqCst,
                        fail: Some(MemOrder::SeqCst),
                    }
                }
                I::Lock(m) => mutex(m),
                I::OnceBegin { o, .. } => Op::OnceBegin {
                    o: ONCE + o(&r) as u64,
                },
                I::OnceEnd(o) => Op::OnceEnd {
                    o: ONCE + o(&r) as u64,
                },
                I::RecLock(m) => Op::Lock {
                    m: MUTEX + m(&r) as u64,
                    kind: MutexKind::Recursive,
                },
                I::Unlock(m) => Op::Unlock {
                    m: MUTEX + m(&r) as u64,
                    kind: MutexKind::Normal,
                },
                I::RecUnlock(m) => Op::Unlock {
                    m: MUTEX + m(&r) as u64,
                    kind: MutexKind::Recursive,
                },
                I::SemWait(s) => Op::SemWait {
                    s: SEM + s(&r) as u64,
                },
                I::TimedLock { m, deadline, .. } => Op::TimedLock {
                    m: MUTEX + m(&r) as u64,
                    kind: MutexKind::Normal,
                    deadline: *deadline,
                },
                I::TryLock { m, recursive, .. } => Op::TryLock {
                    m: MUTEX + m(&r) as u64,
                    kind: if *recursive {
                        MutexKind::Recursive
                    } else {
                        MutexKind::Normal
                    },
                },
                I::SemTimedWait { s, deadline, .. } => Op::SemTimedWait {
                    s: SEM + s(&r) as u64,
                    deadline: *deadline,
                },
                I::SemPost(s) => Op::SemPost {
                    s: SEM + s(&r) as u64,
                },
                I::CondWait { c, m } => {
                    let (c, m) = (COND + c(&r) as u64, MUTEX + m(&r) as u64);
                    if th.waking {
                        Op::CondWake {
                            c,
                            m,
                            deadline: crate::event::NO_DEADLINE,
                        }
                    } else {
                        Op::CondWait { c, m }
                    }
                }
                I::Barrier(b) => {
                    let b = BARRIER + b(&r) as u64;
                    if th.waking {
                        Op::BarrierLeave { b }
                    } else {
                        Op::BarrierWait { b }
                    }
                }
                I::Signal(c) => Op::CondSignal {
                    c: COND + c(&r) as u64,
                },
                I::Broadcast(c) => Op::CondBroadcast {
                    c: COND + c(&r) as u64,
                },
                I::RdLock(l) => Op::RdLock {
                    l: RWLOCK + l(&r) as u64,
                },
                I::WrLock(l) => Op::WrLock {
                    l: RWLOCK + l(&r) as u64,
                },
                I::RwUnlock(l) => Op::RwUnlock {
                    l: RWLOCK + l(&r) as u64,
                },
                I::FutexWait { addr, val } => {
                    let a = mem_addr(addr(&r));
                    if mem.get(&a).copied().unwrap_or(0) != val(&r) {
                        th.pc += 1; // EAGAIN
                        continue;
                    }
                    Op::FutexWait {
                        addr: a,
                        bitset: u32::MAX,
                        deadline: crate::event::NO_DEADLINE,
                    }
                }
                I::FutexWake { addr, n } => Op::FutexWake {
                    addr: mem_addr(addr(&r)),
                    n: *n,
                    bitset: u32::MAX,
                },
                I::Requeue {
                    addr,
                    addr2,
                    n1,
                    n2,
                    ..
                } => {
                    let (addr, addr2) = (mem_addr(addr(&r)), mem_addr(addr2(&r)));
                    let (n1, n2) = (*n1, *n2);
                    if th.waking {
                        Op::FutexRequeued {
                            addr,
                            addr2,
                            n1,
                            n2,
                        }
                    } else {
                        Op::FutexRequeue {
                            addr,
                            addr2,
                            n1,
                            n2,
                        }
                    }
                }
                I::Yield => Op::Yield,
                I::SleepUntil(deadline) => Op::SleepUntil {
                    deadline: *deadline,
                },
                I::Spawn { .. } => Op::Create,
                I::Join(t) => Op::Join {
                    target: t(&r) as Tid,
                },
            };
            return Posted::Op(op);
        }
    }

    /// Perform a memory instruction on `mem` (operands evaluated now).
    fn access(&self, th: &mut Th, ins: &I, mem: &mut HashMap<u64, i64>) {
        let r = th.r;
        match ins {
            I::Load { addr, dst } => {
                th.r[*dst] = mem.get(&mem_addr(addr(&r))).copied().unwrap_or(0)
            }
            I::Store { addr, val } => {
                mem.insert(mem_addr(addr(&r)), val(&r));
            }
            I::Cas {
                addr,
                expect,
                new,
                dst,
            } => {
                let cur = mem.entry(mem_addr(addr(&r))).or_insert(0);
                let ok = *cur == expect(&r);
                if ok {
                    *cur = new(&r);
                }
                th.r[*dst] = i64::from(ok);
            }
            _ => {}
        }
    }

    /// Apply the effect of thread `t`'s granted event.
    fn granted(
        &self,
        th: &mut Th,
        mem: &mut HashMap<u64, i64>,
        child: Option<Tid>,
        result: i32,
    ) -> Option<Th> {
        let Some(ins) = self.prog.bodies[th.body].get(th.pc) else {
            th.done = true;
            return None;
        };
        let (addr, val, expect) = th.staged;
        let mut spawned = None;
        match ins {
            I::Load { dst, .. } => th.r[*dst] = mem.get(&addr).copied().unwrap_or(0),
            I::Store { .. } => {
                mem.insert(addr, val);
            }
            I::Cas { dst, .. } => {
                let cur = mem.entry(addr).or_insert(0);
                th.r[*dst] = i64::from(*cur == expect);
                if *cur == expect {
                    *cur = val;
                }
            }
            I::TimedLock { dst, .. } | I::SemTimedWait { dst, .. } | I::TryLock { dst, .. } => {
                th.r[*dst] = i64::from(result);
            }
            I::CondWait { .. } if !th.waking => {
                th.waking = true;
                return None;
            }
            I::CondWait { .. } => th.waking = false,
            I::Barrier(_) if !th.waking => {
                th.waking = true;
                return None;
            }
            I::Barrier(_) => th.waking = false,
            I::Requeue { addr, cmp, .. } if !th.waking => {
                let a = mem_addr(addr(&th.r));
                let word = mem.get(&a).copied().unwrap_or(0);
                if cmp.as_ref().is_none_or(|c| c(&th.r) == word) {
                    th.waking = true;
                    return None;
                }
            }
            I::Requeue { .. } => th.waking = false,
            I::OnceBegin { done, .. } if result == crate::state::code::ONCE_DONE => {
                th.pc = *done;
                return None;
            }
            I::Spawn { body, arg, dst } => {
                let c = child.unwrap_or(0);
                th.r[*dst] = c as i64;
                let mut r = [0; 8];
                r[0] = *arg;
                spawned = Some(Th {
                    body: *body,
                    pc: 0,
                    r,
                    waking: false,
                    staged: (0, 0, 0),
                    done: false,
                });
            }
            _ => {}
        }
        th.pc += 1;
        spawned
    }
}

impl Executor for Interp {
    fn initial_threads(&self) -> usize {
        self.prog.initial.len().max(1)
    }

    fn execute(&mut self, strategy: &mut dyn Strategy) -> Execution {
        let fresh = |body: usize, arg: i64| {
            let mut r = [0; 8];
            r[0] = arg;
            Th {
                body,
                pc: 0,
                r,
                waking: false,
                staged: (0, 0, 0),
                done: false,
            }
        };
        let (state, mut threads) = if self.prog.initial.is_empty() {
            (State::new(), vec![fresh(self.prog.main, 0)])
        } else {
            let ths = self
                .prog
                .initial
                .iter()
                .map(|&(b, a)| fresh(b, a))
                .collect();
            (State::with_initial_threads(self.prog.initial.len()), ths)
        };
        let mut co = Coordinator::with_state(strategy, 0, self.max_steps, state);
        for &(s, v) in &self.prog.sems {
            co.init_sem(SEM + s as u64, v);
        }
        for &(b, n) in &self.prog.barriers {
            co.init_barrier(BARRIER + b as u64, n);
        }
        let mut mem: HashMap<u64, i64> = HashMap::new();
        let mut out = Execution::default();
        loop {
            let running: Vec<Tid> = co.state().running().collect();
            for t in running {
                match self.advance(&mut threads[t as usize], t, &mut mem) {
                    Posted::Op(op) => {
                        if let Err(e) = co.post(t, op) {
                            out.bug = Some(format!("protocol error: {e}"));
                            out.trace = co.trace().to_vec();
                            return out;
                        }
                    }
                    Posted::Finished => co.state_mut().mark_finished(t),
                    Posted::Bug(msg) => {
                        out.bug = Some(msg);
                        out.trace = co.trace().to_vec();
                        return out;
                    }
                }
            }
            match co.decide() {
                Decision::Grant {
                    tid, child, result, ..
                } => {
                    let th = &mut threads[tid as usize];
                    if let Some(new) = self.granted(th, &mut mem, child, result) {
                        threads.push(new);
                    }
                }
                Decision::Wait => {
                    out.bug = Some("interpreter left a thread running".into());
                    break;
                }
                Decision::Over => {
                    if mem.contains_key(&CHECK_FAILED) {
                        out.bug = Some("a check failed".into());
                    }
                    break;
                }
                Decision::Deadlock(d) => {
                    out.bug = Some(format!("deadlock: {d}"));
                    break;
                }
                Decision::StepLimit => {
                    out.bug = Some("step limit (livelock)".into());
                    break;
                }
                Decision::Diverged(d) => {
                    out.diverged = Some(d);
                    break;
                }
            }
        }
        out.trace = co.trace().to_vec();
        co.finish();
        out
    }
}

/// Main creates one thread per `(body, arg)`, then joins them all in creation order.
pub fn with_main(mut bodies: Vec<Vec<I>>, threads: &[(usize, i64)]) -> Prog {
    let mut main = Vec::new();
    for &(body, arg) in threads {
        main.push(I::Spawn { body, arg, dst: 7 });
    }
    for t in 1..=threads.len() {
        main.push(I::Join(k(t as i64)));
    }
    bodies.push(main);
    Prog {
        main: bodies.len() - 1,
        bodies,
        ..Default::default()
    }
}

/// readers(n): one writer `x = 1`, `n` readers `l = x`.
pub fn readers(n: usize) -> Prog {
    let writer = vec![I::Store {
        addr: k(0),
        val: k(1),
    }];
    let reader = vec![I::Load { addr: k(0), dst: 1 }];
    let mut threads = vec![(0, 0)];
    threads.extend((0..n).map(|_| (1, 0)));
    with_main(vec![writer, reader], &threads)
}

/// lastzero(n): `int a[n+1]`; thread 0: `for (i = n; a[i] != 0; i--);`;
/// thread j = 1..n: `a[j] = a[j-1] + 1`.
pub fn lastzero(n: usize) -> Prog {
    let scan = vec![
        I::Set {
            dst: 2,
            val: k(n as i64),
        },
        I::Load {
            addr: reg(2),
            dst: 1,
        },
        I::Jz {
            cond: reg(1),
            target: 5,
        },
        I::Set {
            dst: 2,
            val: f(|r| r[2] - 1),
        },
        I::Jmp(1),
    ];
    let inc = vec![
        I::Load {
            addr: f(|r| r[0] - 1),
            dst: 1,
        },
        I::Store {
            addr: reg(0),
            val: f(|r| r[1] + 1),
        },
    ];
    let mut threads = vec![(0, 0)];
    threads.extend((1..=n).map(|j| (1, j as i64)));
    with_main(vec![scan, inc], &threads)
}

/// indexer(n): each thread inserts `w = m*11 + tid` (m = 1..4) into a 128-slot hash table at
/// `h = (w*7) % 128`, probing linearly with compare-and-swap from 0.
pub fn indexer(n: usize) -> Prog {
    // r0 = tid, r1 = m, r2 = w, r3 = h, r4 = cas result.
    let body = vec![
        I::Set { dst: 1, val: k(1) },
        // 1: while m <= 4
        I::Jz {
            cond: f(|r| i64::from(r[1] <= 4)),
            target: 10,
        },
        I::Set {
            dst: 2,
            val: f(|r| r[1] * 11 + r[0]),
        },
        I::Set {
            dst: 3,
            val: f(|r| (r[2] * 7) % 128),
        },
        // 4: cas(table[h], 0, w)
        I::Cas {
            addr: reg(3),
            expect: k(0),
            new: reg(2),
            dst: 4,
        },
        I::Jz {
            cond: f(|r| 1 - r[4]),
            target: 8,
        },
        I::Set {
            dst: 3,
            val: f(|r| (r[3] + 1) % 128),
        },
        I::Jmp(4),
        // 8: next m
        I::Set {
            dst: 1,
            val: f(|r| r[1] + 1),
        },
        I::Jmp(1),
    ];
    let threads: Vec<(usize, i64)> = (0..n).map(|t| (0, t as i64)).collect();
    with_main(vec![body], &threads)
}

/// filesystem(n): 32 inode locks, 26 block locks, `int inode[32], busy[26]`; thread tid
/// allocates a block for inode `tid % 32` if it has none (see the task description).
pub fn filesystem(n: usize) -> Prog {
    const INODE: i64 = 0; // memory cells 0..32
    const BUSY: i64 = 100; // memory cells 100..126
    const BLOCK_LOCK: i64 = 64; // mutexes 0..32 are inode locks, 64..90 block locks
                                // r1 = i, r2 = inode[i], r3 = b, r4 = busy[b]
    let body = vec![
        I::Set {
            dst: 1,
            val: f(|r| r[0] % 32),
        },
        I::Lock(reg(1)),
        I::Load {
            addr: f(|r| INODE + r[1]),
            dst: 2,
        },
        I::Jz {
            cond: f(|r| i64::from(r[2] == 0)),
            target: 15,
        },
        I::Set {
            dst: 3,
            val: f(|r| (r[1] * 2) % 26),
        },
        // 5: loop
        I::Lock(f(|r| BLOCK_LOCK + r[3])),
        I::Load {
            addr: f(|r| BUSY + r[3]),
            dst: 4,
        },
        I::Jz {
            cond: f(|r| i64::from(r[4] == 0)),
            target: 12,
        },
        I::Store {
            addr: f(|r| BUSY + r[3]),
            val: k(1),
        },
        I::Store {
            addr: f(|r| INODE + r[1]),
            val: f(|r| r[3] + 1),
        },
        I::Unlock(f(|r| BLOCK_LOCK + r[3])),
        I::Jmp(15),
        // 12: busy
        I::Unlock(f(|r| BLOCK_LOCK + r[3])),
        I::Set {
            dst: 3,
            val: f(|r| (r[3] + 1) % 26),
        },
        I::Jmp(5),
        // 15:
        I::Unlock(reg(1)),
    ];
    let threads: Vec<(usize, i64)> = (0..n).map(|t| (0, t as i64)).collect();
    with_main(vec![body], &threads)
}

/// Paper mode: two threads existing from the start, each writing `n` private cells.
pub fn independent_pair(n: usize) -> Prog {
    let body = |base: i64| -> Vec<I> {
        (0..n as i64)
            .map(|i| I::Store {
                addr: k(base + i),
                val: k(1),
            })
            .collect()
    };
    Prog {
        bodies: vec![body(0), body(100)],
        initial: vec![(0, 0), (1, 0)],
        ..Default::default()
    }
}

/// Dining philosophers (`--points sync`): philosopher i locks fork i, then fork i+1 mod n
/// (deadlock-prone), then unlocks both.
pub fn philosophers(n: usize) -> Prog {
    let body = vec![
        I::Lock(reg(0)),
        I::Lock(f(move |r| (r[0] + 1) % n as i64)),
        I::Unlock(f(move |r| (r[0] + 1) % n as i64)),
        I::Unlock(reg(0)),
    ];
    let threads: Vec<(usize, i64)> = (0..n).map(|t| (0, t as i64)).collect();
    Prog {
        sync_only: true,
        ..with_main(vec![body], &threads)
    }
}

/// Bounded buffer (`--points sync`): `slots` slots guarded by semaphores `empty` (0) and
/// `full` (1) and mutex 0; each producer puts `items`, each consumer takes `items`.
pub fn bounded_buffer(producers: usize, consumers: usize, slots: u32, items: i64) -> Prog {
    // r1 = items left, r2 = scratch. Memory: 0 = count.
    let side = |wait: i64, post: i64, delta: i64| {
        vec![
            I::Set {
                dst: 1,
                val: k(items),
            },
            // 1:
            I::Jz {
                cond: reg(1),
                target: 10,
            },
            I::SemWait(k(wait)),
            I::Lock(k(0)),
            I::Load { addr: k(0), dst: 2 },
            I::Store {
                addr: k(0),
                val: f(move |r| r[2] + delta),
            },
            I::Unlock(k(0)),
            I::SemPost(k(post)),
            I::Set {
                dst: 1,
                val: f(|r| r[1] - 1),
            },
            I::Jmp(1),
        ]
    };
    let mut threads: Vec<(usize, i64)> = (0..producers).map(|_| (0, 0)).collect();
    threads.extend((0..consumers).map(|_| (1, 0)));
    Prog {
        sync_only: true,
        sems: vec![(0, slots), (1, 0)],
        ..with_main(vec![side(0, 1, 1), side(1, 0, -1)], &threads)
    }
}

/// Readers-writers with a mutex and a condition variable (`--points sync`): readers wait
/// while a writer writes, the last reader out signals; writers wait while anyone is inside
/// and broadcast when done. Memory: 0 = readers inside, 1 = writing.
pub fn readers_writers(readers: usize, writers: usize) -> Prog {
    let reader = vec![
        I::Lock(k(0)),
        // 1:
        I::Load { addr: k(1), dst: 1 },
        I::Jz {
            cond: reg(1),
            target: 5,
        },
        I::CondWait { c: k(0), m: k(0) },
        I::Jmp(1),
        // 5:
        I::Load { addr: k(0), dst: 2 },
        I::Store {
            addr: k(0),
            val: f(|r| r[2] + 1),
        },
        I::Unlock(k(0)),
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 2 },
        I::Store {
            addr: k(0),
            val: f(|r| r[2] - 1),
        },
        I::Jz {
            cond: f(|r| i64::from(r[2] == 1)),
            target: 13,
        },
        I::Signal(k(0)),
        // 13:
        I::Unlock(k(0)),
    ];
    let writer = vec![
        I::Lock(k(0)),
        // 1:
        I::Load { addr: k(1), dst: 1 },
        I::Load { addr: k(0), dst: 2 },
        I::Jz {
            cond: f(|r| i64::from(r[1] != 0 || r[2] != 0)),
            target: 6,
        },
        I::CondWait { c: k(0), m: k(0) },
        I::Jmp(1),
        // 6:
        I::Store {
            addr: k(1),
            val: k(1),
        },
        I::Unlock(k(0)),
        I::Lock(k(0)),
        I::Store {
            addr: k(1),
            val: k(0),
        },
        I::Broadcast(k(0)),
        I::Unlock(k(0)),
    ];
    let mut threads: Vec<(usize, i64)> = (0..readers).map(|_| (0, 0)).collect();
    threads.extend((0..writers).map(|_| (1, 0)));
    Prog {
        sync_only: true,
        ..with_main(vec![reader, writer], &threads)
    }
}

/// Lost update: two threads each do `r = x; x = r + 1`; main asserts `x == 2` after the
/// joins. The bug needs one preemption (a thread switched out between its read and write).
pub fn lost_update() -> Prog {
    let inc = vec![
        I::Load { addr: k(0), dst: 1 },
        I::Store {
            addr: k(0),
            val: f(|r| r[1] + 1),
        },
    ];
    let mut p = with_main(vec![inc], &[(0, 0), (0, 0)]);
    let main = p.main;
    p.bodies[main].push(I::Load { addr: k(0), dst: 1 });
    p.bodies[main].push(I::Assert {
        cond: f(|r| i64::from(r[1] == 2)),
        msg: "x == 2",
    });
    p
}

/// Thread 1 writes `x = 1` then `x = 2`; thread 2 reads `x` twice and asserts it did not see
/// 1 then 2. The bug needs two preemptions (t2 between t1's writes, t1 back before t2's read).
pub fn two_preemptions() -> Prog {
    let writer = vec![
        I::Store {
            addr: k(0),
            val: k(1),
        },
        I::Store {
            addr: k(0),
            val: k(2),
        },
    ];
    let reader = vec![
        I::Load { addr: k(0), dst: 1 },
        I::Load { addr: k(0), dst: 2 },
        I::Assert {
            cond: f(|r| i64::from(!(r[1] == 1 && r[2] == 2))),
            msg: "saw 1 then 2",
        },
    ];
    with_main(vec![writer, reader], &[(0, 0), (1, 0)])
}

/// Thread 1 writes `x = 1`, thread 2 writes `y = 1`, thread 3 reads `x` then `y` and
/// asserts it saw at least one write. The default run (each thread to the end, in creation
/// order) has both writes before both reads: the bug needs both write-read conflicts
/// reversed (two conflict reversals), yet no preemption.
pub fn saw_neither() -> Prog {
    let write = |a| {
        vec![I::Store {
            addr: k(a),
            val: k(1),
        }]
    };
    let reader = vec![
        I::Load { addr: k(0), dst: 1 },
        I::Load { addr: k(1), dst: 2 },
        I::Assert {
            cond: f(|r| i64::from(r[1] == 1 || r[2] == 1)),
            msg: "saw a write",
        },
    ];
    with_main(vec![write(0), write(1), reader], &[(0, 0), (1, 0), (2, 0)])
}

/// `threads` threads each entering a critical section on one mutex `rounds` times
/// (`--points sync`): (threads·rounds)! / (rounds!)^threads lock orders.
pub fn mutex_rounds(threads: usize, rounds: usize) -> Prog {
    let mut body = Vec::new();
    for _ in 0..rounds {
        body.push(I::Lock(k(0)));
        body.push(I::Unlock(k(0)));
    }
    let ts: Vec<(usize, i64)> = (0..threads).map(|_| (0, 0)).collect();
    Prog {
        sync_only: true,
        ..with_main(vec![body], &ts)
    }
}

/// Main asserts `mem[0] == want` after the joins (the lost-update check of the suite
/// programs).
fn assert_total(mut p: Prog, want: i64, msg: &'static str) -> Prog {
    let main = p.main;
    p.bodies[main].push(I::Load { addr: k(0), dst: 1 });
    p.bodies[main].push(I::Assert {
        cond: f(move |r| i64::from(r[1] == want)),
        msg,
    });
    p
}

/// The suite's `sem_wrong_init` (`--points sync`): three workers each `sem_wait(s); v = x;
/// lock(stats); unlock(stats); x = v + 1; sem_post(s)`, the semaphore initialised to `init`;
/// main asserts `x == 3`. With 2, two workers are inside at once (lost update).
pub fn sem_as_mutex(init: u32) -> Prog {
    let body = vec![
        I::SemWait(k(0)),
        I::Load { addr: k(0), dst: 1 },
        I::Lock(k(0)),
        I::Unlock(k(0)),
        I::Store {
            addr: k(0),
            val: f(|r| r[1] + 1),
        },
        I::SemPost(k(0)),
    ];
    let p = Prog {
        sync_only: true,
        sems: vec![(0, init)],
        ..with_main(vec![body], &[(0, 0), (0, 0), (0, 0)])
    };
    assert_total(p, 3, "x == 3")
}

/// The suite's `rwlock_upgrade` (`--points sync`): two threads each `rdlock; v = x; unlock;
/// wrlock; x = v + 1; unlock`; main asserts `x == 2` (lost when both read before a write).
pub fn rwlock_upgrade() -> Prog {
    let body = vec![
        I::RdLock(k(0)),
        I::Load { addr: k(0), dst: 1 },
        I::RwUnlock(k(0)),
        I::WrLock(k(0)),
        I::Store {
            addr: k(0),
            val: f(|r| r[1] + 1),
        },
        I::RwUnlock(k(0)),
    ];
    let p = Prog {
        sync_only: true,
        ..with_main(vec![body], &[(0, 0), (0, 0)])
    };
    assert_total(p, 2, "x == 2")
}

/// One writer (`wrlock; unlock`) and `readers` readers (`rdlock; unlock`) on one rwlock
/// (`--points sync`). Read sections commute, so a trace is fixed by which readers come
/// before the writer: 2^readers traces.
pub fn rw_sections(readers: usize) -> Prog {
    let writer = vec![I::WrLock(k(0)), I::RwUnlock(k(0))];
    let reader = vec![I::RdLock(k(0)), I::RwUnlock(k(0))];
    let mut threads = vec![(0, 0)];
    threads.extend((0..readers).map(|_| (1, 0)));
    Prog {
        sync_only: true,
        ..with_main(vec![writer, reader], &threads)
    }
}

/// A spin wait (`--points mem`): thread 1 `while (!flag) sched_yield();`, thread 2 `flag =
/// 1`. Under an unfair lowest-thread-first rule thread 1 spins forever once it runs first.
pub fn spin_wait() -> Prog {
    let waiter = vec![
        // 0:
        I::Load { addr: k(0), dst: 1 },
        I::Jz {
            cond: f(|r| i64::from(r[1] == 0)),
            target: 4,
        },
        I::Yield,
        I::Jmp(0),
        // 4: done
    ];
    let setter = vec![I::Store {
        addr: k(0),
        val: k(1),
    }];
    with_main(vec![waiter, setter], &[(0, 0), (1, 0)])
}

/// A lock-polling wait (`--points mem`): thread 1 `for (;;) { lock(m); r = ready; unlock(m);
/// if (r) break; }` then reads `data`; thread 2 publishes `ready = 1` under the mutex. With
/// `bug`, thread 2 writes `data` only after its unlock, so the poller may read it too early
/// (found by a trace where the poller polls after the publication and before the write). No
/// yield in the loop: under a lowest-thread-first rule the poller never let thread 2 run.
pub fn lock_poll(bug: bool) -> Prog {
    let poller = vec![
        // 0:
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 1 },
        I::Unlock(k(0)),
        I::Jz {
            cond: f(|r| r[1]),
            target: 0,
        },
        I::Load { addr: k(1), dst: 2 },
        I::Assert {
            cond: f(|r| r[2]),
            msg: "data read before it was written",
        },
    ];
    let data = I::Store {
        addr: k(1),
        val: k(1),
    };
    let mut setter = Vec::new();
    if !bug {
        setter.push(data.clone());
    }
    setter.extend([
        I::Lock(k(0)),
        I::Store {
            addr: k(0),
            val: k(1),
        },
        I::Unlock(k(0)),
    ]);
    if bug {
        setter.push(data);
    }
    with_main(vec![poller, setter], &[(0, 0), (1, 0)])
}

/// An exit holding a lock (`--points mem`): main `lock(m); r = x; assert(r == 0);` and
/// returns while holding `m`; a thread `lock(m); x = 1; unlock(m)`. The first run (main
/// first) exits before the thread's lock, which the held mutex keeps from running before the
/// exit: only a race with main's own lock, analysed as if the pending lock came before the
/// exit, leads to the run where the thread goes first and main's assertion fails.
pub fn exit_holding_lock() -> Prog {
    let worker = vec![
        I::Lock(k(0)),
        I::Store {
            addr: k(0),
            val: k(1),
        },
        I::Unlock(k(0)),
    ];
    let main = vec![
        I::Spawn {
            body: 0,
            arg: 0,
            dst: 7,
        },
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 1 },
        I::Assert {
            cond: f(|r| i64::from(r[1] == 0)),
            msg: "the thread ran first",
        },
    ];
    Prog {
        main: 1,
        bodies: vec![worker, main],
        ..Default::default()
    }
}

/// A futex mutex on cell `m` (0 free, 1 held, 2 held with waiters), appended to `b`.
/// `contended` locks as a thread that may have waiters behind it must (glibc's `lock_wait`):
/// it always leaves 2, so its unlock wakes the next one.
fn futex_lock(b: &mut Vec<I>, m: i64, contended: bool) {
    let start = b.len();
    if !contended {
        b.push(I::Cas {
            addr: k(m),
            expect: k(0),
            new: k(1),
            dst: 3,
        });
        // Taken: jump past the slow path (7 instructions from here).
        b.push(I::Jz {
            cond: f(|r| 1 - r[3]),
            target: start + 7,
        });
    }
    let slow = b.len();
    b.push(I::Cas {
        addr: k(m),
        expect: k(1),
        new: k(2),
        dst: 3,
    });
    b.push(I::Cas {
        addr: k(m),
        expect: k(0),
        new: k(2),
        dst: 3,
    });
    let done = slow + 5;
    b.push(I::Jz {
        cond: f(|r| 1 - r[3]),
        target: done,
    });
    b.push(I::FutexWait {
        addr: k(m),
        val: k(2),
    });
    b.push(I::Jmp(slow));
}

/// Unlock the futex mutex on cell `m`: wake one waiter when the word said there may be some.
fn futex_unlock(b: &mut Vec<I>, m: i64) {
    let start = b.len();
    b.push(I::Cas {
        addr: k(m),
        expect: k(1),
        new: k(0),
        dst: 3,
    });
    b.push(I::Jz {
        cond: f(|r| 1 - r[3]),
        target: start + 4,
    });
    b.push(I::Store {
        addr: k(m),
        val: k(0),
    });
    b.push(I::FutexWake { addr: k(m), n: 1 });
}

/// A condition-variable broadcast built on futexes, as older glibc did it: `waiters` threads
/// wait under a futex mutex (cell 1) for `ready` (cell 2), sleeping on a sequence word
/// (cell 0); the broadcaster sets `ready`, bumps the sequence and `FUTEX_CMP_REQUEUE`s one
/// waiter awake and the rest onto the mutex word. With `buggy`, a woken waiter relocks the
/// mutex the uncontended way (word 1), so its unlock wakes nobody and a requeued waiter can
/// sleep forever (a lost wake-up: deadlock at main's join).
pub fn futex_requeue_broadcast(waiters: usize, buggy: bool) -> Prog {
    let mut w = Vec::new();
    futex_lock(&mut w, 1, false);
    let check = w.len();
    w.push(I::Load { addr: k(2), dst: 1 });
    let wait = check + 3;
    w.push(I::Jz {
        cond: reg(1),
        target: wait,
    });
    let jmp_end = w.len();
    w.push(I::Jmp(0)); // patched below
    w.push(I::Load { addr: k(0), dst: 2 });
    futex_unlock(&mut w, 1);
    w.push(I::FutexWait {
        addr: k(0),
        val: reg(2),
    });
    futex_lock(&mut w, 1, !buggy);
    w.push(I::Jmp(check));
    let end = w.len();
    w[jmp_end] = I::Jmp(end);
    futex_unlock(&mut w, 1);

    let mut bc = Vec::new();
    futex_lock(&mut bc, 1, false);
    bc.push(I::Store {
        addr: k(2),
        val: k(1),
    });
    bc.push(I::Load { addr: k(0), dst: 2 });
    bc.push(I::Store {
        addr: k(0),
        val: f(|r| r[2] + 1),
    });
    bc.push(I::Requeue {
        addr: k(0),
        addr2: k(1),
        n1: 1,
        n2: i32::MAX as u32,
        cmp: Some(f(|r| r[2] + 1)),
    });
    futex_unlock(&mut bc, 1);
    let mut threads = vec![(0, 0); waiters];
    threads.push((1, 0));
    // Scheduled at its synchronisation (futex) operations only, as `--points sync` runs a
    // real program: the word updates run while their thread runs alone.
    Prog {
        sync_only: true,
        ..with_main(vec![w, bc], &threads)
    }
}

/// `n` threads each `sem_wait(s); sem_post(s)` on a semaphore initialised to 1 (a semaphore
/// used as a lock): the traces are the `n!` orders in which the threads enter.
pub fn sem_lock(n: usize) -> Prog {
    let body = vec![I::SemWait(k(0)), I::SemPost(k(0))];
    let ts: Vec<(usize, i64)> = (0..n).map(|_| (0, 0)).collect();
    Prog {
        sync_only: true,
        sems: vec![(0, 1)],
        ..with_main(vec![body], &ts)
    }
}

/// `n` threads each `pthread_barrier_wait(b)` (count `n`) then `lock(m); unlock(m)`: the
/// traces are the choice of the thread whose arrival completes the barrier (it returns
/// `PTHREAD_BARRIER_SERIAL_THREAD`) times the `n!` lock orders; with `barrier` false, the
/// `n!` lock orders alone.
pub fn start_barrier(n: usize, barrier: bool) -> Prog {
    let mut body = Vec::new();
    if barrier {
        body.push(I::Barrier(k(0)));
    }
    body.extend([I::Lock(k(0)), I::Unlock(k(0))]);
    let ts: Vec<(usize, i64)> = (0..n).map(|_| (0, 0)).collect();
    Prog {
        sync_only: true,
        barriers: if barrier { vec![(0, n as u32)] } else { vec![] },
        ..with_main(vec![body], &ts)
    }
}

/// A flag read without a scheduling point (`--points sync`), whose value decides what the
/// reader does next: thread 1 `lock(m); flag = 1; unlock(m)`; thread 2 `lock(m); unlock(m)`;
/// thread 3 `sched_yield()`, reads `flag` (no event): if set, `lock(n); unlock(n)`; else
/// `sched_yield();
/// lock(m); v = flag; unlock(m); assert(v)` — the bug: thread 3 runs before thread 1 and
/// takes `m` first. A reordering of the two `m` sections that moves thread 3's events before
/// thread 1's (Optimal-DPOR's reversal, a race variant of reachability testing) changes
/// thread 3's next events: the forced prefix diverges.
pub fn hidden_flag() -> Prog {
    let setter = vec![
        I::Lock(k(0)),
        I::Store {
            addr: k(0),
            val: k(1),
        },
        I::Unlock(k(0)),
    ];
    let other = vec![I::Lock(k(0)), I::Unlock(k(0))];
    let reader = vec![
        // 0: a scheduling point before the read, so the read sees the flag as of then
        I::Yield,
        I::Load { addr: k(0), dst: 1 },
        I::Jz {
            cond: reg(1),
            target: 5,
        },
        I::Lock(k(1)),
        I::Jmp(11),
        // 5: the flag was not set yet
        I::Yield,
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 2 },
        I::Unlock(k(0)),
        I::Assert {
            cond: reg(2),
            msg: "flag set before the reader took m",
        },
        I::Jmp(12),
        // 11:
        I::Unlock(k(1)),
        // 12: done
    ];
    Prog {
        sync_only: true,
        ..with_main(vec![setter, other, reader], &[(0, 0), (1, 0), (2, 0)])
    }
}

/// A check at this place of a thread: with `fatal`, an assertion that ends the run there (as
/// in the C program); else an [`I::Check`], after which the run goes on with the same events.
fn check(fatal: bool, ok: E, msg: &'static str) -> I {
    if fatal {
        I::Assert { cond: ok, msg }
    } else {
        I::Check(ok)
    }
}

/// `benchmarks/src/cond_if.c` at synchronisation points: two consumers each
/// `lock; if (items == 0) wait; assert(items > 0); items--; unlock`, one producer adding two
/// items (`lock; items++; signal; unlock`, twice). Memory: 0 = items. Checks: see [`check`].
pub fn cond_if(fatal: bool) -> Prog {
    let consumer = vec![
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 1 },
        I::Jz {
            cond: f(|r| i64::from(r[1] == 0)),
            target: 4,
        },
        I::CondWait { c: k(0), m: k(0) },
        // 4:
        I::Load { addr: k(0), dst: 1 },
        check(fatal, f(|r| i64::from(r[1] > 0)), "items > 0"),
        I::Store {
            addr: k(0),
            val: f(|r| r[1] - 1),
        },
        I::Unlock(k(0)),
    ];
    let mut producer = Vec::new();
    for _ in 0..2 {
        producer.extend([
            I::Lock(k(0)),
            I::Load { addr: k(0), dst: 1 },
            I::Store {
                addr: k(0),
                val: f(|r| r[1] + 1),
            },
            I::Signal(k(0)),
            I::Unlock(k(0)),
        ]);
    }
    Prog {
        sync_only: true,
        ..with_main(vec![consumer, producer], &[(0, 0), (0, 0), (1, 0)])
    }
}

/// `benchmarks/src/readers_writers_bad.c` at synchronisation points: a reader checks
/// `writer_active` in one critical section and registers (`readers++`) in the next; the
/// writer enters when `readers == 0 && !writer_active`. Two readers, one writer. Memory:
/// 0 = readers, 1 = writer_active, 2 = shared_data. Checks: see [`check`].
pub fn readers_writers_gap(fatal: bool) -> Prog {
    let reader = vec![
        I::Lock(k(0)),
        // 1:
        I::Load { addr: k(1), dst: 1 },
        I::Jz {
            cond: reg(1),
            target: 5,
        },
        I::CondWait { c: k(0), m: k(0) },
        I::Jmp(1),
        // 5:
        I::Unlock(k(0)),
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 2 },
        I::Store {
            addr: k(0),
            val: f(|r| r[2] + 1),
        },
        I::Unlock(k(0)),
        I::Load { addr: k(1), dst: 1 },
        check(fatal, f(|r| i64::from(r[1] == 0)), "reader overlaps writer"),
        I::Load { addr: k(2), dst: 3 },
        check(
            fatal,
            f(|r| i64::from(r[3] == 0 || r[3] == 2)),
            "v == 0 || v == 2",
        ),
        I::Lock(k(0)),
        I::Load { addr: k(0), dst: 2 },
        I::Store {
            addr: k(0),
            val: f(|r| r[2] - 1),
        },
        I::Broadcast(k(0)),
        I::Unlock(k(0)),
    ];
    let writer = vec![
        I::Lock(k(0)),
        // 1:
        I::Load { addr: k(1), dst: 1 },
        I::Load { addr: k(0), dst: 2 },
        I::Jz {
            cond: f(|r| i64::from(r[1] != 0 || r[2] != 0)),
            target: 6,
        },
        I::CondWait { c: k(0), m: k(0) },
        I::Jmp(1),
        // 6:
        I::Store {
            addr: k(1),
            val: k(1),
        },
        I::Unlock(k(0)),
        I::Store {
            addr: k(2),
            val: k(1),
        },
        I::Load { addr: k(0), dst: 2 },
        check(fatal, f(|r| i64::from(r[2] == 0)), "writer overlaps reader"),
        I::Store {
            addr: k(2),
            val: k(2),
        },
        I::Lock(k(0)),
        I::Store {
            addr: k(1),
            val: k(0),
        },
        I::Broadcast(k(0)),
        I::Unlock(k(0)),
    ];
    Prog {
        sync_only: true,
        ..with_main(vec![reader, writer], &[(0, 0), (0, 0), (1, 0)])
    }
}

/// `benchmarks/src/recursive_bad.c` at synchronisation points: a log behind a recursive
/// mutex; two workers each append twice (`lock; if (len == 3) flush; len++; unlock`) and
/// flush (`lock; if (len == 0) return` leaking the lock, `else len = 0; unlock`); main flushes
/// after the joins. Memory: 0 = len.
pub fn recursive_leak() -> Prog {
    // flush: lock, load, if len == 0 jump to `ret` (leak), else store 0, unlock.
    let flush = |ret: usize| {
        vec![
            I::RecLock(k(0)),
            I::Load { addr: k(0), dst: 1 },
            I::Jz {
                cond: reg(1),
                target: ret,
            },
            I::Store {
                addr: k(0),
                val: k(0),
            },
            I::RecUnlock(k(0)),
        ]
    };
    let append = |at: usize| {
        // at: lock; load; if len != 3 jump to at+3+5; flush (5 instrs, "return" = continue);
        // load; store len+1; unlock
        let mut v = vec![
            I::RecLock(k(0)),
            I::Load { addr: k(0), dst: 1 },
            I::Jz {
                cond: f(|r| i64::from(r[1] == 3)),
                target: at + 8,
            },
        ];
        v.extend(flush(at + 8));
        v.extend([
            I::Load { addr: k(0), dst: 1 },
            I::Store {
                addr: k(0),
                val: f(|r| r[1] + 1),
            },
            I::RecUnlock(k(0)),
        ]);
        v
    };
    let mut worker = append(0);
    worker.extend(append(11));
    let end = 22 + 5;
    worker.extend(flush(end));
    let mut p = with_main(vec![worker], &[(0, 0), (0, 0)]);
    let main = p.main;
    let at = p.bodies[main].len();
    let tail = flush(at + 5);
    p.bodies[main].extend(tail);
    p.sync_only = true;
    p
}

/// `benchmarks/src/once_ok.c` at synchronisation points: `threads` workers each call
/// `pthread_once` (the first runs the init between `OnceBegin` and `OnceEnd`, the others wait
/// for it or find it done), then take a mutex. Which thread runs the init is a choice.
pub fn once_then_lock(threads: usize) -> Prog {
    let body = vec![
        I::OnceBegin { o: k(0), done: 2 },
        I::OnceEnd(k(0)),
        // 2:
        I::Lock(k(0)),
        I::RecUnlock(k(0)),
    ];
    let ts: Vec<(usize, i64)> = (0..threads).map(|_| (0, 0)).collect();
    Prog {
        sync_only: true,
        ..with_main(vec![body], &ts)
    }
}
