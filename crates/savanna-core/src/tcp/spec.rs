//! The `[tcp]` section of a scenario (and a traffic block's `tcp` override): its keys with
//! their defaults and sources, their validation (errors name the field) and the
//! construction of a `TcpConfig`. `scenario` only merges the tables and calls `build`.

use serde::Deserialize;

use super::cc::hystart::Rule as HyStartRule;
use super::{
    profile, FastRetransmitCwnd, RecoveryExitCwnd, RecoveryRate, RttSampling, SsthreshBase, TcpConfig, Variant,
};
use crate::spec::{bad, non_negative, positive, time0_s, time_s};
use crate::{Error, Result};

fn t() -> bool {
    true
}
fn d_ito() -> f64 {
    3.0
}
fn d_minrto() -> f64 {
    0.2
}
fn d_maxrto() -> f64 {
    60.0
}
fn d_gran() -> f64 {
    0.001
}
fn d_iw() -> u32 {
    2
}
fn d_maxwin() -> u32 {
    128
}
fn d_delack() -> f64 {
    0.2
}
fn d_dupthresh() -> u32 {
    3
}
fn d_req() -> u32 {
    300
}
fn d_sack_blocks() -> u8 {
    4
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    #[serde(default)]
    pub variant: VariantSpec,
    /// Congestion control: "newreno" | "reno" | "tahoe" (as `variant`), "cubic" (RFC 9438)
    /// or "dctcp" (RFC 8257, turns `ecn` on), or "pfabric" (pFabric's rate control: the
    /// timeout is fixed at min_rto_s, initial ssthresh = init_cwnd, no fast retransmit).
    /// Overrides `variant`; give one of the two.
    #[serde(default)]
    pub cc: Option<CcSpec>,
    /// HyStart++ (RFC 9406) for CUBIC's initial slow start; default on with cubic, as
    /// Linux's cubic runs HyStart by default. Only with cc = "cubic".
    #[serde(default)]
    pub hystart: Option<bool>,
    /// Which HyStart: "rfc9406" (HyStart++, the default) or "linux" (Linux's delay test,
    /// tcp_cubic.c: slow start ends once a round's minimum RTT exceeds the connection's
    /// minimum by clamp(min / 8, 4, 16 ms), from cwnd 16). Only with cc = "cubic".
    #[serde(default)]
    pub hystart_rule: Option<HyStartRuleSpec>,
    /// false mimics ns-2's one-way TCP: no SYN, the first data packet carries the ITO.
    #[serde(default = "t")]
    pub handshake: bool,
    /// The client's pure ACK completing the handshake (RFC 793, as Linux sends it); false:
    /// the first data packet carries it, as ns-2's one-way TCP with `syn_` sends no third
    /// packet. Only with `handshake`.
    #[serde(default = "t")]
    pub handshake_ack: bool,
    /// Initial retransmission timeout, s (RFC 6298: 1 s; the papers: 3 s).
    #[serde(default = "d_ito")]
    pub ito_s: f64,
    #[serde(default = "d_minrto")]
    pub min_rto_s: f64,
    #[serde(default = "d_maxrto")]
    pub max_rto_s: f64,
    /// Timer granularity G (ns-2 tcpTick: 0.1 s in Guo & Matta, 0.5 s in Matta & Guo).
    #[serde(default = "d_gran")]
    pub granularity_s: f64,
    #[serde(default = "d_iw")]
    pub init_cwnd: u32,
    #[serde(default = "d_maxwin")]
    pub max_window: u32,
    /// Initial ssthresh, packets; defaults to max_window.
    #[serde(default)]
    pub init_ssthresh: Option<f64>,
    /// The initial window, packets, after a handshake whose SYN or SYN-ACK was
    /// retransmitted (RFC 5681 section 3.1: 1); unset keeps `init_cwnd`, as ns-2 before
    /// `bugfix_ss_` (2006) and Savanna before this key did. No effect without `handshake`.
    #[serde(default)]
    pub iw_after_syn_loss: Option<u32>,
    /// A SYN's timeout sets ssthresh as a data timeout does (ns-2's `TcpAgent::timeout`
    /// calls `slowdown` for the SYN too): max(min(cwnd, max_window) / 2, 2), cwnd being
    /// `init_cwnd` at the first SYN timeout and 1 after it. Default false: ssthresh keeps
    /// its initial value. No effect without `handshake`.
    #[serde(default)]
    pub syn_timeout_slowdown: bool,
    /// After a SYN timeout the first data keep the SYN's timer backoff until an RTT sample
    /// (ns-2.35: `t_backoff_` is reset only by a sample, so the RTO is the ITO doubled);
    /// default false, RFC 6298 (5.7): the RTO restarts from the ITO. No effect without
    /// `handshake`.
    #[serde(default)]
    pub syn_backoff_kept: bool,
    /// What ssthresh halves at a fast retransmit, a timeout or an ECN reduction (Reno,
    /// NewReno, Tahoe): "flight" (RFC 5681 eq. 4, FlightSize / 2) or "cwnd" (ns-2.35's
    /// `TcpAgent::slowdown`: min(cwnd without inflation, max_window) / 2).
    #[serde(default)]
    pub ssthresh_base: SsthreshBaseSpec,
    /// The ACK that ends fast recovery also grows cwnd as any new ACK does (ns-2's
    /// `recv_newack_helper` calls `opencwnd` after the deflation); default false, RFC 6582
    /// 3.2 step 4: cwnd = ssthresh and nothing more.
    #[serde(default)]
    pub recovery_exit_increase: bool,
    /// The window NewReno leaves fast recovery with: "ssthresh" (default, RFC 6582 3.2 step
    /// 4) or "deflated" (ns-2.35's `NewRenoTcpAgent::recv`: the window without the
    /// inflation, where partial ACKs deflated it, possibly below ssthresh). NewReno
    /// without SACK and without PRR only.
    #[serde(default)]
    pub recovery_exit_cwnd: RecoveryExitCwndSpec,
    /// The window NewReno enters fast recovery with, before the inflation: "ssthresh"
    /// (default, RFC 5681 3.2 step 3) or "half" (ns-2.35's `precisionReduce_`: min(cwnd,
    /// max_window) / 2 as a real number). Needs ssthresh_base = "cwnd" and
    /// recovery_exit_cwnd = "deflated" (the window it sets lasts until the exit).
    #[serde(default)]
    pub fast_retransmit_cwnd: FastRetransmitCwndSpec,
    #[serde(default)]
    pub delayed_ack: bool,
    #[serde(default = "d_delack")]
    pub delack_timeout_s: f64,
    #[serde(default)]
    pub ecn: bool,
    /// Send data packets ECT(1), the L4S identifier (RFC 9331), instead of ECT(0); an L4S
    /// queue (`dualpi2`) classifies them into its low-latency queue. Needs ECN (`ecn` or
    /// cc = "dctcp"). Default off.
    #[serde(default)]
    pub ect1: bool,
    #[serde(default = "d_dupthresh")]
    pub dupack_threshold: u32,
    #[serde(default)]
    pub rtt_sampling: RttSamplingSpec,
    /// Restart the retransmission timer on a fast retransmit, as Linux and ns-2 do (true);
    /// false keeps it running, as RFC 6298 (5.1) literally says and ns-3 does.
    #[serde(default = "t")]
    pub restart_rto_on_fast_retransmit: bool,
    /// Close each connection with a FIN exchange (as real stacks and ns-3 do); off by
    /// default, as in ns-2 and the papers.
    #[serde(default)]
    pub teardown: bool,
    /// Wire size of the request in request/response mode, bytes.
    #[serde(default = "d_req")]
    pub request_bytes: u32,
    /// A named set of defaults (`profile.rs`): "ns2-2001", "rfc" or "linux"; the keys a
    /// scenario sets itself override it.
    #[serde(default)]
    pub profile: Option<String>,
    /// Limited transmit (RFC 3042); off as in ns-2 before 2.1b9 (`singledup_` 0).
    #[serde(default)]
    pub limited_transmit: bool,
    /// SACK (RFC 2018) with RFC 6675 loss recovery.
    #[serde(default)]
    pub sack: bool,
    /// D-SACK reports by the receiver (RFC 2883); needs `sack`.
    #[serde(default)]
    pub dsack: bool,
    /// Most SACK blocks per ACK: 4 fill the 40-byte option space, 3 leave room for
    /// timestamps.
    #[serde(default = "d_sack_blocks")]
    pub sack_blocks: u8,
    /// Sending rate in SACK recovery: "prr" (RFC 6937) or "rfc6675".
    #[serde(default)]
    pub recovery_rate: RecoveryRateSpec,
    /// Sending rate in fast recovery without SACK: "inflation" (RFC 6582's window
    /// inflation, the default) or "prr" (RFC 6937 with its duplicate-ACK estimate of
    /// DeliveredData, as Linux recovers without SACK); needs `sack = false`.
    #[serde(default)]
    pub nosack_recovery_rate: NosackRateSpec,
    /// ns-2's tcpTick: RTT samples and the RTO in whole ticks (0: off).
    #[serde(default)]
    pub tick_s: f64,
    /// RACK-TLP (RFC 8985): time-based loss detection and tail loss probes; needs `sack`.
    #[serde(default)]
    pub rack: bool,
    /// When fast recovery re-arms the retransmission timer on a partial ACK (RFC 6582
    /// section 4): "first" (Impatient, RFC 6582's recommendation and ns-2's
    /// `newreno_changes1_ 1`) or "every" (Slow-but-Steady, as Linux re-arms on every ACK of
    /// new data).
    #[serde(default)]
    pub partial_ack_timer: PartialAckTimerSpec,
    /// Pacing at Linux's rate (tcp_update_pacing_rate): cwnd / srtt times 2 below half
    /// ssthresh, 1.2 above; off as in ns-2 and the papers.
    #[serde(default)]
    pub pacing: bool,
    /// Paced packets leave in bursts of at least this many packets (Linux's
    /// tcp_min_tso_segs, 2: its TSO/GSO chunks); default 1, single packets. No effect without `pacing` (so a
    /// linux-profile block may turn pacing off alone).
    #[serde(default = "d_burst")]
    pub pacing_burst: u32,
    /// The burst also grows with the pacing rate as Linux's `tcp_tso_autosize` sizes its
    /// chunks (2^-10 s of data at the rate, plus 64 KB >> (min RTT / 512 us), at most 64
    /// KB). Default off; no effect without `pacing`.
    #[serde(default)]
    pub pacing_autosize: bool,
    /// What slow start adds per ACK of new data: "per_ack" (default: one packet, RFC 5681
    /// 3.1's min(N, SMSS), as ns-2 and ns-3) or "acked" (the packets the ACK newly
    /// acknowledges: RFC 3465 Appropriate Byte Counting, with `abc_limit`; Linux's
    /// `tcp_slow_start` counts them all).
    #[serde(default)]
    pub slow_start_increase: SlowStartIncreaseSpec,
    /// RFC 3465 2.2's L with slow_start_increase = "acked": at most L packets counted per
    /// ACK (the RFC recommends 2); unset: no limit, as Linux.
    #[serde(default)]
    pub abc_limit: Option<u32>,
}

fn d_burst() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum HyStartRuleSpec {
    Rfc9406,
    Linux,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SlowStartIncreaseSpec {
    #[default]
    PerAck,
    Acked,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckTimerSpec {
    #[default]
    First,
    Every,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FastRetransmitCwndSpec {
    #[default]
    Ssthresh,
    Half,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryExitCwndSpec {
    #[default]
    Ssthresh,
    Deflated,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshBaseSpec {
    #[default]
    Flight,
    Cwnd,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryRateSpec {
    #[default]
    Prr,
    Rfc6675,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NosackRateSpec {
    #[default]
    Inflation,
    Prr,
}

impl Default for TcpSpec {
    fn default() -> Self {
        toml::from_str("").expect("defaults")
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum VariantSpec {
    #[default]
    Newreno,
    Reno,
    Tahoe,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcSpec {
    Newreno,
    Reno,
    Tahoe,
    Cubic,
    Dctcp,
    Pfabric,
}

#[derive(Clone, Copy, Debug, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RttSamplingSpec {
    #[default]
    EveryAck,
    OncePerRtt,
}

/// The TCP configuration of `field` (`tcp`, or `traffic[i].tcp`): the keys of `base` (the
/// scenario's `[tcp]`) overridden by those of `over`, checked and built. `packet_bytes` and
/// `header_bytes` are the scenario's packet sizes.
pub fn build(
    field: &str,
    base: &toml::Table,
    over: &toml::Table,
    packet_bytes: u32,
    header_bytes: u32,
) -> Result<TcpConfig> {
    let mut t = base.clone();
    // `cc` and `variant` name the same thing: the override's choice replaces the base's.
    for (k, other) in [("cc", "variant"), ("variant", "cc")] {
        if over.contains_key(k) && !over.contains_key(other) {
            t.remove(other);
        }
    }
    for (k, v) in over {
        t.insert(k.clone(), v.clone());
    }
    if t.contains_key("cc") && t.contains_key("variant") {
        return bad(format!("{field}.cc"), "give either `cc` or `variant`, not both");
    }
    // The user's choice of `cc` or `variant` stands over the profile's.
    let chose = ["cc", "variant"].into_iter().find(|k| t.contains_key(*k));
    profile::apply(&mut t).map_err(|m| Error::input(format!("{field}.profile"), m))?;
    if let Some(k) = chose {
        t.remove(if k == "cc" { "variant" } else { "cc" });
    }
    let spec: TcpSpec = serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
        let p = e.path().to_string();
        let path = if p == "." { field.to_string() } else { format!("{field}.{p}") };
        Error::input(path, e.into_inner().message().to_string())
    })?;
    spec.check(field, packet_bytes, header_bytes)?;
    Ok(spec.config(packet_bytes, header_bytes))
}

impl TcpSpec {
    /// Every bound, with an error naming the field (`field.key`).
    pub fn check(&self, field: &str, packet_bytes: u32, header_bytes: u32) -> Result<()> {
        time_s(&format!("{field}.ito_s"), self.ito_s)?;
        time0_s(&format!("{field}.min_rto_s"), self.min_rto_s)?;
        time_s(&format!("{field}.max_rto_s"), self.max_rto_s)?;
        if self.max_rto_s < self.min_rto_s {
            return bad(
                format!("{field}.max_rto_s"),
                format!("must be >= min_rto_s ({}), got {}", self.min_rto_s, self.max_rto_s),
            );
        }
        time0_s(&format!("{field}.granularity_s"), self.granularity_s)?;
        if self.init_cwnd == 0 {
            return bad(format!("{field}.init_cwnd"), "must be at least 1 packet");
        }
        if self.max_window == 0 || self.max_window > 1 << 20 {
            return bad(
                format!("{field}.max_window"),
                format!("must be between 1 and {} packets, got {}", 1 << 20, self.max_window),
            );
        }
        if self.dupack_threshold == 0 {
            return bad(format!("{field}.dupack_threshold"), "must be at least 1");
        }
        time_s(&format!("{field}.delack_timeout_s"), self.delack_timeout_s)?;
        if self.hystart.is_some() && self.cc != Some(CcSpec::Cubic) {
            return bad(format!("{field}.hystart"), "applies to cc = \"cubic\" only");
        }
        if self.hystart_rule.is_some() && self.cc != Some(CcSpec::Cubic) {
            return bad(format!("{field}.hystart_rule"), "applies to cc = \"cubic\" only");
        }
        if let Some(s) = self.init_ssthresh {
            positive(&format!("{field}.init_ssthresh"), s)?;
        }
        if let Some(iw) = self.iw_after_syn_loss {
            if iw == 0 {
                return bad(format!("{field}.iw_after_syn_loss"), "must be at least 1 packet");
            }
        }
        non_negative(&format!("{field}.tick_s"), self.tick_s)?;
        if self.sack && self.variant == VariantSpec::Tahoe {
            return bad(format!("{field}.sack"), "SACK recovery (RFC 6675) needs variant newreno or reno, not tahoe");
        }
        if self.sack && self.max_window > i16::MAX as u32 {
            return bad(
                format!("{field}.max_window"),
                format!("must be at most {} packets with sack, got {}", i16::MAX, self.max_window),
            );
        }
        if self.ect1 && !(self.ecn || self.cc == Some(CcSpec::Dctcp)) {
            return bad(format!("{field}.ect1"), "needs ECN: set ecn = true or cc = \"dctcp\"");
        }
        if self.cc == Some(CcSpec::Pfabric) {
            positive(&format!("{field}.min_rto_s"), self.min_rto_s)?;
            // pFabric's rate control has no fast retransmission (section 4.2): nothing that
            // acts on duplicate ACKs may run beside it.
            if self.limited_transmit {
                return bad(format!("{field}.limited_transmit"), "cc = \"pfabric\" sends nothing on duplicate ACKs");
            }
            if self.rack {
                return bad(format!("{field}.rack"), "cc = \"pfabric\" detects loss by its timeout only");
            }
        }
        if self.dsack && !self.sack {
            return bad(format!("{field}.dsack"), "needs sack = true");
        }
        if self.rack && !self.sack {
            return bad(format!("{field}.rack"), "RACK-TLP (RFC 8985) needs sack = true");
        }
        if self.nosack_recovery_rate == NosackRateSpec::Prr {
            if self.sack {
                return bad(
                    format!("{field}.nosack_recovery_rate"),
                    "\"prr\" applies without SACK only (sack = false); with SACK the rate is recovery_rate",
                );
            }
            let partial = match self.cc {
                Some(c) => matches!(c, CcSpec::Newreno | CcSpec::Cubic | CcSpec::Dctcp),
                None => self.variant == VariantSpec::Newreno,
            };
            if !partial {
                return bad(
                    format!("{field}.nosack_recovery_rate"),
                    "\"prr\" needs a fast recovery with partial ACKs: cc newreno, cubic or dctcp \
                     (allowed values: \"inflation\", \"prr\")",
                );
            }
        }
        if self.recovery_exit_cwnd == RecoveryExitCwndSpec::Deflated {
            let newreno = match self.cc {
                Some(c) => c == CcSpec::Newreno,
                None => self.variant == VariantSpec::Newreno,
            };
            if !newreno || self.sack || self.nosack_recovery_rate == NosackRateSpec::Prr {
                return bad(
                    format!("{field}.recovery_exit_cwnd"),
                    "\"deflated\" is ns-2's NewReno fast recovery: it needs variant (or cc) newreno, sack = false \
                     and nosack_recovery_rate = \"inflation\" (allowed values: \"ssthresh\", \"deflated\")",
                );
            }
        }
        if self.fast_retransmit_cwnd == FastRetransmitCwndSpec::Half
            && (self.ssthresh_base != SsthreshBaseSpec::Cwnd
                || self.recovery_exit_cwnd != RecoveryExitCwndSpec::Deflated)
        {
            return bad(
                format!("{field}.fast_retransmit_cwnd"),
                "\"half\" is ns-2's precisionReduce_: it needs ssthresh_base = \"cwnd\" and \
                 recovery_exit_cwnd = \"deflated\" (allowed values: \"ssthresh\", \"half\")",
            );
        }
        if self.pacing_burst == 0 || self.pacing_burst > 64 {
            return bad(
                format!("{field}.pacing_burst"),
                format!("must be between 1 and 64 packets, got {}", self.pacing_burst),
            );
        }
        if let Some(l) = self.abc_limit {
            if self.slow_start_increase != SlowStartIncreaseSpec::Acked {
                return bad(format!("{field}.abc_limit"), "applies to slow_start_increase = \"acked\" only");
            }
            if l == 0 {
                return bad(format!("{field}.abc_limit"), "must be at least 1 packet");
            }
        }
        if !(1..=4).contains(&self.sack_blocks) {
            return bad(
                format!("{field}.sack_blocks"),
                format!("must be between 1 and 4 (40 option bytes), got {}", self.sack_blocks),
            );
        }
        if self.request_bytes < header_bytes + 1 || self.request_bytes > packet_bytes {
            return bad(
                format!("{field}.request_bytes"),
                format!(
                    "must be between header_bytes + 1 ({}) and packet_bytes ({}), got {}",
                    header_bytes + 1,
                    packet_bytes,
                    self.request_bytes
                ),
            );
        }
        Ok(())
    }

    /// The configuration the endpoints use (call `check` first).
    pub fn config(&self, packet_bytes: u32, header_bytes: u32) -> TcpConfig {
        let pf = self.cc == Some(CcSpec::Pfabric);
        TcpConfig {
            variant: match (self.cc, self.variant) {
                (None, VariantSpec::Newreno) | (Some(CcSpec::Newreno), _) => Variant::NewReno,
                (None, VariantSpec::Reno) | (Some(CcSpec::Reno), _) => Variant::Reno,
                (None, VariantSpec::Tahoe) | (Some(CcSpec::Tahoe), _) => Variant::Tahoe,
                (Some(CcSpec::Cubic), _) => Variant::Cubic {
                    hystart: self.hystart.unwrap_or(true),
                    hystart_rule: match self.hystart_rule {
                        None | Some(HyStartRuleSpec::Rfc9406) => HyStartRule::Rfc9406,
                        Some(HyStartRuleSpec::Linux) => HyStartRule::Linux,
                    },
                },
                (Some(CcSpec::Dctcp), _) => Variant::Dctcp,
                (Some(CcSpec::Pfabric), _) => Variant::Pfabric,
            },
            handshake: self.handshake,
            handshake_ack: self.handshake_ack,
            // pFabric (4.2): a small fixed timeout, min_rto_s, from the first packet on and
            // without back-off.
            ito_s: if pf { self.min_rto_s } else { self.ito_s },
            min_rto_s: self.min_rto_s,
            max_rto_s: if pf { self.min_rto_s } else { self.max_rto_s },
            granularity_s: self.granularity_s,
            init_cwnd: self.init_cwnd,
            max_window: self.max_window,
            // pFabric starts at line rate: no slow start from the initial window.
            init_ssthresh: self.init_ssthresh.unwrap_or(if pf { self.init_cwnd } else { self.max_window } as f64),
            iw_after_syn_loss: self.iw_after_syn_loss,
            syn_timeout_slowdown: self.syn_timeout_slowdown,
            syn_backoff_kept: self.syn_backoff_kept,
            ssthresh_base: match self.ssthresh_base {
                SsthreshBaseSpec::Flight => SsthreshBase::Flight,
                SsthreshBaseSpec::Cwnd => SsthreshBase::Cwnd,
            },
            recovery_exit_increase: self.recovery_exit_increase,
            recovery_exit_cwnd: match self.recovery_exit_cwnd {
                RecoveryExitCwndSpec::Ssthresh => RecoveryExitCwnd::Ssthresh,
                RecoveryExitCwndSpec::Deflated => RecoveryExitCwnd::Deflated,
            },
            fast_retransmit_cwnd: match self.fast_retransmit_cwnd {
                FastRetransmitCwndSpec::Ssthresh => FastRetransmitCwnd::Ssthresh,
                FastRetransmitCwndSpec::Half => FastRetransmitCwnd::Half,
            },
            delayed_ack: self.delayed_ack,
            delack_timeout_s: self.delack_timeout_s,
            // RFC 8257 needs ECN: DCTCP negotiates it (as Linux's dctcp module does).
            ecn: self.ecn || self.cc == Some(CcSpec::Dctcp),
            ect1: self.ect1,
            // pFabric: no fast retransmission, so no duplicate-ACK threshold is ever reached.
            dupack_threshold: if pf { u32::MAX } else { self.dupack_threshold },
            rtt_sampling: match self.rtt_sampling {
                RttSamplingSpec::EveryAck => RttSampling::EveryAck,
                RttSamplingSpec::OncePerRtt => RttSampling::OncePerRtt,
            },
            restart_rto_on_fast_retransmit: self.restart_rto_on_fast_retransmit,
            teardown: self.teardown,
            limited_transmit: self.limited_transmit,
            sack: self.sack,
            dsack: self.dsack,
            sack_blocks: self.sack_blocks,
            recovery_rate: match self.recovery_rate {
                RecoveryRateSpec::Prr => RecoveryRate::Prr,
                RecoveryRateSpec::Rfc6675 => RecoveryRate::Rfc6675,
            },
            nosack_prr: self.nosack_recovery_rate == NosackRateSpec::Prr,
            rack: self.rack,
            pacing: self.pacing,
            pacing_burst: self.pacing_burst,
            pacing_autosize: self.pacing_autosize,
            abc_limit: match self.slow_start_increase {
                SlowStartIncreaseSpec::PerAck => 1,
                SlowStartIncreaseSpec::Acked => self.abc_limit.unwrap_or(u32::MAX),
            },
            restart_rto_on_every_partial_ack: self.partial_ack_timer == PartialAckTimerSpec::Every,
            tick_s: self.tick_s,
            pkt_bytes: packet_bytes,
            hdr_bytes: header_bytes,
            request_bytes: self.request_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(s: &str) -> toml::Table {
        toml::from_str(s).unwrap()
    }

    #[test]
    fn defaults_are_the_papers_ns2_settings() {
        let c = build("tcp", &toml::Table::new(), &toml::Table::new(), 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::NewReno);
        assert_eq!((c.ito_s, c.min_rto_s, c.max_rto_s), (3.0, 0.2, 60.0));
        assert_eq!((c.init_cwnd, c.max_window, c.init_ssthresh), (2, 128, 128.0));
        assert_eq!(c.mss(), 1460);
    }

    #[test]
    fn override_replaces_the_base_key() {
        let c = build("traffic[0].tcp", &table("variant = 'reno'"), &table("variant = 'tahoe'"), 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::Tahoe);
    }

    #[test]
    fn cc_selects_the_congestion_control_and_variant_still_works() {
        let none = toml::Table::new();
        let c = build("tcp", &table("cc = 'cubic'"), &none, 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::Cubic { hystart: true, hystart_rule: HyStartRule::Rfc9406 });
        let c = build("tcp", &table("cc = 'cubic'\nhystart = false"), &none, 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::Cubic { hystart: false, hystart_rule: HyStartRule::Rfc9406 });
        let c = build("tcp", &table("cc = 'dctcp'"), &none, 1500, 40).unwrap();
        assert_eq!((c.variant, c.ecn), (Variant::Dctcp, true));
        let c = build("tcp", &table("variant = 'reno'"), &table("cc = 'cubic'"), 1500, 40).unwrap();
        assert_eq!(c.variant.name(), "cubic");
        let c = build("tcp", &table("cc = 'cubic'"), &table("variant = 'tahoe'"), 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::Tahoe);
        let e = build("tcp", &table("cc = 'cubic'\nvariant = 'reno'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.cc"), "{e}");
        let e = build("tcp", &table("hystart = true"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.hystart"), "{e}");
        let c = build("tcp", &table("cc = 'cubic'\nhystart_rule = 'linux'"), &none, 1500, 40).unwrap();
        assert_eq!(c.variant, Variant::Cubic { hystart: true, hystart_rule: HyStartRule::Linux });
        for other in ["cc = 'dctcp'", "variant = 'newreno'"] {
            let c = build("tcp", &table(&format!("profile = 'linux'\n{other}")), &none, 1500, 40).unwrap();
            assert_ne!(c.variant.name(), "cubic", "the profile's hystart_rule stays out with {other}");
        }
        let e = build("tcp", &table("hystart_rule = 'linux'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.hystart_rule"), "{e}");
        let e = build("tcp", &table("cc = 'cubic'\nhystart_rule = 'hystart'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("hystart_rule") && e.to_string().contains("linux"), "{e}");
        let e = build("tcp", &table("cc = 'bbr'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.cc"), "{e}");
    }

    #[test]
    fn nosack_recovery_rate_prr_needs_no_sack_and_partial_acks() {
        let none = toml::Table::new();
        let c = build("tcp", &table("nosack_recovery_rate = 'prr'"), &none, 1500, 40).unwrap();
        assert!(c.nosack_prr);
        assert!(!build("tcp", &none, &none, 1500, 40).unwrap().nosack_prr, "inflation by default");
        for bad in ["sack = true", "variant = 'reno'", "variant = 'tahoe'"] {
            let t = table(&format!("nosack_recovery_rate = 'prr'\n{bad}"));
            let e = build("tcp", &t, &none, 1500, 40).unwrap_err();
            assert!(e.to_string().contains("tcp.nosack_recovery_rate"), "{bad}: {e}");
        }
        let e = build("tcp", &table("nosack_recovery_rate = 'fast'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.nosack_recovery_rate") && e.to_string().contains("inflation"), "{e}");
    }

    #[test]
    fn errors_name_the_field() {
        let e = build("traffic[1].tcp", &toml::Table::new(), &table("init_cwnd = 0"), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("traffic[1].tcp.init_cwnd"), "{e}");
        let e = build("tcp", &table("max_rto_s = 0.1"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.max_rto_s"), "{e}");
        let e = build("tcp", &table("varient = 'reno'"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp"), "{e}");
        let e = build("tcp", &table("request_bytes = 40"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.request_bytes"), "{e}");
    }

    #[test]
    fn profile_sets_its_keys_and_explicit_keys_override() {
        let c = build("tcp", &table("profile = 'linux'"), &toml::Table::new(), 1500, 40).unwrap();
        assert!(c.sack && c.dsack && c.limited_transmit && c.delayed_ack);
        assert_eq!(c.recovery_rate, RecoveryRate::Prr);
        assert_eq!((c.init_cwnd, c.ito_s, c.min_rto_s), (10, 1.0, 0.2));
        // An explicit key wins, in the same table or in a traffic block's override.
        let c = build(
            "tcp",
            &table("profile = 'linux'\ninit_cwnd = 4"),
            &table("sack = false\ndsack = false\nrack = false"),
            1500,
            40,
        )
        .unwrap();
        assert_eq!(c.init_cwnd, 4);
        assert!(!c.sack);
        let c = build("traffic[0].tcp", &toml::Table::new(), &table("profile = 'ns2-2001'"), 1500, 40).unwrap();
        assert_eq!((c.tick_s, c.ito_s, c.min_rto_s, c.max_rto_s), (0.1, 6.0, 1.0, 64.0));
        assert!(!c.sack && !c.limited_transmit);
        assert_eq!(c.rtt_sampling, RttSampling::OncePerRtt);
        let c = build("tcp", &table("profile = 'rfc'"), &toml::Table::new(), 1500, 40).unwrap();
        assert!(c.sack && c.limited_transmit);
        assert_eq!((c.recovery_rate, c.init_cwnd, c.ito_s, c.min_rto_s), (RecoveryRate::Rfc6675, 3, 1.0, 1.0));
    }

    #[test]
    fn ssthresh_base_and_iw_after_syn_loss_default_profiles_and_errors() {
        let none = toml::Table::new();
        let c = build("tcp", &none, &none, 1500, 40).unwrap();
        assert_eq!((c.ssthresh_base, c.iw_after_syn_loss), (SsthreshBase::Flight, None));
        let c = build("tcp", &table("profile = 'ns2-2001'"), &none, 1500, 40).unwrap();
        assert_eq!((c.ssthresh_base, c.iw_after_syn_loss), (SsthreshBase::Cwnd, None));
        let c = build("tcp", &table("profile = 'rfc'"), &none, 1500, 40).unwrap();
        assert_eq!((c.ssthresh_base, c.iw_after_syn_loss), (SsthreshBase::Flight, Some(1)));
        let c = build("tcp", &table("ssthresh_base = 'cwnd'\niw_after_syn_loss = 2"), &none, 1500, 40).unwrap();
        assert_eq!((c.ssthresh_base, c.iw_after_syn_loss), (SsthreshBase::Cwnd, Some(2)));
        let e = build("traffic[1].tcp", &none, &table("iw_after_syn_loss = 0"), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("traffic[1].tcp.iw_after_syn_loss"), "{e}");
        assert!(!build("tcp", &none, &none, 1500, 40).unwrap().recovery_exit_increase, "RFC 6582 by default");
        assert!(build("tcp", &table("recovery_exit_increase = true"), &none, 1500, 40).unwrap().recovery_exit_increase);
        let e = build("tcp", &table("recovery_exit_increase = 1"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("recovery_exit_increase"), "{e}");
    }

    #[test]
    fn syn_timeout_slowdown_is_off_by_default_and_in_no_profile() {
        let none = toml::Table::new();
        for t in ["", "profile = 'ns2-2001'", "profile = 'rfc'", "profile = 'linux'"] {
            assert!(!build("tcp", &table(t), &none, 1500, 40).unwrap().syn_timeout_slowdown, "{t}");
        }
        assert!(build("tcp", &table("syn_timeout_slowdown = true"), &none, 1500, 40).unwrap().syn_timeout_slowdown);
        let e = build("traffic[0].tcp", &none, &table("syn_timeout_slowdown = 'yes'"), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("syn_timeout_slowdown"), "{e}");
        assert!(!build("tcp", &none, &none, 1500, 40).unwrap().syn_backoff_kept, "RFC 6298 (5.7) by default");
        let e = build("tcp", &table("syn_backoff_kept = 2"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("syn_backoff_kept"), "{e}");
    }

    #[test]
    fn recovery_exit_cwnd_deflated_needs_newreno_without_sack_or_prr() {
        let none = toml::Table::new();
        let c = build("tcp", &none, &none, 1500, 40).unwrap();
        assert_eq!(c.recovery_exit_cwnd, RecoveryExitCwnd::Ssthresh, "RFC 6582 by default");
        let c = build("tcp", &table("recovery_exit_cwnd = \"deflated\""), &none, 1500, 40).unwrap();
        assert_eq!(c.recovery_exit_cwnd, RecoveryExitCwnd::Deflated);
        for bad_combo in [
            "recovery_exit_cwnd = \"deflated\"\nvariant = \"reno\"",
            "recovery_exit_cwnd = \"deflated\"\ncc = \"cubic\"",
            "recovery_exit_cwnd = \"deflated\"\nsack = true",
            "recovery_exit_cwnd = \"deflated\"\nnosack_recovery_rate = \"prr\"",
            "recovery_exit_cwnd = \"lower\"",
        ] {
            let e = build("tcp", &table(bad_combo), &none, 1500, 40).unwrap_err();
            assert!(e.to_string().contains("tcp.recovery_exit_cwnd"), "{bad_combo}: {e}");
        }
    }

    #[test]
    fn fast_retransmit_cwnd_half_needs_ns2_ssthresh_and_exit() {
        let none = toml::Table::new();
        assert_eq!(build("tcp", &none, &none, 1500, 40).unwrap().fast_retransmit_cwnd, FastRetransmitCwnd::Ssthresh);
        let ok = "fast_retransmit_cwnd = \"half\"\nssthresh_base = \"cwnd\"\nrecovery_exit_cwnd = \"deflated\"";
        assert_eq!(build("tcp", &table(ok), &none, 1500, 40).unwrap().fast_retransmit_cwnd, FastRetransmitCwnd::Half);
        for bad_combo in [
            "fast_retransmit_cwnd = \"half\"\nrecovery_exit_cwnd = \"deflated\"",
            "fast_retransmit_cwnd = \"half\"\nssthresh_base = \"cwnd\"",
            "fast_retransmit_cwnd = \"exact\"",
        ] {
            let e = build("traffic[0].tcp", &none, &table(bad_combo), 1500, 40).unwrap_err();
            assert!(e.to_string().contains("traffic[0].tcp.fast_retransmit_cwnd"), "{bad_combo}: {e}");
        }
        let e = build("tcp", &table("ssthresh_base = 'half'"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.ssthresh_base"), "{e}");
    }

    #[test]
    fn rack_needs_sack_and_the_error_names_the_field() {
        let e = build("traffic[1].tcp", &toml::Table::new(), &table("rack = true"), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("traffic[1].tcp.rack"), "{e}");
        let c = build("tcp", &table("sack = true\nrack = true\npacing = true"), &toml::Table::new(), 1500, 40).unwrap();
        assert!(c.rack && c.pacing);
    }

    #[test]
    fn linux_profile_runs_rack_tlp_and_pacing_the_papers_profiles_do_not() {
        let none = toml::Table::new();
        let c = build("tcp", &table("profile = 'linux'"), &none, 1500, 40).unwrap();
        assert!(c.rack && c.pacing && c.sack);
        assert_eq!(c.variant, Variant::Cubic { hystart: true, hystart_rule: HyStartRule::Linux });
        for p in ["ns2-2001", "rfc"] {
            let c = build("tcp", &table(&format!("profile = '{p}'")), &none, 1500, 40).unwrap();
            assert!(!c.rack && !c.pacing, "{p}");
        }
        // Turning SACK off in a linux-profile block needs RACK off too (named error).
        let e = build("tcp", &table("profile = 'linux'\nsack = false\ndsack = false"), &none, 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.rack"), "{e}");
    }

    #[test]
    fn slow_start_increase_and_pacing_burst_default_to_rfc5681_and_single_packets() {
        let none = toml::Table::new();
        let c = build("tcp", &none, &none, 1500, 40).unwrap();
        assert_eq!((c.abc_limit, c.pacing_burst, c.pacing_autosize), (1, 1, false));
        let c = build("tcp", &table("profile = 'linux'"), &none, 1500, 40).unwrap();
        assert_eq!((c.abc_limit, c.pacing_burst, c.pacing_autosize), (u32::MAX, 2, true));
        let c = build("tcp", &table("slow_start_increase = 'acked'\nabc_limit = 2"), &none, 1500, 40).unwrap();
        assert_eq!(c.abc_limit, 2);
        for (t, k) in [
            ("abc_limit = 2", "tcp.abc_limit"),
            ("slow_start_increase = 'acked'\nabc_limit = 0", "tcp.abc_limit"),
            ("slow_start_increase = 'bytes'", "tcp.slow_start_increase"),
            ("pacing = true\npacing_burst = 0", "tcp.pacing_burst"),
            ("pacing_burst = 65", "tcp.pacing_burst"),
        ] {
            let e = build("tcp", &table(t), &none, 1500, 40).unwrap_err();
            assert!(e.to_string().contains(k), "{t}: {e}");
        }
    }

    #[test]
    fn new_options_default_off() {
        let c = build("tcp", &toml::Table::new(), &toml::Table::new(), 1500, 40).unwrap();
        assert!(!c.sack && !c.dsack && !c.limited_transmit && !c.rack && !c.pacing);
        assert_eq!(c.tick_s, 0.0);
    }

    #[test]
    fn profile_and_sack_errors_name_the_field() {
        let e = build("traffic[2].tcp", &toml::Table::new(), &table("profile = 'bsd'"), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("traffic[2].tcp.profile"), "{e}");
        let e = build("tcp", &table("sack = true\nvariant = 'tahoe'"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.sack"), "{e}");
        let e = build("tcp", &table("dsack = true"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.dsack"), "{e}");
        let e = build("tcp", &table("sack = true\nsack_blocks = 5"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.sack_blocks"), "{e}");
        let e = build("tcp", &table("tick_s = -1.0"), &toml::Table::new(), 1500, 40).unwrap_err();
        assert!(e.to_string().contains("tcp.tick_s"), "{e}");
    }
}
