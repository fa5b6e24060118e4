//! Live flows: per-flow state from a flow's start until its record is final, in reusable
//! slots, and the retirement that hands finished records on. A flow is retirable once its
//! endpoints are released (a UDP flow: its sender is done), none of its packets is in the
//! network and it is not waiting for its goodput record; it then retires in the order it
//! became so, its record is written, and its slot is reused.

use crate::engine::Time;
use crate::error::Result;
use crate::metrics::ClassMark;
use crate::traffic::Mode;

pub(super) const NONE: u32 = u32::MAX;
pub(super) const NO_PATH: u8 = u8::MAX;

/// Compact per-flow state, kept from a flow's start until it is retired. Fields in declared
/// order (`repr(C)`): what a packet's delivery, an endpoint's step and retirement read
/// comes first, in one cache line; the record's counters, touched on drops and at the
/// end, after it.
#[derive(Clone)]
#[repr(C)]
pub struct Flow {
    /// Packets of the flow in the network (created, not yet delivered or dropped).
    pub in_net: u32,
    pub id: u32,
    pub ep: [u32; 2],
    /// Session index within its traffic block (closed-loop), or NONE.
    pub session: u32,
    pub traffic: u16,
    /// Side (0 client, 1 server) that receives the data.
    pub data_to_side: u8,
    /// Record this flow's TCP state after every event (traces.parquet).
    pub traced: bool,
    pub udp: bool,
    /// The flow delivered since its last goodput record (it is then on the goodput list).
    pub gp_dirty: bool,
    /// Queued for retirement (`Flows::check_retire`).
    pub retiring: bool,
    pub end: Option<Time>,
    /// Data packets (None: persistent).
    pub size: Option<u64>,

    pub start: Time,
    pub drops: u64,
    pub syn_drops: u64,
    pub synack_drops: u64,
    pub pushed_out: u64,
    pub ack_drops: u64,
    pub tcp: crate::tcp::TcpStats,
    pub base_rtt: Time,
    pub favored: u64,
    /// Queueing delay of the data packets (`sampling.flow_qdelay`).
    pub qdelay: crate::metrics::FlowQdelay,
    /// Packets of the flow seen at a threshold path policy.
    pub policy_seen: u64,
    /// Delivered data packets at the last goodput record.
    pub gp_last: u64,
    /// Data sender and receiver hosts.
    pub src: u32,
    pub dst: u32,
    pub mode: Mode,
    pub first_data_drop: bool,
    pub class_at_end: ClassMark,
    /// Path policy: candidate hop index first and last used (NO_PATH: none).
    pub path: [u8; 2],
}

impl Flow {
    /// Whether nothing can change this flow's record any more.
    fn retirable(&self) -> bool {
        let ends_done = if self.udp { self.end.is_some() } else { self.ep == [NONE, NONE] };
        ends_done && self.in_net == 0 && !self.gp_dirty
    }
}

/// The live flows (started, not yet retired) in reusable slots; `slot_of[id - base]` is flow
/// `id`'s slot, or NONE once it is retired. The window `slot_of` starts at the oldest flow
/// still live (compacted as the oldest retire), so a run holds the live flows plus four
/// bytes per flow since the oldest live one, not every flow it started.
#[derive(Default)]
pub struct Flows {
    slots: Vec<Flow>,
    free: Vec<u32>,
    slot_of: Vec<u32>,
    base: u32,
    /// Index in `slot_of` of the oldest flow that may still be live.
    front: usize,
    /// Flows found retirable, waiting for `retire` (in the order they became so).
    to_retire: Vec<u32>,
    /// Tests only: retire nothing, keep every flow to the end (the reference that
    /// retirement must not change).
    #[cfg(test)]
    pub keep_all: bool,
}

impl Flows {
    /// The id the next flow started gets.
    #[inline]
    pub fn next_id(&self) -> u32 {
        self.base + self.slot_of.len() as u32
    }

    /// Flows started so far.
    pub fn started(&self) -> u64 {
        self.base as u64 + self.slot_of.len() as u64
    }

    /// Slots in use at most so far (the flows held at once).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.slots.len()
    }

    /// Add a new flow (its `id` must be `next_id()`); its slot.
    pub fn insert(&mut self, f: Flow) -> usize {
        debug_assert_eq!(f.id, self.next_id());
        let slot = slab_insert(&mut self.slots, &mut self.free, f);
        self.slot_of.push(slot);
        slot as usize
    }

    /// Slot of live flow `id`.
    #[inline]
    pub fn fi(&self, id: u32) -> usize {
        let slot = self.slot_of[(id - self.base) as usize];
        debug_assert!(slot != NONE, "flow {id} is retired");
        slot as usize
    }

    /// Queue the flow in slot `fi` for retirement if it has become retirable. Called
    /// wherever one of the conditions can turn true: endpoints released, last packet
    /// delivered or dropped, goodput recorded, UDP sender done.
    #[inline]
    pub fn check_retire(&mut self, fi: usize) {
        #[cfg(test)]
        if self.keep_all {
            return;
        }
        let f = &mut self.slots[fi];
        if !f.retiring && f.retirable() {
            f.retiring = true;
            self.to_retire.push(f.id);
        }
    }

    /// Retire the flows found retirable, in the order they became so: `take` gets each one
    /// (to write its record) and its slot is reused. The rows of flows.parquet are therefore
    /// in retirement order, deterministic for a scenario and seed.
    pub fn retire(&mut self, mut take: impl FnMut(&Flow) -> Result<()>) -> Result<()> {
        for k in 0..self.to_retire.len() {
            let id = self.to_retire[k];
            let fi = self.fi(id);
            take(&self.slots[fi])?;
            self.slot_of[(id - self.base) as usize] = NONE;
            self.free.push(fi as u32);
        }
        self.to_retire.clear();
        // Drop the retired prefix of the window once it is at least half of it
        // (amortised O(1) per flow).
        while self.front < self.slot_of.len() && self.slot_of[self.front] == NONE {
            self.front += 1;
        }
        if self.front >= 1024 && 2 * self.front >= self.slot_of.len() {
            self.slot_of.drain(..self.front);
            self.base += self.front as u32;
            self.front = 0;
        }
        Ok(())
    }

    /// Slots of the flows still live, in flow order.
    pub fn live_slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.slot_of[self.front..].iter().filter(|&&s| s != NONE).map(|&s| s as usize)
    }

    /// Queue every flow still live for retirement, in flow order, after those already
    /// queued (the end of the run).
    pub fn retire_all(&mut self) {
        for k in self.front..self.slot_of.len() {
            let fi = self.slot_of[k];
            if fi != NONE && !self.slots[fi as usize].retiring {
                self.to_retire.push(self.base + k as u32);
            }
        }
    }
}

impl std::ops::Index<usize> for Flows {
    type Output = Flow;
    #[inline]
    fn index(&self, fi: usize) -> &Flow {
        &self.slots[fi]
    }
}

impl std::ops::IndexMut<usize> for Flows {
    #[inline]
    fn index_mut(&mut self, fi: usize) -> &mut Flow {
        &mut self.slots[fi]
    }
}

/// Put `item` in a free slot of `items` (one listed in `free`) or a new one; its index.
pub(super) fn slab_insert<T>(items: &mut Vec<T>, free: &mut Vec<u32>, item: T) -> u32 {
    match free.pop() {
        Some(i) => {
            items[i as usize] = item;
            i
        }
        None => {
            items.push(item);
            (items.len() - 1) as u32
        }
    }
}
