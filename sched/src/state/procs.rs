//! Processes of one run: a forked child of a controlled process is a name space of threads
//! in the same state machine, so strategies, races and the deadlock detector see the
//! threads of every process at once.
//!
//! - [`Op::Fork`] adds a process and its initial thread (named `p<n>.t0`, numbered in fork
//!   order). Address spaces differ, so the coordinator puts every object address of a
//!   child's operations in the child's name space ([`Op::in_process`]); at the fork the
//!   parent's synchronisation objects are copied into it, as the kernel copies memory (a
//!   mutex held by another thread of the parent stays held, by a thread the child has not:
//!   the child blocks on it for ever, as it would for real). Process-shared objects in
//!   shared memory (`MAP_SHARED`, `PTHREAD_PROCESS_SHARED`) are not modelled as shared:
//!   each process has its copy, except robust mutexes in `MAP_SHARED` memory, whose
//!   addresses libpos marks with [`SHARED_BIT`]: one object in every process, freed with
//!   `EOWNERDEAD` for the next locker when the process of its owner ends.
//! - A child process leaves control at its exit, at an exec ([`Op::Exec`]) or when its last
//!   thread is gone (a crash, a kill); [`Op::WaitProc`] (`waitpid`/`wait`) waits for that.
//! - The main process's exit ends the run, children included (as before).

use super::{code, State, Status, Why};
use crate::event::{ThreadName, Tid, ANY_PROCESS, PROCESS_SHIFT, SHARED_BIT};

/// One process of the run.
#[derive(Clone, Debug)]
pub(super) struct Proc {
    /// The forking process (the main process is its own parent).
    parent: u32,
    /// Its initial thread.
    first: Tid,
    /// Its exit or exec was executed.
    left: bool,
    /// A `waitpid`/`wait` of its parent consumed its exit.
    reaped: bool,
    /// Its name space: the tag its objects' addresses carry ([`State::space_of`]).
    space: u32,
}

impl Proc {
    pub(super) fn main() -> Proc {
        Proc {
            parent: 0,
            first: 0,
            left: false,
            reaped: false,
            space: 0,
        }
    }
}

/// How many name spaces an object address can tell apart: its bits from [`PROCESS_SHIFT`]
/// up.
const SPACES: u32 = 1 << (64 - PROCESS_SHIFT);

/// The process part of an object address in name space `p`.
fn space(addr: u64) -> u64 {
    addr >> PROCESS_SHIFT
}

fn in_space(addr: u64, p: u32) -> u64 {
    (addr & ((1u64 << PROCESS_SHIFT) - 1)) | ((p as u64) << PROCESS_SHIFT)
}

impl State {
    /// The process of thread `t` (0: the main process).
    #[inline]
    pub fn process_of(&self, t: Tid) -> u32 {
        self.threads
            .get(t as usize)
            .map_or(0, |th| th.name.process())
    }

    /// The name space of thread `t`'s objects ([`crate::Op::in_process`]): its process's
    /// number while there are fewer than [`SPACES`] processes, then the space of a process
    /// that has left control, its objects forgotten. Before 2026-11-28 the number itself was
    /// the tag, and the 257th process was given the objects of the first: a mutex that an
    /// exited child's thread still held was held in a later child too, a false deadlock in
    /// every run of a program that forks 257 children (userspace-rcu's `test_urcu_fork`).
    #[inline]
    pub fn space_of(&self, t: Tid) -> u32 {
        self.procs
            .get(self.process_of(t) as usize)
            .map_or(0, |p| p.space)
    }

    /// The name space for process number `p`: `p` while it fits, else the space of a
    /// process that has left control (when more than [`SPACES`] - 1 children live at
    /// once, they share).
    fn free_space(&self, p: u32) -> u32 {
        if p < SPACES {
            return p;
        }
        (1..SPACES)
            .find(|&s| {
                (0..self.procs.len() as u32)
                    .all(|q| self.procs[q as usize].space != s || self.process_gone(q))
            })
            .unwrap_or(p % SPACES)
    }

    /// Forget the objects of name space `s` (a process that has left control), before a
    /// new process takes it.
    fn drop_space(&mut self, s: u32) {
        let theirs = |k: &u64| space(*k) == s as u64 && *k & SHARED_BIT == 0;
        self.mutexes.retain(|k, _| !theirs(k));
        self.conds.retain(|k, _| !theirs(k));
        self.rwlocks.retain(|k, _| !theirs(k));
        self.sems.retain(|k, _| !theirs(k));
        self.barriers.retain(|k, _| !theirs(k));
        self.onces.retain(|k, _| !theirs(k));
        self.futexes.retain(|k, _| !theirs(k));
    }

    /// Number of processes so far (the main one included).
    pub fn num_processes(&self) -> usize {
        self.procs.len().max(1)
    }

    /// Whether process `p` has left control: its exit or exec ran, or all its threads ended.
    pub fn process_gone(&self, p: u32) -> bool {
        match self.procs.get(p as usize) {
            Some(pr) if pr.left => true,
            _ => self
                .threads
                .iter()
                .filter(|th| th.name.process() == p)
                .all(|th| th.status == Status::Finished),
        }
    }

    /// Thread `t` belongs to a forked child process that has left control (its exit or exec
    /// was granted while `t` ran): `t` goes away with it, and a post it still sends is
    /// dropped (the runner's decision loop and libpos's in-process run both).
    pub fn left_with_its_process(&self, t: Tid) -> bool {
        let p = self.process_of(t);
        p != 0 && self.status(t) == Status::Finished && self.process_gone(p)
    }

    /// Execute a fork by `t`: a new process with its initial thread, and copies of the
    /// parent's synchronisation objects in its name space. Returns the new thread.
    pub(super) fn fork_process(&mut self, t: Tid) -> Tid {
        if self.procs.is_empty() {
            self.procs.push(Proc::main());
        }
        let parent = self.process_of(t);
        let p = self.procs.len() as u32;
        let space = self.free_space(p);
        if space != p {
            self.drop_space(space);
        }
        let first = self.push_thread(ThreadName::process_main(p));
        self.procs.push(Proc {
            parent,
            first,
            left: false,
            reaped: false,
            space,
        });
        self.copy_objects(self.procs[parent as usize].space, space, t, first);
        first
    }

    /// Copy the objects of name space `from` into `to` (the memory a fork copies). Waiters
    /// are not copied (they are threads of the parent); owners are: what the forking thread
    /// `forker` held, the child's thread `child` (its copy) holds; what other threads held
    /// stays held by them, threads the child does not have.
    fn copy_objects(&mut self, from: u32, to: u32, forker: Tid, child: Tid) {
        // An object in shared memory (`SHARED_BIT`) is the same in both: not copied.
        let mine = |k: &u64| space(*k) == from as u64 && *k & SHARED_BIT == 0;
        let own = |o: Tid| if o == forker { child } else { o };
        let m: Vec<_> = (self.mutexes.iter().filter(|(k, _)| mine(k)))
            .map(|(k, v)| {
                let mut v = v.clone();
                v.owner = v.owner.map(own);
                (in_space(*k, to), v)
            })
            .collect();
        self.mutexes.extend(m);
        let r: Vec<_> = (self.rwlocks.iter().filter(|(k, _)| mine(k)))
            .map(|(k, v)| {
                let mut v = v.clone();
                v.writer = v.writer.map(own);
                v.readers.iter_mut().for_each(|x| *x = own(*x));
                (in_space(*k, to), v)
            })
            .collect();
        self.rwlocks.extend(r);
        let s: Vec<_> = (self.sems.iter().filter(|(k, _)| mine(k)))
            .map(|(k, v)| (in_space(*k, to), *v))
            .collect();
        self.sems.extend(s);
        let b: Vec<_> = (self.barriers.iter().filter(|(k, _)| mine(k)))
            .map(|(k, v)| {
                let mut v = v.clone();
                v.arrived = 0;
                (in_space(*k, to), v)
            })
            .collect();
        self.barriers.extend(b);
        let o: Vec<_> = (self.onces.iter().filter(|(k, _)| mine(k)))
            .map(|(k, v)| {
                let mut v = v.clone();
                v.running = v.running.map(own);
                (in_space(*k, to), v)
            })
            .collect();
        self.onces.extend(o);
    }

    /// Process `p` (not the main one) leaves control: all its threads are finished.
    pub(super) fn leave_process(&mut self, p: u32) {
        if let Some(pr) = self.procs.get_mut(p as usize) {
            pr.left = true;
        }
        let live: Vec<Tid> = (0..self.threads.len() as Tid)
            .filter(|&x| {
                self.threads[x as usize].name.process() == p
                    && self.threads[x as usize].status != Status::Finished
            })
            .collect();
        for x in live {
            self.mark_finished(x);
        }
    }

    /// A fork whose child never came to be ([`crate::Op::ForkFailed`]): its thread and
    /// process are gone, and nobody will wait for it.
    pub(super) fn abandon_process(&mut self, first: Tid) {
        if (first as usize) < self.threads.len() {
            let p = self.process_of(first);
            if p != 0 {
                self.leave_process(p);
                self.procs[p as usize].reaped = true;
            }
        }
    }

    /// The child processes of `t`'s process that no wait consumed yet.
    fn unreaped_children(&self, t: Tid) -> impl Iterator<Item = u32> + '_ {
        let me = self.process_of(t);
        (1..self.procs.len() as u32)
            .filter(move |&p| self.procs[p as usize].parent == me && !self.procs[p as usize].reaped)
    }

    /// The process a wait of `t` for `target` is about: `Err(())` when there is none to
    /// wait for (the wait returns at once).
    fn wait_target(&self, t: Tid, target: Tid) -> Result<Option<u32>, ()> {
        if target == ANY_PROCESS {
            return Ok(None);
        }
        let p = self.process_of(target);
        match self.procs.get(p as usize) {
            Some(pr) if p != 0 && pr.first == target && pr.parent == self.process_of(t) => {
                Ok(Some(p))
            }
            _ => Err(()),
        }
    }

    /// Why `t`'s wait for `target` cannot return yet (see [`State::why_blocked`]).
    pub(super) fn why_wait_blocked(&self, t: Tid, target: Tid) -> Option<Why> {
        match self.wait_target(t, target) {
            Err(()) => None,
            Ok(Some(p)) => (!self.process_gone(p)).then_some(Why::Process(Some(p))),
            Ok(None) => {
                let mut any = false;
                for p in self.unreaped_children(t) {
                    if self.process_gone(p) {
                        return None;
                    }
                    any = true;
                }
                any.then_some(Why::Process(None))
            }
        }
    }

    /// Execute `t`'s wait for `target` (enabled): consume that child's exit, or the exit of
    /// the lowest-numbered child that left for a wait for any. ECHILD when none.
    pub(super) fn reap(&mut self, t: Tid, target: Tid) -> i32 {
        let p = match self.wait_target(t, target) {
            Err(()) => return code::ECHILD,
            Ok(Some(p)) => Some(p),
            Ok(None) => self.unreaped_children(t).find(|&p| self.process_gone(p)),
        };
        match p {
            Some(p) if !self.procs[p as usize].reaped => {
                self.procs[p as usize].reaped = true;
                code::OK
            }
            _ => code::ECHILD,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{MutexKind, Op};

    fn run(s: &mut State, t: Tid, op: Op) -> crate::state::Executed {
        s.post(t, op).unwrap();
        s.execute(t).unwrap()
    }

    #[test]
    fn a_fork_adds_a_named_process_whose_wait_blocks_until_it_exits() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let c = run(&mut s, 0, Op::Fork).child.unwrap();
        assert_eq!(s.name(c).to_string(), "p1.t0");
        assert_eq!(s.process_of(c), 1);
        s.post(0, Op::WaitProc { target: c }).unwrap();
        assert!(!s.is_enabled(0));
        run(&mut s, c, Op::Start);
        let g = run(&mut s, c, Op::Create).child.unwrap();
        assert_eq!(s.name(g).to_string(), "p1.t0.1");
        assert_eq!(s.process_of(g), 1);
        run(&mut s, g, Op::Start);
        run(&mut s, g, Op::Exit);
        assert_eq!(run(&mut s, c, Op::Join { target: g }).result, code::OK);
        assert!(!s.is_enabled(0));
        run(&mut s, c, Op::ProcessExit { code: 0 });
        assert!(s.process_gone(1));
        assert!(!s.is_over(), "a child's exit does not end the run");
        assert_eq!(s.execute(0).unwrap().result, code::OK);
        // Nothing left to wait for.
        assert_eq!(
            run(
                &mut s,
                0,
                Op::WaitProc {
                    target: ANY_PROCESS
                }
            )
            .result,
            code::ECHILD
        );
    }

    #[test]
    fn a_wait_for_a_running_child_with_nothing_else_to_do_is_a_deadlock_across_processes() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let c = run(&mut s, 0, Op::Fork).child.unwrap();
        let m = 0x1000;
        let kind = MutexKind::Normal;
        run(&mut s, c, Op::Start);
        run(&mut s, c, Op::Lock { m, kind }.in_process(1));
        s.post(c, Op::Lock { m, kind }.in_process(1)).unwrap();
        s.post(
            0,
            Op::WaitProc {
                target: ANY_PROCESS,
            },
        )
        .unwrap();
        let d = s.deadlock().expect("deadlock");
        let text = d.to_string();
        assert!(text.contains("thread 0 at waitproc"), "{text}");
        assert!(text.contains("a child process to exit"), "{text}");
        assert!(
            text.contains("thread p1.t0 at lock(mutex@p1:0x1000) waits for mutex p1:0x1000 held by thread p1.t0"),
            "{text}"
        );
    }

    #[test]
    fn the_child_gets_copies_of_the_parent_objects_in_its_own_name_space() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        s.init_sem(0x2000, 1);
        let kind = MutexKind::Normal;
        run(&mut s, 0, Op::Lock { m: 0x3000, kind });
        let c = run(&mut s, 0, Op::Fork).child.unwrap();
        run(&mut s, c, Op::Start);
        // The child's copy of the semaphore has the parent's count...
        let w = Op::SemWait { s: 0x2000 }.in_process(1);
        assert_eq!(run(&mut s, c, w).result, code::OK);
        // ... and the parent's is untouched by the child's wait.
        assert_eq!(run(&mut s, 0, Op::SemWait { s: 0x2000 }).result, code::OK);
        // The mutex the forking thread held is held by its copy in the child, which may
        // unlock it (the pthread_atfork pattern); the parent's unlock is the parent's.
        run(&mut s, 0, Op::Unlock { m: 0x3000, kind });
        let k = MutexKind::ErrorCheck;
        let unlock = Op::Unlock { m: 0x3000, kind: k }.in_process(1);
        assert_eq!(run(&mut s, c, unlock).result, code::OK);
        // A mutex another parent thread held stays held, by a thread the child has not.
        let other = run(&mut s, 0, Op::Create).child.unwrap();
        run(&mut s, other, Op::Start);
        run(&mut s, other, Op::Lock { m: 0x4000, kind });
        let c2 = run(&mut s, 0, Op::Fork).child.unwrap();
        run(&mut s, c2, Op::Start);
        s.post(c2, Op::Lock { m: 0x4000, kind }.in_process(2))
            .unwrap();
        assert!(!s.is_enabled(c2));
        run(&mut s, other, Op::Unlock { m: 0x4000, kind });
        assert!(!s.is_enabled(c2), "the parent's unlock is not the child's");
    }

    #[test]
    fn a_child_past_the_255th_takes_the_name_space_of_one_gone_and_none_of_its_objects() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let kind = MutexKind::Normal;
        let m = 0x5000;
        // 300 children one after another; each locks its copy of `m` in a thread that
        // still holds it when the child exits (the exit ends the process).
        for p in 1..=300u32 {
            let c = run(&mut s, 0, Op::Fork).child.unwrap();
            assert_eq!(s.process_of(c), p);
            let space = s.space_of(c);
            if p < 256 {
                assert_eq!(space, p);
            } else {
                assert!((1..256).contains(&space), "{p}: {space}");
            }
            run(&mut s, c, Op::Start);
            let lock = Op::Lock { m, kind }.in_process(space);
            assert_eq!(run(&mut s, c, lock).result, code::OK, "child {p}");
            let h = run(&mut s, c, Op::Create).child.unwrap();
            run(&mut s, h, Op::Start);
            s.post(h, lock).unwrap();
            assert!(!s.is_enabled(h), "child {p}: its own copy is held");
            run(&mut s, c, Op::ProcessExit { code: 0 });
            assert!(s.process_gone(p));
            assert_eq!(run(&mut s, 0, Op::WaitProc { target: c }).result, code::OK);
        }
        // The main process's own `m` was never touched.
        assert_eq!(run(&mut s, 0, Op::Lock { m, kind }).result, code::OK);
    }

    #[test]
    fn a_failed_fork_leaves_no_thread_to_wait_for() {
        let mut s = State::new();
        run(&mut s, 0, Op::Start);
        let c = run(&mut s, 0, Op::Fork).child.unwrap();
        run(&mut s, 0, Op::ForkFailed { target: c });
        assert_eq!(s.status(c), Status::Finished);
        assert!(s.process_gone(1));
    }

    #[test]
    fn names_of_child_process_threads_round_trip() {
        let n = ThreadName::process_main(3).child(2);
        assert_eq!(n.to_string(), "p3.t0.2");
        assert_eq!("p3.t0.2".parse::<ThreadName>().unwrap(), n);
        assert!("p0.t0".parse::<ThreadName>().is_err());
        assert!("p1.2".parse::<ThreadName>().is_err());
    }
}
