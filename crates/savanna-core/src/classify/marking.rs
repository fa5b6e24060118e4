//! Tokuda, Hasegawa & Murata 2002, section 3.1, "packet marking" (the edge-router scheme of
//! Guo & Matta 2001 as Tokuda et al. describe it): the edge router keeps a packet counter
//! per connection, increments it for every packet the connection injects, and marks the
//! connection's packets long once the counter is larger than K. It is exact: the paper
//! credits its accuracy (Fig. 5) to seeing each connection's SYN, i.e. its initiation.
//!
//! Readings we chose:
//! - A "connection" is one direction of one connection (`flow_key`: the flow id and the side
//!   it travels to), like every classifier here, so data packets and ACKs count apart, and
//!   every packet counts, control packets included.
//! - "Larger than K": the counter is incremented first, then compared, so the first K
//!   packets of a connection are short and the (K+1)-th packet on is long (a connection of
//!   at most K packets is short throughout, the paper's definition of short-lived).
//! - A SYN starts a connection: a packet carrying the SYN flag (`Syn`, and `SynAck` for the
//!   reverse direction) resets its direction's counter to zero before being counted, so it
//!   is packet 1. A retransmitted SYN resets again (nothing else has been sent yet).
//! - Termination. The paper's marking also sees a connection end (FIN); our TCP sends no
//!   FIN, so the table is soft state instead: every `idle_timeout_s` the table is scanned
//!   and entries with no packet for `idle_timeout_s` are removed (so an entry lives between
//!   one and two timeouts after its last packet). The default, 64 s, exceeds the 60 s
//!   ceiling on TCP's retransmission timeout (RFC 6298, our `max_rto_s` default), so a live
//!   connection, even one backing off, is never forgotten: the timeout bounds memory without
//!   changing any packet's class, which keeps marking exact as in the paper. A connection
//!   silent for longer restarts as short.
//! - Report. Since entries outlive their connections by up to two timeouts, the report does
//!   not count the whole table: at each tick (every `report_window_s`, default 1 s, Guo &
//!   Matta's T_u) the entries that received a packet within the last `report_window_s` are
//!   counted as active, short (counter <= K) or long, and `report()` returns the counts of
//!   the latest tick. This affects the report only, never a packet's class.
//! - Defaults: K = 7 packets (section 4.1 and 4.2: "K is fixedly set to 7 [packets]
//!   considering the average size of WWW documents"). The paper's Table 3 holds only the
//!   RED/RIO parameters; it gives no timeout (marking needs none there).

use super::registry::{resolve_k, EdgeClassifierSpec};
use super::{flow_key, Classifier, ClassifierReport, FlowTable};
use crate::engine::{secs_to_ns, Time};
use crate::model::tokuda::KSpec;
use crate::net::ClassMark;
use crate::net::{Packet, PktKind};

fn d_k() -> KSpec {
    KSpec::Pkts(7)
}
fn d_idle() -> f64 {
    64.0
}
fn d_window() -> f64 {
    1.0
}

/// `type = "marking"`: Tokuda et al. 2002's per-connection packet counter at the edge.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkingClassifierSpec {
    /// Node on whose ingress packets are marked.
    pub node: String,
    /// K, packets: a connection's first K packets are short, the (K+1)-th on long
    /// (Tokuda et al. sections 4.1-4.2: 7).
    /// A whole number, or `{ criterion = "tokuda-f", size = ..., p_t = ..., rtt_s = ... }`
    /// for the K minimising Tokuda et al.'s F(K) (`model::tokuda`), resolved by the
    /// scenario builder.
    #[serde(default = "d_k")]
    pub k: KSpec,
    /// Entries idle this long are removed, s (not in the paper, whose marking sees FINs;
    /// default 64 s, above TCP's 60 s maximum RTO, so no live connection is forgotten).
    #[serde(default = "d_idle")]
    pub idle_timeout_s: f64,
    /// The report counts connections with a packet in the last this-many seconds (report
    /// only; default 1 s, Guo & Matta's T_u).
    #[serde(default = "d_window")]
    pub report_window_s: f64,
}

impl EdgeClassifierSpec for MarkingClassifierSpec {
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
        for (name, v) in [("idle_timeout_s", self.idle_timeout_s), ("report_window_s", self.report_window_s)] {
            if !(v.is_finite() && v > 0.0) || secs_to_ns(v) == 0 {
                return Err(crate::Error::input(
                    format!("{field}.{name}"),
                    format!("must be a positive number of seconds, got {v}"),
                ));
            }
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn super::Classifier> {
        Box::new(MarkingClassifier::new(
            self.k.pkts().expect("K resolved before check and build"),
            secs_to_ns(self.idle_timeout_s),
            secs_to_ns(self.report_window_s),
        ))
    }
    fn resolve_models(&mut self, field: &str, sizes: &crate::model::tokuda::SizeFn) -> crate::Result<()> {
        resolve_k(&mut self.k, field, sizes)
    }
}

pub struct MarkingClassifier {
    k: u64,
    idle_timeout: Time,
    window: Time,
    /// flow key -> (packets counted since its last SYN, last time seen)
    table: FlowTable<(u64, Time)>,
    next_expiry: Time,
    /// Active (short, long) connections at the latest tick.
    counts: (u64, u64),
}

impl MarkingClassifier {
    pub fn new(k: u64, idle_timeout: Time, window: Time) -> Self {
        let idle_timeout = idle_timeout.max(1);
        MarkingClassifier {
            k,
            idle_timeout,
            window: window.max(1),
            table: FlowTable::with_capacity_and_hasher(1024, Default::default()),
            next_expiry: idle_timeout,
            counts: (0, 0),
        }
    }
    /// Entries in the table (live and not yet expired).
    pub fn entries(&self) -> usize {
        self.table.len()
    }
}

impl Classifier for MarkingClassifier {
    fn kind(&self) -> &'static str {
        "marking"
    }
    fn classify(&mut self, p: &mut Packet, now: Time, _flow_size: Option<u64>) {
        let e = self.table.entry(flow_key(p)).or_insert((0, now));
        if matches!(p.kind, PktKind::Syn | PktKind::SynAck) {
            e.0 = 0;
        }
        e.0 += 1;
        e.1 = now;
        p.class = if e.0 > self.k { ClassMark::Long } else { ClassMark::Short };
    }
    fn period(&self) -> Option<Time> {
        Some(self.window)
    }
    fn tick(&mut self, now: Time) {
        if now >= self.next_expiry {
            let t = self.idle_timeout;
            self.table.retain(|_, (_, last)| now.saturating_sub(*last) < t);
            self.next_expiry = now + t;
        }
        let (w, k) = (self.window, self.k);
        let (mut s, mut l) = (0, 0);
        for (n, last) in self.table.values() {
            if now.saturating_sub(*last) < w {
                if *n > k {
                    l += 1;
                } else {
                    s += 1;
                }
            }
        }
        self.counts = (s, l);
    }
    fn report(&self) -> ClassifierReport {
        ClassifierReport { flows_short: self.counts.0, flows_long: self.counts.1, threshold: self.k as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Time = 1_000_000_000;

    fn pkt(flow: u32, kind: PktKind) -> Packet {
        Packet { kind, ..Packet::test_data(flow, 0) }
    }
    fn mark(c: &mut MarkingClassifier, flow: u32, kind: PktKind, now: Time) -> ClassMark {
        let mut p = pkt(flow, kind);
        c.classify(&mut p, now, None);
        p.class
    }

    #[test]
    fn first_k_packets_short_then_long() {
        let mut c = MarkingClassifier::new(7, 64 * S, S);
        let mut marks = vec![mark(&mut c, 1, PktKind::Syn, 0)];
        marks.extend((0..9).map(|_| mark(&mut c, 1, PktKind::Data, 0)));
        assert_eq!(&marks[..7], &[ClassMark::Short; 7], "packets 1..=K (the SYN is packet 1)");
        assert_eq!(&marks[7..], &[ClassMark::Long; 3], "packet K+1 on");
        // The other direction of the connection counts apart (its SYN-ACK is its packet 1).
        let mut a = pkt(1, PktKind::SynAck);
        a.to_side = 0;
        c.classify(&mut a, 0, None);
        assert_eq!(a.class, ClassMark::Short);
    }

    #[test]
    fn syn_resets_the_counter() {
        let mut c = MarkingClassifier::new(3, 64 * S, S);
        for _ in 0..5 {
            mark(&mut c, 1, PktKind::Data, 0);
        }
        assert_eq!(mark(&mut c, 1, PktKind::Data, 0), ClassMark::Long);
        // A new connection with the same key: its SYN is packet 1 again.
        assert_eq!(mark(&mut c, 1, PktKind::Syn, S), ClassMark::Short);
        assert_eq!(mark(&mut c, 1, PktKind::Data, S), ClassMark::Short);
        assert_eq!(mark(&mut c, 1, PktKind::Data, S), ClassMark::Short);
        assert_eq!(mark(&mut c, 1, PktKind::Data, S), ClassMark::Long);
        // A SYN-ACK resets its own direction.
        let mut p = pkt(1, PktKind::SynAck);
        p.to_side = 0;
        for _ in 0..4 {
            c.classify(&mut p, S, None);
        }
        assert_eq!(p.class, ClassMark::Short, "each SYN-ACK restarts the count");
    }

    #[test]
    fn idle_entries_expire_and_live_ones_stay() {
        let mut c = MarkingClassifier::new(2, 64 * S, S);
        for _ in 0..5 {
            mark(&mut c, 1, PktKind::Data, 0);
            mark(&mut c, 2, PktKind::Data, 0);
        }
        // Flow 2 keeps sending (a backed-off retransmission every 60 s); flow 1 falls silent.
        mark(&mut c, 2, PktKind::Data, 60 * S);
        c.tick(64 * S);
        assert_eq!(c.entries(), 1, "flow 1, idle 64 s, removed; flow 2 kept");
        assert_eq!(mark(&mut c, 2, PktKind::Data, 100 * S), ClassMark::Long, "a live connection keeps its count");
        assert_eq!(mark(&mut c, 1, PktKind::Data, 100 * S), ClassMark::Short, "an expired one starts over");
    }

    #[test]
    fn report_counts_recently_active_connections() {
        let mut c = MarkingClassifier::new(2, 64 * S, S);
        for _ in 0..3 {
            mark(&mut c, 1, PktKind::Data, S / 2);
        }
        mark(&mut c, 2, PktKind::Data, S / 2);
        mark(&mut c, 3, PktKind::Data, S / 4);
        c.tick(S);
        assert_eq!(c.report(), ClassifierReport { flows_short: 2, flows_long: 1, threshold: 2.0 });
        mark(&mut c, 3, PktKind::Data, S + S / 2);
        c.tick(2 * S);
        assert_eq!(
            c.report(),
            ClassifierReport { flows_short: 1, flows_long: 0, threshold: 2.0 },
            "only flow 3 sent in the last second"
        );
        assert_eq!(c.entries(), 3, "the others are kept until the idle timeout");
    }

    #[test]
    fn spec_defaults_and_checks() {
        let s: MarkingClassifierSpec = toml::from_str("node = \"left\"").unwrap();
        assert_eq!((s.k.pkts(), s.idle_timeout_s, s.report_window_s), (Some(7), 64.0, 1.0));
        assert!(s.check("classifiers[0]").is_ok());
        assert!(toml::from_str::<MarkingClassifierSpec>("node = \"left\"\nK = 3").is_err());
        let bad = MarkingClassifierSpec { k: KSpec::Pkts(0), ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.k"));
        let bad = MarkingClassifierSpec { idle_timeout_s: 0.0, ..s.clone() };
        assert!(matches!(bad.check("c"), Err(crate::Error::Input { field, .. }) if field == "c.idle_timeout_s"));
        let c = s.build(1);
        assert_eq!((c.kind(), c.period(), c.report().threshold), ("marking", Some(S), 7.0));
    }
}
