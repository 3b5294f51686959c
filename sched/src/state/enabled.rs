//! The enabled set, maintained incrementally instead of rescanned at every decision.
//!
//! A scheduling step changes little: the executed thread leaves the set, posts its next event
//! and (usually) comes back; other threads change only if the executed operation changed a
//! synchronisation object, and then only threads whose pending operation can block at all
//! ([`super::may_block`]: lock, join, condvar wake, ...). So [`super::State`] keeps
//! - the enabled events in thread order (what strategies are given), and
//! - the set of pending threads whose operation can block, re-checked after every operation
//!   that touches synchronisation state.
//!
//! With 16 threads this replaces a scan of every thread per decision (the largest cost of
//! the decision loop by callgrind) by a binary search. The executed thread's entry is not
//! shifted out: it is left as a *hole* that the same thread's next post fills in place,
//! which is what almost always happens next; anything else first closes the hole.

use crate::event::{Event, Obj, Tid};

/// Enabled events in thread order, and the pending threads whose operation may block.
#[derive(Clone, Debug, Default)]
pub(super) struct EnabledSet {
    /// In thread order; `events[hole]` (if any) is not enabled.
    events: Vec<Event>,
    /// Index of an entry removed but not yet shifted out.
    hole: Option<usize>,
    /// Bitset over tids: pending at an operation that may block.
    blockable: Vec<u64>,
    /// Bitset over tids: has an entry in `events` (the hole's thread excluded).
    present: Vec<u64>,
    /// By tid: the objects of a blockable thread's pending operation (so that a re-check
    /// after an event skips the threads it cannot concern without decoding their operation).
    objects: Vec<[Option<Obj>; 2]>,
    /// By tid: [`summary`] of `objects`, so that most threads are skipped with one AND.
    summaries: Vec<u64>,
}

/// A 64-bit summary of some objects: two object lists whose summaries share no bit have no
/// object in common. A synchronisation object (size 1) sets one bit hashed from its kind and
/// address; anything larger sets every bit.
#[inline]
pub(super) fn summary(objects: &[Option<Obj>; 2]) -> u64 {
    let mut m = 0;
    for o in objects.iter().flatten() {
        m |= if o.size == 1 {
            let h = (o.addr ^ ((o.kind as u64) << 56)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            1 << (h >> 58)
        } else {
            !0
        };
    }
    m
}

impl EnabledSet {
    /// The enabled events, in thread order.
    #[inline]
    pub fn events(&mut self) -> &[Event] {
        self.close_hole();
        &self.events
    }

    /// Whether no event is enabled.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.events.len() == usize::from(self.hole.is_some())
    }

    /// Replace the contents of `out` by the enabled events, in thread order.
    pub fn copy_into(&self, out: &mut Vec<Event>) {
        out.clear();
        match self.hole {
            None => out.extend_from_slice(&self.events),
            Some(i) => {
                out.extend_from_slice(&self.events[..i]);
                out.extend_from_slice(&self.events[i + 1..]);
            }
        }
    }

    /// Shift the removed entry out.
    #[inline]
    fn close_hole(&mut self) {
        if let Some(i) = self.hole.take() {
            self.events.remove(i);
        }
    }

    /// Whether thread `t` has an enabled event.
    #[inline]
    pub fn contains(&self, t: Tid) -> bool {
        bit(&self.present, t)
    }

    #[inline]
    fn find(&self, t: Tid) -> Result<usize, usize> {
        // The executed thread is often the last one: check the end first.
        match self.events.last() {
            None => Err(0),
            Some(e) if e.tid < t => Err(self.events.len()),
            _ => self.events.binary_search_by_key(&t, |e| e.tid),
        }
    }

    /// `ev` is enabled (replacing any event of its thread).
    #[inline]
    pub fn insert(&mut self, ev: Event) {
        // The common case, inlined: the executed thread refills its hole.
        if let Some(i) = self.hole {
            if self.events[i].tid == ev.tid {
                set_bit(&mut self.present, ev.tid, true);
                self.events[i] = ev;
                self.hole = None;
                return;
            }
        }
        self.insert_elsewhere(ev);
    }

    /// [`Self::insert`] other than into the hole of the same thread.
    #[inline(never)]
    fn insert_elsewhere(&mut self, ev: Event) {
        set_bit(&mut self.present, ev.tid, true);
        self.close_hole();
        match self.find(ev.tid) {
            Ok(i) => self.events[i] = ev,
            Err(i) => self.events.insert(i, ev),
        }
    }

    /// Thread `t` has no enabled event.
    #[inline]
    pub fn remove(&mut self, t: Tid) {
        if !self.contains(t) {
            return;
        }
        set_bit(&mut self.present, t, false);
        self.close_hole();
        if let Ok(i) = self.find(t) {
            self.hole = Some(i);
        }
    }

    /// Remove the entry at `index` of [`Self::events`] (no hole may be open); returns its
    /// thread. Saves [`Self::remove`]'s search when the caller knows the position.
    #[inline]
    pub fn remove_at(&mut self, index: usize) -> Tid {
        debug_assert!(self.hole.is_none());
        let t = self.events[index].tid;
        set_bit(&mut self.present, t, false);
        self.hole = Some(index);
        t
    }

    /// Record whether thread `t` is pending at an operation that may block, touching
    /// `objects` (those of [`Event::objects`]).
    #[inline]
    pub fn set_blockable(&mut self, t: Tid, objects: Option<[Option<Obj>; 2]>) {
        set_bit(&mut self.blockable, t, objects.is_some());
        if let Some(o) = objects {
            if t as usize >= self.objects.len() {
                self.objects.resize(t as usize + 1, [None, None]);
                self.summaries.resize(t as usize + 1, 0);
            }
            self.objects[t as usize] = o;
            self.summaries[t as usize] = summary(&o);
        }
    }

    /// The objects of blockable thread `t`'s pending operation.
    #[inline]
    pub fn blockable_objects(&self, t: Tid) -> &[Option<Obj>; 2] {
        &self.objects[t as usize]
    }

    /// [`summary`] of the objects of blockable thread `t`'s pending operation.
    #[inline]
    pub fn blockable_summary(&self, t: Tid) -> u64 {
        self.summaries[t as usize]
    }

    /// Whether any pending thread may be blocked.
    #[inline]
    pub fn any_blockable(&self) -> bool {
        self.blockable.iter().any(|&w| w != 0)
    }

    /// Number of 64-thread words of the blockable bitset.
    #[inline]
    pub fn blockable_words(&self) -> usize {
        self.blockable.len()
    }

    /// Word `w` of the blockable bitset: bit `b` is thread `64 * w + b`.
    #[inline]
    pub fn blockable_word(&self, w: usize) -> u64 {
        self.blockable[w]
    }

    /// No thread is pending any more (the process exited).
    pub fn clear(&mut self) {
        self.events.clear();
        self.hole = None;
        self.blockable.iter_mut().for_each(|w| *w = 0);
        self.present.iter_mut().for_each(|w| *w = 0);
    }
}

/// Bit `t` of a bitset over tids.
#[inline]
fn bit(words: &[u64], t: Tid) -> bool {
    words
        .get(t as usize / 64)
        .is_some_and(|w| w >> (t % 64) & 1 == 1)
}

/// Set or clear bit `t`, growing the bitset as needed.
#[inline]
fn set_bit(words: &mut Vec<u64>, t: Tid, on: bool) {
    let w = t as usize / 64;
    if w >= words.len() {
        if !on {
            return;
        }
        words.resize(w + 1, 0);
    }
    if on {
        words[w] |= 1 << (t % 64);
    } else {
        words[w] &= !(1 << (t % 64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Op;

    #[test]
    fn events_stay_in_thread_order() {
        let mut s = EnabledSet::default();
        for t in [3, 0, 7, 1] {
            s.insert(Event::new(t, Op::Yield));
        }
        s.insert(Event::new(7, Op::Sleep));
        s.remove(1);
        s.remove(5);
        let got = |s: &mut EnabledSet| -> Vec<(Tid, Op)> {
            let mut copy = Vec::new();
            s.copy_into(&mut copy);
            let v: Vec<(Tid, Op)> = s.events().iter().map(|e| (e.tid, e.op)).collect();
            assert_eq!(copy, s.events());
            v
        };
        assert_eq!(
            got(&mut s),
            vec![(0, Op::Yield), (3, Op::Yield), (7, Op::Sleep)]
        );
        // A hole is filled in place by its thread, and skipped by copies meanwhile.
        s.remove(3);
        let mut copy = Vec::new();
        s.copy_into(&mut copy);
        assert_eq!(copy.len(), 2);
        s.insert(Event::new(3, Op::Sleep));
        assert_eq!(s.hole, None);
        assert_eq!(
            got(&mut s),
            vec![(0, Op::Yield), (3, Op::Sleep), (7, Op::Sleep)]
        );
        // ... and closed by anything else.
        s.remove(0);
        s.insert(Event::new(9, Op::Yield));
        assert_eq!(
            got(&mut s),
            vec![(3, Op::Sleep), (7, Op::Sleep), (9, Op::Yield)]
        );
        s.remove(9);
        s.remove(3);
        assert_eq!(got(&mut s), vec![(7, Op::Sleep)]);
    }

    #[test]
    fn remove_at_leaves_a_hole_its_thread_refills() {
        let mut s = EnabledSet::default();
        for t in [2, 5, 8] {
            s.insert(Event::new(t, Op::Yield));
        }
        assert_eq!(s.events().len(), 3);
        assert_eq!(s.remove_at(1), 5);
        assert!(!s.contains(5));
        s.remove(5); // already gone: no effect
        s.insert(Event::new(5, Op::Sleep));
        assert_eq!(s.hole, None);
        let tids: Vec<Tid> = s.events().iter().map(|e| e.tid).collect();
        assert_eq!(tids, vec![2, 5, 8]);
        assert_eq!(s.remove_at(2), 8);
        let tids: Vec<Tid> = s.events().iter().map(|e| e.tid).collect();
        assert_eq!(tids, vec![2, 5]);
    }

    #[test]
    fn blockable_bits_cover_many_threads() {
        let mut s = EnabledSet::default();
        assert!(!s.any_blockable());
        for t in [130, 2, 64, 63] {
            s.set_blockable(t, Some([None, None]));
        }
        s.set_blockable(64, None);
        s.set_blockable(500, None);
        assert!(s.any_blockable());
        assert_eq!(s.blockable_words(), 3);
        let words: Vec<u64> = (0..3).map(|w| s.blockable_word(w)).collect();
        assert_eq!(words, vec![1 << 2 | 1 << 63, 0, 1 << 2]);
        s.clear();
        assert!(!s.any_blockable());
    }
}
