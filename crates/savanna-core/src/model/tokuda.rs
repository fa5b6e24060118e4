//! Tokuda, Hasegawa & Murata 2002, "Analysis and Improvement of the Fairness between
//! Long-lived and Short-lived TCP Connections", section 3.2 ("RED-based algorithm") and
//! Fig. 3: the throughput rho(f) of a TCP transfer of f packets when the packets after the
//! K-th are dropped with a higher probability, and the fairness index
//!
//!   F(K) = sum_{i=1}^{L} P(i) (rho(i) - rho(L))^2
//!
//! (P(i): probability that a document has i packets; L = 10000 in the paper) whose minimum
//! over K sets the threshold of the RED-based differentiator: short packets (the first K of
//! a connection) are never dropped early, p_s = 0, and long ones with p_l = p_t / a_l, where
//! p_t is RED's target probability and a_l the share of arriving packets that are long
//! (`model::sizes`).
//!
//! rho(f). The paper takes it from its reference [5] (Tokuda et al., "TCP Throughput
//! Analysis with Variable Packet Loss Probability ...", IEEE CQR 2002), which is not among
//! our sources. We rebuild it from what section 3.2 says it does ("the TCP throughput when
//! K-th or later packets are discarded with higher probability") in the framework Guo &
//! Matta's eq. (2) uses: Cardwell, Savage & Anderson 2000 (slow start until the first loss,
//! recovery by timeout or fast retransmit, then the steady-state rate of Padhye et al. 1998,
//! `model::padhye`), with a loss probability that depends on the packet's index: p(i) = p_s
//! for i <= K, p_l for i > K. With N the index of the first lost packet,
//! P(N > n) = prod_{i <= n} (1 - p(i)), and
//!
//!   E[T(f)] = h RTT + P(N > f) T_ss(f)
//!           + sum_{n=1}^{f} P(N = n) [T_ss(n) + T_rec(n) + T_ca(n, f)]
//!   rho(f)  = f / E[T(f)]   (packets per second)
//!
//! - T_ss(n) = RTT log_g(n (g - 1) / w1 + 1): slow start sending n packets, window growing
//!   by g = 1 + 1/b per round from w1; once the window reaches W_max, Cardwell's window-
//!   limited form RTT (log_g(W_max / w1) + 1 + (n - (g W_max - w1)/(g - 1)) / W_max).
//! - T_rec(n) = Q(p(n), W(n)) T G(p(n)) / (1 - p(n)) + (1 - Q) RTT: the loss is found by a
//!   timeout with Padhye's probability Q (window W(n) = min(W_max, (n (g-1) + w1) / g)) and
//!   costs Padhye's backed-off timeout sequence G(p) T/(1-p), else one RTT of fast
//!   retransmit. T is the ITO for n = 1 (no RTT sample yet, as Guo & Matta's eq. (1)), the
//!   RTO otherwise.
//! - T_ca(n, f): the packets n+1..f left after the first loss are sent at Padhye's rate
//!   R(p) (`padhye::throughput_full` with b, RTO, W_max) with the loss probability of their
//!   index: those up to K at R(p_s), those after K at R(p_l).
//! - h = 1 with `handshake` (a loss-free SYN exchange, as Guo & Matta assume), else 0.
//!
//! Readings: (a) expectations are exact sums over N rather than Cardwell's T_ss(E[d_ss])
//! (the loss probability changes at K, so the first-loss index is far from geometric);
//! (b) defaults follow the papers' ns-2 setting: b = 1 (no delayed ACKs), w1 = 1, no window
//! limit (Tokuda et al. section 2: "enough large not to limit"), RTO = 4 RTT and ITO = 3 s
//! (Guo & Matta Fig. 2a); (c) K is chosen once for a given p_t: the paper changes K as p_t
//! moves ("we dynamically change K"), which needs the router's p_t at the classifier;
//! tabulate [`choose_k`] over p_t for that. Limits: f -> infinity gives Padhye's R(p_l);
//! a loss-free transfer gives f / T_ss(f).

use serde::Deserialize;

use super::padhye;
use super::sizes::{Counting, PacketSizes};
use crate::error::{Error, Result};
use crate::traffic::SizeDist;
use crate::traffic::SizeSpec;

/// The TCP of the model (all times in seconds, windows in packets).
#[derive(Clone, Debug)]
pub struct Tcp {
    pub rtt_s: f64,
    /// Retransmission timeout T0 once an RTT sample exists.
    pub rto_s: f64,
    /// Initial timeout, used when the first packet is lost.
    pub ito_s: f64,
    /// Packets acknowledged per ACK (1: no delayed ACKs; 2: delayed ACKs).
    pub b: f64,
    /// Initial window w1.
    pub init_cwnd: f64,
    /// Largest window (receiver window); infinite: no limit.
    pub max_window: f64,
    /// Add one loss-free RTT of connection set-up.
    pub handshake: bool,
}

impl Tcp {
    /// The defaults above for a round-trip time.
    pub fn new(rtt_s: f64) -> Self {
        Tcp {
            rtt_s,
            rto_s: 4.0 * rtt_s,
            ito_s: 3.0,
            b: 1.0,
            init_cwnd: 1.0,
            max_window: f64::INFINITY,
            handshake: false,
        }
    }

    /// Check the parameters; the message names the parameter.
    pub fn check(&self) -> std::result::Result<(), String> {
        for (name, v) in [("rtt_s", self.rtt_s), ("rto_s", self.rto_s), ("ito_s", self.ito_s)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name}: must be a positive number of seconds, got {v}"));
            }
        }
        if !(self.b.is_finite() && self.b >= 1.0) {
            return Err(format!("b: packets per ACK must be a number >= 1, got {}", self.b));
        }
        if !(self.init_cwnd.is_finite() && self.init_cwnd >= 1.0) {
            return Err(format!("init_cwnd: must be a number of packets >= 1, got {}", self.init_cwnd));
        }
        if self.max_window.is_nan() || self.max_window < self.init_cwnd {
            return Err(format!(
                "max_window: must be at least init_cwnd ({}) packets (or infinite), got {}",
                self.init_cwnd, self.max_window
            ));
        }
        Ok(())
    }

    fn gamma(&self) -> f64 {
        1.0 + 1.0 / self.b
    }

    /// Slow-start time to send `n` packets.
    pub fn slow_start_time(&self, n: f64) -> f64 {
        let g = self.gamma();
        let w1 = self.init_cwnd;
        let wm = self.max_window;
        let n_lim = (g * wm - w1) / (g - 1.0); // packets sent when the window reaches W_max
        if n <= n_lim {
            self.rtt_s * (n * (g - 1.0) / w1 + 1.0).ln() / g.ln()
        } else {
            self.rtt_s * ((wm / w1).ln() / g.ln() + 1.0 + (n - n_lim) / wm)
        }
    }

    /// Window when the n-th packet of slow start is sent.
    pub fn slow_start_window(&self, n: f64) -> f64 {
        let g = self.gamma();
        ((n * (g - 1.0) + self.init_cwnd) / g).min(self.max_window)
    }

    /// Padhye's steady-state rate at loss probability p, packets/s (infinite for p = 0
    /// without a window limit).
    pub fn rate(&self, p: f64) -> f64 {
        padhye::throughput_full(p, self.rtt_s, self.rto_s, self.b, self.max_window)
    }

    /// Expected time to recover from the first loss when it is packet `n`, lost with `p`.
    pub fn recovery_time(&self, n: u64, p: f64) -> f64 {
        if p >= 1.0 {
            return f64::INFINITY;
        }
        let q = padhye::q_hat(p, self.slow_start_window(n as f64));
        let t = if n == 1 { self.ito_s } else { self.rto_s };
        q * t * padhye::backoff_factor(p) / (1.0 - p) + (1.0 - q) * self.rtt_s
    }
}

/// Loss probabilities by packet index: `p_s` for packets 1..=k, `p_l` after.
#[derive(Clone, Copy, Debug)]
pub struct Losses {
    pub k: u64,
    pub p_s: f64,
    pub p_l: f64,
}

impl Losses {
    /// Uniform loss probability p for every packet.
    pub fn uniform(p: f64) -> Self {
        Losses { k: 0, p_s: p, p_l: p }
    }
    #[inline]
    pub fn at(&self, i: u64) -> f64 {
        if i <= self.k {
            self.p_s
        } else {
            self.p_l
        }
    }
    pub fn check(&self) -> std::result::Result<(), String> {
        for (name, p) in [("p_s", self.p_s), ("p_l", self.p_l)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name}: must be a probability in [0, 1], got {p}"));
            }
        }
        Ok(())
    }
}

/// x / r for a packet count x >= 0 and a rate r (0 when nothing is left to send).
#[inline]
fn at_rate(x: f64, r: f64) -> f64 {
    if x <= 1e-12 {
        0.0
    } else if r <= 0.0 {
        f64::INFINITY
    } else {
        x / r
    }
}

/// E[T(f)], seconds: the sum over the first-loss index written out directly (O(f)). The
/// reference for [`Curve`], which computes every f at once.
pub fn expected_time(f: u64, tcp: &Tcp, loss: &Losses) -> f64 {
    let (rs, rl) = (tcp.rate(loss.p_s), tcp.rate(loss.p_l));
    let mut t = if tcp.handshake { tcp.rtt_s } else { 0.0 };
    let mut q = 1.0; // P(N > n - 1)
    for n in 1..=f {
        let p = loss.at(n);
        let pn = q * p;
        if pn > 0.0 {
            let short_left = loss.k.min(f).saturating_sub(n) as f64;
            let long_left = f.saturating_sub(n.max(loss.k)) as f64;
            let ca = at_rate(short_left, rs) + at_rate(long_left, rl);
            t += pn * (tcp.slow_start_time(n as f64) + tcp.recovery_time(n, p) + ca);
        }
        q *= 1.0 - p;
    }
    t + q * tcp.slow_start_time(f as f64)
}

/// rho(f) = f / E[T(f)], packets per second.
pub fn throughput(f: u64, tcp: &Tcp, loss: &Losses) -> f64 {
    f as f64 / expected_time(f, tcp, loss)
}

/// E[T(f)] for every f = 1..=L at once (O(L)), with the per-index slow-start tables built
/// once and shared by every loss profile (the F(K) scan evaluates one profile per K).
#[derive(Clone, Debug)]
pub struct Curve {
    tcp: Tcp,
    /// T_ss(n) and W(n) for n = 1..=L, at index n - 1.
    t_ss: Vec<f64>,
    win: Vec<f64>,
}

impl Curve {
    pub fn new(tcp: &Tcp, l: u64) -> Self {
        let t_ss = (1..=l).map(|n| tcp.slow_start_time(n as f64)).collect();
        let win = (1..=l).map(|n| tcp.slow_start_window(n as f64)).collect();
        Curve { tcp: tcp.clone(), t_ss, win }
    }

    pub fn len(&self) -> usize {
        self.t_ss.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_ss.is_empty()
    }

    /// E[T(f)] for f = 1..=L (index f - 1). Running sums over the first-loss index n:
    /// P1 = sum P(N=n), M1 = sum n P(N=n) and S = sum P(N=n) (T_ss(n) + T_rec(n)); the
    /// congestion-avoidance part is linear in f given them.
    pub fn times(&self, loss: &Losses) -> Vec<f64> {
        let tcp = &self.tcp;
        let l = self.len() as u64;
        let (rs, rl) = (tcp.rate(loss.p_s), tcp.rate(loss.p_l));
        let setup = if tcp.handshake { tcp.rtt_s } else { 0.0 };
        // Per-region constants of Padhye's Q-hat and the timeout cost.
        let region = |p: f64| {
            let s = 1.0 - p;
            (p, s.ln(), s * s * s, padhye::backoff_factor(p) / s)
        };
        let (reg_s, reg_l) = (region(loss.p_s), region(loss.p_l));
        let mut out = Vec::with_capacity(l as usize);
        let (mut q, mut s_sum, mut p1, mut m1) = (1.0f64, 0.0f64, 0.0f64, 0.0f64);
        let (mut p1k, mut m1k) = (0.0, 0.0);
        let k = loss.k;
        for f in 1..=l {
            let (p, ln_s, s3, backoff) = if f <= k { reg_s } else { reg_l };
            let pn = q * p;
            // Terms below 1e-22 cannot move the sums (P(N = n) decays geometrically).
            if pn > 1e-22 {
                let rec = if p >= 1.0 {
                    f64::INFINITY
                } else {
                    let w = self.win[f as usize - 1];
                    // Padhye's Q-hat(p, w) with (1-p)^w from one exp.
                    let qh = if w <= 3.0 {
                        1.0
                    } else {
                        let sw = (w * ln_s).exp();
                        ((1.0 - s3) * (1.0 + s3 - sw) / (1.0 - sw)).min(1.0)
                    };
                    let t0 = if f == 1 { tcp.ito_s } else { tcp.rto_s };
                    qh * t0 * backoff + (1.0 - qh) * tcp.rtt_s
                };
                s_sum += pn * (self.t_ss[f as usize - 1] + rec);
                p1 += pn;
                m1 += f as f64 * pn;
            }
            q *= 1.0 - p;
            if f == k {
                p1k = p1;
                m1k = m1;
            }
            let ff = f as f64;
            let ca = if f <= k {
                at_rate(ff * p1 - m1, rs)
            } else {
                let kf = k as f64;
                at_rate(kf * p1k - m1k, rs) + at_rate(ff * p1 - kf * p1k - (m1 - m1k), rl)
            };
            let tail = if q > 0.0 { q * self.t_ss[f as usize - 1] } else { 0.0 };
            out.push(setup + tail + s_sum + ca);
        }
        out
    }

    /// rho(f) for f = 1..=L (index f - 1), packets per second.
    pub fn throughputs(&self, loss: &Losses) -> Vec<f64> {
        self.times(loss).iter().enumerate().map(|(i, t)| (i + 1) as f64 / t).collect()
    }
}

/// What the F(K) criterion needs besides the TCP: RED's target probability p_t, the largest
/// document L, the largest K tried, and how a_l counts packets.
#[derive(Clone, Debug)]
pub struct Criterion {
    pub p_t: f64,
    pub l_pkts: u64,
    pub k_max: u64,
    pub counting: Counting,
    pub extra_pkts: u64,
}

impl Criterion {
    pub fn new(p_t: f64) -> Self {
        Criterion { p_t, l_pkts: 10_000, k_max: 1000, counting: Counting::BeyondK, extra_pkts: 0 }
    }
    pub fn check(&self) -> std::result::Result<(), String> {
        if !(self.p_t > 0.0 && self.p_t <= 1.0) {
            return Err(format!("p_t: must be a probability in (0, 1], got {}", self.p_t));
        }
        if self.l_pkts < 2 || self.l_pkts > 10_000_000 {
            return Err(format!("l_pkts: must be between 2 and 10000000 packets, got {}", self.l_pkts));
        }
        if self.k_max == 0 {
            return Err("k_max: must be at least 1 packet".into());
        }
        Ok(())
    }
    /// The K values tried: 1..=min(k_max, L - 1).
    pub fn k_range(&self) -> std::ops::RangeInclusive<u64> {
        1..=self.k_max.min(self.l_pkts - 1)
    }
}

/// One point of F(K): the threshold, a_l, the long packets' drop probability and F.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FPoint {
    pub k: u64,
    pub a_long: f64,
    pub p_long: f64,
    pub f: f64,
}

/// p_l = p_t / a_l, capped at 1 (a_l = 0: no packet is long; p_l is then 1).
pub fn p_long(p_t: f64, a_long: f64) -> f64 {
    if a_long > 0.0 {
        (p_t / a_long).min(1.0)
    } else {
        1.0
    }
}

/// F(K) for each K of `ks` (each within 1..L).
pub fn f_values(ks: &[u64], crit: &Criterion, sizes: &PacketSizes, tcp: &Tcp) -> Vec<FPoint> {
    let curve = Curve::new(tcp, crit.l_pkts);
    let pmf: Vec<f64> = (1..=crit.l_pkts).map(|i| sizes.pmf(i)).collect();
    ks.iter()
        .map(|&k| {
            let a_long = sizes.long_share(k, crit.counting, crit.extra_pkts);
            f_point(k, a_long, crit, &curve, &pmf)
        })
        .collect()
}

fn f_point(k: u64, a_long: f64, crit: &Criterion, curve: &Curve, pmf: &[f64]) -> FPoint {
    let p_l = p_long(crit.p_t, a_long);
    let rho = curve.throughputs(&Losses { k, p_s: 0.0, p_l });
    let rho_l = rho[rho.len() - 1];
    let f = pmf.iter().zip(&rho).map(|(p, r)| p * (r - rho_l) * (r - rho_l)).sum();
    FPoint { k, a_long, p_long: p_l, f }
}

/// F(K) over the criterion's whole K range (Fig. 3 of the paper).
pub fn f_curve(crit: &Criterion, sizes: &PacketSizes, tcp: &Tcp) -> Vec<FPoint> {
    let curve = Curve::new(tcp, crit.l_pkts);
    let pmf: Vec<f64> = (1..=crit.l_pkts).map(|i| sizes.pmf(i)).collect();
    let range = crit.k_range();
    let shares = sizes.long_shares(*range.start(), *range.end(), crit.counting, crit.extra_pkts);
    range.zip(shares).map(|(k, a)| f_point(k, a, crit, &curve, &pmf)).collect()
}

/// The paper's K: the K of the criterion's range with the smallest F(K) (the smallest such
/// K on ties).
pub fn choose_k(crit: &Criterion, sizes: &PacketSizes, tcp: &Tcp) -> FPoint {
    let curve = f_curve(crit, sizes, tcp);
    let mut best = curve[0];
    for p in &curve[1..] {
        if p.f < best.f {
            best = *p;
        }
    }
    best
}

// ------------------------------------------------------------------ scenario tables

/// The threshold K in a scenario: a whole number of packets, or a table choosing it with
/// the F(K) criterion, `{ criterion = "tokuda-f", p_t = 0.05, rtt_s = 0.08, ... }`.
#[derive(Clone, Debug)]
pub enum KSpec {
    Pkts(u64),
    Criterion(Box<CriterionSpec>),
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum CriterionName {
    #[serde(rename = "tokuda-f")]
    TokudaF,
}

fn d_ito() -> f64 {
    3.0
}
fn d_one() -> f64 {
    1.0
}
fn d_l() -> u64 {
    10_000
}
fn d_kmax() -> u64 {
    1000
}

/// `k = { criterion = "tokuda-f", ... }`: K minimising Tokuda et al.'s F(K).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionSpec {
    /// "tokuda-f" (the only criterion).
    pub criterion: CriterionName,
    /// RED's target drop probability p_t at which K is chosen.
    pub p_t: f64,
    /// Round-trip time of the model's connections, s.
    pub rtt_s: f64,
    /// Retransmission timeout, s (default 4 rtt_s, Guo & Matta Fig. 2a).
    #[serde(default)]
    pub rto_s: Option<f64>,
    /// Initial timeout, s (default 3).
    #[serde(default = "d_ito")]
    pub ito_s: f64,
    /// Packets per ACK (default 1: no delayed ACKs).
    #[serde(default = "d_one")]
    pub pkts_per_ack: f64,
    /// Initial window, packets (default 1).
    #[serde(default = "d_one")]
    pub init_cwnd: f64,
    /// Largest window, packets (default: no limit).
    #[serde(default)]
    pub max_window: Option<f64>,
    /// Count one loss-free RTT of connection set-up (default false).
    #[serde(default)]
    pub handshake: bool,
    /// L, the largest document size in F(K), packets (default 10000, the paper's).
    #[serde(default = "d_l")]
    pub l_pkts: u64,
    /// Largest K tried (default 1000).
    #[serde(default = "d_kmax")]
    pub k_max: u64,
    /// Document sizes (P(i) and a_l). Required on a classifier; on a reddiff queue the
    /// size comes from `a_long_from.size`.
    #[serde(default)]
    pub size: Option<SizeSpec>,
    /// How a_l counts packets (classifiers only; a queue takes `a_long_from.counting`).
    #[serde(default)]
    pub counting: Option<Counting>,
    /// Packets counted before a connection's data (classifiers only; see `a_long_from`).
    #[serde(default)]
    pub extra_pkts: Option<u64>,
}

impl<'de> Deserialize<'de> for KSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use crate::spec::{decode, encode, join_path};
        use serde::de::Error as _;
        let v = toml::Value::deserialize(d)?;
        match v {
            toml::Value::Integer(n) if n >= 1 => Ok(KSpec::Pkts(n as u64)),
            toml::Value::Integer(n) => Err(D::Error::custom(format!("must be at least 1 packet, got {n}"))),
            toml::Value::Table(_) => serde_path_to_error::deserialize::<_, CriterionSpec>(v)
                .map(|c| KSpec::Criterion(Box::new(c)))
                .map_err(|e| {
                    let outer = e.path().to_string();
                    let (inner, msg) = decode(e.inner().message());
                    D::Error::custom(encode(&join_path(&outer, &inner), &msg))
                }),
            _ => Err(D::Error::custom(
                "must be a whole number of packets or a table { criterion = \"tokuda-f\", p_t = ..., rtt_s = ... }",
            )),
        }
    }
}

/// Turns a scenario `size` table into packets (the scenario builder's `size_dist`).
pub type SizeFn<'a> = dyn Fn(&str, &SizeSpec) -> Result<SizeDist> + 'a;

impl KSpec {
    /// The number of packets, once resolved.
    pub fn pkts(&self) -> Option<u64> {
        match self {
            KSpec::Pkts(k) => Some(*k),
            KSpec::Criterion(_) => None,
        }
    }

    /// Check what can be checked before resolution (`field` names the `k` key).
    pub fn check(&self, field: &str) -> Result<()> {
        match self {
            KSpec::Pkts(0) => Err(Error::input(field, "must be at least 1 packet")),
            KSpec::Pkts(_) => Ok(()),
            KSpec::Criterion(c) => c.check(field),
        }
    }

    /// K in packets. `inherited`: the document sizes and counting of an enclosing
    /// `a_long_from` (then the criterion must not give its own).
    pub fn resolve(
        &self,
        field: &str,
        inherited: Option<(&PacketSizes, Counting, u64)>,
        sizes: &SizeFn,
    ) -> Result<u64> {
        match self {
            KSpec::Pkts(0) => Err(Error::input(field, "must be at least 1 packet")),
            KSpec::Pkts(k) => Ok(*k),
            KSpec::Criterion(c) => c.resolve(field, inherited, sizes).map(|p| p.k),
        }
    }
}

impl CriterionSpec {
    fn tcp(&self) -> Tcp {
        Tcp {
            rtt_s: self.rtt_s,
            rto_s: self.rto_s.unwrap_or(4.0 * self.rtt_s),
            ito_s: self.ito_s,
            b: self.pkts_per_ack,
            init_cwnd: self.init_cwnd,
            max_window: self.max_window.unwrap_or(f64::INFINITY),
            handshake: self.handshake,
        }
    }

    pub fn check(&self, field: &str) -> Result<()> {
        let rename = |m: String| m.replacen("b:", "pkts_per_ack:", 1);
        self.tcp().check().map_err(|m| split(field, &rename(m)))?;
        let crit = Criterion {
            p_t: self.p_t,
            l_pkts: self.l_pkts,
            k_max: self.k_max,
            counting: Counting::BeyondK,
            extra_pkts: 0,
        };
        crit.check().map_err(|m| split(field, &m))
    }

    /// Inside a queue's `a_long_from`, the sizes and counting are the queue's.
    pub fn check_inherited(&self, field: &str) -> Result<()> {
        for (name, given) in [
            ("size", self.size.is_some()),
            ("counting", self.counting.is_some()),
            ("extra_pkts", self.extra_pkts.is_some()),
        ] {
            if given {
                return Err(Error::input(
                    format!("{field}.{name}"),
                    format!("not allowed here: the queue's a_long_from.{name} applies"),
                ));
            }
        }
        Ok(())
    }

    /// Choose K (section 3.2): check, turn the sizes into packets, minimise F(K).
    pub fn resolve(
        &self,
        field: &str,
        inherited: Option<(&PacketSizes, Counting, u64)>,
        sizes: &SizeFn,
    ) -> Result<FPoint> {
        self.check(field)?;
        let owned;
        let (ps, counting, extra) = match inherited {
            Some(inh) => {
                self.check_inherited(field)?;
                inh
            }
            None => {
                let spec = self.size.as_ref().ok_or_else(|| {
                    Error::input(
                        format!("{field}.size"),
                        "required: the document-size distribution that weighs F(K) (P(i)) and gives a_l",
                    )
                })?;
                let dist = sizes(&format!("{field}.size"), spec)?;
                owned = PacketSizes::new(dist).map_err(|m| Error::input(format!("{field}.size"), m))?;
                (&owned, self.counting.unwrap_or(Counting::BeyondK), self.extra_pkts.unwrap_or(0))
            }
        };
        let crit = Criterion { p_t: self.p_t, l_pkts: self.l_pkts, k_max: self.k_max, counting, extra_pkts: extra };
        Ok(choose_k(&crit, ps, &self.tcp()))
    }
}

/// "name: message" from the model's checks -> an input error on `field.name`.
fn split(field: &str, msg: &str) -> Error {
    match msg.split_once(": ") {
        Some((name, rest)) if !name.contains(' ') => Error::input(format!("{field}.{name}"), rest),
        _ => Error::input(field, msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Tokuda et al. section 2: 50 ms links on both sides, RTT 0.2 s.
    fn tcp() -> Tcp {
        Tcp::new(0.2)
    }

    #[test]
    fn loss_free_transfer_is_slow_start() {
        let t = tcp();
        let none = Losses::uniform(0.0);
        // One packet: one RTT; 3 packets: two rounds (1 + 2); 7: three; 2^r - 1: r rounds.
        for (f, rounds) in [(1u64, 1.0), (3, 2.0), (7, 3.0), (1023, 10.0)] {
            assert!((expected_time(f, &t, &none) - rounds * 0.2).abs() < 1e-12, "f={f}");
        }
        // Short packets are never dropped (p_s = 0): a document of at most K packets is
        // loss-free whatever p_l.
        let red = Losses { k: 20, p_s: 0.0, p_l: 0.3 };
        for f in 1..=20 {
            assert_eq!(expected_time(f, &t, &red), expected_time(f, &t, &none));
        }
        assert!(expected_time(21, &t, &red) > expected_time(21, &t, &none));
        // With a handshake, one more RTT.
        let h = Tcp { handshake: true, ..tcp() };
        assert!((expected_time(7, &h, &none) - 0.8).abs() < 1e-12);
        // Window limit: 1 + 2 + 4 + 8 then 8 per RTT: 15 packets in 4 RTT, 31 in 6.
        let w = Tcp { max_window: 8.0, ..tcp() };
        assert!((expected_time(15, &w, &none) - 0.8).abs() < 1e-12);
        assert!((expected_time(31, &w, &none) - 1.2).abs() < 1e-12);
        // Delayed ACKs: the window grows by 1.5 per round: 1 + 1.5 + 2.25 = 4.75 in 3.
        let d = Tcp { b: 2.0, ..tcp() };
        assert!((d.slow_start_time(4.75) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn curve_matches_the_direct_sum() {
        let cases = [
            (tcp(), Losses::uniform(0.02)),
            (tcp(), Losses { k: 7, p_s: 0.0, p_l: 0.08 }),
            (tcp(), Losses { k: 30, p_s: 0.01, p_l: 0.2 }),
            (
                Tcp { max_window: 12.0, b: 2.0, init_cwnd: 2.0, handshake: true, ..tcp() },
                Losses { k: 5, p_s: 0.005, p_l: 0.03 },
            ),
            (tcp(), Losses { k: 10, p_s: 0.0, p_l: 1.0 }),
        ];
        for (t, loss) in &cases {
            let curve = Curve::new(t, 400);
            let times = curve.times(loss);
            for f in [1u64, 2, 5, 7, 8, 11, 30, 31, 99, 400] {
                let direct = expected_time(f, t, loss);
                let fast = times[f as usize - 1];
                if direct.is_infinite() {
                    assert!(fast.is_infinite(), "{loss:?} f={f}: {fast}");
                } else {
                    assert!(rel(fast, direct) < 1e-9, "{loss:?} f={f}: {fast} vs {direct}");
                }
            }
        }
        // p_l = 1: nothing after K ever arrives.
        let r = Curve::new(&tcp(), 50).throughputs(&Losses { k: 10, p_s: 0.0, p_l: 1.0 });
        assert!(r[9] > 0.0 && r[10] == 0.0);
    }

    /// f -> infinity: every transfer is almost all congestion avoidance at p_l, so rho(f)
    /// tends to Padhye's rate; the start-up costs fade as 1/f.
    #[test]
    fn long_transfers_approach_padhye() {
        for &(p_s, p_l) in &[(0.0, 0.01), (0.01, 0.01), (0.0, 0.05), (0.02, 0.1)] {
            for t in [tcp(), Tcp { max_window: 20.0, ..tcp() }] {
                let loss = Losses { k: 7, p_s, p_l };
                let r = padhye::throughput_full(p_l, t.rtt_s, t.rto_s, 1.0, t.max_window);
                let rho = Curve::new(&t, 1_000_000).throughputs(&loss);
                let (a, b) = (rho[99_999], rho[999_999]);
                assert!(rel(b, r) < 0.01, "p_l={p_l}: rho(1e6) {b} vs R {r}");
                assert!(rel(b, r) < rel(a, r) || rel(a, r) < 1e-3, "converges");
            }
        }
    }

    /// Tokuda et al. Fig. 2 (one loss probability for all packets, RTT 0.2 s): small
    /// documents get very low throughput; documents of 100-1000 packets get the most,
    /// above the long-run rate, from the window inflated in the initial slow start; very
    /// long ones settle at the long-run rate. (At p >= 0.02 our rho(f) rises to R without
    /// overshooting: the first loss comes before slow start has inflated the window.)
    #[test]
    fn fig2_shape() {
        let t = tcp();
        for p in [0.005, 0.01] {
            let rho = Curve::new(&t, 100_000).throughputs(&Losses::uniform(p));
            let r = t.rate(p);
            let peak = (0..rho.len()).max_by(|&a, &b| rho[a].total_cmp(&rho[b])).unwrap() + 1;
            assert!((100..=1000).contains(&peak), "p={p}: peak at {peak}");
            assert!(rho[peak - 1] > r && rho[999] > r, "p={p}: peak {} vs R {r}", rho[peak - 1]);
            assert!(rho[0] < 0.1 * rho[peak - 1] && rho[9] < 0.3 * rho[peak - 1]);
            assert!(rel(rho[99_999], r) < 0.01);
        }
    }

    #[test]
    fn throughput_falls_with_the_long_loss_rate() {
        let t = tcp();
        for f in [8u64, 20, 100, 5000] {
            let mut prev = f64::INFINITY;
            for p_l in [0.001, 0.01, 0.05, 0.1, 0.3] {
                let r = throughput(f, &t, &Losses { k: 7, p_s: 0.0, p_l });
                assert!(r < prev, "f={f} p_l={p_l}");
                prev = r;
            }
        }
    }

    /// Tokuda et al. scenario 2 (Table 2): lognormal body (mu 9.357, sigma 1.318 of ln
    /// bytes; the table's "avg" and "std") below 133 KB, Pareto tail (shape 1.5) above,
    /// spliced continuously; 1460-byte packets.
    fn scenario2() -> PacketSizes {
        let mss = 1460.0f64;
        PacketSizes::new(SizeDist::LognormalPareto {
            mu: 9.357 - mss.ln(),
            sigma: 1.318,
            cutoff: 133_000.0 / mss,
            shape: 1.5,
        })
        .unwrap()
    }

    /// Fig. 3: for a given p_t, F(K) falls then rises, with one best K. Table 3's RED
    /// (max_p 0.1) with the average queue between its thresholds gives p_t in (0, 0.1);
    /// section 4.2's RTT is 2 (5 + 30 + 5) ms = 80 ms.
    #[test]
    fn f_has_an_interior_minimum() {
        let sizes = scenario2();
        let t = Tcp::new(0.08);
        for p_t in [0.01, 0.03, 0.05, 0.1] {
            let crit = Criterion { k_max: 300, ..Criterion::new(p_t) };
            let curve = f_curve(&crit, &sizes, &t);
            let best = choose_k(&crit, &sizes, &t);
            assert!(best.k > 1 && best.k < 300, "p_t={p_t}: K={}", best.k);
            assert!(curve[0].f > 1.5 * best.f && curve[curve.len() - 1].f > 1.5 * best.f, "p_t={p_t}: {best:?}");
            assert!(curve.iter().all(|p| p.f >= best.f));
            // p_l = p_t / a_l: the early-drop budget is spent on the long packets only.
            assert!((best.p_long * best.a_long - p_t).abs() < 1e-12 || best.p_long == 1.0);
            // The direct evaluation of F at the chosen K agrees with the scan.
            let again = f_values(&[best.k], &crit, &sizes, &t)[0];
            assert!(rel(again.f, best.f) < 1e-12);
        }
    }

    #[test]
    fn spec_parses_and_resolves() {
        #[derive(Deserialize)]
        struct W {
            k: KSpec,
        }
        let w: W = toml::from_str("k = 7").unwrap();
        assert_eq!(w.k.pkts(), Some(7));
        let text = concat!(
            r#"k = { criterion = "tokuda-f", p_t = 0.05, rtt_s = 0.08, k_max = 200, size = { dist = "#,
            r#""lognormal", mu = 1.6, sigma = 1.3 } }"#
        );
        let w: W = toml::from_str(text).unwrap();
        let sizes = |_: &str, s: &SizeSpec| match s {
            SizeSpec::Lognormal(l) => Ok(SizeDist::Lognormal { mu: l.mu, sigma: l.sigma }),
            _ => unreachable!(),
        };
        let k = w.k.resolve("c.k", None, &sizes).unwrap();
        let ps = PacketSizes::new(SizeDist::Lognormal { mu: 1.6, sigma: 1.3 }).unwrap();
        let crit = Criterion { k_max: 200, ..Criterion::new(0.05) };
        assert_eq!(k, choose_k(&crit, &ps, &Tcp::new(0.08)).k);
        // Errors name the field.
        for (text, want) in [
            ("k = 0", "must be at least 1"),
            ("k = \"x\"", "must be a whole number"),
            (r#"k = { criterion = "tokuda", p_t = 0.05, rtt_s = 0.1 }"#, "criterion"),
            (r#"k = { criterion = "tokuda-f", p_t = 0.05, rtt_s = 0.1, zzz = 1 }"#, "zzz"),
        ] {
            let e = toml::from_str::<W>(text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{text}: {e}");
        }
        let bad: W = toml::from_str(r#"k = { criterion = "tokuda-f", p_t = 1.5, rtt_s = 0.1 }"#).unwrap();
        assert!(bad.k.resolve("c.k", None, &sizes).unwrap_err().to_string().starts_with("c.k.p_t: "));
        let bad: W =
            toml::from_str(r#"k = { criterion = "tokuda-f", p_t = 0.1, rtt_s = 0.1, pkts_per_ack = 0.5 }"#).unwrap();
        assert!(bad.k.resolve("c.k", None, &sizes).unwrap_err().to_string().starts_with("c.k.pkts_per_ack: "));
        let nosize: W = toml::from_str(r#"k = { criterion = "tokuda-f", p_t = 0.1, rtt_s = 0.1 }"#).unwrap();
        assert!(nosize.k.resolve("c.k", None, &sizes).unwrap_err().to_string().starts_with("c.k.size: required"));
        let e = w.k.resolve("q.a_long_from.k", Some((&ps, Counting::BeyondK, 0)), &sizes).unwrap_err().to_string();
        assert!(e.starts_with("q.a_long_from.k.size: not allowed"), "{e}");
    }
}
