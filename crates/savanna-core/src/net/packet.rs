//! Packets. A packet is a small `Copy` struct kept in a pool and referred to by a `u32`
//! id, so forwarding moves ids, not packets, and nothing is allocated per packet once the
//! pool has grown to the peak number of packets alive.

/// Class mark carried by a packet and reported per flow (Guo & Matta's In/Out = short/long).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ClassMark {
    #[default]
    None = 0,
    Short = 1,
    Long = 2,
}

impl ClassMark {
    pub const ALL: [ClassMark; 3] = [ClassMark::None, ClassMark::Short, ClassMark::Long];
    pub fn as_str(self) -> &'static str {
        match self {
            ClassMark::None => "none",
            ClassMark::Short => "short",
            ClassMark::Long => "long",
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

pub type PktId = u32;

/// What a packet is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PktKind {
    Syn,
    SynAck,
    /// TCP segment carrying one packet of data (it also carries a cumulative ACK).
    Data,
    /// Pure TCP acknowledgement.
    Ack,
    /// Connection teardown (FIN), when `teardown` is on; it carries an ACK too.
    Fin,
    /// UDP datagram.
    Udp,
}

/// ECN codepoint in the IP header (RFC 3168): `Ect` is ECT(0), `Ect1` is ECT(1), the L4S
/// identifier (RFC 9331), which an L4S queue classifies with CE into its L queue (RFC 9332).
/// The fourth codepoint costs no byte: the field already is one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    NotEct,
    Ect,
    Ce,
    Ect1,
}

impl Ecn {
    /// ECT(0) or ECT(1): the sender is ECN-capable and the packet is not yet marked.
    #[inline]
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect | Ecn::Ect1)
    }
}

pub const FLAG_ECE: u8 = 1;
pub const FLAG_CWR: u8 = 2;
/// The segment is a retransmission (bookkeeping only; not visible to queues by design).
pub const FLAG_RETX: u8 = 4;
/// The flag byte's upper five bits carry a priority tag (0..=31, 0 = highest), as a DSCP
/// field would: written by an edge classifier (PIAS's priority, pFabric's remaining size),
/// read by the rank-based disciplines. Untagged packets carry 0.
pub const TAG_SHIFT: u8 = 3;

/// What an edge classifier writes into a packet and a queue discipline may read: the class
/// mark (`Packet::class`) or the priority tag (`Packet::tag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Class,
    Tag,
}

impl Mark {
    /// How errors name it.
    pub fn describe(self) -> &'static str {
        match self {
            Mark::Class => "class marks",
            Mark::Tag => "priority tags",
        }
    }
}
/// The largest tag.
pub const TAG_MAX: u8 = 31;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Flow the packet belongs to (index into the simulator's flow table).
    pub flow: u32,
    /// Data sequence number in packets (Data), or 0.
    pub seq: u32,
    /// Cumulative acknowledgement: next data packet expected (Ack, Data, SynAck).
    pub ack: u32,
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// Time the packet entered its current queue (for sojourn-time disciplines).
    pub enq_ns: u64,
    pub kind: PktKind,
    pub ecn: Ecn,
    pub flags: u8,
    /// Class mark written by an edge classifier (none/short/long).
    pub class: ClassMark,
    /// Which end of the connection receives it: 0 the initiator (client), 1 the responder.
    pub to_side: u8,
    /// Path index chosen by a path policy (0 when there is one path).
    pub path: u8,
    /// Scratch byte a queue discipline may use while the packet is queued (e.g. favoured).
    pub qmark: u8,
    /// SACK option of a pure ACK (RFC 2018); empty otherwise.
    pub sack: SackOpt,
}

/// The SACK option an ACK carries (RFC 2018 section 3): up to 4 blocks, each stored as
/// (first packet - the ACK's cumulative ack, length in packets), so a block costs 4 bytes
/// here whatever the sequence numbers. A D-SACK block (RFC 2883) may start below the ACK.
/// Its wire size is counted in the ACK's `size` by the sender of the ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackOpt {
    pub n: u8,
    pub blocks: [(i16, u16); 4],
}

impl SackOpt {
    pub const NONE: SackOpt = SackOpt { n: 0, blocks: [(0, 0); 4] };
}

impl Packet {
    pub fn is_tcp(&self) -> bool {
        !matches!(self.kind, PktKind::Udp)
    }
    pub fn is_data(&self) -> bool {
        matches!(self.kind, PktKind::Data | PktKind::Udp)
    }
    /// The priority tag (`TAG_SHIFT`), 0..=31.
    #[inline]
    pub fn tag(&self) -> u8 {
        self.flags >> TAG_SHIFT
    }
    /// Write the priority tag (clamped to `TAG_MAX`), leaving the TCP flags alone.
    #[inline]
    pub fn set_tag(&mut self, t: u8) {
        self.flags = (self.flags & ((1 << TAG_SHIFT) - 1)) | (t.min(TAG_MAX) << TAG_SHIFT);
    }
    /// The components' unit-test fixture: data packet `seq` of `flow`, 1500 bytes, host 0 to
    /// host 1, unmarked and not ECT; tests change what they need by struct update.
    #[cfg(test)]
    pub(crate) fn test_data(flow: u32, seq: u32) -> Packet {
        Packet {
            flow,
            seq,
            ack: 0,
            src: 0,
            dst: 1,
            size: 1500,
            enq_ns: 0,
            kind: PktKind::Data,
            ecn: Ecn::NotEct,
            flags: 0,
            class: ClassMark::None,
            to_side: 1,
            path: 0,
            qmark: 0,
            sack: SackOpt::NONE,
        }
    }
}

/// Pool of packets with a free list.
#[derive(Default)]
pub struct PacketPool {
    slots: Vec<Packet>,
    free: Vec<PktId>,
    live: u64,
    created: u64,
}

impl PacketPool {
    pub fn new() -> Self {
        PacketPool { slots: Vec::with_capacity(64), free: Vec::with_capacity(64), live: 0, created: 0 }
    }
    #[inline]
    pub fn alloc(&mut self, p: Packet) -> PktId {
        self.live += 1;
        self.created += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = p;
            id
        } else {
            self.slots.push(p);
            (self.slots.len() - 1) as PktId
        }
    }
    #[inline]
    pub fn free(&mut self, id: PktId) {
        self.live -= 1;
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: PktId) -> &Packet {
        &self.slots[id as usize]
    }
    /// Ask the CPU to bring packet `id` into cache ahead of its use (a hint: no effect on
    /// any result). A packet that has propagated for a link delay is cold by the time it
    /// arrives when many are in flight (10 Gb/s: the pool is megabytes); the simulator
    /// prefetches a line's next packet when the one before it arrives.
    #[inline]
    pub fn prefetch(&self, id: PktId) {
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.slots.get(id as usize) {
            // SAFETY: `_mm_prefetch` only hints the cache; it reads nothing the program sees
            // and cannot fault. SSE is part of the x86_64 baseline.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const Packet as *const i8)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }
    #[inline]
    pub fn get_mut(&mut self, id: PktId) -> &mut Packet {
        &mut self.slots[id as usize]
    }
    /// Packets allocated and not yet freed.
    pub fn live(&self) -> u64 {
        self.live
    }
    pub fn created(&self) -> u64 {
        self.created
    }
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }
}
