//! A segment-level harness for testing one endpoint without a simulator, in the manner of
//! smoltcp's socket tests: a clock set by hand, hand-made segments in, the segments the
//! endpoint sends out, and its window, recovery state and timer deadlines to inspect.
//! Timers fire only when a test says so (`fire_rto`, `fire_timer`, `fire_delack`), at their
//! deadline.
//! tests/tcp_rfc.rs holds the RFC rule tests built on it.

use super::{TcpConfig, TcpEndpoint, TcpIo, TcpNotice};
use crate::engine::Time;
use crate::net::packet::{SackOpt, FLAG_ECE, FLAG_RETX};
use crate::net::{ClassMark, Ecn, Packet, PktKind};

/// One endpoint under test. It is side 0 (node 0) for a sender or client, side 1 (node 1)
/// for a receiver or listener; the segments it is fed come from the other side.
pub struct Harness {
    pub ep: TcpEndpoint,
    pub cfg: TcpConfig,
    pub now: Time,
    /// Notices of the last call.
    pub notice: TcpNotice,
    out: Vec<Packet>,
}

/// Milliseconds to the clock's nanoseconds.
pub fn ms(x: f64) -> Time {
    (x * 1e6).round() as Time
}

/// Sequence numbers of the data segments in `pkts`, in order.
pub fn seqs(pkts: &[Packet]) -> Vec<u64> {
    pkts.iter().filter(|p| p.kind == PktKind::Data).map(|p| p.seq as u64).collect()
}

/// Whether `p` is marked as a retransmission.
pub fn is_retx(p: &Packet) -> bool {
    p.flags & FLAG_RETX != 0
}

/// Whether `p` carries ECN-Echo.
pub fn has_ece(p: &Packet) -> bool {
    p.flags & FLAG_ECE != 0
}

/// The SACK blocks `p` carries, as absolute [start, end) packet ranges, first block first.
pub fn sack_blocks(p: &Packet) -> Vec<(i64, i64)> {
    p.sack.blocks[..p.sack.n as usize]
        .iter()
        .map(|&(off, len)| (p.ack as i64 + off as i64, p.ack as i64 + off as i64 + len as i64))
        .collect()
}

impl Harness {
    fn with(cfg: TcpConfig, side: u8, snd: u64, rcv: u64) -> Self {
        let (local, remote) = if side == 0 { (0, 1) } else { (1, 0) };
        let ep = TcpEndpoint::new(0, side, local, remote, 0, &cfg, snd, rcv);
        Harness { ep, cfg, now: 0, notice: TcpNotice::default(), out: Vec::new() }
    }

    /// A data sender of `total` packets; without a handshake in `cfg`, `open` makes it
    /// established and sends the initial window, with one it sends the SYN.
    pub fn sender(cfg: TcpConfig, total: u64) -> Self {
        Self::with(cfg, 0, total, 0)
    }

    /// A data receiver of `total` packets, established without a handshake.
    pub fn receiver(cfg: TcpConfig, total: u64) -> Self {
        let mut h = Self::with(cfg, 1, 0, total);
        h.ep.accept_without_handshake(&h.cfg);
        h
    }

    /// The passive end of a handshake, receiving `total` packets.
    pub fn listener(cfg: TcpConfig, total: u64) -> Self {
        Self::with(cfg, 1, 0, total)
    }

    /// Set the clock (it never goes back).
    pub fn at(&mut self, t: Time) -> &mut Self {
        assert!(t >= self.now, "the clock goes back");
        self.now = t;
        self
    }

    fn call(&mut self, f: impl FnOnce(&mut TcpEndpoint, &mut TcpIo)) -> Vec<Packet> {
        let mut io = TcpIo { now: self.now, cfg: &self.cfg, out: &mut self.out, notice: TcpNotice::default() };
        f(&mut self.ep, &mut io);
        self.notice = io.notice;
        std::mem::take(&mut self.out)
    }

    pub fn open(&mut self) -> Vec<Packet> {
        self.call(|e, io| e.open(io))
    }

    /// A segment from the peer to this endpoint.
    pub fn segment(&self, kind: PktKind, seq: u64, ack: u64, ecn: Ecn, flags: u8) -> Packet {
        let side = self.ep.side;
        Packet {
            flow: 0,
            seq: seq as u32,
            ack: ack as u32,
            src: self.ep.remote,
            dst: self.ep.local,
            size: if kind == PktKind::Data { self.cfg.pkt_bytes } else { self.cfg.hdr_bytes },
            enq_ns: 0,
            kind,
            ecn,
            flags,
            class: ClassMark::None,
            to_side: side,
            path: 0,
            qmark: 0,
            sack: crate::net::packet::SackOpt::NONE,
        }
    }

    /// Deliver `p`; returns what the endpoint sent in answer.
    pub fn deliver(&mut self, p: Packet) -> Vec<Packet> {
        self.call(|e, io| e.on_packet(&p, io))
    }

    /// A pure ACK for everything below `ack`.
    pub fn ack(&mut self, ack: u64) -> Vec<Packet> {
        self.ack_with(ack, 0)
    }

    /// A pure ACK for everything below `ack` with SACK blocks [start, end) (absolute).
    pub fn ack_sack(&mut self, ack: u64, blocks: &[(u64, u64)]) -> Vec<Packet> {
        let mut p = self.segment(PktKind::Ack, 0, ack, Ecn::NotEct, 0);
        let mut o = SackOpt::NONE;
        for &(lo, hi) in blocks {
            o.blocks[o.n as usize] = ((lo as i64 - ack as i64) as i16, (hi - lo) as u16);
            o.n += 1;
        }
        p.sack = o;
        self.deliver(p)
    }

    pub fn ack_with(&mut self, ack: u64, flags: u8) -> Vec<Packet> {
        let p = self.segment(PktKind::Ack, 0, ack, Ecn::NotEct, flags);
        self.deliver(p)
    }

    /// `n` identical pure ACKs for `ack`; everything sent in answer, in order.
    pub fn dupacks(&mut self, ack: u64, n: u32) -> Vec<Packet> {
        (0..n).flat_map(|_| self.ack(ack)).collect()
    }

    /// Data segment `seq` (not ECT, no flags, acknowledging nothing).
    pub fn data(&mut self, seq: u64) -> Vec<Packet> {
        self.data_with(seq, Ecn::NotEct, 0)
    }

    pub fn data_with(&mut self, seq: u64, ecn: Ecn, flags: u8) -> Vec<Packet> {
        let p = self.segment(PktKind::Data, seq, 0, ecn, flags);
        self.deliver(p)
    }

    /// Advance the clock to the retransmission deadline and fire the timer.
    pub fn fire_rto(&mut self) -> Vec<Packet> {
        let d = self.ep.rto_deadline().expect("the retransmission timer is running");
        self.at(d);
        self.call(|e, io| e.on_timeout(io))
    }

    /// Advance the clock to the transmission timer's deadline (the earliest of the RTO,
    /// RACK, PTO and pacing timers) and fire it.
    pub fn fire_timer(&mut self) -> Vec<Packet> {
        let d = self.ep.timer_deadline().expect("a transmission timer is running");
        self.at(d);
        self.call(|e, io| e.on_timer(io))
    }

    /// Advance the clock to the delayed-ACK deadline and fire the timer.
    pub fn fire_delack(&mut self) -> Vec<Packet> {
        let d = self.ep.delack_deadline().expect("an ACK is held back");
        self.at(d);
        self.call(|e, io| e.on_delack_timer(io))
    }
}
