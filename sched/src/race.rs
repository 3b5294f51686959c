//! Happens-before data-race detection over an executed trace, with vector clocks.
//!
//! This is the profiling step of the `races` scheduling-point mode, after the Maple harness
//! behind SCTBench and the POS paper's evaluation (§6): run the instrumented program with a
//! scheduling point at every memory access, find the pairs of accesses (by instruction
//! address) that are concurrent under happens-before, and in later runs stop only there.
//!
//! Happens-before = program order + thread creation (create → child) + join (exit → join) +
//! every synchronisation object and atomic location as a totally ordered channel (each
//! operation on it acquires and releases it). Treating atomics as synchronisation means
//! two atomic accesses never race; an atomic and a plain access of the same bytes do, like
//! two plain ones, when neither is ordered before the other and at least one writes
//! (Lamport's happens-before, the FastTrack definition of a race).

use crate::event::{Event, Op, Tid};
use std::collections::{BTreeSet, HashMap};

/// A vector clock indexed by dense thread id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VClock(Vec<u32>);

impl VClock {
    pub fn get(&self, t: Tid) -> u32 {
        self.0.get(t as usize).copied().unwrap_or(0)
    }
    pub fn tick(&mut self, t: Tid) {
        let i = t as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] += 1;
    }
    pub fn join(&mut self, o: &VClock) {
        if self.0.len() < o.0.len() {
            self.0.resize(o.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a = (*a).max(*b);
        }
    }
}

/// One access of a racing pair: the instruction address and the thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Site {
    pub pc: u64,
    pub write: bool,
}

/// A racing pair of access sites (ordered so that `a <= b`), with one address they raced on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Race {
    pub a: Site,
    pub b: Site,
    pub addr: u64,
}

#[derive(Clone, Copy, Debug)]
struct Access {
    tid: Tid,
    clock: u32,
    pc: u64,
    /// An atomic operation: it races with a concurrent plain access, never with an atomic.
    atomic: bool,
}

#[derive(Default)]
struct Shadow {
    write: Option<Access>,
    reads: Vec<Access>,
}

/// Streaming detector: feed executed events in order with their instruction addresses.
#[derive(Default)]
pub struct Detector {
    clocks: Vec<VClock>,
    sync: HashMap<(u8, u64), VClock>,
    exits: HashMap<Tid, VClock>,
    shadow: HashMap<u64, Shadow>,
    races: BTreeSet<Race>,
    threads_created: Tid,
}

impl Detector {
    pub fn new() -> Self {
        let mut d = Detector::default();
        d.clock_mut(0).tick(0);
        d
    }

    fn clock_mut(&mut self, t: Tid) -> &mut VClock {
        let i = t as usize;
        if self.clocks.len() <= i {
            self.clocks.resize(i + 1, VClock::default());
        }
        &mut self.clocks[i]
    }

    /// Acquire-and-release the channel `key` by thread `t`.
    fn sync_on(&mut self, t: Tid, key: (u8, u64)) {
        let ch = self.sync.entry(key).or_default().clone();
        let c = self.clock_mut(t);
        c.join(&ch);
        let now = c.clone();
        self.sync.insert(key, now);
    }

    /// Process one executed event; `pc` is the instruction address of memory accesses.
    pub fn step(&mut self, ev: &Event, pc: u64) {
        let t = ev.tid;
        match ev.op {
            Op::Create => {
                self.threads_created += 1;
                let child = self.threads_created;
                let parent = self.clock_mut(t).clone();
                let c = self.clock_mut(child);
                c.join(&parent);
                c.tick(child);
            }
            Op::Exit => {
                let c = self.clock_mut(t).clone();
                self.exits.insert(t, c);
            }
            Op::Join { target } => {
                if let Some(e) = self.exits.get(&target).cloned() {
                    self.clock_mut(t).join(&e);
                }
            }
            Op::Read { addr, size } => self.access(t, addr, size, false, false, pc),
            Op::Write { addr, size } => self.access(t, addr, size, true, false, pc),
            Op::AtomicLoad { addr, size, .. } => {
                self.sync_on(t, (0, addr));
                self.access(t, addr, size, false, true, pc);
            }
            Op::AtomicStore { addr, size, .. } | Op::AtomicRmw { addr, size, .. } => {
                self.sync_on(t, (0, addr));
                self.access(t, addr, size, true, true, pc);
            }
            op => {
                for o in op.objects().into_iter().flatten() {
                    self.sync_on(t, (o.kind as u8 + 1, o.addr));
                }
            }
        }
        self.clock_mut(t).tick(t);
    }

    fn access(&mut self, t: Tid, addr: u64, size: u32, write: bool, atomic: bool, pc: u64) {
        let me = self.clock_mut(t).clone();
        let now = Access {
            tid: t,
            clock: me.get(t),
            pc,
            atomic,
        };
        let concurrent =
            |a: &Access| a.tid != t && a.clock > me.get(a.tid) && !(atomic && a.atomic);
        for byte in addr..addr + size.max(1) as u64 {
            let cell = self.shadow.entry(byte).or_default();
            let mut found = Vec::new();
            if let Some(w) = cell.write {
                if concurrent(&w) {
                    found.push(Site {
                        pc: w.pc,
                        write: true,
                    });
                }
            }
            if write {
                for r in &cell.reads {
                    if concurrent(r) {
                        found.push(Site {
                            pc: r.pc,
                            write: false,
                        });
                    }
                }
                cell.write = Some(now);
                cell.reads.clear();
            } else {
                cell.reads.retain(|r| r.tid != t);
                cell.reads.push(now);
            }
            for other in found {
                let mine = Site { pc, write };
                let (a, b) = if other <= mine {
                    (other, mine)
                } else {
                    (mine, other)
                };
                self.races.insert(Race { a, b, addr: byte });
            }
        }
    }

    /// Racing pairs found so far, one per pair of sites (the lowest address kept).
    pub fn races(&self) -> Vec<Race> {
        let mut seen = BTreeSet::new();
        self.races
            .iter()
            .filter(|r| seen.insert((r.a, r.b)))
            .copied()
            .collect()
    }

    /// Every instruction address that takes part in a race.
    pub fn racing_pcs(&self) -> BTreeSet<u64> {
        self.races.iter().flat_map(|r| [r.a.pc, r.b.pc]).collect()
    }
}

/// Online race learning of the `auto` point mode, in fixed-size batches of tries.
///
/// Try `i` belongs to batch `i / batch`; every try of a batch runs with the racing sites
/// learned from the tries of *earlier* batches (plus any given at the start). So the site
/// set of a try depends only on the seed and the tries before its batch, never on how many
/// workers ran them or in which order their results came back: the results of a batch are
/// absorbed together ([`Learner::absorb`]) and a site's learning try is the smallest index
/// of a try of that batch that exhibited it.
#[derive(Clone, Debug)]
pub struct Learner {
    batch: u64,
    /// Every site known, with the try that first exhibited it (`None`: given at the start).
    sites: std::collections::BTreeMap<u64, Option<u64>>,
}

impl Learner {
    /// A learner over batches of `batch` tries (at least 1), starting from `known` sites.
    pub fn new(batch: u64, known: impl IntoIterator<Item = u64>) -> Self {
        Learner {
            batch: batch.max(1),
            sites: known.into_iter().map(|pc| (pc, None)).collect(),
        }
    }

    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// The first try of the batch holding try `i`.
    pub fn batch_start(&self, i: u64) -> u64 {
        i - i % self.batch
    }

    /// The sites tries of the current batch stop at.
    pub fn pcs(&self) -> BTreeSet<u64> {
        self.sites.keys().copied().collect()
    }

    /// Sites learned during the session, each with the try that first exhibited it.
    pub fn learned(&self) -> Vec<(u64, u64)> {
        self.sites
            .iter()
            .filter_map(|(&pc, &t)| t.map(|t| (pc, t)))
            .collect()
    }

    /// Absorb one finished batch: each entry is a try index and the racing pcs its run
    /// exhibited. Returns whether the site set grew. Order of `results` does not matter.
    pub fn absorb(&mut self, results: impl IntoIterator<Item = (u64, BTreeSet<u64>)>) -> bool {
        let mut first: std::collections::BTreeMap<u64, u64> = Default::default();
        for (i, pcs) in results {
            for pc in pcs {
                let e = first.entry(pc).or_insert(i);
                *e = (*e).min(i);
            }
        }
        let before = self.sites.len();
        for (pc, i) in first {
            self.sites.entry(pc).or_insert(Some(i));
        }
        self.sites.len() > before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{MemOrder, MutexKind};

    fn ev(t: Tid, op: Op) -> Event {
        Event::new(t, op)
    }

    #[test]
    fn unsynchronised_write_write_races_and_locked_does_not() {
        let x = 0x1000;
        let lock = |t| {
            ev(
                t,
                Op::Lock {
                    m: 8,
                    kind: MutexKind::Normal,
                },
            )
        };
        let unlock = |t| {
            ev(
                t,
                Op::Unlock {
                    m: 8,
                    kind: MutexKind::Normal,
                },
            )
        };
        let mut d = Detector::new();
        d.step(&ev(0, Op::Create), 0);
        d.step(&ev(0, Op::Create), 0);
        d.step(&lock(1), 0);
        d.step(&ev(1, Op::Write { addr: x, size: 4 }), 0x10);
        d.step(&unlock(1), 0);
        d.step(&lock(2), 0);
        d.step(&ev(2, Op::Write { addr: x, size: 4 }), 0x20);
        d.step(&unlock(2), 0);
        assert!(d.races().is_empty(), "lock orders the writes");
        d.step(
            &ev(
                2,
                Op::Read {
                    addr: x + 4,
                    size: 4,
                },
            ),
            0x30,
        );
        d.step(
            &ev(
                1,
                Op::Write {
                    addr: x + 2,
                    size: 4,
                },
            ),
            0x40,
        );
        let r = d.races();
        assert_eq!(r.len(), 2, "{r:?}");
        assert_eq!(d.racing_pcs(), [0x20, 0x30, 0x40].into_iter().collect());
    }

    #[test]
    fn create_and_join_order_accesses_and_reads_do_not_race() {
        let x = 0x2000;
        let mut d = Detector::new();
        d.step(&ev(0, Op::Write { addr: x, size: 8 }), 0x1);
        d.step(&ev(0, Op::Create), 0);
        d.step(&ev(1, Op::Read { addr: x, size: 8 }), 0x2);
        d.step(&ev(0, Op::Read { addr: x, size: 8 }), 0x3);
        d.step(&ev(1, Op::Exit), 0);
        d.step(&ev(0, Op::Join { target: 1 }), 0);
        d.step(&ev(0, Op::Write { addr: x, size: 8 }), 0x4);
        assert!(d.races().is_empty(), "{:?}", d.races());
    }

    #[test]
    fn atomics_synchronise_and_never_race() {
        let (flag, data) = (0x3000, 0x3008);
        let mut d = Detector::new();
        d.step(&ev(0, Op::Create), 0);
        d.step(
            &ev(
                1,
                Op::Write {
                    addr: data,
                    size: 4,
                },
            ),
            0x1,
        );
        d.step(
            &ev(
                1,
                Op::AtomicStore {
                    addr: flag,
                    size: 4,
                    mo: MemOrder::Release,
                },
            ),
            0x2,
        );
        d.step(
            &ev(
                0,
                Op::AtomicLoad {
                    addr: flag,
                    size: 4,
                    mo: MemOrder::Acquire,
                },
            ),
            0x3,
        );
        d.step(
            &ev(
                0,
                Op::Read {
                    addr: data,
                    size: 4,
                },
            ),
            0x4,
        );
        assert!(d.races().is_empty());
    }

    fn set(pcs: &[u64]) -> BTreeSet<u64> {
        pcs.iter().copied().collect()
    }

    #[test]
    fn learner_batches_are_independent_of_result_order() {
        let batch = vec![
            (5, set(&[0x20, 0x30])),
            (3, set(&[0x30])),
            (7, set(&[0x10])),
        ];
        let mut a = Learner::new(4, [0x10]);
        let mut b = Learner::new(4, [0x10]);
        assert_eq!(a.batch_start(6), 4);
        assert_eq!(a.batch_start(4), 4);
        assert_eq!(a.batch_start(3), 0);
        assert!(a.absorb(batch.clone()));
        let mut rev = batch;
        rev.reverse();
        assert!(b.absorb(rev));
        assert_eq!(a.pcs(), set(&[0x10, 0x20, 0x30]));
        assert_eq!(
            a.learned(),
            vec![(0x20, 5), (0x30, 3)],
            "given sites are not learned"
        );
        assert_eq!(a.learned(), b.learned());
        // A later batch that finds only known sites changes nothing.
        assert!(!a.absorb([(9, set(&[0x20]))]));
        assert_eq!(a.learned(), vec![(0x20, 5), (0x30, 3)]);
        assert!(a.absorb([(12, set(&[0x40])), (8, BTreeSet::new())]));
        assert_eq!(a.learned().last(), Some(&(0x40, 12)));
    }

    #[test]
    fn atomic_and_plain_access_to_one_address_race_but_two_atomics_do_not() {
        let x = 0x5000;
        let mut d = Detector::new();
        d.step(&ev(0, Op::Create), 0);
        d.step(&ev(0, Op::Create), 0);
        d.step(
            &ev(
                1,
                Op::AtomicLoad {
                    addr: x,
                    size: 8,
                    mo: MemOrder::Relaxed,
                },
            ),
            0x1,
        );
        d.step(
            &ev(
                2,
                Op::AtomicLoad {
                    addr: x,
                    size: 8,
                    mo: MemOrder::Relaxed,
                },
            ),
            0x2,
        );
        d.step(
            &ev(
                2,
                Op::AtomicRmw {
                    addr: x,
                    size: 8,
                    mo: MemOrder::SeqCst,
                    fail: None,
                },
            ),
            0x3,
        );
        assert!(d.races().is_empty(), "atomics never race");
        // A plain write of thread 1 after its atomic load: not ordered after thread 2's RMW.
        d.step(&ev(1, Op::Write { addr: x, size: 8 }), 0x4);
        assert!(d.racing_pcs().contains(&0x4), "{:?}", d.races());
    }
}
