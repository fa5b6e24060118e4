//! pFabric's minimal rate control (Alizadeh et al. 2013, section 4.2), one test per rule,
//! on `tcp::harness` (a clock set by hand, hand-made ACKs). The configuration is built from
//! a scenario's `[tcp]` table, so the settings `cc = "pfabric"` implies are under test too.

use savanna_core::tcp::cc::pfabric::PROBE_AFTER;
use savanna_core::tcp::cc::Cc;
use savanna_core::tcp::harness::{is_retx, ms, seqs, Harness};
use savanna_core::tcp::spec::build;
use savanna_core::tcp::{TcpConfig, Variant};

/// The fixed timeout: 3 RTTs of 100 us.
const RTO_S: f64 = 300e-6;
/// One BDP, packets (the paper's 12 at 10 Gb/s and 14.4 us).
const BDP: u32 = 12;

fn cfg(extra: &str) -> TcpConfig {
    let s = format!(
        "cc = \"pfabric\"\nhandshake = false\ninit_cwnd = {BDP}\nmin_rto_s = {RTO_S}\nmax_window = 1000\n{extra}"
    );
    let t: toml::Table = toml::from_str(&s).unwrap();
    build("tcp", &toml::Table::new(), &t, 1500, 40).unwrap()
}

fn sender(extra: &str) -> (Harness, Vec<u64>) {
    let mut h = Harness::sender(cfg(extra), 10_000);
    let first = seqs(&h.open());
    (h, first)
}

fn probing(h: &Harness) -> bool {
    match h.ep.cc() {
        Cc::Pfabric(p) => p.probing(),
        c => panic!("not pFabric: {c:?}"),
    }
}

fn rto_after(h: &Harness) -> i64 {
    h.ep.rto_deadline().expect("timer running") as i64 - h.now as i64
}

/// 4.2 (i): a flow starts at line rate, one BDP in its first window, and with ssthresh =
/// that window there is no slow start: a window of ACKs adds one packet, not a window.
#[test]
fn pfabric_starts_at_line_rate_without_slow_start() {
    let (mut h, first) = sender("");
    assert_eq!(h.cfg.variant, Variant::Pfabric);
    assert_eq!(first, (0..BDP as u64).collect::<Vec<_>>(), "one BDP at once");
    assert_eq!(h.ep.ssthresh(), BDP as f64);
    for a in 1..=BDP as u64 {
        h.at(ms(0.1) + a * 1000);
        h.ack(a);
    }
    let w = h.ep.cwnd();
    assert!(w > BDP as f64 + 0.9 && w < BDP as f64 + 1.0, "additive increase: {w}");
}

/// 4.2 (iii): no fast retransmission; duplicate ACKs, with or without SACK blocks, send
/// nothing again and leave the window as it was.
#[test]
fn pfabric_never_fast_retransmits() {
    for sack in [false, true] {
        let (mut h, _) = sender(if sack { "sack = true" } else { "" });
        h.at(ms(0.1));
        h.ack(1);
        let w = h.ep.cwnd();
        let mut out = Vec::new();
        for k in 0..10u64 {
            out.extend(if sack { h.ack_sack(1, &[(2, 3 + k)]) } else { h.ack(1) });
        }
        assert!(!out.iter().any(is_retx), "sack = {sack}: a retransmission on duplicate ACKs");
        assert_eq!(h.ep.cwnd(), w, "sack = {sack}");
    }
}

/// 4.2 (iii): the timeout is small and fixed: min_rto_s from the first packet on, whatever
/// the RTT samples say, and without back-off over consecutive timeouts.
#[test]
fn pfabric_timeout_is_fixed() {
    let (mut h, _) = sender("");
    let rto = (RTO_S * 1e9).round() as i64;
    assert_eq!(rto_after(&h), rto, "before any RTT sample");
    h.at(ms(5.0)); // a 5 ms RTT sample: RFC 6298 would give at least 15 ms
    h.ack(1);
    assert_eq!(rto_after(&h), rto, "after a large RTT sample");
    for k in 0..3 {
        h.fire_rto();
        assert_eq!(rto_after(&h), rto, "after timeout {}", k + 1);
    }
}

/// 4.2 (iii): on a timeout the flow slow-starts from one packet with ssthresh = half the
/// window it had.
#[test]
fn pfabric_timeout_slow_starts_with_half_the_window() {
    let (mut h, _) = sender("");
    h.at(ms(0.1));
    h.ack(1);
    let w = h.ep.cwnd();
    let out = h.fire_rto();
    assert_eq!(seqs(&out), vec![1], "one packet, the oldest outstanding");
    assert_eq!(h.ep.cwnd(), 1.0);
    assert_eq!(h.ep.ssthresh(), (w / 2.0).floor());
    // Slow start: each ACK adds a packet below ssthresh.
    h.at(h.now + ms(0.1));
    h.ack(2);
    assert_eq!(h.ep.cwnd(), 2.0);
}

/// 4.2 (iv): after PROBE_AFTER consecutive timeouts the flow is in probe mode, sending one
/// packet per (fixed) timeout; an ACK of new data ends it with a fresh slow start up to the
/// initial window, and a timeout that an ACK interrupts does not count towards it.
#[test]
fn pfabric_probe_mode_after_consecutive_timeouts() {
    let (mut h, _) = sender("");
    h.at(ms(0.1));
    h.ack(1);
    for k in 1..PROBE_AFTER {
        h.fire_rto();
        assert!(!probing(&h), "probe mode after only {k} timeouts");
    }
    // An ACK of new data resets the count.
    h.at(h.now + ms(0.01));
    h.ack(2);
    for _ in 1..PROBE_AFTER {
        h.fire_rto();
    }
    assert!(!probing(&h));
    let out = h.fire_rto();
    assert!(probing(&h), "{PROBE_AFTER} in a row");
    assert_eq!(seqs(&out), vec![2], "one probe packet");
    let out = h.fire_rto();
    assert_eq!(seqs(&out), vec![2], "one probe per timeout");
    assert!(probing(&h));
    // The probe is answered: slow start again, from one packet up to one BDP.
    h.at(h.now + ms(0.1));
    let out = h.ack(3);
    assert!(!probing(&h));
    assert_eq!((h.ep.cwnd(), h.ep.ssthresh()), (2.0, BDP as f64));
    assert_eq!(seqs(&out), vec![3, 4], "slow start sends two");
}

/// Duplicate-ACK machinery that would run beside the rate control is refused by name.
#[test]
fn pfabric_refuses_limited_transmit_and_rack() {
    for (extra, key) in [("limited_transmit = true", "tcp.limited_transmit"), ("sack = true\nrack = true", "tcp.rack")]
    {
        let s = format!("cc = \"pfabric\"\nmin_rto_s = 0.001\n{extra}");
        let t: toml::Table = toml::from_str(&s).unwrap();
        let e = build("tcp", &toml::Table::new(), &t, 1500, 40).unwrap_err();
        assert!(e.to_string().contains(key), "{e}");
    }
}
