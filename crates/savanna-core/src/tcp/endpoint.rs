//! One end of a TCP connection: a send half (window, congestion control, loss recovery,
//! retransmission timer) and a receive half (cumulative ACKs, out-of-order bitmap, delayed
//! ACKs, ECN echo), so the same endpoint serves bulk transfers and request/response.
//!
//! The endpoint never touches the event queue: it appends the packets it sends to
//! `TcpIo::out` and states the timers it wants (`rto_deadline`, `delack_deadline`); the
//! simulator decides when to schedule them.
//!
//! State is held in enums, so impossible combinations cannot be written: the connection
//! (`State`, with the handshake's RTT timing inside), loss recovery (`recovery::
//! RecoveryState`), the ACK owed by the receive half (`AckState`), ECN on each side
//! (`EcnSender`, `EceEcho`) and the close role (`CloseRole`). Completion of each half is
//! derived from the sequence numbers, not stored.
//!
//! Rules and their sources (docs/tcp.md has the table):
//! - handshake: SYN and SYN-ACK are timed with the ITO and backed off exponentially; an RTT
//!   sample is taken from an exchange that was not retransmitted (RFC 6298 section 2/5.7: if
//!   the SYN was retransmitted, data transmission starts again from the ITO).
//! - RTO: RFC 6298 via `RtoEstimator`, samples from `RttSampler` (Karn's rule); the timer is
//!   started on sending data when not running, restarted on every ACK of new data, stopped
//!   when everything is acknowledged; on expiry: back off, go back N from snd_una (with
//!   RACK, RFC 8985 6.3: retransmit only what RACK deems lost).
//! - window arithmetic: `cc::CongestionControl` (RFC 5681; NewReno RFC 6582; Tahoe);
//!   loss detection and fast recovery: `recovery::Recovery` (RFC 5681 3.2, RFC 6582).
//! - limited transmit (RFC 3042) and SACK (RFC 2018, 2883) with RFC 6675 recovery at PRR's
//!   (RFC 6937) or RFC 6675's rate, when configured: `sack.rs`, `prr.rs`, and the
//!   `sack_*` methods below.
//! - fast recovery without SACK at PRR's rate (RFC 6937 section 3's estimate of
//!   DeliveredData from duplicate ACKs, as Linux), when configured: `NosackPrr` and the
//!   `nprr_*` methods; otherwise RFC 6582's window inflation.
//! - RACK-TLP (RFC 8985), when configured (with SACK): `rack.rs` and the `rack_*` / `tlp_*`
//!   methods below; RACK's marks replace RFC 6675's IsLost and DupThresh entry.
//! - pacing (Linux's rule, tcp_input.c `tcp_update_pacing_rate` and tcp_output.c
//!   `tcp_update_skb_after_send`), when configured: `Pacer` and the `pace_*` methods.
//! - the endpoint's timers other than the delayed ACK (RTO, RACK, PTO, pacing) share one
//!   deadline (`timer_deadline`, `on_timer`), as Linux's share icsk_retransmit_timer.
//! - ECN (RFC 3168): negotiated on SYN (ECE+CWR) / SYN-ACK (ECE); new data packets are ECT,
//!   retransmissions, pure ACKs and SYNs are not; the receiver echoes ECE from the first CE
//!   until it sees CWR; the sender reduces at most once per window and sets CWR. With DCTCP
//!   (RFC 8257 3.2) the receiver instead echoes each packet's CE state exactly.

use super::cc::{AckInfo, Cc, CongestionControl, LossResponse, Window};
use super::prr::Prr;
use super::rack::{Rack, TlpAck};
use super::recovery::{DupAck, NewAck, Recovery, RecoveryState};
use super::rto::RtoEstimator;
use super::rtt::RttSampler;
use super::sack::{self, SackReceiver, Scoreboard};
use super::{FastRetransmitCwnd, RecoveryRate, SsthreshBase, TcpConfig, TcpStats, Variant};
use crate::engine::Time;
use crate::net::packet::{SackOpt, FLAG_CWR, FLAG_ECE, FLAG_RETX};
use crate::net::ClassMark;
use crate::net::{Ecn, Packet, PktKind};

/// Connection state. The handshake states carry the send time of the SYN (SYN-ACK) for
/// the handshake's RTT sample, or None once it was retransmitted (Karn, RFC 6298 5.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Passive end waiting for a SYN.
    Listen,
    SynSent {
        timed: Option<Time>,
    },
    SynRcvd {
        timed: Option<Time>,
    },
    Established,
}

/// The ACK the receive half owes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckState {
    /// Nothing unacknowledged.
    Idle,
    /// One full in-order segment held for a delayed ACK due at `deadline` (RFC 5681 4.2).
    Delayed { deadline: Time },
    /// An ACK is due now (sent by the end of the current call, on data or alone).
    Due,
}

/// ECN on the sending side (RFC 3168 6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnSender {
    /// Not negotiated: data is not ECT.
    Off,
    /// Negotiated; no CWR owed.
    On,
    /// Negotiated; the window was just reduced, so the next new data packet carries CWR.
    CwrDue,
}

/// ECN-Echo on the receiving side (RFC 3168 6.1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EceEcho {
    Idle,
    /// A CE mark arrived: ECE on every ACK until a data packet with CWR.
    Echoing,
}

/// With `teardown`, which side sends the first FIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseRole {
    /// Closes when the peer's FIN is in (or never, without `teardown`).
    Passive,
    /// The data sender: its FIN follows its data.
    Active,
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

/// Fields in declared order (`repr(C)`): what every packet of a NewReno, Reno or CUBIC
/// connection reads comes first, in about 10 of the 18 cache lines; the state of the
/// options off by default (SACK, PRR without SACK, RACK-TLP, pacing) comes last, so that
/// with thousands of open connections a packet does not pull it into the cache.
#[repr(C)]
pub struct TcpEndpoint {
    // ---- send half
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// Data packets to send (u64::MAX: persistent). In request/response mode the server's
    /// is set when the request has arrived.
    snd_total: u64,
    /// End of the send stream: snd_total, plus one for a FIN when this side closes
    /// (`teardown`).
    snd_end: u64,
    win: Window,
    cc: Cc,
    recovery: Recovery,
    rto: RtoEstimator,
    rtt: RttSampler,
    /// When the retransmission timer should fire (None: stopped).
    rto_deadline: Option<Time>,
    /// Response size the server sends once the request is complete (request/response).
    response_pkts: Option<u64>,
    /// No ECN reduction until an ACK passes this (RFC 3168 6.1.2: once per window).
    ecn_high: u64,
    /// Segments sent by limited transmit since the last new ACK (RFC 3042).
    limited_sent: u64,

    // ---- receive half
    rcv_nxt: u64,
    /// Data packets expected (u64::MAX: persistent).
    rcv_total: u64,
    /// End of the receive stream: rcv_total, plus the peer's FIN with `teardown`.
    rcv_end: u64,
    ooo: Vec<u64>,
    ack: AckState,

    // ---- identity, state and counters
    state: State,
    pub stats: TcpStats,
    pub flow: u32,
    pub local: u32,
    pub remote: u32,
    /// Wire size of this endpoint's data packets.
    pub data_bytes: u32,
    pub cfg: u16,
    /// 0 = the initiator (client), 1 = the responder (server).
    pub side: u8,
    close: CloseRole,
    ecn: EcnSender,
    echo: EceEcho,
    /// During the current call: new data was sent / an ACK advanced snd_una (TLP, RFC
    /// 8985 7.2).
    sent_new: bool,
    acked_new: bool,
    /// From the configuration: `sack`, `rack` or `nosack_prr` is on, so `send_available`
    /// may have to send at a recovery rate (otherwise that state is never set, nor read).
    rate_sending: bool,
    /// From the configuration: `rack` or `pacing` is on, so timers other than the RTO may
    /// be set (otherwise `timer_deadline` reads only the RTO's).
    other_timers: bool,

    // ---- options off by default
    /// SACK sender state (RFC 6675), used when `sack` is on.
    sk: SackSender,
    /// Fast recovery at PRR's rate without SACK, used when `nosack_prr` is on.
    np: NosackPrr,
    /// RACK-TLP state (RFC 8985), used when `rack` is on.
    rack: Rack,
    /// Pacing state, used when `pacing` is on.
    pace: Pacer,
    sack_rcv: SackReceiver,
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
        let mut e =
            Self::with_buffers(flow, side, local, remote, cfg_idx, cfg, snd_total, rcv_total, Vec::new(), Vec::new());
        e.sk.board = Scoreboard::new(Vec::new(), cfg.max_window, cfg.sack);
        e.rack = Rack::new(Vec::new(), cfg.max_window, cfg.rack);
        e
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
        let st = self.rtt.take_buffer();
        let ooo = std::mem::take(&mut self.ooo);
        let board = self.sk.board.take_buffer();
        let segs = self.rack.take_buffer();
        *self = Self::with_buffers(flow, side, local, remote, cfg_idx, cfg, snd_total, rcv_total, st, ooo);
        self.sk.board = Scoreboard::new(board, cfg.max_window, cfg.sack);
        self.rack = Rack::new(segs, cfg.max_window, cfg.rack);
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
        send_times: Vec<Time>,
        mut ooo: Vec<u64>,
    ) -> Self {
        let ring = (cfg.max_window as usize + 1).next_power_of_two();
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
            close: CloseRole::Passive,
            data_bytes: cfg.pkt_bytes,
            response_pkts: None,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            win: Window { cwnd: cfg.init_cwnd as f64, ssthresh: cfg.init_ssthresh },
            cc: Cc::new(cfg.variant),
            recovery: Recovery::default(),
            rto: RtoEstimator::new(cfg.ito_s, cfg.min_rto_s, cfg.max_rto_s, cfg.granularity_s)
                .ticked(cfg.tick_s, flow as u64 * 2 + side as u64),
            rtt: RttSampler::new(cfg.rtt_sampling, send_times),
            rto_deadline: None,
            ecn: EcnSender::Off,
            ecn_high: 0,
            limited_sent: 0,
            sk: SackSender::default(),
            np: NosackPrr::default(),
            rack: Rack::default(),
            pace: Pacer::default(),
            sent_new: false,
            acked_new: false,
            rate_sending: cfg.sack || cfg.rack || cfg.nosack_prr,
            other_timers: cfg.rack || cfg.pacing,
            rcv_nxt: 0,
            rcv_total,
            rcv_end: if cfg.teardown && rcv_total != u64::MAX { rcv_total + 1 } else { rcv_total },
            ooo,
            sack_rcv: SackReceiver::default(),
            echo: EceEcho::Idle,
            ack: AckState::Idle,
            stats: TcpStats::default(),
        }
    }

    // ------------------------------------------------------------------ observation

    pub fn state(&self) -> State {
        self.state
    }
    pub fn cwnd(&self) -> f64 {
        self.win.cwnd
    }
    pub fn ssthresh(&self) -> f64 {
        self.win.ssthresh
    }
    /// The congestion control's state (CUBIC's epoch, DCTCP's alpha, ...).
    pub fn cc(&self) -> &Cc {
        &self.cc
    }
    pub fn srtt(&self) -> Option<f64> {
        self.rto.srtt()
    }
    pub fn rttvar(&self) -> f64 {
        self.rto.rttvar()
    }
    /// RTO before backoff, seconds.
    pub fn current_rto_s(&self) -> f64 {
        self.rto.base_rto()
    }
    /// Number of back-offs applied to the RTO since the last valid sample.
    pub fn rto_backoff(&self) -> u32 {
        self.rto.backoff()
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    pub fn rcv_total(&self) -> u64 {
        self.rcv_total
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.in_fast_recovery() || self.sk.in_recovery
    }
    /// SACK recovery (RFC 6675) is under way.
    pub fn in_sack_recovery(&self) -> bool {
        self.sk.in_recovery
    }
    /// The sender's SACK scoreboard.
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sk.board
    }
    /// RFC 6675's pipe as last computed in SACK recovery.
    pub fn pipe(&self) -> u64 {
        self.sk.pipe
    }
    pub fn recovery_state(&self) -> RecoveryState {
        self.recovery.state()
    }
    /// RFC 6582's `recover`.
    pub fn recover(&self) -> Option<u64> {
        if self.sk.board_on() {
            self.sk.recovery_point
        } else {
            self.recovery.recover()
        }
    }
    pub fn ecn_sender(&self) -> EcnSender {
        self.ecn
    }
    pub fn ece_echo(&self) -> EceEcho {
        self.echo
    }
    pub fn ack_state(&self) -> AckState {
        self.ack
    }
    /// When the retransmission timer should fire (None: not running).
    pub fn rto_deadline(&self) -> Option<Time> {
        self.rto_deadline
    }
    /// RACK-TLP's state (RFC 8985).
    pub fn rack(&self) -> &Rack {
        &self.rack
    }
    /// When a packet held back by pacing may go (None: nothing held back).
    pub fn pace_deadline(&self) -> Option<Time> {
        self.pace.waiting.then_some(self.pace.next)
    }
    /// Nanoseconds between paced packets (None: not paced yet).
    pub fn pace_interval(&self) -> Option<Time> {
        self.pace.interval
    }
    /// The earliest of the retransmission, RACK, PTO and pacing timers: the deadline of the
    /// endpoint's one transmission timer (`on_timer`).
    pub fn timer_deadline(&self) -> Option<Time> {
        if !self.other_timers {
            return self.rto_deadline;
        }
        let mut d = self.rto_deadline;
        for x in [self.rack.reo_deadline, self.rack.pto_deadline, self.pace_deadline()].into_iter().flatten() {
            d = Some(d.map_or(x, |y| y.min(x)));
        }
        d
    }
    /// When the delayed-ACK timer should fire (None: no ACK held back).
    pub fn delack_deadline(&self) -> Option<Time> {
        match self.ack {
            AckState::Delayed { deadline } => Some(deadline),
            AckState::Idle | AckState::Due => None,
        }
    }
    /// Send times kept for RTT sampling: ring length and capacity.
    pub fn send_time_ring(&self) -> (usize, usize) {
        self.rtt.ring()
    }
    /// The receive half holds everything, the peer's FIN included with `teardown`.
    pub fn rx_done(&self) -> bool {
        self.rcv_nxt >= self.rcv_end
    }
    /// The send half has everything acknowledged (and no response is still to come).
    pub fn tx_done(&self) -> bool {
        self.response_pkts.is_none() && self.snd_una >= self.snd_end
    }
    /// Both halves are done: the endpoint may be released.
    pub fn finished(&self) -> bool {
        self.rx_done() && self.tx_done()
    }

    // ------------------------------------------------------------------ opening

    /// Request/response: this server answers with `response_pkts` packets once the whole
    /// request has arrived.
    pub fn respond_with(&mut self, response_pkts: u64) {
        self.response_pkts = Some(response_pkts);
    }

    /// Active open by the client at time `io.now`.
    pub fn open(&mut self, io: &mut TcpIo) {
        self.sent_new = false;
        self.acked_new = false;
        if io.cfg.handshake {
            self.state = State::SynSent { timed: Some(io.now) };
            self.send_ctl(io, PktKind::Syn, if io.cfg.ecn { FLAG_ECE | FLAG_CWR } else { 0 });
            self.stats.syn_sent += 1;
            self.arm(io.now);
        } else {
            self.state = State::Established;
            self.ecn = if io.cfg.ecn { EcnSender::On } else { EcnSender::Off };
            self.send_available(io);
        }
        self.tlp_schedule(io);
    }

    /// The passive end of a connection without handshake starts established.
    pub fn accept_without_handshake(&mut self, cfg: &TcpConfig) {
        self.state = State::Established;
        self.ecn = if cfg.ecn { EcnSender::On } else { EcnSender::Off };
    }

    fn ecn_ok(&self) -> bool {
        self.ecn != EcnSender::Off
    }

    // ------------------------------------------------------------------ input

    /// Handle a packet addressed to this endpoint.
    pub fn on_packet(&mut self, p: &Packet, io: &mut TcpIo) {
        self.sent_new = false;
        self.acked_new = false;
        match p.kind {
            PktKind::Syn => return self.on_syn(p, io),
            PktKind::SynAck => return self.on_synack(p, io),
            PktKind::Udp => return,
            PktKind::Data | PktKind::Ack | PktKind::Fin => {}
        }
        if let State::SynRcvd { timed } = self.state {
            // The handshake's final ACK (or data carrying it).
            self.state = State::Established;
            if let Some(t0) = timed {
                self.rto.sample_at((io.now - t0) as f64 * 1e-9, io.now);
                if io.cfg.rack {
                    self.rack.on_rtt_sample(io.now - t0, io.now); // RFC 8985 6.2 step 1
                }
            } else if let Some(iw) = io.cfg.iw_after_syn_loss {
                // RFC 5681 3.1: our SYN-ACK was retransmitted (it or the SYN was lost).
                self.win.cwnd = iw as f64;
            }
            self.rto_deadline = None;
        }
        if self.state != State::Established {
            return;
        }
        if matches!(p.kind, PktKind::Data | PktKind::Fin) {
            self.on_data(p, io);
        }
        self.on_ack(p.ack as u64, p.flags & FLAG_ECE != 0, p.kind == PktKind::Ack, &p.sack, io);
        self.send_available(io);
        self.flush_ack(io);
        self.tlp_schedule(io);
    }

    fn on_syn(&mut self, p: &Packet, io: &mut TcpIo) {
        match self.state {
            State::Listen => {
                self.state = State::SynRcvd { timed: Some(io.now) };
                let ok = io.cfg.ecn && p.flags & (FLAG_ECE | FLAG_CWR) == (FLAG_ECE | FLAG_CWR);
                self.ecn = if ok { EcnSender::On } else { EcnSender::Off };
                self.send_ctl(io, PktKind::SynAck, if ok { FLAG_ECE } else { 0 });
                self.arm(io.now);
            }
            State::SynRcvd { .. } => {
                // A retransmitted SYN: our SYN-ACK was lost or is late; answer again.
                self.state = State::SynRcvd { timed: None };
                self.send_ctl(io, PktKind::SynAck, if self.ecn_ok() { FLAG_ECE } else { 0 });
            }
            _ => {}
        }
    }

    fn on_synack(&mut self, p: &Packet, io: &mut TcpIo) {
        match self.state {
            State::SynSent { timed } => {
                self.state = State::Established;
                match timed {
                    None => {
                        if io.cfg.syn_backoff_kept {
                            self.rto.restart_from_ito_keeping_backoff(); // ns-2's t_backoff_
                        } else {
                            self.rto.restart_from_ito();
                        }
                        // RFC 5681 3.1: the SYN or SYN-ACK was lost (the SYN timed out).
                        if let Some(iw) = io.cfg.iw_after_syn_loss {
                            self.win.cwnd = iw as f64;
                        }
                    }
                    Some(t0) => {
                        self.rto.sample_at((io.now - t0) as f64 * 1e-9, io.now);
                        if io.cfg.rack {
                            self.rack.on_rtt_sample(io.now - t0, io.now); // RFC 8985 6.2 step 1
                        }
                    }
                }
                self.ecn = if io.cfg.ecn && p.flags & FLAG_ECE != 0 { EcnSender::On } else { EcnSender::Off };
                self.rto_deadline = None;
                self.pace_update(io.cfg);
                // RFC 793's third packet; without it (`handshake_ack = false`, ns-2's one-way
                // TCP) the first data packet acknowledges the SYN-ACK, and a pure ACK goes
                // only if no data could.
                if io.cfg.handshake_ack {
                    self.send_ctl(io, PktKind::Ack, 0);
                }
                self.send_available(io);
                if !io.cfg.handshake_ack && !self.sent_new {
                    self.send_ctl(io, PktKind::Ack, 0);
                }
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
        if p.flags & FLAG_CWR != 0 && !io.cfg.variant.exact_ce_echo() {
            self.echo = EceEcho::Idle;
        }
        let mut immediate = false;
        if io.cfg.variant.exact_ce_echo() {
            self.echo_ce_exactly(p.ecn == Ecn::Ce, io);
        } else if p.ecn == Ecn::Ce {
            self.echo = EceEcho::Echoing;
            self.stats.ecn_marks += 1;
            immediate = true;
        }
        let data_was_done = self.rcv_nxt >= self.rcv_total;
        let rx_was_done = self.rx_done();
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
                let m = 1 << (i % 64);
                if io.cfg.sack {
                    if self.ooo[i / 64] & m != 0 {
                        self.sack_rcv.on_duplicate(seq); // RFC 2883 section 4
                    } else {
                        self.ooo[i / 64] |= m;
                        self.sack_on_out_of_order(seq);
                    }
                }
                self.ooo[i / 64] |= m;
            }
            immediate = true; // out of order: duplicate ACK at once
        } else {
            if io.cfg.sack {
                self.sack_rcv.on_duplicate(seq); // RFC 2883 section 4
            }
            immediate = true; // already received
        }
        if !data_was_done && self.rcv_nxt >= self.rcv_total {
            io.notice.rx_complete = true;
            if let Some(n) = self.response_pkts.take() {
                // Request complete: the server starts its response.
                self.snd_total = n;
                self.snd_end = n;
                if self.close == CloseRole::Active {
                    self.append_fin();
                }
            }
        }
        if !rx_was_done
            && self.rx_done()
            && io.cfg.teardown
            && self.close == CloseRole::Passive
            && self.snd_end == self.snd_total
        {
            // Passive close: the peer's FIN is in; close our side too.
            self.append_fin();
        }
        if p.kind == PktKind::Fin {
            immediate = true;
        }
        self.ack = match self.ack {
            AckState::Idle if io.cfg.delayed_ack && !immediate => {
                AckState::Delayed { deadline: io.now + (io.cfg.delack_timeout_s * 1e9) as Time }
            }
            _ => AckState::Due,
        };
    }

    /// RFC 8257 3.2 (DCTCP): every ACK carries ECE iff the data it acknowledges was CE;
    /// when the CE state changes while a delayed ACK is held, that ACK (for the packets
    /// before this one, with the old state) goes at once. CWR is ignored.
    fn echo_ce_exactly(&mut self, ce: bool, io: &mut TcpIo) {
        if ce {
            self.stats.ecn_marks += 1;
        }
        if ce != (self.echo == EceEcho::Echoing) {
            if let AckState::Delayed { .. } = self.ack {
                self.send_ctl(io, PktKind::Ack, 0);
            }
            self.echo = if ce { EceEcho::Echoing } else { EceEcho::Idle };
        }
    }

    /// With `teardown`, this side closes first once its data is sent (the data sender).
    pub fn set_active_close(&mut self, cfg: &TcpConfig) {
        if cfg.teardown {
            self.close = CloseRole::Active;
            if self.response_pkts.is_none() {
                self.append_fin();
            }
        }
    }

    /// Put a FIN after the data of the send stream (never for a persistent flow).
    fn append_fin(&mut self) {
        if self.snd_total != u64::MAX && self.snd_end == self.snd_total {
            self.snd_end = self.snd_total + 1;
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
        if self.ack == AckState::Due {
            self.send_ctl(io, PktKind::Ack, 0);
        }
    }

    /// The delayed-ACK timer fired (the simulator checked the deadline).
    pub fn on_delack_timer(&mut self, io: &mut TcpIo) {
        if let AckState::Delayed { .. } = self.ack {
            self.ack = AckState::Due;
            self.flush_ack(io);
        }
    }

    // ------------------------------------------------------------------ send half

    fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// What ssthresh halves at a congestion event (`tcp.ssthresh_base`): `flight` (RFC 5681
    /// eq. 4's FlightSize), or ns-2.35's `windowd()` in `TcpAgent::slowdown`: min(cwnd,
    /// window) without the fast-recovery inflation, which ns-2 keeps in `dupwnd_` (here the
    /// window of non-SACK fast recovery is ssthresh plus the inflation, so ssthresh is it).
    fn loss_base(&self, cfg: &TcpConfig, flight: u64) -> u64 {
        match cfg.ssthresh_base {
            SsthreshBase::Flight => flight,
            SsthreshBase::Cwnd => {
                let cwnd = if self.recovery.in_fast_recovery() {
                    self.recovery.uninflated().unwrap_or(self.win.ssthresh)
                } else {
                    self.win.cwnd
                };
                cwnd.min(cfg.max_window as f64).floor() as u64
            }
        }
    }

    fn on_ack(&mut self, ack: u64, ece: bool, pure: bool, opt: &SackOpt, io: &mut TcpIo) {
        if self.snd_max == 0 {
            return; // nothing sent yet: this side has no data outstanding
        }
        let ack = ack.min(self.snd_max);
        self.acked_new = ack > self.snd_una;
        if io.cfg.rack {
            self.rack_on_ack(ack, ece, pure, opt, io);
        } else if io.cfg.sack {
            self.sack_on_ack(ack, ece, pure, opt, io);
        } else {
            self.plain_on_ack(ack, ece, pure, io);
        }
        self.pace_update(io.cfg);
    }

    /// An ACK without SACK: RFC 5681 / 6582 through `recovery.rs`.
    fn plain_on_ack(&mut self, ack: u64, ece: bool, pure: bool, io: &mut TcpIo) {
        if ack > self.snd_una {
            let newly = ack - self.snd_una;
            let rtt_s = self.rtt.on_new_ack(ack, self.snd_una, io.now);
            if let Some(r) = rtt_s {
                self.rto.sample_at(r, io.now);
            }
            self.snd_una = ack;
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.cc_ack_info(ack, newly, rtt_s, ece, io);
            // RFC 3168 6.1.2: at most one reduction per window of data, none in recovery.
            let mut reduced = false;
            if ece && self.ecn_ok() && !self.recovery.in_fast_recovery() && ack > self.ecn_high {
                let flight = self.loss_base(io.cfg, self.flight());
                self.cc.on_ecn_echo(&mut self.win, flight);
                self.ecn_high = self.snd_max;
                self.ecn = EcnSender::CwrDue;
                self.recovery.on_ecn_reduction();
                reduced = true;
            }
            self.limited_sent = 0;
            let mut restart_timer = true;
            match self.recovery.on_new_ack(ack, newly, &mut self.cc, &mut self.win, io.cfg.recovery_exit_cwnd) {
                NewAck::Open => {
                    if !reduced {
                        self.cc.on_ack(&mut self.win, newly, io.cfg.abc_limit, io.cfg.max_window);
                    }
                }
                NewAck::Partial { retransmit: _, restart_timer: restart } if io.cfg.nosack_prr => {
                    self.nprr_partial_ack(newly, io);
                    restart_timer = restart || io.cfg.restart_rto_on_every_partial_ack;
                }
                NewAck::Partial { retransmit, restart_timer: restart } => {
                    self.emit_data(retransmit, true, io);
                    // RFC 6582 section 4: Impatient re-arms on the first partial ACK only,
                    // Slow-but-Steady on each (`partial_ack_timer`).
                    restart_timer = restart || io.cfg.restart_rto_on_every_partial_ack;
                }
                NewAck::Exited => {
                    self.np = NosackPrr::default();
                    // ns-2 (`recv_newack_helper`): the exiting ACK opens cwnd like any other.
                    if io.cfg.recovery_exit_increase && !reduced {
                        self.cc.on_ack(&mut self.win, newly, io.cfg.abc_limit, io.cfg.max_window);
                    }
                }
            }
            if self.snd_una >= self.snd_max {
                self.rto_deadline = None;
            } else if restart_timer {
                self.arm(io.now);
            }
            if self.response_pkts.is_none() && self.snd_una >= self.snd_end {
                // Everything acknowledged (first time: snd_una was below snd_max <= snd_end).
                io.notice.tx_complete = true;
                self.rto_deadline = None;
            }
        } else if ack == self.snd_una && pure && self.snd_max > self.snd_una {
            match self.recovery.on_dupack(ack, io.cfg.dupack_threshold, io.cfg.variant == Variant::Reno) {
                DupAck::Counted => {
                    if io.cfg.limited_transmit {
                        self.limited_transmit(io);
                    }
                }
                DupAck::InRecovery if io.cfg.nosack_prr => self.nprr_dupack(io),
                DupAck::InRecovery => self.cc.on_dupack_in_recovery(&mut self.win),
                DupAck::FastRetransmit => self.fast_retransmit(io),
            }
        }
    }

    /// RFC 5681 3.2 steps 2-3 (or Tahoe's go-back-N), with RFC 6582's `recover`.
    fn fast_retransmit(&mut self, io: &mut TcpIo) {
        // RFC 5681 3.2 step 2 (with RFC 3042): segments sent by limited transmit are not
        // counted in FlightSize for ssthresh.
        let flight = self.loss_base(io.cfg, self.flight() - self.limited_sent);
        let before = self.win.cwnd;
        let response = self.cc.on_fast_retransmit(&mut self.win, flight, io.cfg.dupack_threshold);
        self.recovery.on_fast_retransmit(self.snd_max, response);
        if io.cfg.fast_retransmit_cwnd == FastRetransmitCwnd::Half && response == LossResponse::FastRecovery {
            self.recovery.halve_exactly(&mut self.win, before, io.cfg.max_window, io.cfg.dupack_threshold);
        }
        self.ecn_high = self.snd_max;
        self.stats.fast_retransmits += 1;
        self.rtt.forget_timed();
        match response {
            LossResponse::GoBackN => {
                self.snd_nxt = self.snd_una;
                self.send_available(io);
            }
            LossResponse::FastRecovery if io.cfg.nosack_prr => self.nprr_enter(io),
            LossResponse::FastRecovery => self.emit_data(self.snd_una, true, io),
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
            State::SynSent { .. } => {
                self.stats.timeouts += 1;
                if io.cfg.syn_timeout_slowdown {
                    // ns-2 `TcpAgent::timeout` -> `slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)`:
                    // half the window (cwnd_ is 1 after the first SYN timeout), at least 2.
                    let w = if self.stats.timeouts == 1 { self.win.cwnd.min(io.cfg.max_window as f64) } else { 1.0 };
                    self.win.ssthresh = (w / 2.0).floor().max(2.0);
                }
                self.rto.back_off();
                self.state = State::SynSent { timed: None };
                self.send_ctl(io, PktKind::Syn, if io.cfg.ecn { FLAG_ECE | FLAG_CWR } else { 0 });
                self.stats.syn_sent += 1;
                self.arm(io.now);
            }
            State::SynRcvd { .. } => {
                self.stats.timeouts += 1;
                self.rto.back_off();
                self.state = State::SynRcvd { timed: None };
                self.send_ctl(io, PktKind::SynAck, if self.ecn_ok() { FLAG_ECE } else { 0 });
                self.arm(io.now);
            }
            State::Established if self.snd_una < self.snd_max => {
                self.stats.timeouts += 1;
                // Before `recovery.on_timeout` leaves fast recovery (`loss_base` reads it).
                let flight = self.loss_base(io.cfg, self.flight());
                self.cc.on_timeout(&mut self.win, flight);
                self.rto.back_off();
                self.recovery.on_timeout(self.snd_max);
                self.np = NosackPrr::default();
                // RFC 6675 section 5.1: leave SACK recovery, RecoveryPoint = HighData; the
                // scoreboard is kept, so go-back-N skips what was SACKed.
                self.sk.on_timeout(self.snd_max);
                self.ecn_high = self.snd_max;
                self.rtt.forget_timed();
                if io.cfg.rack {
                    self.rack_on_rto(io);
                } else {
                    self.snd_nxt = self.snd_una;
                    self.send_available(io);
                }
                self.arm(io.now);
            }
            _ => {}
        }
    }

    fn arm(&mut self, now: Time) {
        self.rto_deadline = Some(now + self.rto.timer());
    }

    /// Send whatever the window allows.
    #[inline]
    pub fn send_available(&mut self, io: &mut TcpIo) {
        if self.state != State::Established {
            return;
        }
        if self.rate_sending {
            if self.sk.in_recovery {
                return self.sack_send(io);
            }
            if self.rack.rto_recovery {
                return self.rack_rto_send(io);
            }
            if io.cfg.nosack_prr && self.recovery.in_fast_recovery() {
                return self.nprr_send(io);
            }
        }
        // Checked here, before the window, because the receive half of a transfer has
        // nothing to send on every packet it gets.
        if self.snd_nxt < self.snd_end {
            self.send_window(io);
        }
    }

    /// `send_available` outside recovery: new data (or go-back-N after a timeout) while the
    /// window allows. Out of line, so that the checks before it inline into the packet path.
    #[inline(never)]
    fn send_window(&mut self, io: &mut TcpIo) {
        // `as i64` truncates, saturating: clamped, it equals `floor() as u64` for every f64
        // (NaN too), without the libm call (`floor`) baseline x86-64 makes on every ACK, and
        // in fewer instructions than the saturating `as u64`.
        let win = (self.win.cwnd as i64).clamp(1, io.cfg.max_window as i64) as u64;
        while self.snd_nxt < self.snd_end && self.snd_nxt < self.snd_una + win {
            if !self.pace_ok(io) {
                break;
            }
            let seq = self.snd_nxt;
            self.snd_nxt += 1;
            if seq < self.snd_max && io.cfg.sack && self.sk.board.is_sacked(seq) {
                continue; // go-back-N after a timeout skips what the receiver holds
            }
            if seq < self.snd_max {
                self.emit_data(seq, true, io);
            } else {
                self.snd_max = self.snd_nxt;
                self.emit_data(seq, false, io);
            }
        }
    }

    fn emit_data(&mut self, seq: u64, retx: bool, io: &mut TcpIo) {
        let mut flags = 0;
        let fin = seq >= self.snd_total;
        let ecn = match self.ecn_ok() && !retx && !fin {
            true if io.cfg.ect1 => Ecn::Ect1,
            true => Ecn::Ect,
            false => Ecn::NotEct,
        };
        if retx {
            flags |= FLAG_RETX;
            if !fin {
                self.stats.retransmits += 1;
            }
            self.rtt.on_retransmit(seq);
        } else {
            self.sent_new = true;
            self.rtt.on_send(seq, self.snd_una, io.now);
            if self.ecn == EcnSender::CwrDue {
                flags |= FLAG_CWR;
                self.ecn = EcnSender::On;
            }
        }
        if self.echo == EceEcho::Echoing {
            flags |= FLAG_ECE;
        }
        if !fin {
            self.stats.data_pkts_sent += 1;
        }
        if io.cfg.rack {
            self.rack.on_send(seq, io.now, retx);
        }
        if io.cfg.pacing {
            self.pace_sent(io.now);
        }
        self.ack = AckState::Idle;
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
            sack: SackOpt::NONE,
        });
        if self.rto_deadline.is_none() {
            self.arm(io.now);
        }
    }

    fn send_ctl(&mut self, io: &mut TcpIo, kind: PktKind, mut flags: u8) {
        let mut opt = SackOpt::NONE;
        if kind == PktKind::Ack {
            if self.echo == EceEcho::Echoing {
                flags |= FLAG_ECE;
            }
            self.ack = AckState::Idle;
            if io.cfg.sack {
                opt = self.sack_blocks(io.cfg);
            }
        }
        io.out.push(Packet {
            flow: self.flow,
            seq: 0,
            ack: self.rcv_nxt as u32,
            src: self.local,
            dst: self.remote,
            size: io.cfg.hdr_bytes + sack::option_bytes(opt.n),
            enq_ns: 0,
            kind,
            ecn: Ecn::NotEct,
            flags,
            class: ClassMark::None,
            to_side: 1 - self.side,
            path: 0,
            qmark: 0,
            sack: opt,
        });
    }
}

/// The SACK sender's recovery state (RFC 6675 section 5), beside its scoreboard.
#[derive(Clone, Debug, Default)]
pub struct SackSender {
    pub board: Scoreboard,
    /// Duplicate ACKs since the last new ACK, outside recovery.
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6675's RecoveryPoint plus one (snd_max at entry or at the last timeout).
    recovery_point: Option<u64>,
    /// HighRxt plus one: NextSeg rules 1 and 3 look from here.
    rxt_next: u64,
    /// RescueRxt (NextSeg rule 4), plus one.
    rescue: Option<u64>,
    /// Pipe (SetPipe), kept up to date as packets are sent.
    pipe: u64,
    /// PRR's state and the packets it allows on this ACK.
    prr: Prr,
    sndcnt: u64,
}

/// Fast recovery without SACK at PRR's rate (RFC 6937 section 3's estimate of
/// DeliveredData without SACK, read as Linux's tcp_add_reno_sack / tcp_remove_reno_sacks
/// do): each duplicate ACK counts one packet delivered and "SACKed" (at most the flight
/// minus the hole); an ACK of new data counts what it acknowledges minus the duplicates
/// already counted, at least one. pipe = flight - SACKed - the hole not yet resent.
#[derive(Clone, Copy, Debug, Default)]
pub struct NosackPrr {
    /// Packets counted delivered by duplicate ACKs (Linux's sacked_out without SACK).
    sacked: u64,
    /// The hole at snd_una is to be retransmitted (NewReno's partial ACK).
    rtx_due: bool,
    prr: Prr,
    sndcnt: u64,
}

/// Pacing (Linux's internal pacing): the earliest time of the next data packet and the
/// interval the rate gives.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pacer {
    /// Linux's tcp_wstamp_ns: no data packet before it.
    next: Time,
    /// ns per packet at the current rate (None: unpaced, no RTT sample yet).
    interval: Option<Time>,
    /// Data packets sent (Linux's data_segs_out).
    segs_out: u64,
    /// A packet the window allows is held back until `next`.
    waiting: bool,
    /// Packets per burst at the current rate (Linux's TSO/GSO chunk, `tcp_tso_autosize`);
    /// 0 or 1: single packets.
    burst: u32,
    /// The current burst: when it left, its packets so far, and the stamp before it and
    /// its own (for Linux's credit rule over the whole chunk).
    burst_at: Time,
    burst_n: u32,
    burst_prior: Time,
    burst_stamp: Time,
}

impl Pacer {
    /// A packet at `now` belongs to the burst that left at this instant and is not full.
    #[inline]
    fn joins_burst(&self, now: Time) -> bool {
        self.burst_n > 0 && self.burst_n < self.burst && now == self.burst_at
    }
}

/// Linux's `tcp_tso_autosize` in packets: a chunk holds the bytes the pacing rate sends in
/// 2^-10 s (`sk_pacing_shift` 10), plus 64 KB >> (min RTT / 512 us) (`tcp_tso_rtt_log` 9:
/// more at small RTTs), at most 64 KB (`sk_gso_max_size`), and at least `min_segs`
/// packets (`tcp_min_tso_segs`). `interval` is ns per packet at the rate; `min_rtt` ns.
pub fn autosize(interval: Time, mss: u32, min_rtt: Option<Time>, min_segs: u32) -> u32 {
    const GSO_MAX: u64 = 65_536;
    let rate = mss as u64 * 1_000_000_000 / interval.max(1); // bytes per second
    let mut bytes = rate >> 10;
    if let Some(r) = min_rtt.map(|t| (t / 1000) >> 9) {
        if r < 32 {
            bytes += GSO_MAX >> r;
        }
    }
    let segs = (bytes.min(GSO_MAX) / mss.max(1) as u64) as u32;
    segs.max(min_segs)
}

impl TcpEndpoint {
    // ------------------------------------------------------------------ PRR without SACK

    /// RFC 6937 section 3 at the start of recovery without SACK: RecoverFS = flight; the
    /// duplicate ACKs so far (the threshold's) count as delivered, the one that triggered
    /// recovery in prr_delivered; the fast retransmit goes first.
    fn nprr_enter(&mut self, io: &mut TcpIo) {
        let flight = self.flight();
        self.np = NosackPrr {
            sacked: (io.cfg.dupack_threshold as u64).min(flight.saturating_sub(1)),
            rtx_due: true,
            prr: Prr::start(flight),
            sndcnt: 0,
        };
        self.nprr_quota(1, io);
    }

    /// A duplicate ACK in recovery: DeliveredData is one packet unless every packet but the
    /// hole is already counted (Linux's tcp_limit_reno_sacked).
    fn nprr_dupack(&mut self, io: &mut TcpIo) {
        if self.np.sacked + 1 < self.flight() {
            self.np.sacked += 1;
            self.nprr_quota(1, io);
        }
    }

    /// A partial ACK of `acked` packets: DeliveredData = acked - the duplicates counted
    /// (at least 1); the new hole at snd_una is due (RFC 6582 3.2 step 3), sent when PRR
    /// allows.
    fn nprr_partial_ack(&mut self, acked: u64, io: &mut TcpIo) {
        let delivered = acked.saturating_sub(self.np.sacked).max(1);
        self.np.sacked = self.np.sacked.saturating_sub(acked - 1).min(self.flight().saturating_sub(1));
        self.np.rtx_due = true;
        self.nprr_quota(delivered, io);
    }

    /// sndcnt for this ACK, cwnd = pipe + sndcnt (RFC 6937 section 3), and send.
    fn nprr_quota(&mut self, delivered: u64, io: &mut TcpIo) {
        let pipe = self.flight() - self.np.sacked - self.np.rtx_due as u64;
        self.np.sndcnt = self.np.prr.on_ack_without_sack(delivered, pipe, self.win.ssthresh);
        self.win.cwnd = (pipe + self.np.sndcnt) as f64;
        self.nprr_send(io);
    }

    /// Send as long as the quota lasts: the due retransmission first, then new data.
    fn nprr_send(&mut self, io: &mut TcpIo) {
        while self.np.sndcnt > 0 && self.pace_ok(io) {
            if self.np.rtx_due {
                self.np.rtx_due = false;
                self.emit_data(self.snd_una, true, io);
            } else if self.snd_max < self.snd_end && self.snd_max < self.snd_una + io.cfg.max_window as u64 {
                let seq = self.snd_max;
                self.snd_max += 1;
                self.snd_nxt = self.snd_max;
                self.emit_data(seq, false, io);
            } else {
                break;
            }
            self.np.prr.on_send();
            self.np.sndcnt -= 1;
        }
    }
}

impl SackSender {
    fn board_on(&self) -> bool {
        self.recovery_point.is_some() || self.in_recovery || self.board.high() > 0
    }
    fn on_timeout(&mut self, snd_max: u64) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recovery_point = Some(snd_max);
        self.sndcnt = 0;
    }
}

impl TcpEndpoint {
    // ------------------------------------------------------------------ limited transmit

    /// RFC 3042 section 2: on the first and second duplicate ACK (those below the
    /// threshold), send one previously unsent segment if the receiver window allows and the
    /// flight stays within cwnd + 2; cwnd is not changed.
    fn limited_transmit(&mut self, io: &mut TcpIo) {
        let dup = self.recovery.dupacks() as u64;
        if dup == 0 || dup >= io.cfg.dupack_threshold as u64 || self.snd_nxt != self.snd_max {
            return;
        }
        let limit = (self.win.cwnd.floor() as u64 + dup).min(io.cfg.max_window as u64);
        if self.snd_max < self.snd_end && self.flight() < limit && self.pace_ok(io) {
            let seq = self.snd_max;
            self.snd_max += 1;
            self.snd_nxt = self.snd_max;
            self.limited_sent += 1;
            self.emit_data(seq, false, io);
        }
    }

    // ------------------------------------------------------------------ SACK receiver

    fn held(&self, s: u64) -> bool {
        let bits = (self.ooo.len() * 64) as u64;
        if s <= self.rcv_nxt || s - self.rcv_nxt >= bits {
            return false;
        }
        let i = (s % bits) as usize;
        self.ooo[i / 64] & (1 << (i % 64)) != 0
    }

    fn sack_on_out_of_order(&mut self, seq: u64) {
        let mut r = self.sack_rcv;
        r.on_out_of_order(seq, self.rcv_nxt, &|s| self.held(s));
        self.sack_rcv = r;
    }

    /// The SACK option of the next ACK (RFC 2018 section 4, RFC 2883 section 4).
    fn sack_blocks(&mut self, cfg: &TcpConfig) -> SackOpt {
        let mut r = self.sack_rcv;
        let opt = r.build(self.rcv_nxt, cfg.sack_blocks, cfg.dsack, &|s| self.held(s));
        self.sack_rcv = r;
        opt
    }

    // ------------------------------------------------------------------ SACK sender

    /// An ACK with SACK on: RFC 6675 section 5 (Update, the entry rules, (A)-(C)), with
    /// RFC 6298's timer and RFC 3168's ECN response as without SACK.
    fn sack_on_ack(&mut self, ack: u64, ece: bool, pure: bool, opt: &SackOpt, io: &mut TcpIo) {
        let una = self.snd_una;
        let before = self.sk.board.sacked();
        // RFC 6675 section 5: every ACK updates the scoreboard.
        self.sk.board.update(opt, ack, una, self.snd_max);
        let thresh = io.cfg.dupack_threshold;
        if ack > una {
            let rtt_s = self.rtt.on_new_ack(ack, una, io.now);
            if let Some(r) = rtt_s {
                self.rto.sample_at(r, io.now);
            }
            let (delivered, reduced) = self.sack_advance(ack, una, before, rtt_s, ece, io);
            if self.sk.in_recovery {
                if ack >= self.sk.recovery_point.unwrap_or(0) {
                    // RFC 6675 (A) / RFC 6937: recovery ends, cwnd = ssthresh.
                    self.sk.in_recovery = false;
                    self.cc.on_full_ack(&mut self.win);
                } else {
                    self.sack_rate(delivered, io); // (B) and (C)
                }
            } else if !reduced {
                self.cc.on_ack(&mut self.win, ack - una, io.cfg.abc_limit, io.cfg.max_window);
            }
            self.rearm_after_new_ack(io);
        } else if ack == una && pure && self.snd_max > una {
            let delivered = self.sk.board.sacked() - before;
            if self.sk.in_recovery {
                return self.sack_rate(delivered, io); // (B) and (C)
            }
            self.sk.dupacks += 1;
            // RFC 6675 section 5 (1)-(2): DupThresh duplicates, or IsLost(HighACK + 1); and
            // not before the cumulative ACK passes the last RecoveryPoint (section 5, 5.1).
            let lost = self.sk.dupacks >= thresh || self.sk.board.is_lost(una, thresh);
            if lost && self.sk.recovery_point.is_none_or(|r| ack >= r) {
                return self.sack_enter(delivered, io);
            }
            if io.cfg.limited_transmit {
                // RFC 6675 section 5 (3): limited transmit governed by cwnd - pipe.
                self.sk.rxt_next = una;
                self.sk.pipe = self.sk.board.pipe(una, self.snd_max, una, thresh);
                self.limited_transmit_sends(io);
            }
        }
    }

    /// The cumulative ACK moved from `una` to `ack` (SACK and RACK paths): the scoreboard,
    /// snd.una, the congestion control's ACK context and RFC 3168's one reduction per
    /// window. Returns RFC 6937's DeliveredData (change in snd.una + change in SACKed,
    /// `before` being SACKed before this ACK) and whether ECN reduced the window.
    fn sack_advance(
        &mut self,
        ack: u64,
        una: u64,
        before: u64,
        rtt_s: Option<f64>,
        ece: bool,
        io: &TcpIo,
    ) -> (u64, bool) {
        self.sk.board.advance(una, ack);
        let delivered = (ack - una + self.sk.board.sacked()).saturating_sub(before);
        self.snd_una = ack;
        if self.snd_nxt < ack {
            self.snd_nxt = ack;
        }
        self.sk.dupacks = 0;
        self.limited_sent = 0;
        self.cc_ack_info(ack, ack - una, rtt_s, ece, io);
        let mut reduced = false;
        if ece && self.ecn_ok() && !self.sk.in_recovery && ack > self.ecn_high {
            let flight = self.loss_base(io.cfg, self.flight());
            self.cc.on_ecn_echo(&mut self.win, flight);
            self.ecn_high = self.snd_max;
            self.ecn = EcnSender::CwrDue;
            reduced = true;
        }
        (delivered, reduced)
    }

    /// After an ACK of new data: RFC 6298 (5.2)/(5.3), stop the timer when all is
    /// acknowledged, restart it otherwise; tell the world once the send half is done.
    fn rearm_after_new_ack(&mut self, io: &mut TcpIo) {
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        } else {
            self.arm(io.now); // RFC 6298 (5.3)
        }
        if self.response_pkts.is_none() && self.snd_una >= self.snd_end {
            io.notice.tx_complete = true;
            self.rto_deadline = None;
        }
    }

    /// RFC 6675 section 5 (3): limited transmit of new data while cwnd exceeds pipe
    /// (`sk.pipe` set by the caller).
    fn limited_transmit_sends(&mut self, io: &mut TcpIo) {
        let una = self.snd_una;
        let cwnd = self.win.cwnd.floor() as u64;
        while cwnd > self.sk.pipe
            && self.snd_max < self.snd_end
            && self.snd_max < una + io.cfg.max_window as u64
            && self.pace_ok(io)
        {
            let seq = self.snd_max;
            self.snd_max += 1;
            self.snd_nxt = self.snd_max;
            self.sk.pipe += 1;
            self.limited_sent += 1;
            self.emit_data(seq, false, io);
        }
    }

    /// RFC 6675 section 5 (4): fast retransmit and entry into SACK loss recovery.
    fn sack_enter(&mut self, delivered: u64, io: &mut TcpIo) {
        let una = self.snd_una;
        let flight = self.loss_base(io.cfg, self.flight() - self.limited_sent);
        // (4.1) RecoveryPoint = HighData.
        self.sk.recovery_point = Some(self.snd_max);
        self.sk.in_recovery = true;
        // (4.2) ssthresh from the congestion control (RFC 5681 eq. 4 for Reno/NewReno); the
        // window then follows the recovery rate, not the fast-recovery inflation.
        self.cc.on_fast_retransmit(&mut self.win, flight, io.cfg.dupack_threshold);
        self.win.cwnd = self.win.ssthresh;
        self.sk.prr = Prr::start(self.flight());
        self.stats.fast_retransmits += 1;
        self.ecn_high = self.snd_max;
        self.rtt.forget_timed();
        // (4.3) Retransmit HighACK + 1; HighRxt = RescueRxt = it. With RACK, the first
        // segment RACK deemed lost (RFC 8985 7.1: and no probe is outstanding).
        let first = if io.cfg.rack {
            self.rack.tlp_reset();
            self.rack.first_lost(una, self.snd_max).unwrap_or(una)
        } else {
            una
        };
        self.sk.rxt_next = first + 1;
        self.sk.rescue = Some(first + 1);
        self.sk.prr.on_send();
        self.emit_data(first, true, io);
        if io.cfg.restart_rto_on_fast_retransmit || self.rto_deadline.is_none() {
            self.arm(io.now);
        }
        // (4.4) SetPipe, (4.5) step (C) with what this ACK delivered (RFC 6937: the
        // duplicate's newly SACKed packets count in prr_delivered).
        self.sk.pipe = self.set_pipe(io.cfg);
        self.sack_quota(delivered, io);
        self.sack_send(io);
    }

    /// RFC 6675 (B): SetPipe; then the quota of this ACK (PRR or RFC 6675) and (C).
    fn sack_rate(&mut self, delivered: u64, io: &mut TcpIo) {
        self.sk.pipe = self.set_pipe(io.cfg);
        self.sack_quota(delivered, io);
        self.sack_send(io);
    }

    fn sack_quota(&mut self, delivered: u64, io: &TcpIo) {
        match io.cfg.recovery_rate {
            RecoveryRate::Prr => {
                // RFC 6937 section 3: sndcnt, and cwnd = pipe + sndcnt.
                self.sk.sndcnt = self.sk.prr.on_ack(delivered, self.sk.pipe, self.win.ssthresh);
                self.win.cwnd = (self.sk.pipe + self.sk.sndcnt) as f64;
            }
            RecoveryRate::Rfc6675 => {
                // RFC 6675 (C): send while cwnd - pipe >= 1 SMSS.
                self.sk.sndcnt = (self.win.cwnd.floor() as u64).saturating_sub(self.sk.pipe);
            }
        }
    }

    /// RFC 6675 (C.1)-(C.5): NextSeg() and send, as long as the quota lasts.
    fn sack_send(&mut self, io: &mut TcpIo) {
        let thresh = io.cfg.dupack_threshold;
        while self.sk.sndcnt > 0 {
            if !self.pace_ok(io) {
                break;
            }
            if io.cfg.rack {
                if !self.rack_next_seg(io) {
                    break;
                }
                self.sk.pipe += 1;
                self.sk.prr.on_send();
                self.sk.sndcnt -= 1;
                continue;
            }
            let una = self.snd_una;
            let (lost, unsacked) = self.sk.board.holes(una, self.sk.rxt_next.max(una), thresh);
            let rwnd_ok = self.snd_max < self.snd_end && self.snd_max < una + io.cfg.max_window as u64;
            if let Some(s) = lost {
                // NextSeg rule (1): the first lost hole above HighRxt; (C.2) HighRxt = it.
                self.sk.rxt_next = s + 1;
                self.emit_data(s, true, io);
            } else if rwnd_ok {
                // Rule (2): new data; (C.3) HighData moves.
                let seq = self.snd_max;
                self.snd_max += 1;
                self.snd_nxt = self.snd_max;
                self.emit_data(seq, false, io);
            } else if let Some(s) = unsacked {
                // Rule (3): an unSACKed hole above HighRxt, not yet deemed lost.
                self.sk.rxt_next = s + 1;
                self.emit_data(s, true, io);
            } else if let (true, Some(s)) =
                (self.sk.rescue.is_none_or(|r| una >= r), self.sk.board.highest_unsacked(una, self.snd_max))
            {
                // Rule (4): one rescue retransmission per recovery; RescueRxt =
                // RecoveryPoint; HighRxt unchanged.
                self.sk.rescue = self.sk.recovery_point;
                self.emit_data(s, true, io);
            } else {
                break; // NextSeg() failed
            }
            // (C.4) pipe grows by what was sent; PRR counts prr_out.
            self.sk.pipe += 1;
            self.sk.prr.on_send();
            self.sk.sndcnt -= 1;
        }
    }
}

impl TcpEndpoint {
    // ------------------------------------------------------------------ timers

    /// The transmission timer fired (the simulator checked `timer_deadline`): whichever of
    /// pacing, the RACK timer, the PTO and the RTO are due, in that order (a probe re-arms
    /// the RTO, RFC 8985 7.3, so a PTO capped at the RTO's deadline goes first).
    pub fn on_timer(&mut self, io: &mut TcpIo) {
        self.sent_new = false;
        self.acked_new = false;
        let now = io.now;
        if self.pace.waiting && self.pace.next <= now {
            self.pace.waiting = false;
            self.send_available(io);
        }
        if self.rack.reo_deadline.is_some_and(|d| d <= now) {
            self.rack_timer(io);
        }
        if self.rack.pto_deadline.is_some_and(|d| d <= now) {
            self.tlp_probe(io);
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.on_timeout(io);
        }
        self.tlp_schedule(io);
    }

    // ------------------------------------------------------------------ pacing

    /// Whether pacing lets a data packet go now; if not, it is held until `pace.next`.
    #[inline]
    fn pace_ok(&mut self, io: &TcpIo) -> bool {
        if !io.cfg.pacing || io.now >= self.pace.next || self.pace.joins_burst(io.now) {
            self.pace.waiting = false;
            return true;
        }
        self.pace.waiting = true;
        false
    }

    /// A data packet left at `now` (tcp_output.c `tcp_update_skb_after_send`): the next may
    /// leave one interval later, less up to half an interval of lateness (the time the
    /// stamp had to catch up with the clock); the first 10 packets are not paced
    /// ("sch_fq does not pace first 10 MSS"). With bursts (`pacing_burst`), the packets
    /// that leave at the same instant up to the burst size are one chunk, as Linux's one
    /// skb of several segments: the next chunk waits their k intervals, less up to half of
    /// that for lateness.
    fn pace_sent(&mut self, now: Time) {
        let p = &mut self.pace;
        p.segs_out += 1;
        if p.joins_burst(now) {
            p.burst_n += 1;
        } else {
            p.burst_prior = p.next;
            p.burst_stamp = p.next.max(now);
            p.burst_at = now;
            p.burst_n = 1;
        }
        let (prior, stamp) = (p.burst_prior, p.burst_stamp);
        p.next = stamp;
        if let Some(len) = p.interval {
            if p.segs_out >= 10 {
                let len = len * p.burst_n as Time;
                p.next = stamp + len - (len / 2).min(stamp - prior);
            }
        }
    }

    /// The pacing rate after an ACK (tcp_input.c `tcp_update_pacing_rate`): max(cwnd,
    /// flight) / srtt, times 2 (tcp_pacing_ss_ratio 200) while cwnd < ssthresh / 2 and 1.2
    /// (tcp_pacing_ca_ratio 120) after. Before an RTT sample the rate is unlimited (the
    /// socket's ~0 initial rate; the formula skips the division by a zero srtt).
    fn pace_update(&mut self, cfg: &TcpConfig) {
        if !cfg.pacing {
            return;
        }
        let Some(srtt) = self.rto.srtt() else { return };
        let cwnd = self.win.cwnd.floor() as u64;
        let ratio = if cwnd < self.win.ssthresh.floor() as u64 / 2 { 2.0 } else { 1.2 };
        let n = cwnd.max(self.flight()).max(1) as f64;
        let interval = (srtt * 1e9 / (ratio * n)).round() as Time;
        self.pace.interval = Some(interval);
        self.pace.burst = cfg.pacing_burst;
        if cfg.pacing_autosize {
            let min_rtt = if cfg.rack { self.rack.min_rtt() } else { None };
            self.pace.burst = autosize(interval, cfg.mss(), min_rtt, cfg.pacing_burst);
        }
    }

    // ------------------------------------------------------------------ RACK-TLP

    /// RFC 8985 7.2 (with 7.3's one probe at a time): after new data was sent or an ACK
    /// advanced snd_una, (re)start the PTO, unless in fast or RTO recovery, with SACKed
    /// segments, a probe outstanding, or nothing in flight.
    fn tlp_schedule(&mut self, io: &TcpIo) {
        if !io.cfg.rack {
            return;
        }
        let flight = self.flight();
        if self.state != State::Established
            || flight == 0
            || self.sk.in_recovery
            || self.rack.rto_recovery
            || self.sk.board.sacked() > 0
            || self.rack.tlp_end_seq().is_some()
        {
            self.rack.pto_deadline = None;
            return;
        }
        if self.sent_new || self.acked_new {
            let srtt = self.rto.srtt().map(|s| (s * 1e9).round() as Time);
            self.rack.pto_deadline = Some(Rack::pto(io.now, srtt, flight, self.rto_deadline));
        }
    }

    /// RFC 8985 7.3: the PTO fired: send one new segment if there is one and the receiver
    /// window allows (cwnd aside), else retransmit the last segment sent; then re-arm the
    /// RTO, not the PTO.
    fn tlp_probe(&mut self, io: &mut TcpIo) {
        self.rack.pto_deadline = None;
        if self.state != State::Established || self.snd_una >= self.snd_max {
            return;
        }
        if self.rack.tlp_end_seq().is_none() {
            let new_ok = self.snd_nxt == self.snd_max
                && self.snd_max < self.snd_end
                && self.snd_max < self.snd_una + io.cfg.max_window as u64;
            if new_ok {
                let seq = self.snd_max;
                self.snd_max += 1;
                self.snd_nxt = self.snd_max;
                self.emit_data(seq, false, io);
            } else {
                self.emit_data(self.snd_max - 1, true, io);
            }
            self.rack.tlp_sent(self.snd_max, !new_ok);
            self.stats.tlp_probes += 1;
        }
        self.arm(io.now);
    }

    /// RFC 8985 6.2 step 5: the RACK timer fired: detect losses again; a loss starts fast
    /// recovery (or sends in it at the recovery rate).
    fn rack_timer(&mut self, io: &mut TcpIo) {
        self.rack.reo_deadline = None;
        if self.state != State::Established {
            return;
        }
        self.rack_detect(io);
        self.rack_respond(0, io);
    }

    /// RFC 8985 6.2 steps 4 and 5: the reordering window, then the loss marks and the timer.
    fn rack_detect(&mut self, io: &TcpIo) {
        let in_rec = self.sk.in_recovery || self.rack.rto_recovery;
        let srtt = self.rto.srtt().map(|s| (s * 1e9).round() as Time);
        self.rack.update_reo_wnd(in_rec, self.sk.board.sacked(), io.cfg.dupack_threshold, srtt);
        self.rack.detect_loss(io.now, self.snd_una, self.snd_max, &self.sk.board);
    }

    /// After loss detection: in recovery, send at the recovery rate (RFC 6675 (B), (C));
    /// otherwise a segment RACK deemed lost starts fast recovery (RFC 6675 (4) with RACK's
    /// marks in place of DupThresh), unless an RTO recovery is under way.
    fn rack_respond(&mut self, delivered: u64, io: &mut TcpIo) -> bool {
        if self.sk.in_recovery {
            self.sack_rate(delivered, io);
            return true;
        }
        if self.rack.lost_out() > 0
            && !self.rack.rto_recovery
            && self.sk.recovery_point.is_none_or(|r| self.snd_una >= r)
        {
            self.sack_enter(delivered, io);
            return true;
        }
        false
    }

    /// RFC 8985 6.2 steps 2 and 3 for the segments this ACK newly delivers, cumulatively
    /// or selectively, in ascending order.
    fn rack_delivered(&mut self, ack: u64, una: u64, opt: &SackOpt, now: Time) {
        for s in una..ack {
            if !self.sk.board.is_sacked(s) {
                self.rack.on_delivered(s, now);
            }
        }
        let floor = una.max(ack);
        let mut r = [(0u64, 0u64); 4];
        let mut n = 0;
        for &(off, len) in &opt.blocks[..opt.n as usize] {
            let lo = (ack as i64 + off as i64).max(floor as i64) as u64;
            let hi = (ack as i64 + off as i64 + len as i64).clamp(0, self.snd_max as i64) as u64;
            if hi > lo {
                r[n] = (lo, hi);
                n += 1;
            }
        }
        r[..n].sort_unstable();
        let mut done = floor;
        for &(lo, hi) in &r[..n] {
            for s in lo.max(done)..hi {
                if !self.sk.board.is_sacked(s) {
                    self.rack.on_delivered(s, now);
                }
            }
            done = done.max(hi);
        }
    }

    /// An ACK with RACK-TLP on: RFC 8985 6.2 (steps 1-5) and 7.4 over RFC 6675's
    /// scoreboard and recovery (PRR or RFC 6675's rate), RFC 6298's timer and RFC 3168's
    /// ECN response as without RACK.
    fn rack_on_ack(&mut self, ack: u64, ece: bool, pure: bool, opt: &SackOpt, io: &mut TcpIo) {
        let una = self.snd_una;
        let now = io.now;
        let before = self.sk.board.sacked();
        let rtt_s = if ack > una { self.rtt.on_new_ack(ack, una, now) } else { None };
        if let Some(r) = rtt_s {
            self.rto.sample_at(r, now);
            self.rack.on_rtt_sample((r * 1e9).round() as Time, now); // 6.2 step 1
        }
        self.rack_delivered(ack, una, opt, now); // steps 2 and 3
        self.sk.board.update(opt, ack, una, self.snd_max);
        let dsack = sack::dsack_end(opt, ack);
        // 7.4.2: a probe that repaired a loss gets the congestion control's response.
        if self.rack.tlp_process_ack(ack, dsack, pure && ack == una && opt.n == 0) == TlpAck::RepairedLoss {
            let flight = self.flight();
            self.cc.on_loss_repaired(&mut self.win, flight);
        }
        let mut delivered = self.sk.board.sacked().saturating_sub(before);
        if ack > una {
            let reduced;
            (delivered, reduced) = self.sack_advance(ack, una, before, rtt_s, ece, io);
            let point = self.sk.recovery_point.unwrap_or(0);
            if self.sk.in_recovery {
                if ack >= point {
                    // RFC 6675 (A) / RFC 6937: recovery ends, cwnd = ssthresh.
                    self.sk.in_recovery = false;
                    self.cc.on_full_ack(&mut self.win);
                    self.rack.on_recovery_exit();
                }
            } else if !reduced {
                self.cc.on_ack(&mut self.win, ack - una, io.cfg.abc_limit, io.cfg.max_window);
            }
            if self.rack.rto_recovery && ack >= point {
                self.rack.rto_recovery = false;
                self.rack.on_recovery_exit();
            }
            self.rearm_after_new_ack(io);
        }
        self.rack.on_ack_dsack(dsack.is_some(), self.snd_una, self.snd_max); // step 4
        self.rack_detect(io); // steps 4 and 5
        if (ack > una || pure) && self.rack_respond(delivered, io) {
            return;
        }
        if ack == una && pure && self.snd_max > una && io.cfg.limited_transmit && !self.rack.rto_recovery {
            // RFC 6675 section 5 (3): limited transmit governed by cwnd - pipe.
            self.sk.pipe = self.set_pipe(io.cfg);
            self.limited_transmit_sends(io);
        }
    }

    /// NextSeg with RACK's marks: rule (1) the first segment deemed lost, else rule (2) new
    /// data; RACK-TLP has no rule (3) or rescue (4): the probe covers the tail (Linux does
    /// the same). Returns whether a segment was sent.
    fn rack_next_seg(&mut self, io: &mut TcpIo) -> bool {
        let una = self.snd_una;
        if let Some(s) = self.rack.first_lost(una, self.snd_max) {
            self.emit_data(s, true, io);
            return true;
        }
        if self.snd_max < self.snd_end && self.snd_max < una + io.cfg.max_window as u64 {
            let seq = self.snd_max;
            self.snd_max += 1;
            self.snd_nxt = self.snd_max;
            self.emit_data(seq, false, io);
            return true;
        }
        false
    }

    /// RFC 8985 6.3: the RTO fired with RACK on: mark SND.UNA and what was sent more than
    /// RACK.rtt + reo_wnd ago lost (not go-back-N), retransmit SND.UNA at once (RFC 5681
    /// 3.1 / RFC 6298 (5.4): the earliest segment not acknowledged), then whatever the
    /// loss window allows. The other marks come from RACK as ACKs return (6.2 in RTO
    /// recovery), as in Linux's loss state.
    fn rack_on_rto(&mut self, io: &mut TcpIo) {
        let srtt = self.rto.srtt().map(|s| (s * 1e9).round() as Time);
        self.rack.on_rto(io.now, self.snd_una, self.snd_max, &self.sk.board, srtt);
        self.snd_nxt = self.snd_max;
        self.emit_data(self.snd_una, true, io);
        self.rack_rto_send(io);
    }

    /// RFC 8985 6.3's RTO recovery: send while pipe < cwnd (RFC 6675's rule, pipe from
    /// RACK's marks), each time the first segment deemed lost, else new data (NextSeg
    /// rules 1 and 2 with RACK's marks). Segments in flight and not deemed lost are not
    /// retransmitted.
    fn rack_rto_send(&mut self, io: &mut TcpIo) {
        let cwnd = (self.win.cwnd.floor() as u64).max(1);
        let mut pipe = self.set_pipe(io.cfg);
        while pipe < cwnd && self.pace_ok(io) && self.rack_next_seg(io) {
            pipe += 1;
        }
    }

    /// RFC 6675's pipe: the scoreboard's SetPipe, or with RACK the flags' count.
    fn set_pipe(&self, cfg: &TcpConfig) -> u64 {
        if cfg.rack {
            self.rack.pipe(self.flight(), self.sk.board.sacked())
        } else {
            self.sk.board.pipe(self.snd_una, self.snd_max, self.sk.rxt_next, cfg.dupack_threshold)
        }
    }

    /// The ACK's context for the congestion control (CUBIC's clock and RTT, HyStart++'s
    /// rounds, DCTCP's marked fraction), on every path, after snd_una moved to `ack` with
    /// `acked` packets newly acknowledged; built only for one that reads it.
    #[inline]
    fn cc_ack_info(&mut self, ack: u64, acked: u64, rtt_s: Option<f64>, ece: bool, io: &TcpIo) {
        if !self.cc.takes_ack_info() {
            return;
        }
        let info =
            AckInfo { now: io.now, acked, snd_una: ack, snd_max: self.snd_max, rtt_s, srtt_s: self.rto.srtt(), ece };
        self.cc.on_ack_info(&mut self.win, &info);
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

    /// A sender and a data receiver without handshake for the send-time ring tests: initial
    /// window 1, window up to 200 segments, a 100 ms round trip, `segs` segments to send.
    fn ring_pair(segs: u64) -> (TcpConfig, Time, TcpEndpoint, TcpEndpoint) {
        let cfg =
            TcpConfig { handshake: false, init_cwnd: 1, max_window: 200, init_ssthresh: 1e9, ..TcpConfig::default() };
        let snd = TcpEndpoint::new(0, 0, 0, 1, 0, &cfg, segs, 0);
        let mut rcv = TcpEndpoint::new(0, 1, 1, 0, 0, &cfg, 0, segs);
        rcv.accept_without_handshake(&cfg);
        (cfg, 100_000_000, snd, rcv)
    }

    /// Every-ACK RTT sampling keeps the send time of each segment in flight while its ring
    /// grows from nothing to the largest flight: over a lossless pipe with a fixed round
    /// trip, every sample (hence the smoothed RTT) is exactly that round trip. A time lost
    /// or overwritten in a regrowth would give a sample off by at least one round. The data
    /// receiver keeps no send times.
    #[test]
    fn send_time_ring_keeps_every_time_while_the_flight_grows() {
        let (cfg, rtt, mut snd, mut rcv) = ring_pair(5000);
        let flight = transfer(&mut snd, &mut rcv, &cfg, rtt, 5000);
        assert!(flight >= 150, "the flight grew to {flight} only");
        assert!(snd.send_time_ring().0 as u64 >= flight);
        assert_eq!(rcv.send_time_ring().1, 0, "a data receiver keeps no send times");
    }

    /// A reused endpoint keeps a small send-time ring (no allocation for the next short
    /// flow) but frees a large one: otherwise every endpoint slot would hold the ring of the
    /// largest flight it ever carried, and memory would grow with the run's history at a
    /// constant number of open flows. The regrown ring still times every segment.
    #[test]
    fn a_reused_endpoint_keeps_a_small_send_time_ring_and_frees_a_large_one() {
        use super::super::rtt::KEPT_RING;
        let (cfg, rtt, mut snd, mut rcv) = ring_pair(10);
        transfer(&mut snd, &mut rcv, &cfg, rtt, 10);
        let small = snd.send_time_ring().1;
        assert!(small > 0 && small <= KEPT_RING, "small ring {small}");

        // Reused for a long transfer: the small ring is regrown in place.
        let kept = snd.send_time_ring();
        snd.reset(1, 0, 0, 1, 0, &cfg, 5000, 0);
        rcv.reset(1, 1, 1, 0, 0, &cfg, 0, 5000);
        assert_eq!(snd.send_time_ring(), (0, kept.1), "the small ring's memory was not kept");
        rcv.accept_without_handshake(&cfg);
        let flight = transfer(&mut snd, &mut rcv, &cfg, rtt, 5000);
        assert!(flight as usize > KEPT_RING && snd.send_time_ring().1 > KEPT_RING, "flight {flight}");

        // Reused again: the large ring is freed; a short flow grows a small one.
        snd.reset(2, 0, 0, 1, 0, &cfg, 10, 0);
        rcv.reset(2, 1, 1, 0, 0, &cfg, 0, 10);
        assert_eq!(snd.send_time_ring(), (0, 0), "a reused endpoint kept a large ring");
        rcv.accept_without_handshake(&cfg);
        transfer(&mut snd, &mut rcv, &cfg, rtt / 2, 10);
        assert!(snd.send_time_ring().1 <= KEPT_RING, "ring {:?}", snd.send_time_ring());
    }
}
