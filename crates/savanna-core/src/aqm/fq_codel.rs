//! FQ-CoDel, "Flow Queue CoDel" (Hoeiland-Joergensen, McKenney, Taht, Gettys & Dumazet,
//! RFC 8290), written from the RFC's description (section 4).
//!
//! - Classification: a packet goes to bucket `h(Packet.flow)` of `flows` buckets, where `h`
//!   is a fixed, deterministic 32-bit integer hash (murmur3's finaliser) scaled to
//!   `[0, flows)` by a multiply-shift. There is no per-run perturbation, so runs are
//!   reproducible, and two flows that hash to the same bucket really share a queue (and its
//!   CoDel state and scheduling share), as in Linux.
//! - Each bucket is a FIFO managed by its own CoDel instance (the state machine of
//!   `codel.rs`, target and interval shared). The "at most one MTU queued" guard of CoDel
//!   looks at the bucket's own backlog (ns-3's per-flow CoDel; Linux looks at the whole
//!   qdisc's backlog), and the MTU is the scenario's `packet_bytes`.
//! - Scheduling (RFC 8290 section 4.2): deficit round robin by bytes over two lists of
//!   active buckets. A bucket that receives a packet while in neither list joins the tail
//!   of the *new* list with a deficit of one `quantum`. Dequeue looks at the head of the new
//!   list, or of the old list if the new list is empty; a head whose deficit is exhausted
//!   (<= 0) gets another quantum and moves to the tail of the old list; otherwise CoDel
//!   dequeues from it. If that yields no packet (the bucket is empty, perhaps after CoDel
//!   dropped its last packets), a bucket from the new list moves to the tail of the old list
//!   (so a flow cannot regain new-flow priority by emptying its queue each round) and a
//!   bucket from the old list leaves the lists (it becomes new again on its next packet).
//!   We follow the RFC literally here (Linux skips the move when the old list is empty).
//! - Buffer (RFC 8290 section 4.1): after an arrival is queued, if more than `limit_pkts`
//!   packets are queued, a packet is dropped from the head of the bucket with the largest
//!   byte backlog (ties: the first found, new list before old, each from its head),
//!   reported as `DropReason::Overflow`. With `drop_batch > 1`, up to that many packets are
//!   dropped from that bucket, stopping once its backlog has been halved (Linux and ns-3
//!   use 64). If the dropped packet is the arrival itself, `enqueue` returns false.
//! - No byte limit (Linux's `memory_limit`) and no `ce_threshold`.
//! - ECN as in `codel.rs`: ECT packets are marked where CoDel would drop them.

use super::codel::{check_times, CodelParams, CodelState};
use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::net::{PacketPool, PktId};
use std::collections::VecDeque;

fn d_limit() -> u32 {
    10240
}
fn d_flows() -> u32 {
    1024
}
fn d_target() -> f64 {
    5.0
}
fn d_interval() -> f64 {
    100.0
}
fn t() -> bool {
    true
}
fn d_batch() -> u32 {
    1
}

/// `type = "fq_codel"`: FQ-CoDel (RFC 8290).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelSpec {
    /// Total packets queued over all buckets before the fattest bucket is trimmed.
    /// RFC 8290 (parameters, section 5.2; the Linux default): 10240.
    #[serde(default = "d_limit")]
    pub limit_pkts: u32,
    /// Number of flow buckets. RFC 8290 (section 5.2; the Linux default): 1024.
    #[serde(default = "d_flows")]
    pub flows: u32,
    /// DRR quantum, bytes. RFC 8290 (section 5.2) sets it to one MTU-sized frame, 1514 B
    /// (the 1500 B Ethernet MTU plus its 14 B header); our packets carry no link header,
    /// so the default is one full packet, the scenario's `packet_bytes`.
    #[serde(default)]
    pub quantum_bytes: Option<u32>,
    /// CoDel target, ms (RFC 8290 section 5.2, from RFC 8289): 5 ms.
    #[serde(default = "d_target")]
    pub target_ms: f64,
    /// CoDel interval, ms (RFC 8290 section 5.2, from RFC 8289): 100 ms.
    #[serde(default = "d_interval")]
    pub interval_ms: f64,
    /// Mark ECT packets instead of dropping them. Default on, as Linux `fq_codel` (the
    /// RFC's reference implementation).
    #[serde(default = "t")]
    pub ecn: bool,
    /// Packets dropped from the fattest bucket per overflow (after the first, only while
    /// its backlog is above half of what it was). Default 1: RFC 8290 section 4.1 drops a
    /// packet from the head of the fattest queue; Linux and ns-3 drop up to 64.
    #[serde(default = "d_batch")]
    pub drop_batch: u32,
}

impl DisciplineSpec for FqCodelSpec {
    const MINIMAL: &'static str = "";
    fn check(&self, field: &str) -> crate::Result<()> {
        if self.limit_pkts == 0 {
            return Err(crate::Error::input(format!("{field}.limit_pkts"), "must be at least 1 packet"));
        }
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
        if self.drop_batch == 0 {
            return Err(crate::Error::input(format!("{field}.drop_batch"), "must be at least 1 packet"));
        }
        check_times(field, self.target_ms, self.interval_ms)
    }
    fn build(&self, pkt_bytes: u32) -> Box<dyn super::Qdisc> {
        Box::new(FqCodel::new(
            FqCodelParams {
                limit_pkts: self.limit_pkts as usize,
                flows: self.flows,
                quantum: self.quantum_bytes.unwrap_or(pkt_bytes).max(1),
                drop_batch: self.drop_batch.max(1),
            },
            CodelParams::new(self.target_ms, self.interval_ms, self.ecn, pkt_bytes),
        ))
    }
}

#[derive(Clone, Copy, Debug)]
pub struct FqCodelParams {
    pub limit_pkts: usize,
    pub flows: u32,
    pub quantum: u32,
    pub drop_batch: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    None,
    New,
    Old,
}

/// One flow bucket: its FIFO, its AQM state `S`, and its place in the round robin.
pub struct Bucket<S> {
    pub q: Fifo,
    pub st: S,
    deficit: i64,
    list: List,
}

/// RFC 8290's flow queues without the AQM: buckets chosen by `bucket_of`, each with an AQM
/// state `S`, served by deficit round robin over the new and old lists (section 4.2, as
/// the module header describes), with the packet and byte totals kept for the shared
/// limit. FQ-CoDel runs it with `CodelState`, FQ-PIE (`fq_pie.rs`) with `PieState`.
pub struct FlowQueues<S> {
    flows: u32,
    quantum: u32,
    buckets: Vec<Bucket<S>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    pkts: usize,
    bytes: u64,
}

impl<S> FlowQueues<S> {
    /// `flows` buckets (at least 1), each starting with the state `init()` gives.
    pub fn new(flows: u32, quantum: u32, init: impl Fn() -> S) -> Self {
        let n = flows.max(1) as usize;
        let buckets = (0..n).map(|_| Bucket { q: Fifo::default(), st: init(), deficit: 0, list: List::None }).collect();
        FlowQueues {
            flows: n as u32,
            quantum,
            buckets,
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            pkts: 0,
            bytes: 0,
        }
    }
    /// The bucket packet `id` belongs to.
    #[inline]
    pub fn bucket_index(&self, id: PktId, pkts: &PacketPool) -> usize {
        bucket_of(pkts.get(id).flow, self.flows)
    }
    #[inline]
    pub fn bucket(&self, i: usize) -> &Bucket<S> {
        &self.buckets[i]
    }
    #[inline]
    pub fn bucket_mut(&mut self, i: usize) -> &mut Bucket<S> {
        &mut self.buckets[i]
    }
    /// The number of buckets.
    pub fn flows(&self) -> u32 {
        self.flows
    }
    /// Which list bucket `i` is on.
    pub fn list(&self, i: usize) -> List {
        self.buckets[i].list
    }
    /// Packets queued over all buckets.
    #[inline]
    pub fn len(&self) -> usize {
        self.pkts
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }
    /// Bytes queued over all buckets.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Queue `id` in bucket `i`; a bucket on neither list joins the new list with a quantum.
    #[inline]
    pub fn push(&mut self, i: usize, id: PktId, pkts: &PacketPool) {
        let b = &mut self.buckets[i];
        b.q.push(id, pkts);
        if b.list == List::None {
            b.list = List::New;
            b.deficit = self.quantum as i64;
            self.new_flows.push_back(i as u32);
        }
        self.pkts += 1;
        self.bytes += pkts.get(id).size as u64;
    }

    /// Remove the head of bucket `i` (a drop by the caller), keeping the totals.
    #[inline]
    pub fn pop_head(&mut self, i: usize, pkts: &PacketPool) -> Option<PktId> {
        let v = self.buckets[i].q.pop(pkts)?;
        self.pkts -= 1;
        self.bytes -= pkts.get(v).size as u64;
        Some(v)
    }

    /// The bucket with the largest byte backlog among the active ones.
    pub fn fattest(&self) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        for &i in self.new_flows.iter().chain(self.old_flows.iter()) {
            let b = self.buckets[i as usize].q.bytes();
            if best.is_none_or(|(_, m)| b > m) {
                best = Some((i as usize, b));
            }
        }
        best.map(|(i, _)| i)
    }

    /// The round robin's next packet. `serve` takes a packet from the bucket whose turn it
    /// is (its AQM may drop others on the way, reporting them to `cx`); None means the
    /// bucket had nothing to send.
    #[inline]
    pub fn dequeue(
        &mut self,
        cx: &mut QCtx,
        mut serve: impl FnMut(&mut S, &mut Fifo, &mut QCtx) -> Option<PktId>,
    ) -> Option<PktId> {
        loop {
            let (i, from_new) = if let Some(&i) = self.new_flows.front() {
                (i as usize, true)
            } else if let Some(&i) = self.old_flows.front() {
                (i as usize, false)
            } else {
                return None;
            };
            let b = &mut self.buckets[i];
            if b.deficit <= 0 {
                b.deficit += self.quantum as i64;
                b.list = List::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i as u32);
                continue;
            }
            let (n0, b0) = (b.q.len(), b.q.bytes());
            let got = serve(&mut b.st, &mut b.q, cx);
            self.pkts -= n0 - b.q.len();
            self.bytes -= b0 - b.q.bytes();
            match got {
                Some(p) => {
                    b.deficit -= cx.pkts.get(p).size as i64;
                    return Some(p);
                }
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        b.list = List::Old;
                        self.old_flows.push_back(i as u32);
                    } else {
                        self.old_flows.pop_front();
                        b.list = List::None;
                    }
                }
            }
        }
    }
}

pub struct FqCodel {
    p: FqCodelParams,
    codel: CodelParams,
    fq: FlowQueues<CodelState>,
}

/// The bucket of flow `flow` among `n`: murmur3's 32-bit finaliser, then multiply-shift.
#[inline]
pub fn bucket_of(flow: u32, n: u32) -> usize {
    let mut h = flow;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^= h >> 16;
    ((h as u64 * n as u64) >> 32) as usize
}

impl FqCodel {
    pub fn new(p: FqCodelParams, codel: CodelParams) -> Self {
        FqCodel { fq: FlowQueues::new(p.flows, p.quantum, CodelState::default), p, codel }
    }

    /// Trim the fattest bucket; returns true if `arrival` was among the packets dropped.
    fn overflow(&mut self, arrival: PktId, cx: &mut QCtx) -> bool {
        let Some(f) = self.fq.fattest() else { return false };
        let target = self.fq.bucket(f).q.bytes() / 2;
        let mut hit = false;
        for n in 0..self.p.drop_batch {
            if n > 0 && self.fq.bucket(f).q.bytes() <= target {
                break;
            }
            let Some(v) = self.fq.pop_head(f, cx.pkts) else { break };
            hit |= v == arrival;
            cx.drop(v, DropReason::Overflow);
        }
        hit
    }

    #[cfg(test)]
    fn list_of(&self, flow: u32) -> List {
        self.fq.list(bucket_of(flow, self.p.flows))
    }
}

impl Qdisc for FqCodel {
    fn kind(&self) -> &'static str {
        "fq_codel"
    }
    fn enqueue(&mut self, id: PktId, cx: &mut QCtx) -> bool {
        let i = self.fq.bucket_index(id, cx.pkts);
        self.fq.push(i, id, cx.pkts);
        if self.fq.len() > self.p.limit_pkts {
            return !self.overflow(id, cx);
        }
        true
    }

    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        let codel = &self.codel;
        self.fq.dequeue(cx, |st, q, cx| st.dequeue(codel, q, cx))
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
    use crate::aqm::testutil::Bench;
    use crate::engine::Time;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    const MS: Time = 1_000_000;

    fn fq(limit: usize, flows: u32) -> FqCodel {
        FqCodel::new(
            FqCodelParams { limit_pkts: limit, flows, quantum: 1500, drop_batch: 1 },
            CodelParams::new(5.0, 100.0, false, 1500),
        )
    }

    /// Offer a packet of `size` bytes stamped at `b.now`; returns (id, accepted, drops).
    fn send(b: &mut Bench, q: &mut FqCodel, flow: u32, size: u32) -> (PktId, bool, Vec<(PktId, DropReason)>) {
        let p = b.pkt(flow, 0, ClassMark::None, Ecn::NotEct);
        let now = b.now;
        let pk = b.pkts.get_mut(p);
        pk.size = size;
        pk.enq_ns = now;
        let (ok, d) = b.offer(q, p);
        (p, ok, d)
    }

    fn next_flow(b: &mut Bench, q: &mut FqCodel) -> u32 {
        let p = b.take(q).expect("a packet");
        b.pkts.get(p).flow
    }

    /// Flows 1.. that land in distinct buckets (the hash is fixed, so this is too).
    fn distinct_flows(k: usize, n: u32) -> Vec<u32> {
        let mut seen = std::collections::HashSet::new();
        (1..).filter(|&f| seen.insert(bucket_of(f, n))).take(k).collect()
    }

    #[test]
    fn hash_is_deterministic_and_spreads() {
        let n = 1024;
        assert_eq!(bucket_of(12345, n), bucket_of(12345, n));
        let mut count = vec![0u32; n as usize];
        for f in 0..100_000u32 {
            count[bucket_of(f, n)] += 1;
        }
        // About 97.7 per bucket; a poor hash of consecutive ids would leave holes.
        let (lo, hi) = (count.iter().min().unwrap(), count.iter().max().unwrap());
        assert!(*lo >= 50 && *hi < 160, "bucket loads from {lo} to {hi}");
        // With one bucket every flow collides: plain FIFO.
        let mut b = Bench::new(1);
        let mut q = fq(100, 1);
        let ids: Vec<_> = [3, 1, 2, 3, 1].iter().map(|&f| send(&mut b, &mut q, f, 1500).0).collect();
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, ids);
    }

    #[test]
    fn sparse_flow_served_before_backlogged_flow() {
        let mut b = Bench::new(2);
        let mut q = fq(1000, 1024);
        let f = distinct_flows(2, 1024);
        let (bulk, sparse) = (f[0], f[1]);
        for _ in 0..20 {
            send(&mut b, &mut q, bulk, 1500);
        }
        // The bulk flow spends its first quantum and moves to the old list.
        assert_eq!(next_flow(&mut b, &mut q), bulk);
        assert_eq!(next_flow(&mut b, &mut q), bulk);
        assert_eq!(q.list_of(bulk), List::Old);
        // A sparse flow's packet jumps ahead of the bulk flow's 18 queued packets.
        send(&mut b, &mut q, sparse, 100);
        assert_eq!(q.list_of(sparse), List::New);
        assert_eq!(next_flow(&mut b, &mut q), sparse);
        assert_eq!(next_flow(&mut b, &mut q), bulk);
    }

    #[test]
    fn emptied_new_flow_goes_to_old_list_not_back_to_new() {
        let mut b = Bench::new(3);
        let mut q = fq(1000, 1024);
        let f = distinct_flows(2, 1024);
        let (bulk, sparse) = (f[0], f[1]);
        // Bulk sends 500 B packets: three per quantum.
        for _ in 0..20 {
            send(&mut b, &mut q, bulk, 500);
        }
        for _ in 0..4 {
            assert_eq!(next_flow(&mut b, &mut q), bulk);
        }
        // Bulk is on the old list with 1000 B of deficit left.
        assert_eq!(q.list_of(bulk), List::Old);
        send(&mut b, &mut q, sparse, 100);
        assert_eq!(next_flow(&mut b, &mut q), sparse);
        // Sparse is now empty, still on the new list with deficit left. The next dequeue
        // finds it empty and moves it to the tail of the old list, then serves bulk.
        assert_eq!(next_flow(&mut b, &mut q), bulk);
        assert_eq!(q.list_of(sparse), List::Old);
        // Sparse's next packet gets no new-flow priority: bulk, ahead on the old list with
        // deficit left, is served first (had the emptied flow left the lists, the packet
        // would have made it a new flow again and jumped ahead).
        send(&mut b, &mut q, sparse, 100);
        assert_eq!(next_flow(&mut b, &mut q), bulk);
        // Bulk's quantum is spent: it goes behind sparse, whose turn it now is.
        assert_eq!(next_flow(&mut b, &mut q), sparse);
        assert_eq!(next_flow(&mut b, &mut q), bulk);
        // Found empty on the old list, sparse has left the lists.
        assert_eq!(q.list_of(sparse), List::None);
    }

    #[test]
    fn backlogged_flows_get_equal_byte_shares() {
        let mut b = Bench::new(4);
        let mut q = fq(100_000, 1024);
        let f = distinct_flows(3, 1024);
        // Flow 0 sends 1500 B packets, flow 1 300 B packets, flow 2 700 B packets; each
        // keeps a standing backlog, and flow 0 offers far more packets than the others.
        let sizes = [1500u32, 300, 700];
        for (k, &fl) in f.iter().enumerate() {
            for _ in 0..if k == 0 { 2000 } else { 200 } {
                send(&mut b, &mut q, fl, sizes[k]);
            }
        }
        let mut bytes = [0u64; 3];
        let mut sent = 0u64;
        while sent < 3_000_000 {
            let p = b.take(&mut q).unwrap();
            let fl = b.pkts.get(p).flow;
            let k = f.iter().position(|&x| x == fl).unwrap();
            bytes[k] += sizes[k] as u64;
            sent += sizes[k] as u64;
            b.pkts.free(p);
            // Top the served flow back up.
            send(&mut b, &mut q, fl, sizes[k]);
        }
        for (k, &by) in bytes.iter().enumerate() {
            let share = by as f64 / sent as f64;
            assert!((share - 1.0 / 3.0).abs() < 0.01, "flow {k} share {share}");
        }
    }

    #[test]
    fn overflow_drops_head_of_fattest_flow() {
        let mut b = Bench::new(5);
        let mut q = fq(10, 1024);
        let f = distinct_flows(3, 1024);
        // Flow A: 4 packets of 1500 B (6000 B); flow B: 6 packets of 300 B (1800 B). A has
        // fewer packets but more bytes.
        let a: Vec<_> = (0..4).map(|_| send(&mut b, &mut q, f[0], 1500).0).collect();
        for _ in 0..6 {
            send(&mut b, &mut q, f[1], 300);
        }
        assert_eq!(q.len_pkts(), 10);
        // An 11th packet (a new flow) is accepted; A's head is dropped.
        let (_, ok, drops) = send(&mut b, &mut q, f[2], 1500);
        assert!(ok);
        assert_eq!(drops, vec![(a[0], DropReason::Overflow)]);
        assert_eq!(q.len_pkts(), 10);
        assert_eq!(q.len_bytes(), 3 * 1500 + 1800 + 1500);
        // When the arrival's own flow is the fattest and holds only the arrival, the
        // arrival itself is dropped and enqueue says so.
        let mut q = fq(2, 1024);
        send(&mut b, &mut q, f[0], 100);
        send(&mut b, &mut q, f[1], 100);
        let (x, ok, drops) = send(&mut b, &mut q, f[2], 1500);
        assert!(!ok);
        assert_eq!(drops, vec![(x, DropReason::Overflow)]);
        assert_eq!(q.len_pkts(), 2);
    }

    #[test]
    fn batch_drop_halves_the_fattest_flow() {
        let mut b = Bench::new(6);
        let mut q = FqCodel::new(
            FqCodelParams { limit_pkts: 10, flows: 1024, quantum: 1500, drop_batch: 64 },
            CodelParams::new(5.0, 100.0, false, 1500),
        );
        let f = distinct_flows(2, 1024);
        for _ in 0..8 {
            send(&mut b, &mut q, f[0], 1500);
        }
        for _ in 0..2 {
            let (_, ok, drops) = send(&mut b, &mut q, f[1], 100);
            assert!(ok && drops.is_empty());
        }
        // 11 queued > 10: flow 0 (12000 B) is trimmed from its head to half its bytes.
        let (_, ok, drops) = send(&mut b, &mut q, f[1], 100);
        assert!(ok);
        assert_eq!(drops.len(), 4);
        assert!(drops.iter().all(|&(d, why)| b.pkts.get(d).flow == f[0] && why == DropReason::Overflow));
        assert_eq!(q.len_pkts(), 7);
        assert_eq!(q.len_bytes(), 4 * 1500 + 3 * 100);
    }

    #[test]
    fn codel_acts_per_flow() {
        // A flow with a standing queue is CoDel-dropped; a sparse flow sharing the link is
        // not, although its packets wait behind the bulk flow's in time.
        let mut b = Bench::new(7);
        let mut q = fq(10_000, 1024);
        let f = distinct_flows(2, 1024);
        let (bulk, sparse) = (f[0], f[1]);
        let mut t: Time = 0;
        for _ in 0..100 {
            send(&mut b, &mut q, bulk, 1500);
        }
        let (mut bulk_drops, mut sparse_drops) = (0, 0);
        // 1 ms per packet; bulk keeps ~100 packets (100 ms) queued; sparse sends one
        // packet every 10 ms.
        for step in 0..3000u64 {
            t += MS;
            b.now = t;
            if step % 10 == 0 {
                send(&mut b, &mut q, sparse, 200);
            }
            while q.fq.bucket(bucket_of(bulk, 1024)).q.len() < 100 {
                send(&mut b, &mut q, bulk, 1500);
            }
            let p = b.take(&mut q);
            for &(d, why) in &b.out.drops {
                assert_eq!(why, DropReason::Policy);
                if b.pkts.get(d).flow == bulk {
                    bulk_drops += 1;
                } else {
                    sparse_drops += 1;
                }
            }
            if let Some(p) = p {
                b.pkts.free(p);
            }
        }
        assert!(bulk_drops > 10, "bulk drops {bulk_drops}");
        assert_eq!(sparse_drops, 0);
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: FqCodelSpec = toml::from_str("").unwrap();
        assert_eq!(
            (s.limit_pkts, s.flows, s.quantum_bytes, s.target_ms, s.interval_ms, s.ecn, s.drop_batch),
            (10240, 1024, None, 5.0, 100.0, true, 1)
        );
        assert!(s.check("q").is_ok());
        assert!(toml::from_str::<FqCodelSpec>("quantum = 1").is_err());
        let bad = FqCodelSpec { flows: 0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.flows"));
        let bad = FqCodelSpec { interval_ms: -1.0, ..s.clone() };
        assert!(matches!(bad.check("q"), Err(crate::Error::Input { field, .. }) if field == "q.interval_ms"));
        assert_eq!(s.build(1500).kind(), "fq_codel");
    }
}
