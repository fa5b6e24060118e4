//! Guo & Matta 2001 ("The War Between Mice and Elephants", section III and appendix A):
//! the edge router keeps a packet counter per active flow; the first L_t packets of a flow
//! are marked short, the following ones long. Flow state is soft: every T_u the table is
//! scanned and flows with no packet in the last T_u are removed. With `adaptive`, every T_c
//! the router counts its short (counter <= L_t) and long flows and moves L_t by one towards
//! the target short-to-long ratio SLR: L_t - 1 if cnt_s > cnt_l * SLR, else L_t + 1.
//! Defaults from their Table III: SLR 3, T_u 1 s, T_c 10 s. The paper does not give the
//! initial L_t; we start at 20 packets (`initial_threshold`) and keep L_t >= 1.

use super::registry::EdgeClassifierSpec;
use super::{flow_key, Classifier, ClassifierReport, FlowTable};
use crate::engine::{secs_to_ns, Time};
use crate::error::Result;
use crate::net::ClassMark;
use crate::net::Packet;
use crate::spec::{bad, positive, time_s};

fn d_lt() -> u64 {
    20
}
fn t() -> bool {
    true
}
fn d_slr() -> f64 {
    3.0
}
fn d_tu() -> f64 {
    1.0
}
fn d_tc() -> f64 {
    10.0
}
fn one() -> u64 {
    1
}
fn d_max_lt() -> u64 {
    1_000_000
}

/// `type = "threshold"`: Guo & Matta 2001's edge counter with threshold L_t.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThresholdClassifierSpec {
    /// Node on whose ingress packets are marked.
    pub node: String,
    /// L_t at the start, packets (the paper does not give it).
    #[serde(default = "d_lt")]
    pub initial_threshold: u64,
    /// Adapt L_t every T_c towards the target SLR (Guo & Matta appendix A); false: static L_t.
    #[serde(default = "t")]
    pub adaptive: bool,
    /// Target ratio of active short to active long flows (Table III: 3).
    #[serde(default = "d_slr")]
    pub slr: f64,
    /// Soft-state period T_u, s (Table III: 1 s).
    #[serde(default = "d_tu")]
    pub t_u_s: f64,
    /// Threshold-control period T_c, s (Table III: 10 s).
    #[serde(default = "d_tc")]
    pub t_c_s: f64,
    /// Lowest L_t the control may reach, packets.
    #[serde(default = "one")]
    pub min_threshold: u64,
    /// Highest L_t the control may reach, packets.
    #[serde(default = "d_max_lt")]
    pub max_threshold: u64,
}

impl EdgeClassifierSpec for ThresholdClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"";
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.initial_threshold == 0 {
            return bad(format!("{field}.initial_threshold"), "must be at least 1 packet");
        }
        positive(&format!("{field}.slr"), self.slr)?;
        time_s(&format!("{field}.t_u_s"), self.t_u_s)?;
        time_s(&format!("{field}.t_c_s"), self.t_c_s)?;
        if self.min_threshold == 0 || self.min_threshold > self.max_threshold {
            return bad(
                format!("{field}.min_threshold"),
                format!("must be between 1 and max_threshold ({}), got {}", self.max_threshold, self.min_threshold),
            );
        }
        if !(self.min_threshold..=self.max_threshold).contains(&self.initial_threshold) {
            return bad(format!("{field}.initial_threshold"), "must lie between min_threshold and max_threshold");
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn Classifier> {
        Box::new(ThresholdClassifier::new(ThresholdParams {
            initial_threshold: self.initial_threshold,
            adaptive: self.adaptive,
            slr: self.slr,
            t_u: secs_to_ns(self.t_u_s),
            t_c: secs_to_ns(self.t_c_s),
            min_threshold: self.min_threshold,
            max_threshold: self.max_threshold,
        }))
    }
}

#[derive(Clone, Debug)]
pub struct ThresholdParams {
    pub initial_threshold: u64,
    pub adaptive: bool,
    pub slr: f64,
    pub t_u: Time,
    pub t_c: Time,
    pub min_threshold: u64,
    pub max_threshold: u64,
}

pub struct ThresholdClassifier {
    p: ThresholdParams,
    /// flow key -> (packets seen, last time seen)
    table: FlowTable<(u64, Time)>,
    lt: u64,
    next_expiry: Time,
    next_control: Time,
}

impl ThresholdClassifier {
    pub fn new(p: ThresholdParams) -> Self {
        ThresholdClassifier {
            lt: p.initial_threshold,
            next_expiry: p.t_u,
            next_control: p.t_c,
            table: FlowTable::with_capacity_and_hasher(1024, Default::default()),
            p,
        }
    }
    pub fn threshold(&self) -> u64 {
        self.lt
    }
    pub fn flows(&self) -> usize {
        self.table.len()
    }
    fn counts(&self) -> (u64, u64) {
        let short = self.table.values().filter(|(n, _)| *n <= self.lt).count() as u64;
        (short, self.table.len() as u64 - short)
    }
}

impl Classifier for ThresholdClassifier {
    fn kind(&self) -> &'static str {
        "threshold"
    }
    fn classify(&mut self, p: &mut Packet, now: Time, _flow_size: Option<u64>) {
        let e = self.table.entry(flow_key(p)).or_insert((0, now));
        e.0 += 1;
        e.1 = now;
        p.class = if e.0 <= self.lt { ClassMark::Short } else { ClassMark::Long };
    }
    fn period(&self) -> Option<Time> {
        Some(if self.p.adaptive { self.p.t_u.min(self.p.t_c) } else { self.p.t_u })
    }
    fn tick(&mut self, now: Time) {
        if now >= self.next_expiry {
            let t_u = self.p.t_u;
            self.table.retain(|_, (_, last)| now.saturating_sub(*last) < t_u);
            self.next_expiry = now + t_u;
        }
        if self.p.adaptive && now >= self.next_control {
            let (s, l) = self.counts();
            if s as f64 > l as f64 * self.p.slr {
                self.lt = self.lt.saturating_sub(1).max(self.p.min_threshold);
            } else {
                self.lt = (self.lt + 1).min(self.p.max_threshold);
            }
            self.next_control = now + self.p.t_c;
        }
    }
    fn report(&self) -> ClassifierReport {
        let (s, l) = self.counts();
        ClassifierReport { flows_short: s, flows_long: l, threshold: self.lt as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32) -> Packet {
        Packet::test_data(flow, 0)
    }
    const S: Time = 1_000_000_000;

    fn params(adaptive: bool) -> ThresholdParams {
        ThresholdParams {
            initial_threshold: 5,
            adaptive,
            slr: 3.0,
            t_u: S,
            t_c: 10 * S,
            min_threshold: 1,
            max_threshold: 1_000_000,
        }
    }

    #[test]
    fn first_lt_packets_are_short_then_long() {
        let mut c = ThresholdClassifier::new(params(false));
        let marks: Vec<_> = (0..8)
            .map(|_| {
                let mut p = pkt(1);
                c.classify(&mut p, 0, None);
                p.class
            })
            .collect();
        assert_eq!(&marks[..5], &[ClassMark::Short; 5]);
        assert_eq!(&marks[5..], &[ClassMark::Long; 3]);
        // Another flow starts short; the other direction of flow 1 counts apart.
        let mut q = pkt(2);
        c.classify(&mut q, 0, None);
        assert_eq!(q.class, ClassMark::Short);
        let mut a = pkt(1);
        a.to_side = 0;
        c.classify(&mut a, 0, None);
        assert_eq!(a.class, ClassMark::Short);
    }

    #[test]
    fn soft_state_expires_after_t_u_of_silence() {
        let mut c = ThresholdClassifier::new(params(false));
        for _ in 0..10 {
            let mut p = pkt(1);
            c.classify(&mut p, 0, None);
        }
        let mut p = pkt(2);
        c.classify(&mut p, S / 2, None);
        c.tick(S); // flow 1 idle for 1 s: removed; flow 2 idle 0.5 s: kept
        assert_eq!(c.flows(), 1);
        let mut p = pkt(1);
        c.classify(&mut p, S + 1, None);
        assert_eq!(p.class, ClassMark::Short, "an expired flow starts over as short");
        c.tick(2 * S);
        c.tick(3 * S);
        assert_eq!(c.flows(), 0);
    }

    #[test]
    fn slr_control_moves_the_threshold_the_right_way() {
        // All flows are seen 0.5 s before the control instant, so the soft-state scan at the
        // same instant keeps them. Many short flows (counter <= L_t), one long: cnt_s > cnt_l * SLR, so L_t falls.
        let mut c = ThresholdClassifier::new(params(true));
        for f in 0..10 {
            let mut p = pkt(f);
            c.classify(&mut p, 9 * S + S / 2, None);
        }
        for _ in 0..20 {
            let mut p = pkt(100);
            c.classify(&mut p, 9 * S + S / 2, None);
        }
        c.tick(10 * S);
        assert_eq!(c.threshold(), 4);
        // Mostly long flows: cnt_s <= cnt_l * SLR, so L_t rises.
        let mut c = ThresholdClassifier::new(params(true));
        for f in 0..5 {
            for _ in 0..20 {
                let mut p = pkt(f);
                c.classify(&mut p, 9 * S + S / 2, None);
            }
        }
        c.tick(10 * S);
        assert_eq!(c.threshold(), 6);
        assert_eq!(c.report(), ClassifierReport { flows_short: 0, flows_long: 5, threshold: 6.0 });
    }
}
