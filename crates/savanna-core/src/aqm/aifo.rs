//! AIFO (Yu et al., SIGCOMM 2021, "Programmable Packet Scheduling with a Single Queue",
//! section 3): one FIFO approximates a PIFO by admission control alone. The switch keeps a
//! sliding window W of the ranks of recent arrivals; an arriving packet of rank r whose
//! quantile in the window is W.quantile(r) (the fraction of window ranks below r) is
//! admitted when
//!
//!   W.quantile(r) <= (C - c) / ((1 - k) C),
//!
//! c being the queue's length, C its capacity and k the burst tolerance: while the queue
//! holds at most kC packets every packet is admitted, and as it fills only ever
//! smaller-quantile ranks are. Admitted packets are served in arrival order.
//!
//! Readings we chose:
//! - the rank function is selectable (`rank`: remaining size, attained service, arrival
//!   order; `rank.rs`), default remaining size (the `remaining` edge classifier's tag);
//! - every arrival's rank enters the window (sample rate 1), after its own quantile was
//!   computed; until the window has filled, the quantile is over the ranks seen so far
//!   (an empty window gives 0: admit);
//! - C = `limit_pkts` (lengths in packets); a packet the rule admits to a full queue is
//!   still dropped (`Overflow`); a packet the rule refuses is dropped as `Early`;
//! - defaults: window 20 ranks, k = 0.1 (our reading of the paper's evaluation settings).
//!
//! Invariant: the queue is a FIFO of at most C packets, and every admitted packet met the
//! rule with the queue length it found.

use super::rank::{RankFn, Ranker};
use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;

fn d_window() -> u32 {
    20
}
fn d_k() -> f64 {
    0.1
}
fn d_rank() -> RankFn {
    RankFn::Remaining
}

/// `type = "aifo"`: one FIFO with quantile admission over a window of ranks.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AifoSpec {
    /// Queue capacity C, packets.
    pub limit_pkts: u32,
    /// Ranks in the sliding window. Default 20 (ours, after the paper's evaluation).
    #[serde(default = "d_window")]
    pub window: u32,
    /// Burst tolerance k in [0, 1): below kC packets queued everything is admitted.
    /// Default 0.1 (ours, after the paper's evaluation).
    #[serde(default = "d_k")]
    pub burst_k: f64,
    /// Rank function: "remaining" (default; the `remaining` classifier's tag),
    /// "attained" (bytes of the flow seen at this queue) or "fifo" (arrival order).
    #[serde(default = "d_rank")]
    pub rank: RankFn,
}

impl DisciplineSpec for AifoSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    /// The tag only when ranking by remaining size; attained service and FIFO order are
    /// computed here.
    fn reads(&self) -> Option<crate::net::Mark> {
        (self.rank == RankFn::Remaining).then_some(crate::net::Mark::Tag)
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return crate::spec::bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        if !(1..=4096).contains(&self.window) {
            return crate::spec::bad(format!("{field}.window"), "must be 1 to 4096 ranks");
        }
        if !(self.burst_k >= 0.0 && self.burst_k < 1.0) {
            return crate::spec::bad(format!("{field}.burst_k"), format!("must be in [0, 1), got {}", self.burst_k));
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(Aifo::new(self.limit_pkts as usize, self.window as usize, self.burst_k, self.rank))
    }
}

pub struct Aifo {
    q: Fifo,
    limit: usize,
    k: f64,
    /// Ring of the last `window.len()` ranks; `filled` of them valid.
    window: Vec<u64>,
    next: usize,
    filled: usize,
    ranker: Ranker,
}

impl Aifo {
    pub fn new(limit_pkts: usize, window: usize, k: f64, rank: RankFn) -> Self {
        Aifo {
            q: Fifo::with_capacity(limit_pkts),
            limit: limit_pkts,
            k,
            window: vec![0; window],
            next: 0,
            filled: 0,
            ranker: Ranker::new(rank),
        }
    }
    /// The fraction of window ranks strictly below `r` (0 for an empty window).
    pub fn quantile(&self, r: u64) -> f64 {
        if self.filled == 0 {
            return 0.0;
        }
        self.window[..self.filled].iter().filter(|&&x| x < r).count() as f64 / self.filled as f64
    }
    /// AIFO's admission rule for a packet of quantile `q` with `c` packets queued.
    pub fn admits(&self, q: f64, c: usize) -> bool {
        let cap = self.limit as f64;
        q * (1.0 - self.k) * cap <= cap - c as f64
    }
    fn remember(&mut self, r: u64) {
        self.window[self.next] = r;
        self.next = (self.next + 1) % self.window.len();
        self.filled = (self.filled + 1).min(self.window.len());
    }
}

impl Qdisc for Aifo {
    fn kind(&self) -> &'static str {
        "aifo"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let r = self.ranker.rank(cx.pkts.get(id));
        let quant = self.quantile(r);
        self.remember(r);
        if !self.admits(quant, self.q.len()) {
            cx.drop(id, DropReason::Early);
            return false;
        }
        if self.q.len() >= self.limit {
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        self.q.push(id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.q.pop(cx.pkts)
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::engine::Rng;
    use crate::net::{ClassMark, Ecn};

    fn pk(b: &mut Bench, flow: u32, rank: u8) -> PktId {
        let id = b.pkt(flow, 0, ClassMark::None, Ecn::NotEct);
        b.pkts.get_mut(id).set_tag(rank);
        id
    }

    #[test]
    fn quantile_is_over_the_last_window_ranks() {
        let mut q = Aifo::new(10, 4, 0.1, RankFn::Remaining);
        assert_eq!(q.quantile(5), 0.0, "empty window admits");
        for r in [1, 2, 3, 4] {
            q.remember(r);
        }
        assert_eq!(q.quantile(3), 0.5);
        q.remember(10); // slides out the 1
        assert_eq!(q.quantile(3), 0.25);
        assert_eq!(q.quantile(11), 1.0);
    }

    #[test]
    fn admission_tightens_as_the_queue_fills() {
        let q = Aifo::new(10, 20, 0.1, RankFn::Remaining);
        // Up to kC = 1 packet queued, even the largest rank is admitted.
        assert!(q.admits(1.0, 1) && !q.admits(1.0, 2));
        // With c = 5: quantiles up to 5 / 9 pass.
        assert!(q.admits(0.55, 5) && !q.admits(0.56, 5));
        // Full queue: only quantile 0 passes the rule.
        assert!(q.admits(0.0, 10) && !q.admits(0.01, 10));
    }

    #[test]
    fn high_ranks_are_refused_when_the_queue_is_loaded() {
        let mut b = Bench::new(1);
        let mut q = Aifo::new(10, 8, 0.1, RankFn::Remaining);
        // Fill to 5 packets with a mix of ranks 2 and 20.
        for i in 0..5 {
            let p = pk(&mut b, i, if i % 2 == 0 { 2 } else { 20 });
            assert!(b.offer(&mut q, p).0, "{i}");
        }
        // Window {2,20,2,20,2}: rank 30 has quantile 1 > 5/9: refused; rank 2 has 0: admitted.
        let hi = pk(&mut b, 9, 30);
        assert_eq!(b.offer(&mut q, hi), (false, vec![(hi, DropReason::Early)]));
        let lo = pk(&mut b, 10, 2);
        assert!(b.offer(&mut q, lo).0);
        let out: Vec<PktId> = std::iter::from_fn(|| b.take(&mut q)).collect();
        let out: Vec<u32> = out.iter().map(|&p| b.pkts.get(p).flow).collect();
        assert_eq!(out, [0, 1, 2, 3, 4, 10], "admitted packets leave in arrival order");
    }

    #[test]
    fn spec_checks_name_the_field() {
        for (t, f) in [
            ("limit_pkts = 0", "q.limit_pkts:"),
            ("limit_pkts = 9\nwindow = 0", "q.window:"),
            ("limit_pkts = 9\nburst_k = 1.0", "q.burst_k:"),
            ("limit_pkts = 9\nburst_k = -0.1", "q.burst_k:"),
        ] {
            let s: AifoSpec = toml::from_str(t).unwrap();
            assert!(s.check("q").unwrap_err().to_string().starts_with(f), "{t}");
        }
        let s: AifoSpec = toml::from_str("limit_pkts = 9").unwrap();
        assert_eq!((s.window, s.burst_k, s.rank), (20, 0.1, RankFn::Remaining));
    }

    #[test]
    fn random_workload_admits_only_by_the_rule_and_stays_fifo() {
        let mut b = Bench::new(2);
        let mut rng = Rng::stream(9, "aifo-test");
        let mut q = Aifo::new(12, 16, 0.2, RankFn::Remaining);
        let mut seq = 0u32;
        let mut last = None;
        let (mut early, mut admitted_hi, mut admitted) = (0, 0, 0);
        for _ in 0..20_000 {
            if rng.uniform() < 0.6 {
                let r = rng.below(32) as u8;
                let quant = q.quantile(r as u64);
                let c = q.len_pkts();
                let id = b.pkt(0, seq, ClassMark::None, Ecn::NotEct);
                b.pkts.get_mut(id).set_tag(r);
                seq += 1;
                let (ok, drops) = b.offer(&mut q, id);
                let rule = quant * 0.8 * 12.0 <= 12.0 - c as f64;
                assert_eq!(ok, rule && c < 12, "rank {r} quantile {quant} with {c} queued");
                if !rule {
                    assert_eq!(drops, vec![(id, DropReason::Early)]);
                    early += 1;
                }
                if ok {
                    admitted += 1;
                    if r >= 24 {
                        admitted_hi += 1;
                    }
                }
                for &(d, _) in &drops {
                    b.pkts.free(d);
                }
            } else if let Some(p) = b.take(&mut q) {
                let s = b.pkts.get(p).seq;
                assert!(last.is_none_or(|l| s > l), "not FIFO");
                last = Some(s);
                b.pkts.free(p);
            }
            assert!(q.len_pkts() <= 12);
        }
        // High ranks are admitted less often than their share (1/4) of arrivals.
        assert!(early > 1000 && (admitted_hi as f64) < 0.2 * admitted as f64, "{early} {admitted_hi} {admitted}");
    }
}
