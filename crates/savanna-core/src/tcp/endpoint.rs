//! One end of a TCP connection: a send half (window, congestion control, retransmission
//! timer) and a receive half (cumulative ACKs, out-of-order bitmap, delayed ACKs, ECN echo),
//! so the same endpoint serves bulk transfers and request/response exchanges.
//!
//! The endpoint never touches the event queue: it appends the packets it sends to
//! `TcpIo::out` and sets `rto_deadline` / `delack_deadline`; the simulator schedules the
//! timer events lazily (one pending event per timer, re-armed when it fires early).
//!
//! Rules and their sources:
//! - handshake: SYN and SYN-ACK are timed with the ITO and backed off exponentially; an RTT
//!   sample is taken from an exchange that was not retransmitted (RFC 6298 section 2/5.7: if
//!   the SYN was retransmitted, data transmission starts again from the ITO).
//! - RTO: RFC 6298 via `RtoEstimator`; Karn's rule (no sample from a retransmitted segment);
//!   timer started on sending data when not running, restarted on every ACK of new data,
//!   stopped when everything is acknowledged; on expiry: back off, go back N from snd_una,
//!   cwnd = 1, ssthresh = max(FlightSize / 2, 2) (RFC 5681 section 3.1).
//! - slow start: cwnd += 1 per new ACK below ssthresh; congestion avoidance: += 1/cwnd.
//! - fast retransmit on the third duplicate ACK (pure ACKs only, RFC 5681); Reno/NewReno
//!   fast recovery with window inflation; NewReno partial ACKs (RFC 6582): retransmit the
//!   next hole, deflate by the amount acknowledged and add one back, reset the timer on the
//!   first partial ACK only, leave recovery on the ACK covering `recover` with
//!   cwnd = ssthresh; a new recovery only when the ACK covers more than `recover`.
//!   Reno leaves recovery on any new ACK; Tahoe sets cwnd = 1 and goes back N.
//! - ECN (RFC 3168): negotiated on SYN (ECE+CWR) / SYN-ACK (ECE); new data packets are ECT,
//!   retransmissions, pure ACKs and SYNs are not; the receiver echoes ECE from the first CE
//!   until it sees CWR; the sender halves cwnd at most once per window and sets CWR.

use super::rto::RtoEstimator;
use super::{RttSampling, TcpConfig, TcpStats, Variant};
use crate::engine::Time;
use crate::net::packet::{FLAG_CWR, FLAG_ECE, FLAG_RETX};
use crate::net::ClassMark;
use crate::net::{Ecn, Packet, PktKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Passive end waiting for a SYN.
    Listen,
    SynSent,
    SynRcvd,
    Established,
}

/// What happened during a call that the simulator must know about.
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpNotice {
    /// The receive half now holds everything it expected (first time only).
    pub rx_complete: bool,
    /// The send half has everything acknowledged (first time only).
    pub tx_complete: bool,
}

/// What an endpoint call may use.
pub struct TcpIo<'a> {
    pub now: Time,
    pub cfg: &'a TcpConfig,
    pub out: &'a mut Vec<Packet>,
    pub notice: TcpNotice,
}

pub struct TcpEndpoint {
    pub flow: u32,
    /// 0 = the initiator (client), 1 = the responder (server).
    pub side: u8,
    pub local: u32,
    pub remote: u32,
    pub cfg: u16,
    pub state: State,

    // ---- send half
    /// Data packets to send (u64::MAX: persistent). In request/response mode the server's
    /// is set when the request has arrived.
    pub snd_total: u64,
    /// End of the send stream: snd_total, plus one for a FIN when this side closes
    /// (`teardown`).
    snd_end: u64,
    /// This side closes first once its data is sent (the data sender, with `teardown`).
    active_close: bool,
    /// Wire size of this endpoint's data packets.
    pub data_bytes: u32,
    /// Response size the server sends once the request is complete (request/response).
    pub response_pkts: Option<u64>,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    cwnd: f64,
    ssthresh: f64,
    dupacks: u32,
    in_recovery: bool,
    partial_seen: bool,
    recover: Option<u64>,
    rto: RtoEstimator,
    retx_high: Option<u64>,
    /// RTT sampling on every ACK (`RttSampling::EveryAck`): send times of the new data
    /// segments in [snd_una, snd_max), in a ring indexed by sequence modulo its length (a
    /// power of two, grown as the flight grows; the data receiver never allocates one).
    /// Otherwise one segment at a time is timed (`timed`).
    every_ack: bool,
    send_times: Vec<Time>,
    timed: Option<(u64, Time)>,
    pub rto_deadline: Option<Time>,
    pub timer_at: Option<Time>,
    hs_t0: Time,
    hs_retx: bool,
    ecn_ok: bool,
    ecn_high: u64,
    cwr_pending: bool,

    // ---- receive half
    rcv_nxt: u64,
    /// Data packets expected (u64::MAX: persistent).
    pub rcv_total: u64,
    /// End of the receive stream: rcv_total, plus the peer's FIN with `teardown`.
    rcv_end: u64,
    /// All expected data has arrived (the FIN may still be due).
    data_done: bool,
    ooo: Vec<u64>,
    ece_pending: bool,
    ack_pending: bool,
    unacked: u32,
    pub delack_deadline: Option<Time>,
    pub delack_at: Option<Time>,

    pub rx_done: bool,
    pub tx_done: bool,
    pub stats: TcpStats,
}

impl TcpEndpoint {
    /// A fresh endpoint. `snd_total`/`rcv_total` are in packets.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        flow: u32,
        side: u8,
        local: u32,
        remote: u32,
        cfg_idx: u16,
        cfg: &TcpConfig,
        snd_total: u64,
        rcv_total: u64,
    ) -> Self {
        Self::with_buffers(flow, side, local, remote, cfg_idx, cfg, snd_total, rcv_total, Vec::new(), Vec::new())
    }

    /// Reuse the buffers of a finished endpoint for a new one (no allocation once the
    /// endpoint pool has grown to the peak number of open connections).
    #[allow(clippy::too_many_arguments)]
    pub fn reset(
        &mut self,
        flow: u32,
        side: u8,
        local: u32,
        remote: u32,
        cfg_idx: u16,
        cfg: &TcpConfig,
        snd_total: u64,
        rcv_total: u64,
    ) {
        let st = std::mem::take(&mut self.send_times);
        let ooo = std::mem::take(&mut self.ooo);
        *self = Self::with_buffers(flow, side, local, remote, cfg_idx, cfg, snd_total, rcv_total, st, ooo);
    }

    #[allow(clippy::too_many_arguments)]
    fn with_buffers(
        flow: u32,
        side: u8,
        local: u32,
        remote: u32,
        cfg_idx: u16,
        cfg: &TcpConfig,
        snd_total: u64,
        rcv_total: u64,
        mut send_times: Vec<Time>,
        mut ooo: Vec<u64>,
    ) -> Self {
        let ring = (cfg.max_window as usize + 1).next_power_of_two();
        send_times.clear();
        ooo.clear();
        ooo.resize((2 * ring).max(64) / 64, 0);
        TcpEndpoint {
            flow,
            side,
            local,
            remote,
            cfg: cfg_idx,
            state: State::Listen,
            snd_total,
            snd_end: snd_total,
            active_close: false,
            data_bytes: cfg.pkt_bytes,
            response_pkts: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.init_cwnd as f64,
            ssthresh: cfg.init_ssthresh,
            dupacks: 0,
            in_recovery: false,
            partial_seen: false,
            recover: None,
            rto: RtoEstimator::new(cfg.ito_s, cfg.min_rto_s, cfg.max_rto_s, cfg.granularity_s),
            retx_high: None,
            every_ack: cfg.rtt_sampling == RttSampling::EveryAck,
            send_times,
            timed: None,
            rto_deadline: None,
            timer_at: None,
            hs_t0: 0,
            hs_retx: false,
            ecn_ok: false,
            ecn_high: 0,
            cwr_pending: false,
            rcv_nxt: 0,
            rcv_total,
            rcv_end: if cfg.teardown && rcv_total != u64::MAX { rcv_total + 1 } else { rcv_total },
            data_done: rcv_total == 0,
            ooo,
            ece_pending: false,
            ack_pending: false,
            unacked: 0,
            delack_deadline: None,
            delack_at: None,
            rx_done: rcv_total == 0 && !cfg.teardown,
            tx_done: snd_total == 0,
            stats: TcpStats::default(),
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
    pub fn srtt(&self) -> Option<f64> {
        self.rto.srtt()
    }
    pub fn current_rto_s(&self) -> f64 {
        self.rto.base_rto()
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    // ------------------------------------------------------------------ opening

    /// Active open by the client at time `io.now`.
    pub fn open(&mut self, io: &mut TcpIo) {
        if io.cfg.handshake {
            self.state = State::SynSent;
            self.hs_t0 = io.now;
            self.send_ctl(io, PktKind::Syn, if io.cfg.ecn { FLAG_ECE | FLAG_CWR } else { 0 });
            self.stats.syn_sent += 1;
            self.arm(io.now);
        } else {
            self.state = State::Established;
            self.ecn_ok = io.cfg.ecn;
            self.send_available(io);
        }
    }

    /// The passive end of a connection without handshake starts established.
    pub fn accept_without_handshake(&mut self, cfg: &TcpConfig) {
        self.state = State::Established;
        self.ecn_ok = cfg.ecn;
    }

    // ------------------------------------------------------------------ input

    /// Handle a packet addressed to this endpoint.
    pub fn on_packet(&mut self, p: &Packet, io: &mut TcpIo) {
        match p.kind {
            PktKind::Syn => return self.on_syn(p, io),
            PktKind::SynAck => return self.on_synack(p, io),
            PktKind::Udp => return,
            PktKind::Data | PktKind::Ack | PktKind::Fin => {}
        }
        if self.state == State::SynRcvd {
            // The handshake's final ACK (or data carrying it).
            self.state = State::Established;
            if !self.hs_retx {
                self.rto.sample((io.now - self.hs_t0) as f64 * 1e-9);
            }
            self.rto_deadline = None;
        }
        if self.state != State::Established {
            return;
        }
        if matches!(p.kind, PktKind::Data | PktKind::Fin) {
            self.on_data(p, io);
        }
        self.on_ack(p.ack as u64, p.flags & FLAG_ECE != 0, p.kind == PktKind::Ack, io);
        self.send_available(io);
        self.flush_ack(io);
    }

    fn on_syn(&mut self, p: &Packet, io: &mut TcpIo) {
        match self.state {
            State::Listen => {
                self.state = State::SynRcvd;
                self.ecn_ok = io.cfg.ecn && p.flags & (FLAG_ECE | FLAG_CWR) == (FLAG_ECE | FLAG_CWR);
                self.hs_t0 = io.now;
                self.send_ctl(io, PktKind::SynAck, if self.ecn_ok { FLAG_ECE } else { 0 });
                self.arm(io.now);
            }
            State::SynRcvd => {
                // A retransmitted SYN: our SYN-ACK was lost or is late; answer again.
                self.hs_retx = true;
                self.send_ctl(io, PktKind::SynAck, if self.ecn_ok { FLAG_ECE } else { 0 });
            }
            _ => {}
        }
    }

    fn on_synack(&mut self, p: &Packet, io: &mut TcpIo) {
        match self.state {
            State::SynSent => {
                self.state = State::Established;
                if self.hs_retx {
                    self.rto.restart_from_ito();
                } else {
                    self.rto.sample((io.now - self.hs_t0) as f64 * 1e-9);
                }
                self.ecn_ok = io.cfg.ecn && p.flags & FLAG_ECE != 0;
                self.rto_deadline = None;
                self.send_ctl(io, PktKind::Ack, 0);
                self.send_available(io);
            }
            State::Established => {
                // Our handshake ACK was lost and the server retransmitted its SYN-ACK.
                self.send_ctl(io, PktKind::Ack, 0);
            }
            _ => {}
        }
    }

    // ------------------------------------------------------------------ receive half

    fn on_data(&mut self, p: &Packet, io: &mut TcpIo) {
        if p.flags & FLAG_CWR != 0 {
            self.ece_pending = false;
        }
        let mut immediate = false;
        if p.ecn == Ecn::Ce {
            self.ece_pending = true;
            self.stats.ecn_marks += 1;
            immediate = true;
        }
        let seq = p.seq as u64;
        let bits = (self.ooo.len() * 64) as u64;
        if seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            while self.take_bit(self.rcv_nxt, bits) {
                self.rcv_nxt += 1;
                immediate = true; // filled a hole (RFC 5681 section 4.2)
            }
            self.stats.delivered = self.rcv_nxt.min(self.rcv_total);
        } else if seq > self.rcv_nxt {
            if seq - self.rcv_nxt < bits {
                let i = (seq % bits) as usize;
                self.ooo[i / 64] |= 1 << (i % 64);
            }
            immediate = true; // out of order: duplicate ACK at once
        } else {
            immediate = true; // already received
        }
        if !self.data_done && self.rcv_nxt >= self.rcv_total {
            self.data_done = true;
            io.notice.rx_complete = true;
            if let Some(n) = self.response_pkts.take() {
                // Request complete: the server starts its response.
                self.snd_total = n;
                self.snd_end = n;
                self.tx_done = n == 0;
                if self.active_close {
                    self.append_fin();
                }
            }
        }
        if !self.rx_done && self.rcv_nxt >= self.rcv_end {
            self.rx_done = true;
            if io.cfg.teardown && !self.active_close && self.snd_end == self.snd_total {
                // Passive close: the peer's FIN is in; close our side too.
                self.append_fin();
            }
        }
        if p.kind == PktKind::Fin {
            immediate = true;
        }
        if io.cfg.delayed_ack && !immediate {
            self.unacked += 1;
            if self.unacked >= 2 {
                self.ack_pending = true;
            } else if self.delack_deadline.is_none() {
                self.delack_deadline = Some(io.now + (io.cfg.delack_timeout_s * 1e9) as Time);
            }
        } else {
            self.ack_pending = true;
        }
    }

    /// With `teardown`, this side closes first once its data is sent (the data sender).
    pub fn set_active_close(&mut self, cfg: &TcpConfig) {
        if cfg.teardown {
            self.active_close = true;
            if self.response_pkts.is_none() {
                self.append_fin();
            }
        }
    }

    /// Put a FIN after the data of the send stream (never for a persistent flow).
    fn append_fin(&mut self) {
        if self.snd_total != u64::MAX && self.snd_end == self.snd_total {
            self.snd_end = self.snd_total + 1;
            self.tx_done = false;
        }
    }

    fn take_bit(&mut self, seq: u64, bits: u64) -> bool {
        let i = (seq % bits) as usize;
        let m = 1u64 << (i % 64);
        if self.ooo[i / 64] & m != 0 {
            self.ooo[i / 64] &= !m;
            true
        } else {
            false
        }
    }

    /// Send a pure ACK if one is owed and no data packet carried it.
    fn flush_ack(&mut self, io: &mut TcpIo) {
        if self.ack_pending {
            self.send_ctl(io, PktKind::Ack, 0);
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack_timer(&mut self, io: &mut TcpIo) {
        self.delack_deadline = None;
        if self.unacked > 0 {
            self.ack_pending = true;
            self.flush_ack(io);
        }
    }

    // ------------------------------------------------------------------ send half

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    fn loss_ssthresh(&self) -> f64 {
        ((self.flight() / 2) as f64).max(2.0)
    }

    fn on_ack(&mut self, ack: u64, ece: bool, pure: bool, io: &mut TcpIo) {
        if self.snd_max == 0 {
            return; // nothing sent yet: this side has no data outstanding
        }
        let ack = ack.min(self.snd_max);
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            self.rtt_on_new_ack(ack, io.now);
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            let mut reduced = false;
            if ece && self.ecn_ok && !self.in_recovery && ack > self.ecn_high {
                self.ssthresh = self.loss_ssthresh();
                self.cwnd = self.ssthresh;
                self.ecn_high = self.snd_max;
                self.cwr_pending = true;
                reduced = true;
            }
            let mut restart_timer = true;
            if self.in_recovery {
                match io.cfg.variant {
                    Variant::NewReno if ack < self.recover.unwrap_or(0) => {
                        // Partial ACK (RFC 6582 section 3.2 step 3).
                        self.retransmit(ack, io);
                        self.cwnd = (self.cwnd - newly as f64 + 1.0).max(1.0);
                        restart_timer = !self.partial_seen;
                        self.partial_seen = true;
                    }
                    _ => {
                        self.cwnd = self.ssthresh;
                        self.in_recovery = false;
                        self.dupacks = 0;
                    }
                }
            } else {
                self.dupacks = 0;
                if !reduced {
                    if self.cwnd < self.ssthresh {
                        self.cwnd += 1.0;
                    } else {
                        self.cwnd += 1.0 / self.cwnd;
                    }
                    self.cwnd = self.cwnd.min(io.cfg.max_window as f64);
                }
            }
            if self.snd_una >= self.snd_max {
                self.rto_deadline = None;
            } else if restart_timer {
                self.arm(io.now);
            }
            if !self.tx_done && self.snd_una >= self.snd_end {
                self.tx_done = true;
                io.notice.tx_complete = true;
                self.rto_deadline = None;
            }
        } else if ack == self.snd_una && pure && self.snd_max > self.snd_una {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0; // window inflation
            } else if self.dupacks == io.cfg.dupack_threshold {
                // RFC 6582 section 3.2 step 1 (ns-2's `bugfix_`, on for every variant in the
                // papers' simulations): no new fast retransmit for duplicate ACKs that do not
                // cover more than `recover`, so go-back-N duplicates cannot trigger another.
                let allowed = self.recover.is_none_or(|r| ack > r);
                if allowed {
                    self.enter_fast_retransmit(io);
                }
            }
        }
    }

    fn enter_fast_retransmit(&mut self, io: &mut TcpIo) {
        self.ssthresh = self.loss_ssthresh();
        self.recover = Some(self.snd_max);
        self.ecn_high = self.snd_max;
        self.stats.fast_retransmits += 1;
        self.timed = None;
        match io.cfg.variant {
            Variant::Tahoe => {
                self.cwnd = 1.0;
                self.snd_nxt = self.snd_una;
                self.dupacks = 0;
                self.send_available(io);
            }
            Variant::Reno | Variant::NewReno => {
                self.retransmit(self.snd_una, io);
                self.cwnd = self.ssthresh + io.cfg.dupack_threshold as f64;
                self.in_recovery = true;
                self.partial_seen = false;
            }
        }
        // Linux and ns-2 restart the timer on a fast retransmit; RFC 6298 (5.1) only starts
        // it when it is not running, as ns-3 does (`restart_rto_on_fast_retransmit`).
        if io.cfg.restart_rto_on_fast_retransmit || self.rto_deadline.is_none() {
            self.arm(io.now);
        }
    }

    /// The retransmission timer fired (the simulator checked the deadline).
    pub fn on_timeout(&mut self, io: &mut TcpIo) {
        self.rto_deadline = None;
        match self.state {
            State::SynSent => {
                self.stats.timeouts += 1;
                self.rto.back_off();
                self.hs_retx = true;
                self.send_ctl(io, PktKind::Syn, if io.cfg.ecn { FLAG_ECE | FLAG_CWR } else { 0 });
                self.stats.syn_sent += 1;
                self.arm(io.now);
            }
            State::SynRcvd => {
                self.stats.timeouts += 1;
                self.rto.back_off();
                self.hs_retx = true;
                self.send_ctl(io, PktKind::SynAck, if self.ecn_ok { FLAG_ECE } else { 0 });
                self.arm(io.now);
            }
            State::Established if self.snd_una < self.snd_max => {
                self.stats.timeouts += 1;
                self.ssthresh = self.loss_ssthresh();
                self.cwnd = 1.0;
                self.rto.back_off();
                self.recover = Some(self.snd_max);
                self.ecn_high = self.snd_max;
                self.in_recovery = false;
                self.dupacks = 0;
                self.timed = None;
                self.snd_nxt = self.snd_una;
                self.send_available(io);
                self.arm(io.now);
            }
            _ => {}
        }
    }

    fn rtt_on_new_ack(&mut self, ack: u64, now: Time) {
        if self.every_ack {
            // Karn: no sample from an ACK that covers any retransmitted segment (the
            // newest segment's ACK may have been held back by the repaired hole).
            let last = ack - 1;
            if self.retx_high.is_none_or(|h| h < self.snd_una) {
                let n = self.send_times.len();
                let t0 = self.send_times[(last as usize) & (n - 1)];
                self.rto.sample((now - t0) as f64 * 1e-9);
            }
        } else if let Some((seq, t0)) = self.timed {
            if ack > seq {
                self.rto.sample((now - t0) as f64 * 1e-9);
                self.timed = None;
            }
        }
    }

    /// Grow the send-time ring so that it holds [snd_una, seq], keeping the times of
    /// [snd_una, seq). Rare: the ring doubles until it covers the largest flight, and a
    /// reused endpoint keeps its capacity. In place: the new length is a multiple of the
    /// old, so each kept time moves to its own slot or to one beyond the old ring, never
    /// onto a time still to be moved.
    #[cold]
    #[inline(never)]
    fn grow_send_times(&mut self, seq: u64) {
        let old = self.send_times.len();
        let len = ((seq - self.snd_una + 1) as usize).next_power_of_two().max(16);
        self.send_times.resize(len, 0);
        if old > 0 {
            for s in self.snd_una as usize..seq as usize {
                self.send_times[s & (len - 1)] = self.send_times[s & (old - 1)];
            }
        }
    }

    fn arm(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rto.timer());
    }

    /// Send whatever the window allows.
    pub fn send_available(&mut self, io: &mut TcpIo) {
        if self.state != State::Established {
            return;
        }
        let win = (self.cwnd.floor() as u64).clamp(1, io.cfg.max_window as u64);
        while self.snd_nxt < self.snd_end && self.snd_nxt < self.snd_una + win {
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            if seq < self.snd_max {
                self.emit_data(seq, true, io);
            } else {
                self.snd_max = self.snd_nxt;
                self.emit_data(seq, false, io);
            }
        }
    }

    fn retransmit(&mut self, seq: u64, io: &mut TcpIo) {
        self.emit_data(seq, true, io);
    }

    fn emit_data(&mut self, seq: u64, retx: bool, io: &mut TcpIo) {
        let mut flags = 0;
        let fin = seq >= self.snd_total;
        let ecn = if self.ecn_ok && !retx && !fin { Ecn::Ect } else { Ecn::NotEct };
        if retx {
            flags |= FLAG_RETX;
            if !fin {
                self.stats.retransmits += 1;
            }
            self.retx_high = Some(self.retx_high.map_or(seq, |h| h.max(seq)));
            if self.timed.is_some_and(|(s, _)| s == seq) {
                self.timed = None;
            }
        } else {
            if self.every_ack {
                if seq - self.snd_una >= self.send_times.len() as u64 {
                    self.grow_send_times(seq);
                }
                let n = self.send_times.len();
                self.send_times[(seq as usize) & (n - 1)] = io.now;
            } else if self.timed.is_none() {
                self.timed = Some((seq, io.now));
            }
            if self.cwr_pending {
                flags |= FLAG_CWR;
                self.cwr_pending = false;
            }
        }
        if self.ece_pending {
            flags |= FLAG_ECE;
        }
        if !fin {
            self.stats.data_pkts_sent += 1;
        }
        self.ack_pending = false;
        self.unacked = 0;
        self.delack_deadline = None;
        io.out.push(Packet {
            flow: self.flow,
            seq: seq as u32,
            ack: self.rcv_nxt as u32,
            src: self.local,
            dst: self.remote,
            size: if fin { io.cfg.hdr_bytes } else { self.data_bytes },
            enq_ns: 0,
            kind: if fin { PktKind::Fin } else { PktKind::Data },
            ecn,
            flags,
            class: ClassMark::None,
            to_side: 1 - self.side,
            path: 0,
            qmark: 0,
        });
        if self.rto_deadline.is_none() {
            self.arm(io.now);
        }
    }

    fn send_ctl(&mut self, io: &mut TcpIo, kind: PktKind, mut flags: u8) {
        if kind == PktKind::Ack {
            if self.ece_pending {
                flags |= FLAG_ECE;
            }
            self.ack_pending = false;
            self.unacked = 0;
            self.delack_deadline = None;
        }
        io.out.push(Packet {
            flow: self.flow,
            seq: 0,
            ack: self.rcv_nxt as u32,
            src: self.local,
            dst: self.remote,
            size: io.cfg.hdr_bytes,
            enq_ns: 0,
            kind,
            ecn: Ecn::NotEct,
            flags,
            class: ClassMark::None,
            to_side: 1 - self.side,
            path: 0,
            qmark: 0,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Move a `total`-segment transfer from `snd` to `rcv` over a lossless pipe whose one-way
    /// delay is half of `rtt`, checking after every ACK that the smoothed RTT is exactly
    /// `rtt` (every sample is). Returns the largest flight.
    fn transfer(snd: &mut TcpEndpoint, rcv: &mut TcpEndpoint, cfg: &TcpConfig, rtt: Time, total: u64) -> u64 {
        let mut out = Vec::new();
        // Packets on the wire: (arrival time, to the receiver, packet), in time order (every
        // packet takes the same delay and the clock never goes back).
        let mut wire: std::collections::VecDeque<(Time, bool, Packet)> = Default::default();
        let mut now: Time = 0;
        let mut largest_flight = 0;
        snd.open(&mut TcpIo { now, cfg, out: &mut out, notice: TcpNotice::default() });
        let mut to_rcv = true;
        loop {
            wire.extend(out.drain(..).map(|p| (now + rtt / 2, to_rcv, p)));
            largest_flight = largest_flight.max(snd.snd_max() - snd.snd_una());
            let Some((t, to, p)) = wire.pop_front() else { break };
            now = t;
            to_rcv = !to;
            let mut io = TcpIo { now, cfg, out: &mut out, notice: TcpNotice::default() };
            if to {
                rcv.on_packet(&p, &mut io);
            } else {
                snd.on_packet(&p, &mut io);
                let srtt = snd.srtt().expect("an RTT was sampled");
                assert!((srtt - 1e-9 * rtt as f64).abs() < 1e-9, "srtt {srtt} after the ACK {}", p.ack);
            }
        }
        assert_eq!(snd.snd_una(), total, "everything was acknowledged");
        assert_eq!(rcv.rcv_nxt(), total, "everything was received");
        largest_flight
    }

    /// Every-ACK RTT sampling keeps the send time of each segment in flight while its ring
    /// grows from nothing to the largest flight: over a lossless pipe with a fixed round
    /// trip, every sample (hence the smoothed RTT) is exactly that round trip. A time lost
    /// or overwritten in a regrowth would give a sample off by at least one round. The data
    /// receiver keeps no send times, and a reused endpoint grows its ring again in the
    /// memory it already has.
    #[test]
    fn send_time_ring_keeps_every_time_while_the_flight_grows() {
        let cfg =
            TcpConfig { handshake: false, init_cwnd: 1, max_window: 200, init_ssthresh: 1e9, ..TcpConfig::default() };
        let rtt: Time = 100_000_000;
        let mut snd = TcpEndpoint::new(0, 0, 0, 1, 0, &cfg, 5000, 0);
        let mut rcv = TcpEndpoint::new(0, 1, 1, 0, 0, &cfg, 0, 5000);
        rcv.accept_without_handshake(&cfg);
        let flight = transfer(&mut snd, &mut rcv, &cfg, rtt, 5000);
        assert!(flight >= 150, "the flight grew to {flight} only");
        assert!(snd.send_times.len() as u64 >= flight);
        assert_eq!(rcv.send_times.capacity(), 0, "a data receiver keeps no send times");

        // A short second transfer: its flight stays small, so a ring grown in fresh memory
        // would be small too; grown in the kept memory, it has the first one's capacity.
        let capacity = snd.send_times.capacity();
        snd.reset(1, 0, 0, 1, 0, &cfg, 60, 0);
        rcv.reset(1, 1, 1, 0, 0, &cfg, 0, 60);
        rcv.accept_without_handshake(&cfg);
        let flight = transfer(&mut snd, &mut rcv, &cfg, rtt / 2, 60);
        assert!(flight > 16 && (flight as usize) < capacity / 4, "second flight {flight}");
        assert_eq!(snd.send_times.capacity(), capacity, "the reused endpoint's ring was reallocated");
    }
}
