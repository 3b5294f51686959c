//! `rt`: reachability testing (Lei & Carver, "Reachability Testing of Concurrent Programs",
//! IEEE TSE 32(6), 2006; the RichTest tool), for programs whose only nondeterminism is
//! synchronisation.
//!
//! A run is seen as a SYN-sequence: synchronisation events paired as send → receive.
//! Channels and pairs: a mutex (unlock or the releasing half of a condition wait → the next
//! lock or re-acquisition; the mutex starts with one *initial* send), a semaphore (every
//! `sem_post`/`sem_wait` receives the semaphore's previous operation and sends to its next
//! one; the first receives the semaphore's initial send), a condition variable (signal or
//! broadcast → the wake it enabled), a barrier (arrivals ordered like a semaphore's
//! operations; each leave is caused by every arrival of its generation), a read-write lock
//! (every operation receives the lock's previous one), a `pthread_once` control (likewise: the
//! order of the begins decides which thread runs the init). A `CondWake` receives twice (the
//! signal and the mutex), so receives are *slots* `(event, channel)`.
//!
//! Barriers and rwlocks are ordered more finely than the dependency relation: two open
//! arrivals commute, and so do two read-mode operations, but their channels order them. rt
//! then sees every trace, some more than once (a 3-thread start barrier: 36 runs for 18
//! traces, as Optimal-DPOR; one writer and 3 readers: 216 runs for 8 traces). A channel that
//! leaves read-mode operations unordered lost traces (a read of the prefix can never be
//! moved after a write that a later variant puts first, so the read-then-write upgrade lost
//! its "one thread entirely first" order).
//!
//! Semaphores follow the paper's object-based view (§2: P and V are calls the semaphore
//! accepts one at a time; its SYN-sequence is the order of completed operations), not a
//! post → wait token pairing. A FIFO token pairing makes the pairing depend on the order of
//! two posts, which no race variant can change (posts are sends, not receives): a wait could
//! never be given the second of two earlier posts, and on the bounded buffer 2 of its 24
//! pairings were unreachable. Ordering every operation matches the dependency of
//! [`crate::event::Event::dependent`] (two operations on one semaphore are dependent), so the
//! SYN-sequences are exactly Optimal-DPOR's Mazurkiewicz traces on sync-only programs. The
//! initial value is not needed for the pairing; [`replays`] uses the recorded `sem_init`
//! value (a notification, not an event, passed on by the coordinator), or for a semaphore
//! whose initialisation was not recorded the largest value the runs so far needed.
//!
//! For each run `Q` ([`Syn`]):
//! 1. the race set of every receive slot `r`: the sends `s` on its channel, other than its
//!    partner, that `r` could have received — `s` is not caused by `r` (§4.1), and the
//!    receive that took `s` in `Q` (if any) is not pinned (below). Whether `r` can really take
//!    `s` is left to the row check of step 3: an earlier version also dropped every `s` whose
//!    receive causes `r` through other pairings, which lost real runs where a `CondWake`
//!    overtakes an earlier-signalled waiter (readers-writers with 1 reader and 2 writers: 54
//!    of DFS's 56 traces). The blocked receives of a deadlocked run have race sets too
//!    (partner: none);
//! 2. the race table: one column per receive with a non-empty race set, one row per
//!    combination of choices (0 = keep, i = take the i-th racing send; receives caused by a
//!    changed one, and receives displaced from a taken send, are removed: -1) (§4.2);
//! 3. each row gives a race variant: the events of `Q` not removed, then the changed receives
//!    with their new sends; a row is kept only if that sequence replays on the state machine
//!    and every kept receive keeps its partner. The variant is re-executed as a forced prefix,
//!    then the program runs freely (prefix-based testing, §4.3);
//! 4. path constraints instead of a test history (§5), carried by each variant:
//!    - receives of the variant's prefix are not changed again, and a changed receive (of this
//!      variant or an ancestor) is never displaced or removed;
//!    - for every column a row leaves unchanged (and not caused by a change), each alternative
//!      send whose sibling row (this row plus that change) is a valid variant gives an
//!      *exclusion* in the variant's subtree: the pairings the sibling's subtree can never
//!      lose ([`fixed_pairings`]: its pinned receives and all their causes, events named
//!      (thread, index) across runs). A variant whose own fixed pairings contain an exclusion
//!      is dropped, and the free part of a run never takes a step that completes one
//!      ([`super::guide::Guide::allow`]): those runs are the sibling's. Naming only the
//!      (receive, send) pair over-excludes: a descendant can displace the send (give its own
//!      send to another receive) and re-run it with another partner, a run the sibling never
//!      has (the 3-producer/1-consumer/2-slot buffer lost 4 of its 144 traces, with 2
//!      blocked runs); naming the sibling's whole prefix under-excludes, since unpinned
//!      prefix events can be displaced in the sibling's subtree too (philosophers(3): 8 runs
//!      for 7 traces).
//!
//! Only the pending variants are stored (a depth-first stack), each with its prefix and
//! constraints, never the explored sequences: [`Report::rt_peak_pending`](super::Report)
//! records the stack's high-water mark.
//!
//! The constraints above are this implementation's reconstruction of the paper's; they are
//! checked in the tests (`tests.rs`, `sound.rs`): the same traces as Optimal-DPOR and as an
//! independent enumeration, none twice (barriers and rwlocks aside, above), no blocked run,
//! on dining philosophers (3-6), mutex rounds, semaphore bounded buffers (up to 3 producers,
//! 3 consumers, 2 slots: 12,276), readers-writers with condition variables (2 readers/1
//! writer: 62; 3r/1w: 2364; 1r/2w: 56, which exhaustive DFS confirms; 2r/2w: 2624),
//! semaphores as locks, barriers and rwlocks. Timed and try operations are ordered on their
//! object like the untimed ones. A trylock or timed lock that finds the mutex held fails and
//! receives nothing from the mutex's releases: it *observes* that holding (its partner is
//! [`Send::Fail`] of the acquisition that began it; several attempts may observe one). Its
//! race set has the releases it could take instead and the other threads' holdings it could
//! fail in; one that got the mutex may likewise fail in a holding (run before that holding's
//! release, which the variant removes). A changed receive drops the clock edges of its old
//! partner (a timed wait that takes a unit instead of timing out no longer waits for time);
//! `replays` decides whether time can pass where the variant needs it. Semaphore and rwlock
//! timeouts need nothing more: their operations are totally ordered on the object, and the
//! order decides whether a wait finds a unit. 4 of 200 random programs with timed waits
//! still lose traces (`sound.rs`, not analysed; odpor explores them all); futexes are not
//! modelled.

use super::guide::Rule;
use super::trace::{
    clock_cuts, infer_barrier_counts, infer_sem_init, let_time_pass, Holders, Holding, Init, TEv,
};

/// Semaphore values and barrier counts for [`replays`]: recorded, else inferred from runs.
pub type Inits = HashMap<(ObjKind, u64), u32>;
use super::{Ctx, Outcome};
use crate::event::{Event, ObjKind, Op, Tid};
use crate::state::State;
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// A synchronisation channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Chan {
    Mutex(u64),
    Sem(u64),
    Cond(u64),
    /// A barrier's arrivals, totally ordered like a semaphore's operations.
    Barrier(u64),
    /// A read-write lock's operations, totally ordered like a semaphore's.
    Rw(u64),
    /// A `pthread_once` control's operations (`OnceBegin`, `OnceEnd`), totally ordered like a
    /// semaphore's: which thread runs the init is the order of the begins.
    Once(u64),
}

/// A send: an event of the run, or the k-th initial send of a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Send {
    At(usize),
    Init(Chan, u32),
    /// A trylock or timed lock that found the mutex held (and failed: busy, or timed out)
    /// observed the holding that began with the acquisition at this position. Several
    /// attempts may observe one holding (it is not consumed, like a broadcast).
    Fail(usize),
}

/// A receive slot: event `ev` receives on `chan` from `partner` (`None`: a timed-out wake).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub ev: usize,
    pub chan: Chan,
    pub partner: Option<Send>,
}

/// The pairing of a trace: receive slots with their partners, and every send per channel.
pub fn pair(trace: &[TEv]) -> (Vec<Slot>, HashMap<Chan, Vec<Send>>) {
    let (slots, sends, _) = pair_with_holdings(trace);
    (slots, sends)
}

/// [`pair`] and the holdings of every mutex (what a failed attempt may observe).
fn pair_with_holdings(trace: &[TEv]) -> (Vec<Slot>, HashMap<Chan, Vec<Send>>, Vec<Holding>) {
    #[derive(Default)]
    struct CondSt {
        next_seq: u64,
        /// (tid, seq, woken by broadcast at)
        waiters: Vec<(Tid, u64, Option<usize>)>,
        /// (upto, signal position)
        tokens: Vec<(u64, usize)>,
    }
    let mut slots = Vec::new();
    let mut sends: HashMap<Chan, Vec<Send>> = HashMap::new();
    let mut last_release: HashMap<u64, Send> = HashMap::new();
    let mut last_sem_op: HashMap<Chan, Send> = HashMap::new();
    let mut conds: HashMap<u64, CondSt> = HashMap::new();
    let mut releases: Vec<(u64, usize)> = Vec::new();
    let mut holders = Holders::default();
    for (j, t) in trace.iter().enumerate() {
        let failed = holders.apply(j, t);
        match t.ev.op {
            Op::Lock { m, .. } => mutex_recv(m, j, &mut last_release, &mut slots, &mut sends),
            // A trylock or timed lock that got the mutex receives like a lock: whether it got
            // it depends on which release it follows, so it races with the other
            // acquisitions. One that found it held failed (busy, or timed out: it could only
            // run then once its deadline had passed) and observed that holding.
            Op::TryLock { m, .. } | Op::TimedLock { m, .. } => {
                if let Some(acq) = failed {
                    sends
                        .entry(Chan::Mutex(m))
                        .or_insert_with(|| vec![Send::Init(Chan::Mutex(m), 0)]);
                    slots.push(Slot {
                        ev: j,
                        chan: Chan::Mutex(m),
                        partner: Some(Send::Fail(acq)),
                    });
                } else {
                    mutex_recv(m, j, &mut last_release, &mut slots, &mut sends)
                }
            }
            Op::Unlock { m, .. } => releases.push((m, j)),
            Op::CondWait { c, m } => {
                releases.push((m, j));
                let cv = conds.entry(c).or_default();
                let seq = cv.next_seq;
                cv.next_seq += 1;
                cv.waiters.push((t.tid(), seq, None));
            }
            Op::CondWake { c, m, .. } => {
                mutex_recv(m, j, &mut last_release, &mut slots, &mut sends);
                let ch = Chan::Cond(c);
                sends.entry(ch).or_default();
                let cv = conds.entry(c).or_default();
                let mut partner = None;
                if let Some(i) = cv.waiters.iter().position(|w| w.0 == t.tid()) {
                    let (_, seq, woken) = cv.waiters.remove(i);
                    partner = woken.map(Send::At).or_else(|| {
                        let k = cv.tokens.iter().position(|&(upto, _)| upto > seq)?;
                        Some(Send::At(cv.tokens.remove(k).1))
                    });
                }
                if cv.waiters.is_empty() {
                    cv.tokens.clear();
                }
                slots.push(Slot {
                    ev: j,
                    chan: ch,
                    partner,
                });
            }
            Op::CondSignal { c } => {
                sends.entry(Chan::Cond(c)).or_default().push(Send::At(j));
                let cv = conds.entry(c).or_default();
                let unwoken = cv.waiters.iter().filter(|w| w.2.is_none()).count();
                if cv.tokens.len() < unwoken {
                    cv.tokens.push((cv.next_seq, j));
                }
            }
            Op::CondBroadcast { c } => {
                sends.entry(Chan::Cond(c)).or_default().push(Send::At(j));
                let cv = conds.entry(c).or_default();
                for w in &mut cv.waiters {
                    if w.2.is_none() {
                        w.2 = Some(j);
                    }
                }
                cv.tokens.clear();
            }
            Op::SemPost { s: o }
            | Op::SemWait { s: o }
            | Op::SemTimedWait { s: o, .. }
            | Op::SemTryWait { s: o }
            | Op::BarrierWait { b: o }
            | Op::RdLock { l: o }
            | Op::WrLock { l: o }
            | Op::TimedRdLock { l: o, .. }
            | Op::TimedWrLock { l: o, .. }
            | Op::TryRdLock { l: o }
            | Op::TryWrLock { l: o }
            | Op::RwUnlock { l: o }
            | Op::OnceBegin { o }
            | Op::OnceEnd { o } => {
                let ch = match t.ev.op {
                    Op::BarrierWait { .. } => Chan::Barrier(o),
                    Op::SemPost { .. }
                    | Op::SemWait { .. }
                    | Op::SemTimedWait { .. }
                    | Op::SemTryWait { .. } => Chan::Sem(o),
                    Op::OnceBegin { .. } | Op::OnceEnd { .. } => Chan::Once(o),
                    _ => Chan::Rw(o),
                };
                let init = Send::Init(ch, 0);
                let all = sends.entry(ch).or_insert_with(|| vec![init]);
                all.push(Send::At(j));
                let p = last_sem_op.insert(ch, Send::At(j)).unwrap_or(init);
                slots.push(Slot {
                    ev: j,
                    chan: ch,
                    partner: Some(p),
                });
            }
            _ => {}
        }
        for (m, r) in releases.drain(..) {
            let ch = Chan::Mutex(m);
            sends
                .entry(ch)
                .or_insert_with(|| vec![Send::Init(ch, 0)])
                .push(Send::At(r));
            last_release.insert(m, Send::At(r));
        }
    }
    (slots, sends, holders.done)
}

/// A mutex acquisition at `j` receives the last release of `m` (initially its initial send).
fn mutex_recv(
    m: u64,
    j: usize,
    last_release: &mut HashMap<u64, Send>,
    slots: &mut Vec<Slot>,
    sends: &mut HashMap<Chan, Vec<Send>>,
) {
    let ch = Chan::Mutex(m);
    let init = Send::Init(ch, 0);
    sends.entry(ch).or_insert_with(|| vec![init]);
    let p = *last_release.entry(m).or_insert(init);
    slots.push(Slot {
        ev: j,
        chan: ch,
        partner: Some(p),
    });
}

/// For each barrier leave, the arrivals of its generation (all of them cause it: it is
/// enabled only once every member arrived). A generation is closed by the first leave of one
/// of its members: no thread arrives between the completing arrival and that leave.
fn barrier_generations(trace: &[TEv]) -> Vec<(usize, Vec<usize>)> {
    let mut open: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut last_arrival: HashMap<(u64, Tid), usize> = HashMap::new();
    let mut gens: Vec<Vec<usize>> = Vec::new();
    let mut gen_of: HashMap<usize, usize> = HashMap::new();
    let mut out = Vec::new();
    for (j, t) in trace.iter().enumerate() {
        match t.ev.op {
            Op::BarrierWait { b } => {
                open.entry(b).or_default().push(j);
                last_arrival.insert((b, t.tid()), j);
            }
            Op::BarrierLeave { b } => {
                let Some(&a) = last_arrival.get(&(b, t.tid())) else {
                    continue;
                };
                if !gen_of.contains_key(&a) {
                    let gen = open.remove(&b).unwrap_or_default();
                    for &m in &gen {
                        gen_of.insert(m, gens.len());
                    }
                    gens.push(gen);
                }
                if let Some(&g) = gen_of.get(&a) {
                    out.push((j, gens[g].clone()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The SYN-sequence of a run with its causality (program order, create → child,
/// exit → join, send → receive).
pub struct Syn {
    pub trace: Vec<TEv>,
    pub slots: Vec<Slot>,
    sends: HashMap<Chan, Vec<Send>>,
    /// The mutex holdings of the run (what a try or timed lock may fail against).
    holdings: Vec<Holding>,
    /// Receive slots of each send.
    receivers: HashMap<Send, Vec<usize>>,
    /// Incoming causal edges of each event: (source, slot index if a pairing).
    incoming: Vec<Vec<(usize, Edge)>>,
    idx: Vec<u32>,
    vc: Vec<Vec<u32>>,
    /// Events `< prefix` were forced by the variant this run was derived from.
    prefix: usize,
    /// Receives of the prefix that a variant changed (this run's or an ancestor's).
    pinned: Vec<bool>,
    /// The exclusions of this run's variant (see [`Variant::excluded`]).
    excluded: Vec<Vec<Pairing>>,
    /// Events from here on were blocked, not executed.
    executed: usize,
    /// Every event posted and not executed when the run ended (a blocked `join` too): what
    /// each thread still running at a variant's clock step had posted ([`replays`]).
    posted: Vec<Event>,
}

/// Why one event causes another in a [`Syn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// Program order, create → child, exit → join, barrier arrival → leave.
    Causal,
    /// Send → receive of the slot with this index.
    Pair(usize),
    /// The clock: a sleep or timeout follows what ran before time moved.
    Clock,
}

/// An event named across runs: (thread, 1-based index in the thread).
pub type EvId = (Tid, u32);

/// A send named across runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendId {
    At(EvId),
    Init(Chan, u32),
    Fail(EvId),
}

/// One pairing of a SYN-sequence, named across runs: receive slot and its send (`None`: a
/// timed-out wake).
pub type Pairing = ((EvId, Chan), Option<SendId>);

/// A race variant: the forced prefix, which of its events are changed receives, and the
/// prefixes of the sibling variants that cover runs this one must not explore.
#[derive(Clone, Debug, Default)]
pub struct Variant {
    pub events: Vec<Event>,
    pub pinned: Vec<bool>,
    /// Each entry is what a sibling variant's subtree keeps of its prefix
    /// ([`fixed_pairings`]): every run that contains it is explored in that sibling's
    /// subtree.
    pub excluded: Vec<Vec<Pairing>>,
}

/// The pairings of `trace` ([`pair`]), events named (thread, index in thread).
pub fn pairings(trace: &[TEv]) -> Vec<Pairing> {
    pairings_at(trace).into_iter().map(|(_, p)| p).collect()
}

/// The pairings no run derived from the variant `seq` can lose: those of its pinned
/// (changed) receives and of their causes. A descendant may displace any other event of the
/// prefix (take its send), which re-runs it later with another partner, but never a cause
/// of a pinned receive (that would remove the receive). So the runs of the variant's subtree
/// are those that contain these pairings — what a sibling's exclusion must name.
fn fixed_pairings(seq: &[TEv], pinned: &[bool]) -> Vec<Pairing> {
    let syn = Syn::new(seq.to_vec(), Variant::default(), seq.len(), &[]);
    let pins: Vec<usize> = (0..seq.len()).filter(|&p| pinned[p]).collect();
    pairings_at(seq)
        .into_iter()
        .filter(|&(x, _)| pins.iter().any(|&p| syn.hb(x, p)))
        .map(|(_, p)| p)
        .collect()
}

/// [`pairings`] with the index of each receive in `trace`.
fn pairings_at(trace: &[TEv]) -> Vec<(usize, Pairing)> {
    let (slots, _) = pair(trace);
    let mut per: HashMap<Tid, u32> = HashMap::new();
    let ids: Vec<EvId> = trace
        .iter()
        .map(|t| {
            let c = per.entry(t.tid()).or_insert(0);
            *c += 1;
            (t.tid(), *c)
        })
        .collect();
    slots
        .iter()
        .map(|s| {
            let send = s.partner.map(|p| match p {
                Send::At(x) => SendId::At(ids[x]),
                Send::Init(c, k) => SendId::Init(c, k),
                Send::Fail(x) => SendId::Fail(ids[x]),
            });
            (s.ev, ((ids[s.ev], s.chan), send))
        })
        .collect()
}

/// Whether the pairings `have` contain a whole excluded prefix.
fn covers(have: &std::collections::HashSet<Pairing>, excluded: &[Pairing]) -> bool {
    excluded.iter().all(|p| have.contains(p))
}

impl Syn {
    /// `trace[executed..]` are the blocked receives of a deadlocked run (not executed).
    /// `inits` are the run's semaphore and barrier initialisations (for the clock's edges).
    pub fn new(trace: Vec<TEv>, variant: Variant, executed: usize, inits: &[Init]) -> Self {
        let prefix = variant.pinned.len();
        let (pinned, excluded) = (variant.pinned, variant.excluded);
        let (mut slots, sends, holdings) = pair_with_holdings(&trace);
        for s in &mut slots {
            if s.ev >= executed {
                s.partner = None;
            }
        }
        let mut receivers: HashMap<Send, Vec<usize>> = HashMap::new();
        for (k, s) in slots.iter().enumerate() {
            if let Some(p) = s.partner {
                receivers.entry(p).or_default().push(k);
            }
        }
        let n = trace.len();
        let nthreads = trace
            .iter()
            .flat_map(|t| [Some(t.tid()), t.child])
            .flatten()
            .max()
            .map_or(0, |m| m as usize + 1);
        let mut incoming: Vec<Vec<(usize, Edge)>> = vec![Vec::new(); n];
        let mut last: Vec<Option<usize>> = vec![None; nthreads];
        let mut created: HashMap<Tid, usize> = HashMap::new();
        let mut exits: HashMap<Tid, usize> = HashMap::new();
        for (j, t) in trace.iter().enumerate() {
            let tid = t.tid();
            match last[tid as usize] {
                Some(p) => incoming[j].push((p, Edge::Causal)),
                None => {
                    if let Some(&c) = created.get(&tid) {
                        incoming[j].push((c, Edge::Causal));
                    }
                }
            }
            last[tid as usize] = Some(j);
            if let Some(c) = t.child {
                created.insert(c, j);
            }
            match t.ev.op {
                Op::Exit => {
                    exits.insert(tid, j);
                }
                // A timed or try join that found the thread finished follows its exit like
                // a join (one that did not has no exit before it).
                Op::Join { target } | Op::TimedJoin { target, .. } | Op::TryJoin { target } => {
                    if let Some(&x) = exits.get(&target) {
                        incoming[j].push((x, Edge::Causal));
                    }
                }
                _ => {}
            }
        }
        for (k, s) in slots.iter().enumerate() {
            if let Some(Send::At(p) | Send::Fail(p)) = s.partner {
                incoming[s.ev].push((p, Edge::Pair(k)));
            }
        }
        for (j, from) in barrier_generations(&trace) {
            incoming[j].extend(from.into_iter().map(|a| (a, Edge::Causal)));
        }
        // A sleep or timeout that waited for time to pass follows every thread's last event
        // before the clock moved ([`clock_cuts`]).
        for (j, cut) in clock_cuts(&trace[..executed], inits)
            .into_iter()
            .enumerate()
        {
            let Some(cut) = cut else { continue };
            let mut seen = vec![false; nthreads];
            for k in (0..cut).rev() {
                let t = trace[k].tid() as usize;
                if !seen[t] {
                    seen[t] = true;
                    incoming[j].push((k, Edge::Clock));
                }
            }
        }
        let mut counts = vec![0u32; nthreads];
        let mut idx = Vec::with_capacity(n);
        let mut vc: Vec<Vec<u32>> = Vec::with_capacity(n);
        for (j, t) in trace.iter().enumerate() {
            let tid = t.tid() as usize;
            counts[tid] += 1;
            idx.push(counts[tid]);
            let mut c = vec![0u32; nthreads];
            for &(p, _) in &incoming[j] {
                join(&mut c, &vc[p]);
            }
            c[tid] = counts[tid];
            vc.push(c);
        }
        Syn {
            trace,
            slots,
            sends,
            holdings,
            receivers,
            incoming,
            idx,
            vc,
            prefix,
            pinned,
            excluded,
            executed,
            posted: Vec::new(),
        }
    }

    /// The events posted and not executed at the run's end (see [`Syn::posted`]).
    pub fn with_posted(mut self, posted: Vec<Event>) -> Self {
        self.posted = posted;
        self
    }

    /// `a` causes `b` (reflexive).
    fn hb(&self, a: usize, b: usize) -> bool {
        self.vc[b][self.trace[a].tid() as usize] >= self.idx[a]
    }

    fn is_pinned(&self, x: usize) -> bool {
        self.pinned.get(x).copied().unwrap_or(false)
    }

    fn is_broadcast(&self, s: Send) -> bool {
        matches!(s, Send::At(p) if matches!(self.trace[p].ev.op, Op::CondBroadcast { .. }))
    }

    /// The race set of slot `k` (receives of the forced prefix have none). A trylock or
    /// timed lock may also fail in another thread's holding of the mutex ([`Send::Fail`]):
    /// run after its acquisition and before its release.
    pub fn race_set(&self, k: usize) -> Vec<Send> {
        let slot = self.slots[k];
        let r = slot.ev;
        let Some(all) = self.sends.get(&slot.chan) else {
            return Vec::new();
        };
        let fails: Vec<Send> = match (slot.chan, self.trace[r].ev.op) {
            (Chan::Mutex(m), Op::TryLock { .. } | Op::TimedLock { .. }) if r >= self.prefix => self
                .holdings
                .iter()
                .filter(|h| h.m == m && self.trace[h.acq].tid() != self.trace[r].tid())
                .map(|h| Send::Fail(h.acq))
                .filter(|&s| Some(s) != slot.partner)
                .filter(|s| matches!(s, Send::Fail(a) if !self.hb(r, *a)))
                .collect(),
            _ => Vec::new(),
        };
        all.iter()
            .copied()
            .filter(|&s| Some(s) != slot.partner && r >= self.prefix)
            .filter(|&s| match s {
                Send::At(p) | Send::Fail(p) => !self.hb(r, p),
                Send::Init(..) => true,
            })
            .filter(|&s| {
                // Taking a send displaces its receiver, which goes with the rest of its
                // thread: never possible when that receiver is an earlier event of `r`'s own
                // thread (a row taking it is always rejected; a thread locking n times cost
                // n² rows, each replayed: minutes on a 10,000-step run).
                self.is_broadcast(s)
                    || matches!(s, Send::Fail(_))
                    || self.receivers.get(&s).is_none_or(|rs| {
                        rs.iter().all(|&k2| {
                            let r2 = self.slots[k2].ev;
                            r2 != r
                                && !self.is_pinned(r2)
                                && !(r2 < r && self.trace[r2].tid() == self.trace[r].tid())
                        })
                    })
            })
            .chain(fails)
            .collect()
    }

    /// The race variants of this run: forced event sequences, one per valid race-table row.
    pub fn variants(&self, initial: usize, sem_init: &Inits) -> Vec<Variant> {
        self.variants_until(initial, sem_init, None)
    }

    /// [`Syn::variants`], stopping at `deadline`: the race table has a row per combination of
    /// race-set choices, exponentially many on long runs (twostage_100 ran for minutes in
    /// one run's table), so the time limit is checked while it is enumerated; the caller
    /// sees the limit passed and ends the exploration incomplete.
    pub fn variants_until(
        &self,
        initial: usize,
        sem_init: &Inits,
        deadline: Option<Instant>,
    ) -> Vec<Variant> {
        let columns: Vec<(usize, Vec<Send>)> = (0..self.slots.len())
            .map(|k| (k, self.race_set(k)))
            .filter(|(_, rs)| !rs.is_empty())
            .collect();
        let mut out = Vec::new();
        let mut choice: Vec<Option<Send>> = vec![None; columns.len()];
        let mut removed = vec![false; self.trace.len()];
        self.rows(&columns, 0, &mut choice, &mut removed, &mut |row| {
            // Checked at every row: building one variant of a long run costs far more.
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            if let Some(v) = self.variant(&columns, row, initial, sem_init, true) {
                out.push(v);
            }
            true
        });
        out
    }

    /// Enumerate race-table rows: column `c` on, with the events already removed by the
    /// changes made in earlier columns. `emit` returns whether to go on; so does this.
    fn rows(
        &self,
        columns: &[(usize, Vec<Send>)],
        c: usize,
        choice: &mut Vec<Option<Send>>,
        removed: &mut Vec<bool>,
        emit: &mut dyn FnMut(&[Option<Send>]) -> bool,
    ) -> bool {
        if c == columns.len() {
            if choice.iter().any(Option::is_some) {
                return emit(choice);
            }
            return true;
        }
        let (k, ref race) = columns[c];
        let r = self.slots[k].ev;
        if !self.rows(columns, c + 1, choice, removed, emit) {
            return false;
        }
        if removed[r] {
            return true;
        }
        for &s in race {
            if matches!(s, Send::At(p) | Send::Fail(p) if removed[p]) {
                continue;
            }
            let saved = removed.clone();
            for (y, rem) in removed.iter_mut().enumerate().skip(r + 1) {
                if self.hb(r, y) {
                    *rem = true;
                }
            }
            choice[c] = Some(s);
            let go_on = self.rows(columns, c + 1, choice, removed, emit);
            choice[c] = None;
            *removed = saved;
            if !go_on {
                return false;
            }
        }
        true
    }

    /// Build and check the variant of one row: `None` if the row is inconsistent (a taken send
    /// or a changed receive removed, a receive that would not get its send).
    fn variant(
        &self,
        columns: &[(usize, Vec<Send>)],
        row: &[Option<Send>],
        initial: usize,
        sem_init: &Inits,
        with_exclusions: bool,
    ) -> Option<Variant> {
        let n = self.trace.len();
        let mut want: HashMap<usize, Send> = HashMap::new();
        let mut changed = vec![false; n];
        for (c, s) in row.iter().enumerate() {
            if let Some(s) = s {
                want.insert(columns[c].0, *s);
                changed[self.slots[columns[c].0].ev] = true;
            }
        }
        // Displaced receives (their send is taken) are removed; removal then propagates along
        // causal edges, and everything after a changed receive is removed. A changed receive
        // keeps its other edges: their sources must survive.
        let mut removed: Vec<bool> = (0..n).map(|x| x >= self.executed && !changed[x]).collect();
        for (&k, &s) in &want {
            if let Send::Fail(a) = s {
                // It must run while that holding goes on: before its release, which goes with
                // what it causes. Other attempts may observe the holding too.
                if let Some(rel) = self
                    .holdings
                    .iter()
                    .find(|h| h.acq == a)
                    .and_then(|h| h.release)
                {
                    removed[rel] = true;
                }
                continue;
            }
            if self.is_broadcast(s) {
                continue;
            }
            for &k2 in self.receivers.get(&s).map(Vec::as_slice).unwrap_or(&[]) {
                let r2 = self.slots[k2].ev;
                if r2 != self.slots[k].ev && !changed[r2] {
                    removed[r2] = true;
                }
            }
        }
        for y in 0..n {
            // A changed receive drops its pairing and its clock edges: whether it must wait
            // for time now depends on what it takes, which `replays` checks.
            let dead = |&(p, via): &(usize, Edge)| {
                (removed[p] || changed[p])
                    && !(changed[y]
                        && match via {
                            Edge::Pair(k) => want.contains_key(&k),
                            Edge::Clock => true,
                            Edge::Causal => false,
                        })
            };
            if self.incoming[y].iter().any(dead) {
                if changed[y] {
                    return None;
                }
                removed[y] = true;
            }
        }
        if want
            .values()
            .any(|s| matches!(s, Send::At(p) | Send::Fail(p) if removed[*p] || changed[*p]))
            || (0..n).any(|x| removed[x] && self.is_pinned(x))
        {
            return None;
        }
        let order: Vec<usize> = (0..n)
            .filter(|&x| !removed[x] && !changed[x])
            .chain((0..n).filter(|&x| changed[x]))
            .collect();
        let seq: Vec<TEv> = order.iter().map(|&x| self.trace[x]).collect();
        let run = self.trace[..self.executed]
            .iter()
            .map(|t| t.ev)
            .chain(self.posted.iter().copied());
        if !replays(&seq, run, initial, sem_init) {
            return None;
        }
        // Every kept receive keeps its partner; every changed one gets the chosen send.
        let (vslots, _) = pair(&seq);
        let to_q = |s: Send| match s {
            Send::At(p) => Send::At(order[p]),
            Send::Fail(p) => Send::Fail(order[p]),
            i => i,
        };
        for vs in &vslots {
            let q_ev = order[vs.ev];
            let k = self
                .slots
                .iter()
                .position(|s| s.ev == q_ev && s.chan == vs.chan)?;
            let expect = want.get(&k).copied().or(self.slots[k].partner);
            if vs.partner.map(to_q) != expect {
                return None;
            }
        }
        let mut excluded = Vec::new();
        if with_exclusions {
            // A variant that keeps what an ancestor's sibling fixed: all its runs are that
            // sibling's.
            let pinned: Vec<bool> = order
                .iter()
                .map(|&x| changed[x] || self.is_pinned(x))
                .collect();
            let have: HashSet<Pairing> = fixed_pairings(&seq, &pinned).into_iter().collect();
            if self.excluded.iter().any(|x| covers(&have, x)) {
                return None;
            }
            excluded = self.excluded.clone();
            // Columns left unchanged and not caused by a change: their alternatives are the
            // sibling rows that add them; descendants of this variant must not redo those.
            let after_change = |x: usize| (0..n).any(|c| changed[c] && c != x && self.hb(c, x));
            for (c, (k, race)) in columns.iter().enumerate() {
                let r = self.slots[*k].ev;
                if row[c].is_some() || after_change(r) {
                    continue;
                }
                for &alt in race {
                    // The sibling row: this one with `c` changed too.
                    let mut sib = row.to_vec();
                    sib[c] = Some(alt);
                    if let Some(v) = self.variant(columns, &sib, initial, sem_init, false) {
                        let t: Vec<TEv> = v.events.iter().map(|e| TEv::new(*e)).collect();
                        excluded.push(fixed_pairings(&t, &v.pinned));
                    }
                }
            }
        }
        Some(Variant {
            events: seq.iter().map(|t| t.ev).collect(),
            pinned: order
                .iter()
                .map(|&x| changed[x] || self.is_pinned(x))
                .collect(),
            excluded,
        })
    }
}

/// The path constraint of a variant: no run may come to contain the whole prefix of a
/// sibling variant (those runs are explored from the sibling). A free step is refused when
/// its pairings complete one; pairings of earlier events never change, so checking the
/// prefixes that contain one of the step's own pairings suffices.
fn constraint(excluded: &[Vec<Pairing>]) -> Option<super::guide::Allow> {
    if excluded.is_empty() {
        return None;
    }
    let excluded = excluded.to_vec();
    Some(Box::new(move |steps, ev| {
        let mut trace: Vec<TEv> = steps.iter().map(|r| r.ev).collect();
        trace.push(TEv::new(*ev));
        let me = (
            ev.tid,
            trace.iter().filter(|t| t.tid() == ev.tid).count() as u32,
        );
        let all = pairings(&trace);
        let new: Vec<&Pairing> = all.iter().filter(|p| p.0 .0 == me).collect();
        let mut have: Option<HashSet<Pairing>> = None;
        !excluded.iter().any(|x| {
            x.iter().any(|p| new.contains(&p))
                && covers(have.get_or_insert_with(|| all.iter().copied().collect()), x)
        })
    }))
}

fn join(c: &mut [u32], o: &[u32]) {
    for (a, &b) in c.iter_mut().zip(o) {
        *a = (*a).max(b);
    }
}

/// Whether `seq` is an execution of the synchronisation state machine (with the semaphore
/// values and barrier counts `sem_init`). `run` is what the run the variant comes from
/// executed and then posted: a thread's events in `seq` are the first ones of its events
/// there, so the event after them is the operation the thread posts next.
fn replays(
    seq: &[TEv],
    run: impl Iterator<Item = Event>,
    initial: usize,
    sem_init: &Inits,
) -> bool {
    let mut s = State::with_initial_threads(initial.max(1));
    for (&(kind, addr), &v) in sem_init {
        match kind {
            ObjKind::Sem => s.init_sem(addr, v),
            _ => s.init_barrier(addr, v),
        }
    }
    let mut by_thread: HashMap<Tid, Vec<Op>> = HashMap::new();
    for e in run {
        by_thread.entry(e.tid).or_default().push(e.op);
    }
    // Events of each thread executed so far.
    let mut done: HashMap<Tid, usize> = HashMap::new();
    for t in seq {
        if s.pending(t.tid()).is_none() && s.post(t.tid(), t.ev.op).is_err() {
            return false;
        }
        let next = |u: Tid| {
            let i = done.get(&u).copied().unwrap_or(0);
            by_thread.get(&u).and_then(|ops| ops.get(i)).copied()
        };
        if !s.is_enabled(t.tid()) && !let_time_pass(&mut s, t.tid(), next) {
            return false;
        }
        if !s.is_enabled(t.tid()) || s.execute(t.tid()).is_err() {
            return false;
        }
        *done.entry(t.tid()).or_default() += 1;
    }
    true
}

pub(crate) fn run(ctx: &mut Ctx) {
    ctx.report.complete = true;
    let mut guide = ctx.guide(Rule::Lowest, false);
    // Pending variants: forced prefix. The initial run has an empty one.
    let mut pending: Vec<Variant> = vec![Variant::default()];
    let mut sem_init: Inits = HashMap::new();
    let mut real_sem: Inits = HashMap::new();
    while let Some(mut v) = pending.pop() {
        if ctx.out_of_budget() {
            return;
        }
        guide.allow = constraint(&v.excluded);
        let target = std::mem::take(&mut v.events);
        let fixed = v.pinned.iter().filter(|p| **p).count();
        guide.plan(target.clone(), 0, Vec::new());
        if let Outcome::Stop = ctx.run(&mut guide, None) {
            return;
        }
        let mut trace: Vec<TEv> = guide.steps.iter().map(|r| r.ev).collect();
        let executed = trace.len();
        // A deadlocked run: its blocked receives race too (they may take a send instead).
        trace.extend(
            guide
                .waiting
                .iter()
                .flatten()
                .filter(|e| {
                    matches!(
                        e.op,
                        Op::Lock { .. }
                            | Op::SemWait { .. }
                            | Op::CondWake { .. }
                            | Op::RdLock { .. }
                            | Op::WrLock { .. }
                            | Op::OnceBegin { .. }
                    )
                })
                .map(|e| TEv::new(*e)),
        );
        // Initial values are not events: the recorded `sem_init` value (the first, replays
        // start with it), else the largest need seen so far.
        for i in guide.inits.iter().rev() {
            if matches!(i.obj.kind, ObjKind::Sem | ObjKind::Barrier) {
                real_sem.insert((i.obj.kind, i.obj.addr), i.value);
            }
        }
        for (sem, v) in infer_sem_init(&trace[..executed]) {
            let e = sem_init.entry((ObjKind::Sem, sem)).or_insert(0);
            *e = (*e).max(v);
        }
        for (b, n) in infer_barrier_counts(&trace[..executed]) {
            sem_init.entry((ObjKind::Barrier, b)).or_insert(n);
        }
        sem_init.extend(real_sem.iter().map(|(&s, &v)| (s, v)));
        if guide.skipped > 0 {
            v = realign(&target, v, &trace[..executed]);
        }
        let posted = guide.waiting.iter().flatten().copied().collect();
        let syn = Syn::new(trace, v, executed, &guide.inits).with_posted(posted);
        let mut vs = syn.variants_until(ctx.initial, &sem_init, ctx.deadline());
        // Each variant fixes more receives than its parent (always so when the runs follow
        // their prefixes; after a divergent run, see `realign`): the search stays finite.
        vs.retain(|c| c.pinned.iter().filter(|p| **p).count() > fixed);
        pending.extend(vs.into_iter().rev());
        ctx.report.rt_peak_pending = ctx.report.rt_peak_pending.max(pending.len() as u64);
    }
}

/// Approximate replay: the variant `v` (forced prefix `target`) as the run `trace` realised
/// it. A receive stays fixed where the run executed its target event (same thread, index in
/// the thread and operation); the prefix ends after the last realised target event. Fixed
/// receives the run skipped are lost, so the variants of such a run may fix no more receives
/// than `v`; [`run`] drops those.
fn realign(target: &[Event], v: Variant, trace: &[TEv]) -> Variant {
    let mut count: HashMap<Tid, u32> = HashMap::new();
    let mut next = |t: Tid| {
        let c = count.entry(t).or_insert(0);
        *c += 1;
        *c
    };
    let want: HashMap<EvId, (&'static str, bool)> = target
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let fixed = v.pinned.get(i).copied().unwrap_or(false);
            ((e.tid, next(e.tid)), (e.op.name(), fixed))
        })
        .collect();
    count.clear();
    let mut next = |t: Tid| {
        let c = count.entry(t).or_insert(0);
        *c += 1;
        *c
    };
    let mut pinned = Vec::with_capacity(trace.len());
    let mut end = 0;
    for (x, t) in trace.iter().enumerate() {
        match want.get(&(t.tid(), next(t.tid()))) {
            Some(&(name, fixed)) if name == t.ev.op.name() => {
                pinned.push(fixed);
                end = x + 1;
            }
            _ => pinned.push(false),
        }
    }
    pinned.truncate(end);
    Variant {
        events: Vec::new(),
        pinned,
        excluded: v.excluded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::guide::Guide;
    use crate::explore::testprog::{self, Interp};
    use crate::explore::Executor;

    /// The first run of philosophers(3) is t1, t2, t3 one after the other. Thread 2 could
    /// have taken fork 1 first (the initial send t1 took); thread 3 could have taken fork 2
    /// first. Thread 3's lock of fork 0 is a candidate for fork 0's initial send too, but its
    /// row is no variant: t3 follows t1 through the chain t1 → t2 → t3 of other pairings, so
    /// displacing t1's lock removes t3's own causes.
    #[test]
    fn a_lock_never_races_with_the_unlocks_its_own_thread_gave_itself() {
        // Main locks the mutex n times before it creates a worker that locks it once: each of
        // main's relocks had the earlier sends of its own thread in its race set (rows that
        // are always rejected, each replayed: a 10,000-step run spent minutes there). Only
        // the worker's lock races (with the sends it could take: main's 49 releases before its
        // last one, and the initial one); main's have nothing to race with.
        use testprog::{k, I};
        let mut main: Vec<I> = Vec::new();
        for _ in 0..50 {
            main.extend([I::Lock(k(0)), I::Unlock(k(0))]);
        }
        let mut p = testprog::with_main(vec![vec![I::Lock(k(0)), I::Unlock(k(0))]], &[(0, 0)]);
        p.bodies[p.main].splice(0..0, main);
        let mut ex = Interp::new(p);
        let mut g = Guide::new(Rule::Lowest, false, 1);
        assert!(ex.execute(&mut g).bug.is_none());
        let trace: Vec<TEv> = g.steps.iter().map(|r| r.ev).collect();
        let n = trace.len();
        let syn = Syn::new(trace, Variant::default(), n, &g.inits);
        let racing: Vec<(Tid, usize)> = (0..syn.slots.len())
            .map(|k| (syn.trace[syn.slots[k].ev].tid(), syn.race_set(k).len()))
            .filter(|&(_, r)| r > 0)
            .collect();
        assert_eq!(racing, vec![(1, 50)], "{racing:?}");
    }

    #[test]
    fn race_sets_of_the_first_philosophers_run() {
        let mut ex = Interp::new(testprog::philosophers(3));
        let mut g = Guide::new(Rule::Lowest, false, 1);
        let out = ex.execute(&mut g);
        assert!(out.bug.is_none() && out.diverged.is_none());
        let trace: Vec<TEv> = g.steps.iter().map(|r| r.ev).collect();
        let n = trace.len();
        let syn = Syn::new(trace, Variant::default(), n, &g.inits);
        let races: Vec<(Tid, usize)> = syn
            .slots
            .iter()
            .enumerate()
            .map(|(k, s)| (syn.trace[s.ev].tid(), syn.race_set(k).len()))
            .collect();
        // Slots in order: t1 f0, t1 f1, t2 f1, t2 f2, t3 f2, t3 f0.
        assert_eq!(races, vec![(1, 0), (1, 0), (2, 1), (2, 0), (3, 1), (3, 1)]);
        assert!(matches!(syn.race_set(2)[0], Send::Init(Chan::Mutex(_), 0)));
        let vs = syn.variants(1, &HashMap::new());
        assert_eq!(
            vs.len(),
            2,
            "one variant per racing receive, no valid combination"
        );
        // With the time limit already passed, the table is not enumerated.
        let late = syn.variants_until(1, &HashMap::new(), Some(Instant::now()));
        assert!(late.is_empty());
        // The variant for thread 2 keeps t1's first lock and forces t2's lock of fork 1.
        let last = vs
            .iter()
            .map(|v| v.events.last().map(|e| e.tid))
            .collect::<Vec<_>>();
        assert!(last.contains(&Some(2)) && last.contains(&Some(3)));
        assert!(vs
            .iter()
            .all(|v| v.pinned.iter().filter(|p| **p).count() == 1));
    }
}
