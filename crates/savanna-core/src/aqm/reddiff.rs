//! The RED-based differentiator of Tokuda, Hasegawa & Murata 2002 ("Analysis and
//! Improvement of the Fairness between Long-lived and Short-lived TCP Connections", section
//! 3.2 "RED-based algorithm", parameters of section 4, Table 3): one FIFO; RED's drop
//! probability, computed from the average of the whole queue, is taken as a *target* p_t;
//! packets of short-lived connections are never dropped early (p_s = 0) and packets of
//! long-lived ones are dropped with p_l = p_t / a_l, where a_l is the share of arriving
//! packets that are long, so that the total early-drop rate a_l p_l + a_s p_s stays p_t.
//!
//! Our readings:
//! - class: `Packet.class` as written by a classifier; `Short` packets are short, `Long`
//!   and unmarked (`None`) packets long (an unclassified packet gets no preference, as in
//!   `rio.rs`; with no classifier at all the queue is then RED with per-packet drops);
//! - p_t is RED's base probability p_b from `redmath::Curve` at the EWMA average
//!   (`RedAvg`, idle-time corrected); the paper balances per-packet probabilities
//!   (p_t = p_l a_l + p_s a_s), so each long packet is dropped independently with
//!   p_l = min(1, p_t / a_l), without RED's count spreading (which would change the
//!   realised rate); with `ecn`, an ECT long packet is marked instead while p_t <
//!   `mark_p` (default max_p: dropped in the gentle region, ns-2's RED rule);
//! - above the hard threshold (max_th, or 2 max_th with `gentle`) RED's forced drop applies
//!   to every arrival, short ones included (the paper changes only RED's early drops);
//!   `gentle` is off by default: the paper cites original RED (Floyd & Jacobson 1993) and
//!   ns-2 kept `gentle_` off by default at the time (Floyd, March 2000);
//! - a_l, three ways: fixed (`a_long`); derived as the paper does from the document-size
//!   distribution and the threshold K (`a_long_from = { size = ..., k = ... }`, K a number
//!   or chosen by the paper's F(K) criterion, `model::tokuda`), where a_l is the share of
//!   arriving packets a counting classifier marks long, E[(S + e - K)^+] / E[S + e] for
//!   documents of S packets and e packets counted before the data (`model::sizes`:
//!   "beyond-k", our reading of "packet arriving ratio of long-lived connections", since
//!   only those packets are dropped with p_l, so only that share keeps the total at p_t;
//!   `counting = "whole-flow"` counts every packet of a connection longer than K instead);
//!   or, by default, measured online as the fraction of
//!   long packets among the last `window_pkts` arrivals (all arrivals, dropped ones
//!   included, since the paper speaks of arriving packets; before the window has filled,
//!   among the arrivals so far). The arrival being judged is counted first, so a long
//!   arrival always sees a_l > 0;
//! - as RED in ns-2, no early or forced drop of an arrival that finds at most one packet
//!   queued (`redmath::Curve::region_at`);
//! - tail drop (`Overflow`) when `limit_pkts` packets are queued.

use super::redmath::{Curve, RedFifo, RedParams, Region};
use super::registry::DisciplineSpec;
use super::{DropReason, QCtx, Qdisc};
use crate::model::sizes::{Counting, PacketSizes};
use crate::model::tokuda::{KSpec, SizeFn};
use crate::net::ClassMark;
use crate::net::PktId;
use crate::traffic::SizeSpec;
use crate::{Error, Result};

fn d_limit() -> u32 {
    300
}
fn d_min_th() -> f64 {
    45.0
}
fn d_max_th() -> f64 {
    150.0
}
fn d_max_p() -> f64 {
    0.1
}
fn d_w_q() -> f64 {
    0.002
}
fn d_window() -> u32 {
    1000
}

/// RED-based short/long differentiation (Tokuda, Hasegawa & Murata 2002). Thresholds in
/// packets; defaults from section 4 and the RED row of Table 3.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedDiffSpec {
    /// Buffer size, packets (tail drop beyond it). Default 300 (Tokuda section 4).
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// RED min threshold, packets. Default 45 (Table 3).
    #[serde(default = "d_min_th")]
    pub min_th: f64,
    /// RED max threshold, packets. Default 150 (Table 3).
    #[serde(default = "d_max_th")]
    pub max_th: f64,
    /// RED max_p (P_max). Default 0.1 (Table 3).
    #[serde(default = "d_max_p")]
    pub max_p: f64,
    /// EWMA weight of the average. Default 0.002 (Table 3).
    #[serde(default = "d_w_q")]
    pub w_q: f64,
    /// ns-2 `gentle_` for p_t. Default off (original RED; not stated in the paper).
    #[serde(default)]
    pub gentle: bool,
    /// Mark ECT long packets instead of early-dropping them. Default off.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, mark iff p_t < mark_p (as `red`); default max_p.
    #[serde(default)]
    pub mark_p: Option<f64>,
    /// Fixed share a_l of arriving packets that are long, in (0, 1]. Omitted (default):
    /// measured online over the last `window_pkts` arrivals (or derived, `a_long_from`).
    #[serde(default)]
    pub a_long: Option<f64>,
    /// a_l derived from a document-size distribution and the threshold K (Tokuda et al.
    /// section 3.2); exclusive with `a_long`.
    #[serde(default)]
    pub a_long_from: Option<ALongFrom>,
    /// a_l and K computed from `a_long_from` by the scenario builder ([`Self::resolved`]).
    #[serde(skip)]
    pub derived: Option<(f64, u64)>,
    /// Arrivals over which a_l is measured when `a_long` is omitted. Default 1000 (ours;
    /// the paper computes a_l offline).
    #[serde(default = "d_window")]
    pub window_pkts: u32,
    /// Mean packet size for the idle-time correction; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

impl RedDiffSpec {
    /// The RED parameters of the queue (no count spreading: `wait` is unused).
    pub fn red(&self) -> RedParams {
        RedParams {
            limit_pkts: self.limit_pkts as usize,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            w_q: self.w_q,
            gentle: self.gentle,
            wait: false,
            ecn: self.ecn,
            mark_p: self.mark_p,
            byte_mode: false,
            mean_pkt_bytes: self.mean_pkt_bytes,
        }
    }
}

impl DisciplineSpec for RedDiffSpec {
    const MINIMAL: &'static str = "";
    fn reads(&self) -> Option<crate::net::Mark> {
        Some(crate::net::Mark::Class)
    }
    fn check(&self, field: &str) -> Result<()> {
        self.red().check(field, "")?;
        if let Some(a) = self.a_long {
            if !(a > 0.0 && a <= 1.0) {
                return Err(Error::input(
                    format!("{field}.a_long"),
                    format!("must be in (0, 1] (or omitted: measured online), got {a}"),
                ));
            }
            if self.a_long_from.is_some() {
                return Err(Error::input(
                    format!("{field}.a_long_from"),
                    "give either a_long (a fixed share) or a_long_from (derived from the sizes), not both",
                ));
            }
        }
        if let Some(from) = &self.a_long_from {
            from.check(&format!("{field}.a_long_from"))?;
        }
        if self.window_pkts == 0 {
            return Err(Error::input(format!("{field}.window_pkts"), "must be at least 1 packet"));
        }
        Ok(())
    }

    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        debug_assert!(self.a_long_from.is_none() || self.derived.is_some(), "a_long_from resolved by resolve_models");
        Box::new(RedDiff::new(
            RedDiffParams {
                red: self.red(),
                a_long: self.a_long.or(self.derived.map(|d| d.0)),
                window_pkts: self.window_pkts as usize,
            },
            pkt_bytes,
        ))
    }

    fn derives_models(&self) -> bool {
        self.a_long_from.is_some()
    }

    fn resolve_models(&mut self, field: &str, sizes: &SizeFn) -> Result<()> {
        *self = self.resolved(field, sizes)?;
        Ok(())
    }
}

/// `a_long_from = { size = <size table>, k = <K>, counting = "beyond-k", extra_pkts = 0 }`.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ALongFrom {
    /// The document-size distribution, as a traffic block's `size` table.
    pub size: SizeSpec,
    /// K, packets, as the classifier's: a number, or `{ criterion = "tokuda-f", ... }`.
    pub k: KSpec,
    /// "beyond-k" (default): a connection's packets after its first K are long;
    /// "whole-flow": every packet of a connection of more than K packets.
    #[serde(default = "d_counting")]
    pub counting: Counting,
    /// Packets of each connection the classifier counts before its data: 2 with our TCP's
    /// handshake (the SYN and the handshake's final ACK, both counted by the marking and
    /// hashing classifiers), 0 without one (`[tcp] handshake = false`, ns-2's one-way TCP,
    /// and the paper's documents). Default 0.
    #[serde(default)]
    pub extra_pkts: u64,
}

fn d_counting() -> Counting {
    Counting::BeyondK
}

impl ALongFrom {
    /// What can be checked before the packet size is known (`field` names this table):
    /// K and a criterion's numbers, and the size table's values and finite mean (an
    /// empirical table read from a file is checked when resolved).
    pub fn check(&self, field: &str) -> Result<()> {
        let kfield = format!("{field}.k");
        self.k.check(&kfield)?;
        if let KSpec::Criterion(c) = &self.k {
            c.check_inherited(&kfield)?;
        }
        if matches!(&self.size, SizeSpec::Empirical(e) if e.file.is_some()) {
            return Ok(());
        }
        // Validity and a finite mean do not depend on the packet size: check in packets
        // (and, for sizes given in packets, that a fixed K leaves some packet long).
        let sfield = format!("{field}.size");
        let dist = crate::traffic::size_dist_mss(&sfield, &self.size, 1.0, std::path::Path::new(""))?;
        let ps = PacketSizes::new(dist).map_err(|m| Error::input(&sfield, m))?;
        if let (Some(k), crate::traffic::SizeUnit::Packets) = (self.k.pkts(), self.size.unit()) {
            no_long_packets(&kfield, k, ps.long_share(k, self.counting, self.extra_pkts))?;
        }
        Ok(())
    }
}

fn no_long_packets(field: &str, k: u64, a: f64) -> Result<()> {
    if a <= 0.0 {
        return Err(Error::input(
            field,
            format!("K = {k} packets leaves no packet long with these sizes (a_l = 0); choose a smaller K"),
        ));
    }
    Ok(())
}

impl RedDiffSpec {
    /// A copy with a_l (and K) computed from `a_long_from`, the sizes turned into packets
    /// by `sizes` (the scenario builder's `size_dist`). `field` names this queue.
    pub fn resolved(&self, field: &str, sizes: &SizeFn) -> Result<RedDiffSpec> {
        let mut out = self.clone();
        let Some(from) = &self.a_long_from else { return Ok(out) };
        let sfield = format!("{field}.a_long_from.size");
        let dist = sizes(&sfield, &from.size)?;
        let ps = PacketSizes::new(dist).map_err(|m| Error::input(&sfield, m))?;
        let k =
            from.k.resolve(&format!("{field}.a_long_from.k"), Some((&ps, from.counting, from.extra_pkts)), sizes)?;
        let a = ps.long_share(k, from.counting, from.extra_pkts);
        no_long_packets(&format!("{field}.a_long_from.k"), k, a)?;
        out.derived = Some((a, k));
        Ok(out)
    }
}

#[derive(Clone, Debug)]
pub struct RedDiffParams {
    /// The RED part: thresholds, max_p, w_q, gentle, ECN, buffer, mean packet size.
    pub red: RedParams,
    /// Fixed a_l, or None to measure it over `window_pkts` arrivals.
    pub a_long: Option<f64>,
    pub window_pkts: usize,
}

/// Share of long packets among the last `ring.len()` arrivals.
struct LongShare {
    ring: Vec<bool>,
    pos: usize,
    filled: usize,
    longs: usize,
}

impl LongShare {
    fn new(n: usize) -> Self {
        LongShare { ring: vec![false; n.max(1)], pos: 0, filled: 0, longs: 0 }
    }
    #[inline]
    fn push(&mut self, long: bool) {
        if self.filled == self.ring.len() {
            self.longs -= self.ring[self.pos] as usize;
        } else {
            self.filled += 1;
        }
        self.ring[self.pos] = long;
        self.longs += long as usize;
        self.pos += 1;
        if self.pos == self.ring.len() {
            self.pos = 0;
        }
    }
    fn share(&self) -> f64 {
        if self.filled == 0 {
            0.0
        } else {
            self.longs as f64 / self.filled as f64
        }
    }
}

pub struct RedDiff {
    rf: RedFifo,
    p: RedDiffParams,
    /// Mean packet size, bytes.
    mean: f64,
    curve: Curve,
    window: Option<LongShare>,
    /// `RedParams::ecn_below`.
    ecn: Option<f64>,
}

impl RedDiff {
    /// A RED-diff queue; `pkt_bytes` stands for the mean packet size when `p` gives none.
    pub fn new(p: RedDiffParams, pkt_bytes: u32) -> Self {
        RedDiff {
            rf: RedFifo::new(p.red.limit_pkts, p.red.w_q),
            mean: p.red.mean_bytes(pkt_bytes),
            curve: p.red.curve(),
            window: if p.a_long.is_none() { Some(LongShare::new(p.window_pkts)) } else { None },
            ecn: p.red.ecn_below(),
            p,
        }
    }
    /// The a_l in use: the fixed value, or the current measured share.
    pub fn a_long(&self) -> f64 {
        match (&self.window, self.p.a_long) {
            (_, Some(a)) => a,
            (Some(w), None) => w.share(),
            (None, None) => unreachable!("a window exists when a_long is not fixed"),
        }
    }
}

impl Qdisc for RedDiff {
    fn kind(&self) -> &'static str {
        "reddiff"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let long = cx.pkts.get(id).class != ClassMark::Short;
        if let Some(w) = &mut self.window {
            w.push(long);
        }
        let pps = cx.link_bps / (8.0 * self.mean);
        let avg = self.rf.avg.on_arrival(self.rf.q.len() as f64, cx.now, pps);
        match self.curve.region_at(avg, self.rf.q.len() as u64) {
            Region::Below => {}
            Region::Forced => {
                cx.drop(id, DropReason::Forced);
                return false;
            }
            Region::Early(p_t) => {
                if long {
                    let p_l = (p_t / self.a_long()).min(1.0);
                    if (p_l >= 1.0 || cx.rng.uniform() < p_l) && !(self.ecn.is_some_and(|m| p_t < m) && cx.mark(id)) {
                        cx.drop(id, DropReason::Early);
                        return false;
                    }
                }
            }
        }
        self.rf.admit(id, cx)
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.rf.pop(cx)
    }
    fn len_pkts(&self) -> usize {
        self.rf.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.rf.q.bytes()
    }
    fn avg(&self) -> Option<f64> {
        Some(self.rf.avg.avg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::Ecn;

    /// w_q = 1 (the average is the queue the arrival finds); thresholds 10 / 30, max_p 0.1.
    fn params(a_long: Option<f64>) -> RedDiffParams {
        let red = RedParams {
            limit_pkts: 1000,
            min_th: 10.0,
            max_th: 30.0,
            max_p: 0.1,
            w_q: 1.0,
            gentle: false,
            wait: false,
            ecn: false,
            mark_p: None,
            byte_mode: false,
            mean_pkt_bytes: None,
        };
        RedDiffParams { red, a_long, window_pkts: 1000 }
    }

    /// `p` with `f` applied to its RED part.
    fn with(mut p: RedDiffParams, f: impl Fn(&mut RedParams)) -> RedDiffParams {
        f(&mut p.red);
        p
    }

    fn fill(b: &mut Bench, q: &mut RedDiff, n: usize) {
        for i in 0..n {
            let p = b.pkt(0, i as u32, ClassMark::Long, Ecn::NotEct);
            q.rf.q.push(p, &b.pkts);
        }
    }

    /// Offer `n` arrivals (long with probability `share`, else short) to a queue held at
    /// its current length; returns (long arrivals, long drops, short arrivals, short drops).
    fn run(b: &mut Bench, q: &mut RedDiff, rng: &mut Rng, share: f64, n: usize) -> [usize; 4] {
        let mut c = [0usize; 4];
        for i in 0..n {
            let long = rng.uniform() < share;
            let class = if long { ClassMark::Long } else { ClassMark::Short };
            let p = b.pkt(1, i as u32, class, Ecn::NotEct);
            let (ok, drops) = b.offer(q, p);
            let k = if long { 0 } else { 2 };
            c[k] += 1;
            if ok {
                let out = b.take(q).unwrap();
                b.pkts.free(out);
            } else {
                assert_eq!(drops, vec![(p, DropReason::Early)]);
                c[k + 1] += 1;
                b.pkts.free(p);
            }
        }
        c
    }

    #[test]
    fn short_packets_never_dropped_early() {
        let mut b = Bench::new(1);
        let mut rng = Rng::stream(1, "reddiff-test");
        // Gentle, average held at 50 (p_t = 0.1 + 0.9 * 20 / 30 = 0.7): long packets are
        // all dropped (p_t / a_l > 1), short ones never.
        let mut q = RedDiff::new(with(params(Some(0.5)), |r| r.gentle = true), 1500);
        fill(&mut b, &mut q, 50);
        let [la, ld, sa, sd] = run(&mut b, &mut q, &mut rng, 0.5, 20_000);
        assert!(sa > 9000 && la > 9000);
        assert_eq!(sd, 0);
        assert_eq!(ld, la);
        // Same with the online estimate.
        let mut q = RedDiff::new(with(params(None), |r| r.gentle = true), 1500);
        fill(&mut b, &mut q, 25);
        let [_, ld, sa, sd] = run(&mut b, &mut q, &mut rng, 0.5, 20_000);
        assert!(sa > 9000 && ld > 1000);
        assert_eq!(sd, 0);
        // Above the hard threshold RED's forced drop applies to short packets too.
        let mut q = RedDiff::new(params(Some(0.5)), 1500);
        fill(&mut b, &mut q, 30);
        let s = b.pkt(2, 0, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, s), (false, vec![(s, DropReason::Forced)]));
        // Below min_th nothing is dropped.
        let mut q = RedDiff::new(params(Some(0.1)), 1500);
        fill(&mut b, &mut q, 9);
        let [_, ld, _, sd] = run(&mut b, &mut q, &mut rng, 0.5, 5000);
        assert_eq!((ld, sd), (0, 0));
    }

    #[test]
    fn long_drop_fraction_is_p_t_over_a_long() {
        let mut b = Bench::new(2);
        let mut rng = Rng::stream(2, "reddiff-test");
        for (level, a_l) in [(20usize, 0.25), (15, 0.5), (28, 0.9)] {
            let p_t = 0.1 * (level as f64 - 10.0) / 20.0;
            let mut q = RedDiff::new(params(Some(a_l)), 1500);
            fill(&mut b, &mut q, level);
            let [la, ld, sa, sd] = run(&mut b, &mut q, &mut rng, a_l, 400_000);
            let got = ld as f64 / la as f64;
            let want = p_t / a_l;
            assert!((got - want).abs() / want < 0.03, "level {level}, a_l {a_l}: {got} vs {want}");
            assert_eq!(sd, 0);
            // The total early-drop rate is the target p_t.
            let total = (ld + sd) as f64 / (la + sa) as f64;
            assert!((total - p_t).abs() / p_t < 0.04, "total {total} vs p_t {p_t}");
        }
    }

    #[test]
    fn online_a_long_converges_to_the_long_share() {
        let mut b = Bench::new(3);
        let mut rng = Rng::stream(3, "reddiff-test");
        let mut q = RedDiff::new(params(None), 1500);
        fill(&mut b, &mut q, 20); // p_t = 0.05
        let [la, ld, _, sd] = run(&mut b, &mut q, &mut rng, 0.3, 100_000);
        assert!((q.a_long() - 0.3).abs() < 0.05, "a_long {}", q.a_long());
        let got = ld as f64 / la as f64;
        let want = 0.05 / 0.3;
        assert!((got - want).abs() / want < 0.05, "{got} vs {want}");
        assert_eq!(sd, 0);
        // The window slides: after the mix changes, one window later the estimate follows.
        run(&mut b, &mut q, &mut rng, 0.8, 1000);
        assert!((q.a_long() - 0.8).abs() < 0.05, "a_long {}", q.a_long());
        // Exact window arithmetic: 1000 shorts then 250 longs: 250 / 1000.
        let mut q = RedDiff::new(params(None), 1500);
        for (class, n) in [(ClassMark::Short, 1000), (ClassMark::Long, 250)] {
            for i in 0..n {
                let p = b.pkt(4, i, class, Ecn::NotEct);
                b.offer(&mut q, p);
                b.take(&mut q);
            }
        }
        assert_eq!(q.a_long(), 0.25);
        // Unmarked packets count as long.
        let p = b.pkt(4, 0, ClassMark::None, Ecn::NotEct);
        b.offer(&mut q, p);
        assert_eq!(q.a_long(), 0.251);
    }

    #[test]
    fn ecn_marks_long_packets() {
        let mut b = Bench::new(4);
        let mut q = RedDiff::new(with(params(Some(0.01)), |r| r.ecn = true), 1500);
        fill(&mut b, &mut q, 20); // p_l = min(1, 0.05 / 0.01) = 1
        let ect = b.pkt(1, 0, ClassMark::Long, Ecn::Ect);
        assert_eq!(b.offer(&mut q, ect), (true, vec![]));
        assert_eq!(b.pkts.get(ect).ecn, Ecn::Ce);
        let not = b.pkt(1, 1, ClassMark::Long, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, not), (false, vec![(not, DropReason::Early)]));
    }

    #[test]
    fn ecn_drops_in_the_gentle_region_unless_mark_p_allows() {
        // Gentle, 40 queued: p_t = 0.1 + 0.9 * 10 / 30 = 0.4, p_l = 1 with a_l = 0.01.
        for (mark_p, marked) in [(None, false), (Some(0.5), true)] {
            let mut b = Bench::new(4);
            let mut q = RedDiff::new(
                with(params(Some(0.01)), |r| {
                    r.ecn = true;
                    r.gentle = true;
                    r.mark_p = mark_p;
                }),
                1500,
            );
            fill(&mut b, &mut q, 40);
            let ect = b.pkt(1, 0, ClassMark::Long, Ecn::Ect);
            let want = if marked { (true, vec![]) } else { (false, vec![(ect, DropReason::Early)]) };
            assert_eq!(b.offer(&mut q, ect), want, "mark_p {mark_p:?}");
        }
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: RedDiffSpec = toml::from_str("").unwrap();
        assert_eq!((s.limit_pkts, s.min_th, s.max_th, s.max_p, s.w_q), (300, 45.0, 150.0, 0.1, 0.002));
        assert_eq!((s.gentle, s.ecn, s.a_long, s.window_pkts), (false, false, None, 1000));
        s.check("q").unwrap();
        assert_eq!(s.build(1460).kind(), "reddiff");
        let s: RedDiffSpec = toml::from_str("a_long = 0.4").unwrap();
        s.check("q").unwrap();
        for (text, key) in [
            ("a_long = 0.0", "a_long"),
            ("a_long = 1.5", "a_long"),
            ("window_pkts = 0", "window_pkts"),
            ("min_th = 200.0", "min_th"),
            ("a_long = 0.5\na_long_from = { size = { dist = \"fixed\", value = 10 }, k = 7 }", "a_long_from"),
        ] {
            let bad: RedDiffSpec = toml::from_str(text).unwrap();
            let e = bad.check("q").unwrap_err().to_string();
            assert!(e.starts_with(&format!("q.{key}")), "{text}: {e}");
        }
    }

    fn sizes(field: &str, s: &SizeSpec) -> Result<crate::traffic::SizeDist> {
        use crate::traffic::SizeDist;
        match s {
            SizeSpec::Fixed(f) if f.value > 0.0 => Ok(SizeDist::Fixed(f.value)),
            SizeSpec::Fixed(_) => Err(Error::input(format!("{field}.value"), "must be a positive number")),
            SizeSpec::Pareto(p) => Ok(SizeDist::Pareto { shape: p.shape, min: p.min.unwrap() }),
            _ => unreachable!("tests use fixed and pareto sizes"),
        }
    }

    #[test]
    fn a_long_from_sizes_and_k() {
        // Fixed 10-packet documents, K = 7: 3 of every 10 packets are long.
        let s: RedDiffSpec =
            toml::from_str("a_long_from = { size = { dist = \"fixed\", value = 10 }, k = 7 }").unwrap();
        s.check("q").unwrap();
        let r = s.resolved("q", &sizes).unwrap();
        r.check("q").unwrap();
        assert_eq!(r.derived, Some((0.3, 7)));
        let q = r.build(1500);
        assert_eq!(q.kind(), "reddiff");
        // Counting the handshake's SYN and ACK first: 5 of 12; whole flows: all 10.
        let s: RedDiffSpec =
            toml::from_str("a_long_from = { size = { dist = \"fixed\", value = 10 }, k = 7, extra_pkts = 2 }").unwrap();
        assert!((s.resolved("q", &sizes).unwrap().derived.unwrap().0 - 5.0 / 12.0).abs() < 1e-12);
        let s: RedDiffSpec = toml::from_str(
            "a_long_from = { size = { dist = \"fixed\", value = 10 }, k = 7, counting = \"whole-flow\" }",
        )
        .unwrap();
        assert_eq!(s.resolved("q", &sizes).unwrap().derived, Some((1.0, 7)));
        // K at or beyond every document: nothing long.
        let s: RedDiffSpec =
            toml::from_str("a_long_from = { size = { dist = \"fixed\", value = 10 }, k = 10 }").unwrap();
        let e = s.resolved("q", &sizes).unwrap_err().to_string();
        assert!(e.starts_with("q.a_long_from.k: K = 10"), "{e}");
        // Errors inside the size name their path.
        let s: RedDiffSpec =
            toml::from_str("a_long_from = { size = { dist = \"fixed\", value = -1 }, k = 7 }").unwrap();
        assert_eq!(
            s.resolved("q", &sizes).unwrap_err().to_string(),
            "q.a_long_from.size.value: must be a positive number"
        );
        let s: RedDiffSpec =
            toml::from_str("a_long_from = { size = { dist = \"pareto\", shape = 0.9, min = 1 }, k = 7 }").unwrap();
        assert!(s.resolved("q", &sizes).unwrap_err().to_string().contains("infinite mean"));
        // K by the criterion: the same K as model::tokuda::choose_k on these sizes.
        let text = "a_long_from = { size = { dist = \"pareto\", shape = 1.5, min = 3 }, k = { criterion = \
            \"tokuda-f\", p_t = 0.05, rtt_s = 0.08, k_max = 100, l_pkts = 2000 } }";
        let s: RedDiffSpec = toml::from_str(text).unwrap();
        let (a, k) = s.resolved("q", &sizes).unwrap().derived.unwrap();
        let ps = PacketSizes::new(crate::traffic::SizeDist::Pareto { shape: 1.5, min: 3.0 }).unwrap();
        let crit =
            crate::model::tokuda::Criterion { k_max: 100, l_pkts: 2000, ..crate::model::tokuda::Criterion::new(0.05) };
        let best = crate::model::tokuda::choose_k(&crit, &ps, &crate::model::tokuda::Tcp::new(0.08));
        assert_eq!(k, best.k);
        assert!((a - best.a_long).abs() < 1e-12);
        assert!(k > 1 && k < 100, "K = {k}");
        // The criterion inside a queue takes its sizes from a_long_from.
        let text = "a_long_from = { size = { dist = \"fixed\", value = 10 }, k = { criterion = \"tokuda-f\", p_t = \
            0.05, rtt_s = 0.08, size = { dist = \"fixed\", value = 10 } } }";
        let s: RedDiffSpec = toml::from_str(text).unwrap();
        let e = s.resolved("q", &sizes).unwrap_err().to_string();
        assert!(e.starts_with("q.a_long_from.k.size: not allowed"), "{e}");
    }

    #[test]
    fn no_drop_while_at_most_one_packet_is_queued() {
        // As RED in ns-2: the average far above max_th, but the arrival finds at most one
        // packet queued: it is queued, long or not; finding two, it is force-dropped.
        let mut b = Bench::new(14);
        let mut q = RedDiff::new(with(params(Some(0.5)), |r| r.w_q = 0.002), 1500);
        q.rf.avg.avg = 100.0;
        for i in 0..2 {
            let x = b.pkt(1, i, ClassMark::Long, Ecn::NotEct);
            assert_eq!(b.offer(&mut q, x), (true, vec![]), "arrival finding {i} queued");
        }
        let x = b.pkt(1, 2, ClassMark::Short, Ecn::NotEct);
        assert_eq!(b.offer(&mut q, x), (false, vec![(x, DropReason::Forced)]));
    }
}
