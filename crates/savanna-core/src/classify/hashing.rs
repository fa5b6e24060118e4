//! Tokuda, Hasegawa & Murata 2002, section 3.1, "hashing" (the paper's "hash algorithm"):
//! a fixed-size hash table indexed by a hash of the connection's address/port tuple; each
//! entry holds a packet counter and the time its last packet arrived. On each packet the
//! router finds the entry, and if the entry has been idle for longer than T_bar it decides
//! that the connection "begins another document transmission" and resets the counter; it
//! then increments the counter and stamps the entry with the current time. The packet is
//! long when the counter is larger than K. Memory is fixed and there is no per-connection
//! set-up or removal; the price is that connections hashing to the same entry share one
//! counter, exactly as in a real fixed-size table (no chaining, no collision handling).
//!
//! Readings we chose:
//! - The tuple ("source/destination IP addresses, port numbers") is (src node, dst node,
//!   flow id, to_side): the flow id stands for the port pair and `to_side` for the
//!   direction, so a connection's two directions are two keys, like `flow_key` elsewhere.
//!   The hash is a fixed integer mix (murmur3's 64-bit finaliser) scaled to the table with a
//!   multiply-shift: deterministic, no per-run salt, so runs are reproducible and a
//!   collision in one run is a collision in every run with the same flows.
//! - Order on a packet: idle check (now - last_seen > T_bar, strictly), reset to 0, then
//!   increment, then compare, so the packet that opens a new document is packet 1, and the
//!   first K packets after an idle gap are short, the (K+1)-th on long. An entry never used
//!   has counter 0, so it needs no reset.
//! - Every packet counts and is marked, control packets included (SYNs do not reset the
//!   counter: the hash scheme does not look at TCP flags; only idleness does).
//! - Report: the entries that had a packet within the last T_bar (their counter is live),
//!   counting below or at K as short and above K as long; these are entries, so colliding
//!   connections count once. "Now" for the report is the latest packet or tick the
//!   classifier has seen (it ticks every T_bar); entries touched within the last two T_bar
//!   are kept in a list so the report does not scan the whole table.
//! - Defaults: K = 7 packets and T_bar = 0.5 s (section 4.1: "T = 0.5 [sec] for sampling
//!   and hash algorithms", read as the hash algorithm's T_bar; K = 7 in 4.1 and 4.2). The
//!   paper's Table 3 holds only the RED/RIO parameters and gives no table size; our default
//!   2^16 entries (1.5 MB) makes collisions rare with the paper's 100 hosts (about 200
//!   keys: 0.3 expected colliding pairs) while keeping the table fixed.

use super::registry::{resolve_k, EdgeClassifierSpec};
use super::{Classifier, ClassifierReport};
use crate::engine::{secs_to_ns, Time};
use crate::model::tokuda::KSpec;
use crate::net::ClassMark;
use crate::net::Packet;

fn d_k() -> KSpec {
    KSpec::Pkts(7)
}
fn d_t_bar() -> f64 {
    0.5
}
fn d_size() -> u32 {
    65536
}

/// Largest table accepted (2^24 entries, 384 MB).
pub const MAX_TABLE: u32 = 1 << 24;

/// `type = "hashing"`: Tokuda et al. 2002's fixed hash table of counters and timestamps.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HashingClassifierSpec {
    /// Node on whose ingress packets are marked.
    pub node: String,
    /// K, packets: an entry's packets are long once its counter is larger than K
    /// (section 4.1: 7).
    /// A whole number, or `{ criterion = "tokuda-f", size = ..., p_t = ..., rtt_s = ... }`
    /// for the K minimising Tokuda et al.'s F(K) (`model::tokuda`), resolved by the
    /// scenario builder.
    #[serde(default = "d_k")]
    pub k: KSpec,
    /// T_bar, s: an entry idle for longer is reset by its next packet (section 4.1's
    /// T = 0.5 s "for sampling and hash algorithms").
    #[serde(default = "d_t_bar")]
    pub t_bar_s: f64,
    /// Entries in the table (not in the paper; default 65536).
    #[serde(default = "d_size")]
    pub table_size: u32,
}

impl EdgeClassifierSpec for HashingClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"";
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, field: &str) -> crate::Result<()> {
        self.k.check(&format!("{field}.k"))?;
        if self.k.pkts().is_none() {
            return Err(crate::Error::Internal(format!(
                "{field}.k: the criterion was not resolved (model::tokuda::KSpec::resolve)"
            )));
        }
        if !(self.t_bar_s.is_finite() && self.t_bar_s > 0.0) || secs_to_ns(self.t_bar_s) == 0 {
            return Err(crate::Error::input(
                format!("{field}.t_bar_s"),
                format!("must be a positive number of seconds, got {}", self.t_bar_s),
            ));
        }
        if !(1..=MAX_TABLE).contains(&self.table_size) {
            return Err(crate::Error::input(
                format!("{field}.table_size"),
                format!("must be between 1 and {MAX_TABLE} entries, got {}", self.table_size),
            ));
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn super::Classifier> {
        Box::new(HashingClassifier::new(
            self.k.pkts().expect("K resolved before check and build"),
            secs_to_ns(self.t_bar_s),
            self.table_size,
        ))
    }
    fn resolve_models(&mut self, field: &str, sizes: &crate::model::tokuda::SizeFn) -> crate::Result<()> {
        resolve_k(&mut self.k, field, sizes)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    count: u64,
    last: Time,
    /// In `active`.
    listed: bool,
}

pub struct HashingClassifier {
    k: u64,
    t_bar: Time,
    table: Vec<Entry>,
    /// Indices of entries with a packet in the last T_bar (plus some up to 2 T_bar old).
    active: Vec<u32>,
    /// Latest packet or tick time seen.
    now: Time,
}

/// murmur3's 64-bit finaliser.
#[inline]
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Hash of the tuple (src, dst, flow, to_side).
#[inline]
pub fn tuple_hash(p: &Packet) -> u64 {
    let addrs = (p.src as u64) << 32 | p.dst as u64;
    let ports = (p.flow as u64) << 1 | (p.to_side & 1) as u64;
    fmix64(fmix64(addrs) ^ ports.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

impl HashingClassifier {
    pub fn new(k: u64, t_bar: Time, table_size: u32) -> Self {
        let n = table_size.clamp(1, MAX_TABLE) as usize;
        HashingClassifier {
            k,
            t_bar,
            table: vec![Entry::default(); n],
            active: Vec::with_capacity(n.min(4096)),
            now: 0,
        }
    }
    /// The table entry a packet maps to.
    #[inline]
    pub fn index(&self, p: &Packet) -> usize {
        ((tuple_hash(p) as u128 * self.table.len() as u128) >> 64) as usize
    }
    /// Counter of the entry a packet maps to.
    pub fn counter(&self, p: &Packet) -> u64 {
        self.table[self.index(p)].count
    }
}

impl Classifier for HashingClassifier {
    fn kind(&self) -> &'static str {
        "hashing"
    }
    fn classify(&mut self, p: &mut Packet, now: Time, _flow_size: Option<u64>) {
        let i = self.index(p);
        let e = &mut self.table[i];
        if now.saturating_sub(e.last) > self.t_bar {
            e.count = 0;
        }
        e.count = e.count.saturating_add(1);
        e.last = now;
        p.class = if e.count > self.k { ClassMark::Long } else { ClassMark::Short };
        if !e.listed {
            e.listed = true;
            self.active.push(i as u32);
        }
        self.now = self.now.max(now);
    }
    fn period(&self) -> Option<Time> {
        Some(self.t_bar.max(1))
    }
    fn tick(&mut self, now: Time) {
        self.now = self.now.max(now);
        let (table, t_bar) = (&mut self.table, self.t_bar);
        self.active.retain(|&i| {
            let e = &mut table[i as usize];
            e.listed = now.saturating_sub(e.last) <= t_bar;
            e.listed
        });
    }
    fn report(&self) -> ClassifierReport {
        let (mut s, mut l) = (0, 0);
        for &i in &self.active {
            let e = &self.table[i as usize];
            if self.now.saturating_sub(e.last) <= self.t_bar {
                if e.count > self.k {
                    l += 1;
                } else {
                    s += 1;
                }
            }
        }
        ClassifierReport { flows_short: s, flows_long: l, threshold: self.k as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;
    const TB: Time = S / 2;

    fn pkt(flow: u32) -> Packet {
        Packet { src: 3, dst: 9, ..Packet::test_data(flow, 0) }
    }
    fn mark(c: &mut HashingClassifier, flow: u32, now: Time) -> ClassMark {
        let mut p = pkt(flow);
        c.classify(&mut p, now, None);
        p.class
    }

    #[test]
    fn counter_above_k_is_long() {
        let mut c = HashingClassifier::new(7, TB, 65536);
        let marks: Vec<_> = (0..10).map(|i| mark(&mut c, 1, i * 1000)).collect();
        assert_eq!(&marks[..7], &[ClassMark::Short; 7]);
        assert_eq!(&marks[7..], &[ClassMark::Long; 3], "packet K+1 on");
        assert_eq!(c.counter(&pkt(1)), 10);
    }

    #[test]
    fn idle_longer_than_t_bar_resets_the_counter() {
        let mut c = HashingClassifier::new(2, TB, 65536);
        for _ in 0..3 {
            mark(&mut c, 1, S);
        }
        // A gap of exactly T_bar is not idle: the count goes on.
        assert_eq!(mark(&mut c, 1, S + TB), ClassMark::Long);
        assert_eq!(c.counter(&pkt(1)), 4);
        // A gap longer than T_bar: a new document, counted from 1 again.
        assert_eq!(mark(&mut c, 1, S + 2 * TB + 1), ClassMark::Short);
        assert_eq!(c.counter(&pkt(1)), 1);
        assert_eq!(mark(&mut c, 1, S + 2 * TB + 2), ClassMark::Short);
        assert_eq!(mark(&mut c, 1, S + 2 * TB + 3), ClassMark::Long);
        // Ticks do not reset counters; the next packet after the gap does.
        c.tick(10 * S);
        assert_eq!(c.counter(&pkt(1)), 3);
    }

    #[test]
    fn colliding_flows_share_a_counter() {
        let mut c = HashingClassifier::new(7, TB, 1);
        assert_eq!(c.index(&pkt(1)), c.index(&pkt(2)));
        for _ in 0..5 {
            assert_eq!(mark(&mut c, 1, 0), ClassMark::Short);
        }
        // Flow 2 is new, but its entry already counts flow 1's five packets.
        let marks: Vec<_> = (0..3).map(|_| mark(&mut c, 2, 0)).collect();
        assert_eq!(
            marks,
            vec![ClassMark::Short, ClassMark::Short, ClassMark::Long],
            "the 8th packet of the shared entry is long"
        );
        assert_eq!(c.counter(&pkt(1)), 8);
        assert_eq!(c.report(), ClassifierReport { flows_short: 0, flows_long: 1, threshold: 7.0 }, "one entry");
    }

    #[test]
    fn hash_is_deterministic_and_spreads_tuples() {
        let a = HashingClassifier::new(7, TB, 65536);
        let b = HashingClassifier::new(7, TB, 65536);
        let mut seen = std::collections::HashSet::new();
        for f in 0..4096 {
            let p = pkt(f);
            assert_eq!(a.index(&p), b.index(&p));
            assert!(a.index(&p) < 65536);
            seen.insert(a.index(&p));
        }
        // 4096 keys in 65536 entries: about 128 collide (birthday), never many more.
        assert!(seen.len() > 3850, "{} distinct entries", seen.len());
        // Every field of the tuple matters.
        let p = pkt(1);
        let mut q = p;
        q.to_side = 0;
        let mut r = p;
        r.src = 4;
        let mut s = p;
        s.dst = 8;
        for other in [q, r, s] {
            assert_ne!(tuple_hash(&p), tuple_hash(&other));
        }
    }

    #[test]
    fn report_counts_entries_seen_within_t_bar() {
        let mut c = HashingClassifier::new(2, TB, 65536);
        for _ in 0..3 {
            mark(&mut c, 1, 0);
        }
        mark(&mut c, 2, 0);
        mark(&mut c, 3, TB / 2);
        assert_eq!(c.report(), ClassifierReport { flows_short: 2, flows_long: 1, threshold: 2.0 });
        c.tick(TB + TB / 4); // flows 1 and 2 idle for more than T_bar
        assert_eq!(c.report(), ClassifierReport { flows_short: 1, flows_long: 0, threshold: 2.0 });
        assert_eq!(c.active.len(), 1, "idle entries leave the active list");
        mark(&mut c, 1, 2 * TB);
        assert_eq!(
            c.report(),
            ClassifierReport { flows_short: 1, flows_long: 0, threshold: 2.0 },
            "flow 1 restarted; flow 3 now idle"
        );
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: HashingClassifierSpec = toml::from_str("node = \"left\"").unwrap();
        assert_eq!((s.k.pkts(), s.t_bar_s, s.table_size), (Some(7), 0.5, 65536));
        assert!(s.check("classifiers[0]").is_ok());
        assert!(toml::from_str::<HashingClassifierSpec>("node = \"left\"\nt_s = 1.0").is_err());
        let bad = HashingClassifierSpec { table_size: 0, ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.table_size"));
        let bad = HashingClassifierSpec { t_bar_s: -1.0, ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.t_bar_s"));
        let bad = HashingClassifierSpec { k: KSpec::Pkts(0), ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.k"));
        let c = s.build(1);
        assert_eq!((c.kind(), c.period(), c.report().threshold), ("hashing", Some(TB), 7.0));
    }
}
