//! Latency of a TCP transfer of d packets under independent packet loss p, as Guo & Matta
//! 2001 write it ("The War Between Mice and Elephants", BU-CS-2001-005, section II-A,
//! eq. (1)-(2), plotted in Fig. 2(a) with RTT = 0.1 s, RTO = 4 RTT and ITO = 3 s).
//!
//! - eq. (1), the first packet, whose loss needs the initial timeout:
//!   E[T_f] = RTT (1-p) + ITO (1-p) sum_{i=0}^{6} p^(i+1) 2^i.
//! - eq. (2), the rest, from Cardwell, Savage & Anderson 2000 ("Modeling TCP Latency",
//!   the paper's [11]) without connection set-up: E[T_r] = E[T_ss] + E[T_loss] + E[T_ca],
//!   E[T_ss] = RTT log2(E[d_ss] + 1),
//!   E[T_loss] = (1 - (1-p)^d) (Q(p, E[W_ss]) E[Z^TO] + (1 - Q(p, E[W_ss])) RTT),
//!   E[T_ca] = (d - E[d_ss]) / R(p, RTT, RTO).
//!
//! The paper omits the inner formulas ("please refer to [11, 23]"); we take Cardwell et
//! al.'s with no delayed ACKs (the paper's footnote 6: b = 1, so the window doubles per
//! round from w1 = 1) and no receiver-window limit (footnote 7):
//! - E[d_ss] = (1 - (1-p)^d)(1-p)/p + 1, packets sent in the initial slow start;
//! - E[W_ss] = (E[d_ss] + 1) / 2, the window it reaches;
//! - Q(p, w): Padhye et al.'s probability that a loss in a window of w packets is found by
//!   a timeout (`padhye::q_hat`); E[Z^TO] = RTO (1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 +
//!   32p^6) / (1-p), a timeout sequence (`padhye::backoff_factor`);
//! - R: Padhye et al.'s full steady-state model (`padhye::throughput_full`, b = 1).
//!
//! Readings: (a) eq. (2) is applied to the whole d, as printed (not to the d - 1 packets
//! after the first); (b) Cardwell's E[d_ss] counts the lost packet, so for a loss-free
//! transfer (p -> 0) it gives d + 1, one more packet than the file holds, and d - E[d_ss]
//! goes negative; we cap E[d_ss] at d (the cap binds only when p < ~2/d^2), so E[T_ca] is
//! never negative and p = 0 gives RTT + RTT log2(d + 1); (c) p must be below 1 (eq. (1)'s
//! sum stops at six backoffs, "assuming p is small enough").

use super::padhye;

/// The parts of the expected latency, seconds (and the slow-start quantities).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Latency {
    /// E[T_f], eq. (1).
    pub first: f64,
    /// E[T_ss].
    pub slow_start: f64,
    /// E[T_loss].
    pub loss: f64,
    /// E[T_ca].
    pub ca: f64,
    /// E[T_f] + E[T_r].
    pub total: f64,
    /// E[d_ss], packets (capped at d).
    pub d_ss: f64,
    /// E[W_ss], packets.
    pub w_ss: f64,
    /// Q(p, E[W_ss]).
    pub q_timeout: f64,
}

/// Eq. (1): expected time to deliver the first packet, seconds.
pub fn first_packet(p: f64, rtt_s: f64, ito_s: f64) -> f64 {
    let backoffs: f64 = (0..=6).map(|i| p.powi(i + 1) * 2f64.powi(i)).sum();
    rtt_s * (1.0 - p) + ito_s * (1.0 - p) * backoffs
}

/// Cardwell et al.'s E[d_ss] for a d-packet transfer, capped at d (reading (b)).
pub fn expected_d_ss(d: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return d;
    }
    let raw = lost_within(d, p) * (1.0 - p) / p + 1.0;
    raw.min(d)
}

/// 1 - (1-p)^d without cancellation at small p.
fn lost_within(d: f64, p: f64) -> f64 {
    -(d * (-p).ln_1p()).exp_m1()
}

/// Check the arguments; the message names the argument.
pub fn check(d: f64, p: f64, rtt_s: f64, rto_s: f64, ito_s: f64) -> Result<(), String> {
    if !(d.is_finite() && d >= 1.0) {
        return Err(format!("d: must be a number of packets >= 1, got {d}"));
    }
    if !(0.0..1.0).contains(&p) {
        return Err(format!("p: must be a loss probability in [0, 1), got {p}"));
    }
    for (name, v) in [("rtt_s", rtt_s), ("rto_s", rto_s), ("ito_s", ito_s)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(format!("{name}: must be a positive number of seconds, got {v}"));
        }
    }
    Ok(())
}

/// Eq. (1) + (2): expected latency of a d-packet transfer (arguments as [`check`] wants).
pub fn latency(d: f64, p: f64, rtt_s: f64, rto_s: f64, ito_s: f64) -> Latency {
    let first = first_packet(p, rtt_s, ito_s);
    let d_ss = expected_d_ss(d, p);
    let w_ss = (d_ss + 1.0) / 2.0;
    let slow_start = rtt_s * (d_ss + 1.0).log2();
    let q_timeout = padhye::q_hat(p, w_ss);
    let z_to = rto_s * padhye::backoff_factor(p) / (1.0 - p);
    let loss = lost_within(d, p) * (q_timeout * z_to + (1.0 - q_timeout) * rtt_s);
    let left = d - d_ss;
    let ca = if left > 0.0 { left / padhye::throughput_full(p, rtt_s, rto_s, 1.0, f64::INFINITY) } else { 0.0 };
    Latency { first, slow_start, loss, ca, total: first + slow_start + loss + ca, d_ss, w_ss, q_timeout }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 2(a)'s setting.
    const RTT: f64 = 0.1;
    const RTO: f64 = 0.4;
    const ITO: f64 = 3.0;

    fn total(d: f64, p: f64) -> f64 {
        latency(d, p, RTT, RTO, ITO).total
    }

    #[test]
    fn first_packet_by_hand() {
        // p = 0.1: 0.1 * 0.9 + 3 * 0.9 * (0.1 + 0.02 + 0.004 + 0.0008 + 0.00016 + 0.000032
        // + 0.0000064) = 0.09 + 2.7 * 0.1249984.
        assert!((first_packet(0.1, RTT, ITO) - (0.09 + 2.7 * 0.1249984)).abs() < 1e-12);
        assert_eq!(first_packet(0.0, RTT, ITO), RTT);
        // The ITO term dominates as soon as p is a few percent: each loss costs seconds.
        assert!(first_packet(0.05, RTT, ITO) > 1.5 * RTT);
    }

    #[test]
    fn cardwell_slow_start_count() {
        // d = 1000, p = 0.05: (1 - 0.95^1000) * 19 + 1 = 20 (0.95^1000 ~ 5e-23).
        assert!((expected_d_ss(1000.0, 0.05) - 20.0).abs() < 1e-9);
        // Small p: the raw formula exceeds d; capped.
        assert_eq!(expected_d_ss(10.0, 1e-6), 10.0);
        assert_eq!(expected_d_ss(10.0, 0.0), 10.0);
        // Above the cap region it is the formula: d = 10, p = 0.2: (1 - 0.8^10) * 4 + 1.
        assert!((expected_d_ss(10.0, 0.2) - ((1.0 - 0.8f64.powi(10)) * 4.0 + 1.0)).abs() < 1e-12);
    }

    #[test]
    fn loss_free_limit() {
        for d in [1.0, 7.0, 100.0, 1e5] {
            let l = latency(d, 0.0, RTT, RTO, ITO);
            assert!((l.total - (RTT + RTT * (d + 1.0).log2())).abs() < 1e-12, "d={d}");
            assert_eq!((l.loss, l.ca), (0.0, 0.0));
            // Continuous in p at 0 (the cap on E[d_ss] binds below p ~ 2/d^2).
            assert!((total(d, 1e-12) - l.total).abs() < 1e-6 * l.total, "d={d}");
        }
    }

    /// Very long transfers run at Padhye's rate: E[T]/d -> 1/R(p).
    #[test]
    fn long_flows_approach_padhye() {
        for p in [0.001, 0.01, 0.05, 0.2] {
            let r = padhye::throughput_full(p, RTT, RTO, 1.0, f64::INFINITY);
            let d = 1e7;
            let per_pkt = total(d, p) / d;
            assert!(((per_pkt * r) - 1.0).abs() < 1e-3, "p={p}: {per_pkt} vs {}", 1.0 / r);
        }
    }

    /// Fig. 2(a) as the text reads it: a short flow's latency hardly moves at small loss
    /// rates and rises steeply at large ones; a very long flow's latency grows steadily
    /// with the loss rate; latency never falls as p grows.
    #[test]
    fn fig2a_shape() {
        let ps = [1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3];
        for d in [10.0, 100.0, 1000.0, 1e5] {
            for w in ps.windows(2) {
                assert!(total(d, w[1]) >= total(d, w[0]), "d={d}: not monotone at {w:?}");
            }
        }
        let short = 10.0;
        assert!(total(short, 1e-3) / total(short, 1e-4) < 1.1);
        assert!(total(short, 0.01) / total(short, 1e-4) < 1.5);
        assert!(total(short, 0.3) / total(short, 0.03) > 5.0);
        // A very long flow: at least a doubling per decade of p across the range.
        let long = 1e5;
        for w in ps.windows(3).step_by(2) {
            let (a, b) = (total(long, w[0]), total(long, w[2]));
            assert!(b / a > 2.0, "d=1e5 from p={} to {}: {a} -> {b}", w[0], w[2]);
        }
        // From p = 1e-4 to 1e-2 the long flow's latency grows many times more than the
        // short flow's.
        let growth = |d: f64| total(d, 0.01) / total(d, 1e-4);
        assert!(growth(long) > 5.0 * growth(short), "{} vs {}", growth(long), growth(short));
    }

    #[test]
    fn arguments_are_checked() {
        assert!(check(10.0, 0.01, RTT, RTO, ITO).is_ok());
        for (args, name) in [
            ((0.5, 0.01, RTT, RTO, ITO), "d:"),
            ((10.0, 1.0, RTT, RTO, ITO), "p:"),
            ((10.0, -0.1, RTT, RTO, ITO), "p:"),
            ((10.0, 0.1, 0.0, RTO, ITO), "rtt_s:"),
            ((10.0, 0.1, RTT, f64::NAN, ITO), "rto_s:"),
        ] {
            let e = check(args.0, args.1, args.2, args.3, args.4).unwrap_err();
            assert!(e.starts_with(name), "{e}");
        }
    }
}
