//! FQ-PIE, flow queuing with a PIE controller per flow queue (Ramakrishnan, Bhasi, Saicharan,
//! Monis, Patil & Tahiliani 2019; Linux `sch_fq_pie`), built from RFC 8290's flow queues and
//! RFC 8033's PIE.
//!
//! - Flow queues and scheduling are FQ-CoDel's (`fq_codel::FlowQueues`): `flows` buckets
//!   chosen by the same fixed hash of `Packet.flow`, deficit round robin by bytes over a
//!   new and an old list, a bucket joining the new list with one `quantum` when it gets a
//!   packet while on neither list, an emptied new bucket moving to the old list (RFC 8290
//!   section 4.2, read literally as in `fq_codel.rs`).
//! - Each bucket has its own PIE controller (`pie::PieState`, `pie.rs`'s readings): its own
//!   drop probability, updated every `t_update` from the sojourn time of the bucket's last
//!   dequeued packet (0 when that dequeue emptied it), its own burst allowance and
//!   safeguard (no early drop while at most two mean packets are in *this* bucket, as Linux
//!   passes the flow's backlog). Linux updates every flow on one timer; our updates are
//!   lazy per bucket (run on the bucket's next arrival or dequeue), which gives the same
//!   values since a bucket's delay sample only changes when it is served.
//! - Drops happen on arrival only (Linux): an arrival is tail-dropped (`Overflow`) when
//!   `limit_pkts` packets are queued over all buckets, the shared limit (Linux drops the
//!   arrival, unlike FQ-CoDel, which trims the fattest bucket); otherwise its bucket's PIE
//!   may drop it early (`Early`) or, with `ecn`, mark it while p <= `mark_ecnth`.
//! - Not modelled: Linux's `memory_limit` (it only counts), byte mode, the departure-rate
//!   estimator (timestamps are used, as Linux by default).

use super::fq_codel::FlowQueues;
use super::pie::{PieParams, PieSpec, PieState};
use super::registry::DisciplineSpec;
use super::{DropReason, QCtx, Qdisc};
use crate::net::PktId;

fn d_limit() -> u32 {
    10240
}
fn d_flows() -> u32 {
    1024
}
fn d_target() -> f64 {
    15.0
}
fn d_tupdate() -> f64 {
    15.0
}
fn d_alpha() -> f64 {
    0.125
}
fn d_beta() -> f64 {
    1.25
}
fn d_burst() -> f64 {
    150.0
}
fn d_ecnth() -> f64 {
    0.1
}
fn t() -> bool {
    true
}

/// `type = "fq_pie"`: FQ-PIE (Linux `sch_fq_pie`). The PIE keys are `pie`'s, with its
/// defaults; `limit_pkts` is shared by all flow queues.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqPieSpec {
    /// Packets queued over all buckets before arrivals are tail-dropped. Linux: 10240.
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// Number of flow buckets, 1 to 65536. Linux: 1024.
    #[serde(default = "d_flows")]
    pub flows: u32,
    /// DRR quantum, bytes. Linux: the device MTU; default the scenario's `packet_bytes`.
    #[serde(default)]
    pub quantum_bytes: Option<u32>,
    /// PIE target delay per bucket, ms. RFC 8033 / Linux: 15.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// PIE update period, ms. RFC 8033 / Linux: 15.
    #[serde(default = "d_tupdate")]
    pub t_update_ms: f64,
    /// PIE alpha, Hz. RFC 8033: 0.125.
    #[serde(default = "d_alpha")]
    pub alpha: f64,
    /// PIE beta, Hz. RFC 8033: 1.25.
    #[serde(default = "d_beta")]
    pub beta: f64,
    /// PIE burst allowance per bucket, ms. RFC 8033: 150.
    #[serde(default = "d_burst")]
    pub max_burst_ms: f64,
    /// Mark ECT arrivals instead of early drops while p <= mark_ecnth. Linux: off.
    #[serde(default)]
    pub ecn: bool,
    /// ECN threshold on p. Linux `ecn_prob`: 10%.
    #[serde(default = "d_ecnth")]
    pub mark_ecnth: f64,
    /// RFC 8033 section 5.5's cap. Default on.
    #[serde(default = "t")]
    pub cap_drop_adjustment: bool,
    /// RFC 8033 section 5.4's de-randomization. Default off, as `pie`.
    #[serde(default)]
    pub derandomize: bool,
    /// PIE's MEAN_PKTSIZE, bytes; defaults to packet_bytes.
    #[serde(default)]
    pub mean_pkt_bytes: Option<f64>,
}

impl FqPieSpec {
    /// The PIE part, checked and turned into parameters by `pie.rs` (same keys).
    fn pie(&self) -> PieSpec {
        PieSpec {
            limit_pkts: self.limit_pkts,
            target_ms: self.target_ms,
            t_update_ms: self.t_update_ms,
            alpha: self.alpha,
            beta: self.beta,
            max_burst_ms: self.max_burst_ms,
            ecn: self.ecn,
            mark_ecnth: self.mark_ecnth,
            cap_drop_adjustment: self.cap_drop_adjustment,
            derandomize: self.derandomize,
            mean_pkt_bytes: self.mean_pkt_bytes,
        }
    }
}

impl DisciplineSpec for FqPieSpec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> crate::Result<()> {
        if !(1..=65536).contains(&self.flows) {
            return Err(crate::Error::input(
                format!("{field}.flows"),
                format!("must be between 1 and 65536 buckets, got {}", self.flows),
            ));
        }
        if self.quantum_bytes == Some(0) {
            return Err(crate::Error::input(
                format!("{field}.quantum_bytes"),
                "must be at least 1 byte (or omitted for packet_bytes)",
            ));
        }
        self.pie().check(field)
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(FqPie::new(self.flows, self.quantum_bytes.unwrap_or(pkt_bytes).max(1), self.pie().params(pkt_bytes)))
    }
}

pub struct FqPie {
    p: PieParams,
    fq: FlowQueues<PieState>,
}

impl FqPie {
    /// `flows` buckets served with `quantum` bytes per round; `p.limit_pkts` is the shared
    /// limit.
    pub fn new(flows: u32, quantum: u32, p: PieParams) -> Self {
        FqPie { fq: FlowQueues::new(flows, quantum, || PieState::new(&p)), p }
    }
    /// The PIE drop probability of flow `flow`'s bucket (as of its last update).
    pub fn drop_prob_of(&self, flow: u32) -> f64 {
        self.fq.bucket(super::fq_codel::bucket_of(flow, self.fq.flows())).st.drop_prob()
    }
}

impl Qdisc for FqPie {
    fn kind(&self) -> &'static str {
        "fq_pie"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let i = self.fq.bucket_index(id, cx.pkts);
        let full = self.fq.len() >= self.p.limit_pkts;
        let b = self.fq.bucket_mut(i);
        b.st.catch_up(&self.p, cx.now);
        if full {
            b.st.overflowed();
            cx.drop(id, DropReason::Overflow);
            return false;
        }
        if !b.st.admit(&self.p, b.q.bytes(), id, cx) {
            return false;
        }
        self.fq.push(i, id, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let p = &self.p;
        self.fq.dequeue(cx, |st, q, cx| {
            st.catch_up(p, cx.now);
            let got = q.pop(cx.pkts);
            st.dequeued(got, q.is_empty(), cx);
            got
        })
    }
    fn len_pkts(&self) -> usize {
        self.fq.len()
    }
    fn len_bytes(&self) -> u64 {
        self.fq.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::fq_codel::{bucket_of, List};
    use crate::aqm::pie::Pie;
    use crate::aqm::testutil::Bench;
    use crate::engine::{Rng, Time};
    use crate::net::{ClassMark, Ecn};

    const MS: Time = 1_000_000;

    fn spec() -> FqPieSpec {
        toml::from_str("").unwrap()
    }

    fn fq_pie(s: &FqPieSpec) -> FqPie {
        FqPie::new(s.flows, s.quantum_bytes.unwrap_or(1500), s.pie().params(1500))
    }

    /// Offer a packet of flow `flow`, `size` bytes, stamped `enq`; (id, accepted, drops).
    fn send(
        b: &mut Bench,
        q: &mut dyn Qdisc,
        flow: u32,
        size: u32,
        enq: Time,
        ecn: Ecn,
    ) -> (PktId, bool, Vec<(PktId, DropReason)>) {
        let p = b.pkt(flow, 0, ClassMark::None, ecn);
        let pk = b.pkts.get_mut(p);
        pk.size = size;
        pk.enq_ns = enq;
        let (ok, d) = b.offer(q, p);
        (p, ok, d)
    }

    fn distinct_flows(k: usize, n: u32) -> Vec<u32> {
        let mut seen = std::collections::HashSet::new();
        (1..).filter(|&f| seen.insert(bucket_of(f, n))).take(k).collect()
    }

    /// A standing queue of `depth` packets of `bulk`, each `age` old when served, one
    /// served per ms from `t0` to `t0 + dur`, topped up after each service; `sparse` sends
    /// one 200 B packet every 10 ms. Returns (bulk early drops, sparse early drops).
    fn congest(b: &mut Bench, q: &mut FqPie, bulk: u32, sparse: u32, t0: Time, dur: Time) -> (u32, u32) {
        let age = 200 * MS;
        let depth = 40;
        let (mut bd, mut sd) = (0, 0);
        let mut t = t0;
        while t < t0 + dur {
            b.now = t;
            if (t - t0).is_multiple_of(10 * MS) {
                let (p, ok, d) = send(b, q, sparse, 200, t, Ecn::NotEct);
                if !ok {
                    assert_eq!(d[0].1, DropReason::Early);
                    sd += 1;
                    b.pkts.free(p);
                }
            }
            let i = bucket_of(bulk, q.fq.flows());
            // Up to three arrivals a ms while below `depth` (p may reach 1).
            for _ in 0..3 {
                if q.fq.bucket(i).q.len() >= depth {
                    break;
                }
                let (p, ok, d) = send(b, q, bulk, 1500, t - age, Ecn::NotEct);
                if !ok {
                    assert_eq!(d[0].1, DropReason::Early);
                    bd += 1;
                    b.pkts.free(p);
                }
            }
            // Every queued bulk packet is `age` old.
            let ids: Vec<PktId> = q.fq.bucket(i).q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t - age;
            }
            if let Some(p) = b.take(q) {
                b.pkts.free(p);
            }
            t += MS;
        }
        (bd, sd)
    }

    #[test]
    fn drop_probability_is_per_flow() {
        // A bulk flow keeps 200 ms of standing delay in its bucket; a sparse flow sharing
        // the link never builds a queue. PIE raises the bulk bucket's probability and drops
        // its arrivals; the sparse bucket's probability stays 0 and it loses nothing.
        let mut b = Bench::new(1);
        let mut q = fq_pie(&spec());
        let f = distinct_flows(2, 1024);
        let (bd, sd) = congest(&mut b, &mut q, f[0], f[1], 1000 * MS, 2000 * MS);
        assert!(q.drop_prob_of(f[0]) > 0.1, "bulk p = {}", q.drop_prob_of(f[0]));
        assert_eq!(q.drop_prob_of(f[1]), 0.0);
        assert!(bd > 50, "bulk early drops {bd}");
        assert_eq!(sd, 0);
        // Single-queue PIE under the same load drops the sparse flow's packets too.
        let mut one = fq_pie(&FqPieSpec { flows: 1, ..spec() });
        let mut b = Bench::new(1);
        let (_, sd) = congest(&mut b, &mut one, f[0], f[1], 1000 * MS, 2000 * MS);
        assert!(sd > 5, "sparse drops with one bucket: {sd}");
    }

    #[test]
    fn a_flow_alone_sees_exactly_pie() {
        // With one flow, every arrival and departure meets the same controller as `pie`'s
        // (same parameters and random stream): the same packets are dropped, at the same
        // probabilities.
        let s = spec();
        let mut q = fq_pie(&FqPieSpec { limit_pkts: 100, ..s.clone() });
        let mut pie = Pie::new(FqPieSpec { limit_pkts: 100, ..s }.pie().params(1500));
        let (mut b1, mut b2) = (Bench::new(9), Bench::new(9));
        let mut rng = Rng::stream(3, "fq-pie-alone");
        let mut t: Time = 0;
        let (mut drops, mut served) = (0, 0);
        for step in 0..40_000 {
            t += (rng.uniform() * 2.0 * MS as f64) as Time;
            b1.now = t;
            b2.now = t;
            if rng.uniform() < 0.52 {
                let (p1, ok1, d1) = send(&mut b1, &mut q, 7, 1500, t, Ecn::NotEct);
                let (p2, ok2, d2) = send(&mut b2, &mut pie, 7, 1500, t, Ecn::NotEct);
                assert_eq!((ok1, d1.len()), (ok2, d2.len()), "step {step}");
                // Both ran every update due by now (a dequeue from an empty FQ-PIE visits
                // no bucket, so its updates wait for the next arrival).
                assert_eq!(q.drop_prob_of(7), pie.drop_prob(), "step {step} at {t}");
                drops += d1.len();
                if !ok1 {
                    b1.pkts.free(p1);
                    b2.pkts.free(p2);
                }
            } else {
                let (x, y) = (b1.take(&mut q), b2.take(&mut pie));
                assert_eq!(x.is_some(), y.is_some());
                served += x.is_some() as u32;
                if let (Some(x), Some(y)) = (x, y) {
                    b1.pkts.free(x);
                    b2.pkts.free(y);
                }
            }
            assert_eq!(q.len_pkts(), pie.len_pkts(), "step {step}");
        }
        assert!(drops > 100 && served > 10_000, "{drops} {served}");
    }

    #[test]
    fn new_flows_are_served_before_old_ones() {
        let mut b = Bench::new(2);
        let mut q = fq_pie(&spec());
        let f = distinct_flows(2, 1024);
        let (bulk, sparse) = (f[0], f[1]);
        // Bulk sends 500 B packets: three per quantum.
        for _ in 0..20 {
            send(&mut b, &mut q, bulk, 500, 0, Ecn::NotEct);
        }
        let take = |b: &mut Bench, q: &mut FqPie| {
            let p = b.take(q).unwrap();
            b.pkts.get(p).flow
        };
        // Bulk spends its first quantum and moves to the old list, 1000 B of deficit left.
        for _ in 0..4 {
            assert_eq!(take(&mut b, &mut q), bulk);
        }
        assert_eq!(q.fq.list(bucket_of(bulk, 1024)), List::Old);
        // A new flow's packet jumps ahead of the 16 queued bulk packets.
        send(&mut b, &mut q, sparse, 100, 0, Ecn::NotEct);
        assert_eq!(q.fq.list(bucket_of(sparse, 1024)), List::New);
        assert_eq!(take(&mut b, &mut q), sparse);
        assert_eq!(take(&mut b, &mut q), bulk);
        // Found empty on the new list, the sparse bucket went to the old list.
        assert_eq!(q.fq.list(bucket_of(sparse, 1024)), List::Old);
    }

    #[test]
    fn backlogged_flows_get_equal_byte_shares() {
        let mut b = Bench::new(4);
        // No early drops: the controller never sees delay (all packets stamped now).
        let mut q = fq_pie(&FqPieSpec { limit_pkts: 100_000, ..spec() });
        let f = distinct_flows(3, 1024);
        let sizes = [1500u32, 300, 700];
        for (k, &fl) in f.iter().enumerate() {
            for _ in 0..200 {
                send(&mut b, &mut q, fl, sizes[k], 0, Ecn::NotEct);
            }
        }
        let mut bytes = [0u64; 3];
        let mut sent = 0u64;
        while sent < 3_000_000 {
            let p = b.take(&mut q).unwrap();
            let k = f.iter().position(|&x| x == b.pkts.get(p).flow).unwrap();
            bytes[k] += sizes[k] as u64;
            sent += sizes[k] as u64;
            b.pkts.free(p);
            let (_, ok, _) = send(&mut b, &mut q, f[k], sizes[k], 0, Ecn::NotEct);
            assert!(ok);
        }
        for (k, &by) in bytes.iter().enumerate() {
            let share = by as f64 / sent as f64;
            assert!((share - 1.0 / 3.0).abs() < 0.01, "flow {k} share {share}");
        }
    }

    #[test]
    fn the_limit_is_shared_and_drops_the_arrival() {
        let mut b = Bench::new(5);
        let mut q = fq_pie(&FqPieSpec { limit_pkts: 10, ..spec() });
        let f = distinct_flows(3, 1024);
        // Flow A fills 8 of the 10 places, flow B 2.
        for _ in 0..8 {
            assert!(send(&mut b, &mut q, f[0], 1500, 0, Ecn::NotEct).1);
        }
        for _ in 0..2 {
            assert!(send(&mut b, &mut q, f[1], 100, 0, Ecn::NotEct).1);
        }
        // A third flow, with nothing queued, is refused: the limit is over all buckets,
        // and the arrival itself is dropped (nothing is pushed out of the fattest bucket).
        let (x, ok, d) = send(&mut b, &mut q, f[2], 100, 0, Ecn::NotEct);
        assert!(!ok);
        assert_eq!(d, vec![(x, DropReason::Overflow)]);
        assert_eq!((q.len_pkts(), q.len_bytes()), (10, 8 * 1500 + 200));
        // One departure makes room for one arrival, from any flow.
        let out = b.take(&mut q).unwrap();
        assert_eq!(b.pkts.get(out).flow, f[0]);
        assert!(send(&mut b, &mut q, f[2], 100, 0, Ecn::NotEct).1);
        assert!(!send(&mut b, &mut q, f[1], 100, 0, Ecn::NotEct).1);
    }

    #[test]
    fn ecn_marks_below_the_threshold_and_drops_above() {
        // ECT arrivals of a bulk flow: while its bucket's p is at most mark_ecnth they are
        // marked CE and queued, never dropped early; once p is above it they are dropped.
        // A standing delay of 40 ms raises p through the auto-tuning steps (about 1 s from
        // 0.01 to 0.1), then 500 ms from 4 s on pushes it well past 10%.
        let mut b = Bench::new(6);
        let mut q = fq_pie(&FqPieSpec { ecn: true, ..spec() });
        let f = distinct_flows(1, 1024)[0];
        let i = bucket_of(f, 1024);
        let (mut marks_low, mut drops_low, mut marks_high, mut drops_high) = (0, 0, 0, 0);
        let mut t = 1000 * MS;
        while t < 6000 * MS {
            b.now = t;
            let age = if t < 4000 * MS { 40 * MS } else { 500 * MS };
            for _ in 0..3 {
                if q.fq.bucket(i).q.len() >= 40 {
                    break;
                }
                let (p, ok, _) = send(&mut b, &mut q, f, 1500, t - age, Ecn::Ect);
                // The probability the decision used (updates due were run before it).
                let low = q.drop_prob_of(f) <= 0.1;
                let marked = ok && b.pkts.get(p).ecn == Ecn::Ce;
                if low {
                    marks_low += marked as u32;
                    drops_low += !ok as u32;
                } else {
                    marks_high += marked as u32;
                    drops_high += !ok as u32;
                }
                if !ok {
                    b.pkts.free(p);
                }
            }
            let ids: Vec<PktId> = q.fq.bucket(i).q.iter().copied().collect();
            for id in ids {
                b.pkts.get_mut(id).enq_ns = t - age;
            }
            if let Some(p) = b.take(&mut q) {
                b.pkts.free(p);
            }
            t += MS;
        }
        assert!(marks_low > 20, "marks while p <= 10%: {marks_low}");
        assert_eq!(drops_low, 0);
        assert_eq!(marks_high, 0);
        assert!(drops_high > 50, "drops while p > 10%: {drops_high}");
    }

    #[test]
    fn invariants_hold_under_a_random_workload() {
        // Random arrivals (8 flows, random sizes and ECN) and departures at random times:
        // every packet is queued, dropped once or served; flows are never reordered; the
        // shared limit holds; every bucket's probability stays in [0, 1].
        let mut b = Bench::new(7);
        let mut rng = Rng::stream(17, "fq-pie-random");
        let mut q = fq_pie(&FqPieSpec { limit_pkts: 30, flows: 4, ecn: true, max_burst_ms: 0.0, ..spec() });
        let mut next_seq = [0u32; 8];
        let mut last_out: [Option<u32>; 8] = [None; 8];
        let mut queued = std::collections::HashSet::new();
        let (mut early, mut overflow, mut served) = (0, 0, 0);
        let mut t: Time = 0;
        for _ in 0..60_000 {
            t += (rng.exp(0.4) * MS as f64) as Time;
            b.now = t;
            if rng.uniform() < 0.6 {
                let flow = rng.below(8) as u32;
                let ecn = if rng.uniform() < 0.5 { Ecn::Ect } else { Ecn::NotEct };
                let p = b.pkt(flow, next_seq[flow as usize], ClassMark::None, ecn);
                next_seq[flow as usize] += 1;
                let pk = b.pkts.get_mut(p);
                pk.size = 100 + rng.below(1401) as u32;
                pk.enq_ns = t;
                let (ok, drops) = b.offer(&mut q, p);
                assert_eq!(ok, drops.is_empty());
                assert!(drops.iter().all(|&(d, _)| d == p), "drops only the arrival");
                match drops.first().map(|d| d.1) {
                    Some(DropReason::Early) => early += 1,
                    Some(DropReason::Overflow) => overflow += 1,
                    Some(r) => panic!("unexpected {r:?}"),
                    None => assert!(queued.insert(p)),
                }
                if !ok {
                    b.pkts.free(p);
                }
            } else if let Some(p) = b.take(&mut q) {
                assert!(queued.remove(&p), "served a packet not queued");
                let pk = b.pkts.get(p);
                let (f, s) = (pk.flow as usize, pk.seq);
                assert!(last_out[f].is_none_or(|prev| s > prev), "flow {f} reordered");
                last_out[f] = Some(s);
                served += 1;
                b.pkts.free(p);
            }
            assert_eq!(q.len_pkts(), queued.len());
            assert!(q.len_pkts() <= 30);
            let bytes: u64 = queued.iter().map(|&p| b.pkts.get(p).size as u64).sum();
            assert_eq!(q.len_bytes(), bytes);
            for fl in 0..8 {
                assert!((0.0..=1.0).contains(&q.drop_prob_of(fl)));
            }
        }
        assert!(early > 100 && overflow > 100 && served > 20_000, "{early} {overflow} {served}");
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s = spec();
        assert_eq!(
            (s.limit_pkts, s.flows, s.quantum_bytes, s.target_ms, s.t_update_ms),
            (10240, 1024, None, 15.0, 15.0)
        );
        assert_eq!((s.alpha, s.beta, s.max_burst_ms, s.ecn, s.mark_ecnth), (0.125, 1.25, 150.0, false, 0.1));
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<FqPieSpec>("interval_ms = 1").is_err());
        let field_of = |bad: FqPieSpec| match bad.check("q") {
            Err(crate::Error::Input { field, .. }) => field,
            r => panic!("{r:?}"),
        };
        assert_eq!(field_of(FqPieSpec { flows: 0, ..s.clone() }), "q.flows");
        assert_eq!(field_of(FqPieSpec { quantum_bytes: Some(0), ..s.clone() }), "q.quantum_bytes");
        assert_eq!(field_of(FqPieSpec { limit_pkts: 0, ..s.clone() }), "q.limit_pkts");
        assert_eq!(field_of(FqPieSpec { target_ms: -1.0, ..s.clone() }), "q.target_ms");
        assert_eq!(field_of(FqPieSpec { t_update_ms: 0.0, ..s.clone() }), "q.t_update_ms");
        assert_eq!(field_of(FqPieSpec { mark_ecnth: 1.5, ..s.clone() }), "q.mark_ecnth");
        assert_eq!(s.build(1500).kind(), "fq_pie");
    }
}
