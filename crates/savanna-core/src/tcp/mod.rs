//! TCP, packet-granular as ns-2 models it and faithful to the RFCs where they speak:
//! three-way handshake (or ns-2's one-way TCP with `handshake = false`), RFC 6298 RTO with
//! Karn's rule, backoff and an initial timeout (ITO) for the SYN / first data packet,
//! RFC 5681 slow start, congestion avoidance, fast retransmit and fast recovery, RFC 6582
//! NewReno partial ACKs (Reno and Tahoe as variants), RFC 3168 ECN, optional delayed ACKs
//! (RFC 1122/5681), and a request/response mode for web-like transfers.
//!
//! Sequence numbers count packets (one MSS each), as in ns-2; every data packet has the
//! same wire size. `endpoint.rs` holds the connection state machine; `cc/` the window
//! arithmetic behind the `CongestionControl` trait (NewReno, Reno, Tahoe); `recovery.rs`
//! loss detection and fast recovery; `rtt.rs` and `rto.rs` RTT sampling and the RFC 6298
//! timer; `spec.rs` the scenario's `[tcp]` keys. docs/tcp.md gives the choices made where
//! the RFCs or the papers leave room.

pub mod cc;
pub mod endpoint;
pub mod harness;
pub mod profile;
pub mod prr;
pub mod rack;
pub mod recovery;
pub mod rto;
pub mod rtt;
pub mod sack;
pub mod spec;

pub use endpoint::{TcpEndpoint, TcpIo, TcpNotice};

/// Congestion-control variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    NewReno,
    Reno,
    Tahoe,
    /// CUBIC (RFC 9438), with HyStart++ (RFC 9406) or Linux's HyStart for the initial
    /// slow start, or neither.
    Cubic {
        hystart: bool,
        hystart_rule: cc::hystart::Rule,
    },
    /// DCTCP (RFC 8257): needs ECN; its receiver echoes CE exactly.
    Dctcp,
    /// pFabric's minimal rate control (Alizadeh et al. 2013, 4.2).
    Pfabric,
}

impl Variant {
    /// The name a scenario gives it (`cc` / `variant` in `[tcp]`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::NewReno => "newreno",
            Variant::Reno => "reno",
            Variant::Tahoe => "tahoe",
            Variant::Cubic { .. } => "cubic",
            Variant::Dctcp => "dctcp",
            Variant::Pfabric => "pfabric",
        }
    }
    /// The receiver echoes each packet's CE state (RFC 8257 3.2) instead of RFC 3168's
    /// echo-until-CWR.
    pub fn exact_ce_echo(self) -> bool {
        self == Variant::Dctcp
    }
}

/// How RTT samples are taken (RFC 6298 allows both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSampling {
    /// Every ACK that advances snd_una and covers no retransmitted segment (Linux, ns-3).
    EveryAck,
    /// One timed segment per round trip (BSD, ns-2).
    OncePerRtt,
}

/// How fast a SACK sender sends during loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryRate {
    /// Proportional Rate Reduction (RFC 6937, with its slow-start reduction bound).
    Prr,
    /// RFC 6675 section 5: cwnd = ssthresh at entry, send while cwnd - pipe >= 1.
    Rfc6675,
}

/// What a loss-based congestion control (Reno, NewReno, Tahoe) halves for ssthresh at a
/// fast retransmit, a timeout or an ECN reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshBase {
    /// RFC 5681 eq. (4): FlightSize (snd_max - snd_una), which in fast recovery counts the
    /// new data the inflated window sent.
    Flight,
    /// ns-2.35 `TcpAgent::slowdown` (`CLOSE_SSTHRESH_HALF`): min(cwnd, window) without the
    /// fast-recovery inflation (ns-2 keeps it apart in `dupwnd_`), so a timeout in fast
    /// recovery halves the already halved window again.
    Cwnd,
}

/// The window NewReno leaves fast recovery with, on the ACK at or beyond `recover`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryExitCwnd {
    /// RFC 6582 3.2 step 4 (its second option): cwnd = ssthresh.
    Ssthresh,
    /// ns-2.35 `NewRenoTcpAgent::recv` (`exit_recovery_fix_ 0`): the window without the
    /// fast-recovery inflation, where partial ACKs left it. ns-2 keeps the inflation apart
    /// (`dupwnd_`); a partial ACK that acknowledges at least as many packets as it holds
    /// takes the rest out of `cwnd_` itself (`partialnewack`, at least 1), so the exit can
    /// land below ssthresh, and the window slow-starts back.
    Deflated,
}

/// The window NewReno enters fast recovery with, before the inflation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastRetransmitCwnd {
    /// RFC 5681 3.2 step 3: cwnd = ssthresh (+ the duplicates), whole packets.
    Ssthresh,
    /// ns-2.35 `TcpAgent::slowdown` with `precisionReduce_` (its default since 2006):
    /// cwnd_ = min(cwnd, window) / 2 as a real number (at least 1), ssthresh its integer part.
    Half,
}

/// Per-flow TCP settings (one per traffic block; endpoints refer to it by index).
#[derive(Clone, Debug)]
pub struct TcpConfig {
    pub variant: Variant,
    pub handshake: bool,
    /// A pure ACK completes the handshake (false: the first data packet carries it, ns-2).
    pub handshake_ack: bool,
    /// Initial retransmission timeout, seconds (SYN, or first data packet without handshake).
    pub ito_s: f64,
    pub min_rto_s: f64,
    pub max_rto_s: f64,
    /// Clock granularity G of RFC 6298 (ns-2's tcpTick).
    pub granularity_s: f64,
    /// Initial congestion window, packets.
    pub init_cwnd: u32,
    /// Maximum window (receiver window), packets.
    pub max_window: u32,
    /// Initial slow-start threshold, packets (defaults to the maximum window).
    pub init_ssthresh: f64,
    /// The window after a handshake whose SYN or SYN-ACK was retransmitted (RFC 5681 3.1:
    /// one segment); None keeps `init_cwnd` (ns-2 before `bugfix_ss_`).
    pub iw_after_syn_loss: Option<u32>,
    /// A SYN timeout halves ssthresh as a data timeout does (ns-2's `slowdown` on the SYN).
    pub syn_timeout_slowdown: bool,
    /// Data after a SYN timeout keep the SYN's RTO backoff until a sample (ns-2's `t_backoff_`).
    pub syn_backoff_kept: bool,
    /// What ssthresh halves at a congestion event (RFC 5681's FlightSize, or ns-2's cwnd).
    pub ssthresh_base: SsthreshBase,
    /// The ACK that ends fast recovery also grows cwnd (ns-2's `opencwnd` after the exit).
    pub recovery_exit_increase: bool,
    /// The window on leaving NewReno's fast recovery (RFC 6582's ssthresh, or ns-2's).
    pub recovery_exit_cwnd: RecoveryExitCwnd,
    /// The window entering NewReno's fast recovery (RFC 5681's ssthresh, or ns-2's half).
    pub fast_retransmit_cwnd: FastRetransmitCwnd,
    pub delayed_ack: bool,
    pub delack_timeout_s: f64,
    pub ecn: bool,
    /// With ECN on, data packets are sent ECT(1) (L4S, RFC 9331) instead of ECT(0).
    pub ect1: bool,
    pub dupack_threshold: u32,
    pub rtt_sampling: RttSampling,
    /// Restart the retransmission timer on a fast retransmit (Linux, ns-2: true) or keep it
    /// running as RFC 6298 (5.1) literally says (ns-3: false).
    pub restart_rto_on_fast_retransmit: bool,
    /// RFC 6582 section 4: re-arm the timer on every partial ACK ("Slow-but-Steady"), not
    /// only on the first ("Impatient").
    pub restart_rto_on_every_partial_ack: bool,
    /// Close connections with a FIN exchange: the data sender sends a FIN after its data,
    /// the peer answers with its own; both are retransmitted like data. Off by default (ns-2,
    /// and the papers, have no teardown); ns-3 and real stacks do it.
    pub teardown: bool,
    /// Limited transmit (RFC 3042): a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// SACK (RFC 2018) with RFC 6675 loss recovery.
    pub sack: bool,
    /// The receiver reports duplicate segments in a D-SACK block (RFC 2883).
    pub dsack: bool,
    /// Most SACK blocks per ACK (4 fill the 40-byte option space; 3 with timestamps).
    pub sack_blocks: u8,
    /// Sending rate in SACK recovery.
    pub recovery_rate: RecoveryRate,
    /// Fast recovery without SACK at PRR's rate (RFC 6937, DeliveredData estimated from
    /// duplicate ACKs) instead of RFC 6582's window inflation.
    pub nosack_prr: bool,
    /// RACK-TLP (RFC 8985) loss detection and tail loss probes (needs `sack`).
    pub rack: bool,
    /// Pacing at Linux's rate (cwnd / srtt times 2 in slow start, 1.2 after).
    pub pacing: bool,
    /// Paced packets leave in bursts of at least this many (Linux's tcp_min_tso_segs, 2);
    /// 1 paces single packets.
    pub pacing_burst: u32,
    /// The burst also grows with the rate as Linux's `tcp_tso_autosize` sizes it (about
    /// 1 ms of data, more at small min RTTs, at most 64 KB).
    pub pacing_autosize: bool,
    /// Slow start counts at most this many newly acknowledged packets per ACK: 1 is RFC
    /// 5681's one packet per ACK, 2 RFC 3465's L, u32::MAX Linux's `tcp_slow_start`.
    pub abc_limit: u32,
    /// ns-2's tcpTick: RTT samples and the RTO in whole ticks (0: off, continuous time).
    pub tick_s: f64,
    /// Wire size of a data packet, bytes (headers included).
    pub pkt_bytes: u32,
    /// Header bytes: the size of SYN, SYN-ACK and pure ACK packets.
    pub hdr_bytes: u32,
    /// Wire size of the request in request/response mode.
    pub request_bytes: u32,
}

impl TcpConfig {
    pub fn mss(&self) -> u32 {
        self.pkt_bytes - self.hdr_bytes
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            variant: Variant::NewReno,
            handshake: true,
            handshake_ack: true,
            ito_s: 3.0,
            min_rto_s: 0.2,
            max_rto_s: 60.0,
            granularity_s: 0.001,
            init_cwnd: 2,
            max_window: 128,
            init_ssthresh: 128.0,
            iw_after_syn_loss: None,
            syn_timeout_slowdown: false,
            syn_backoff_kept: false,
            ssthresh_base: SsthreshBase::Flight,
            recovery_exit_increase: false,
            recovery_exit_cwnd: RecoveryExitCwnd::Ssthresh,
            fast_retransmit_cwnd: FastRetransmitCwnd::Ssthresh,
            delayed_ack: false,
            delack_timeout_s: 0.2,
            ecn: false,
            ect1: false,
            dupack_threshold: 3,
            rtt_sampling: RttSampling::EveryAck,
            restart_rto_on_fast_retransmit: true,
            restart_rto_on_every_partial_ack: false,
            teardown: false,
            limited_transmit: false,
            sack: false,
            dsack: false,
            sack_blocks: 4,
            recovery_rate: RecoveryRate::Prr,
            nosack_prr: false,
            rack: false,
            pacing: false,
            pacing_burst: 1,
            pacing_autosize: false,
            abc_limit: 1,
            tick_s: 0.0,
            pkt_bytes: 1500,
            hdr_bytes: 40,
            request_bytes: 300,
        }
    }
}

/// Per-endpoint counters, summed into the flow record.
#[derive(Clone, Debug, Default)]
pub struct TcpStats {
    pub data_pkts_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_marks: u64,
    pub delivered: u64,
    pub syn_sent: u64,
    /// Tail loss probes sent (RFC 8985 7.3).
    pub tlp_probes: u64,
}
