//! TCP Reno steady-state throughput model of J. Padhye, V. Firoiu, D. Towsley and J. Kurose,
//! "Modeling TCP Throughput: A Simple Model and its Empirical Validation", ACM SIGCOMM 1998
//! (extended as "Modeling TCP Reno Performance: A Simple Model and Its Empirical
//! Validation", IEEE/ACM ToN 8(2), 2000).
//!
//! The model follows a bulk-transfer flow through "triple-duplicate periods" (TDPs): the
//! window grows by 1/b packets per round (b = packets acknowledged by one ACK) and is halved
//! at a triple-duplicate-ACK loss indication; a loss indication is a timeout with
//! probability `Q`, and a timeout sequence backs off exponentially (T0, 2 T0, ... up to
//! 64 T0). `p` is the probability that a packet is lost given that the previous one in its
//! round was not (the loss-indication rate, close to the packet loss rate for small p);
//! the receiver window caps the congestion window at W_max.
//!
//! Throughput here is the paper's B(p): packets *sent* per second, retransmissions included
//! ("regardless of their eventual fate"), not the goodput.
//!
//! - [`throughput_full`]: the full model (eq. 31 of the SIGCOMM paper), with the
//!   `E[W_u] < W_max` (congestion-limited) and `E[W_u] >= W_max` (window-limited) branches.
//! - [`throughput_approx`]: the closed-form approximation (eq. 33).

/// Unconstrained expected window at a loss indication, E[W_u] (packets):
/// (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2).
pub fn expected_window(p: f64, b: f64) -> f64 {
    let c = (2.0 + b) / (3.0 * b);
    c + (8.0 * (1.0 - p) / (3.0 * b * p) + c * c).sqrt()
}

/// Probability that a loss indication in a window of `w` packets is a timeout, Q̂(p, w) =
/// min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)). With w <= 3 packets in
/// flight three duplicate ACKs can never arrive, so Q̂ = 1.
pub fn q_hat(p: f64, w: f64) -> f64 {
    if w <= 3.0 || p >= 1.0 {
        return 1.0;
    }
    if p <= 0.0 {
        // Limit p -> 0 of the expression: 3/w.
        return (3.0 / w).min(1.0);
    }
    let s = 1.0 - p;
    let s3 = s.powi(3);
    let num = (1.0 - s3) * (1.0 + s3 * (1.0 - s.powf(w - 3.0)));
    let den = 1.0 - s.powf(w);
    (num / den).min(1.0)
}

/// Backoff factor of a timeout sequence: E[duration] = T0 f(p) / (1-p) with
/// f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (timer doubling capped at 64 T0).
pub fn backoff_factor(p: f64) -> f64 {
    1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6)
}

/// Full model (eq. 31), packets per second.
///
/// `p`: loss-indication probability; `rtt_s`: mean round-trip time, s; `t0_s`: mean
/// (first, un-backed-off) retransmission timeout, s; `b`: packets acknowledged per ACK
/// (1 without delayed ACKs, 2 with); `wmax_pkts`: receiver (maximum) window, packets.
///
/// With E[W] = [`expected_window`]:
/// - E[W] < W_max:
///   B = ((1-p)/p + E[W] + Q̂(E[W])/(1-p)) / (RTT (b E[W]/2 + 1) + Q̂(E[W]) T0 f(p)/(1-p))
/// - otherwise:
///   B = ((1-p)/p + W_max + Q̂(W_max)/(1-p)) /
///   (RTT (b W_max/8 + (1-p)/(p W_max) + 2) + Q̂(W_max) T0 f(p)/(1-p))
///
/// Edge cases: p <= 0 gives W_max / RTT (no loss: the window limit); p >= 1 gives 0.
pub fn throughput_full(p: f64, rtt_s: f64, t0_s: f64, b: f64, wmax_pkts: f64) -> f64 {
    if p <= 0.0 {
        return wmax_pkts / rtt_s;
    }
    if p >= 1.0 {
        return 0.0;
    }
    let q = 1.0 - p;
    let ew = expected_window(p, b);
    let timeouts = |w: f64| q_hat(p, w) * t0_s * backoff_factor(p) / q;
    if ew < wmax_pkts {
        let num = q / p + ew + q_hat(p, ew) / q;
        let den = rtt_s * (b * ew / 2.0 + 1.0) + timeouts(ew);
        num / den
    } else {
        let w = wmax_pkts;
        let num = q / p + w + q_hat(p, w) / q;
        let den = rtt_s * (b * w / 8.0 + q / (p * w) + 2.0) + timeouts(w);
        num / den
    }
}

/// Approximate model (eq. 33), packets per second:
/// min(W_max / RTT, 1 / (RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2))).
pub fn throughput_approx(p: f64, rtt_s: f64, t0_s: f64, b: f64, wmax_pkts: f64) -> f64 {
    let limit = wmax_pkts / rtt_s;
    if p <= 0.0 {
        return limit;
    }
    let den = rtt_s * (2.0 * b * p / 3.0).sqrt()
        + t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    limit.min(1.0 / den)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: f64 = 0.1;
    const T0: f64 = 0.2;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b
    }

    #[test]
    fn expected_window_matches_hand_value() {
        // b = 1, p = 0.01: 1 + sqrt(8 * 0.99 / 0.03 + 1) = 1 + sqrt(265).
        assert!((expected_window(0.01, 1.0) - (1.0 + 265f64.sqrt())).abs() < 1e-12);
        // For small p, E[W] ~ sqrt(8 / (3 b p)).
        let p = 1e-6;
        assert!(rel(expected_window(p, 2.0), (8.0 / (6.0 * p)).sqrt()) < 1e-3);
    }

    #[test]
    fn full_model_matches_hand_computation() {
        // p = 0.01, b = 1, RTT = 0.1 s, T0 = 0.2 s, W_max = 1000 (not limiting), computed
        // by hand: E[W] = 17.279, Q = 0.2105, f = 1.0102, B = 116.49 / 1.0069 = 115.69.
        let b = throughput_full(0.01, RTT, T0, 1.0, 1000.0);
        assert!(rel(b, 115.69) < 2e-3, "{b}");
        let q = q_hat(0.01, expected_window(0.01, 1.0));
        assert!((q - 0.2105).abs() < 1e-3, "{q}");
    }

    #[test]
    fn q_hat_limits() {
        assert_eq!(q_hat(0.1, 3.0), 1.0);
        assert_eq!(q_hat(0.1, 2.0), 1.0);
        // Small p: Q ~ 3 / w.
        assert!(rel(q_hat(1e-7, 30.0), 0.1) < 1e-3);
        assert!(q_hat(0.5, 10.0) <= 1.0);
    }

    #[test]
    fn approximation_agrees_with_full_model_at_small_p() {
        for &p in &[0.001, 0.002, 0.005, 0.01, 0.02] {
            for &b in &[1.0, 2.0] {
                let full = throughput_full(p, RTT, T0, b, 10_000.0);
                let approx = throughput_approx(p, RTT, T0, b, 10_000.0);
                assert!(rel(approx, full) < 0.15, "p={p} b={b}: full {full} approx {approx}");
            }
        }
    }

    #[test]
    fn window_limited_at_tiny_p() {
        let wmax = 20.0;
        for &p in &[1e-7, 1e-6] {
            let full = throughput_full(p, RTT, T0, 1.0, wmax);
            assert!(rel(full, wmax / RTT) < 0.01, "p={p}: {full}");
            assert!(full <= wmax / RTT * 1.0001);
            let approx = throughput_approx(p, RTT, T0, 1.0, wmax);
            assert!(rel(approx, wmax / RTT) < 1e-9);
        }
        assert_eq!(throughput_full(0.0, RTT, T0, 1.0, wmax), wmax / RTT);
    }

    #[test]
    fn window_limit_only_lowers_throughput() {
        for &p in &[1e-4, 1e-3, 0.01, 0.05] {
            let free = throughput_full(p, RTT, T0, 1.0, 1e6);
            let capped = throughput_full(p, RTT, T0, 1.0, 16.0);
            assert!(capped <= free * 1.0001, "p={p}: capped {capped} free {free}");
            assert!(capped <= 16.0 / RTT * 1.0001);
        }
    }

    /// Decreasing in p on a 10%-step grid. The paper's two branches do not join exactly: at
    /// E[W_u] = W_max the window-limited denominator is RTT (b W/2 + 1.25 + ...) against
    /// RTT (b W/2 + 1) (b = 1), so B steps *up* by a few percent where the model leaves the
    /// window-limited branch; `branch_switch_step_is_small` bounds that step.
    #[test]
    fn throughput_decreases_with_p() {
        for &wmax in &[16.0, 64.0, 1e6] {
            let mut prev = f64::INFINITY;
            let mut p = 1e-5;
            while p < 0.5 {
                let full = throughput_full(p, RTT, T0, 1.0, wmax);
                assert!(full.is_finite() && full > 0.0);
                assert!(full <= prev * (1.0 + 1e-9), "wmax={wmax} p={p}: {full} > {prev}");
                prev = full;
                p *= 1.1;
            }
        }
        assert_eq!(throughput_full(1.0, RTT, T0, 1.0, 64.0), 0.0);
    }

    #[test]
    fn branch_switch_step_is_small() {
        let wmax = 16.0;
        // Bisect for the p where E[W_u] = W_max (E[W_u] decreases with p).
        let (mut lo, mut hi) = (1e-4, 0.1);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if expected_window(mid, 1.0) >= wmax {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let limited = throughput_full(lo, RTT, T0, 1.0, wmax);
        let free = throughput_full(hi, RTT, T0, 1.0, wmax);
        assert!(rel(free, limited) < 0.05, "limited {limited} free {free}");
    }

    #[test]
    fn timeouts_dominate_at_high_p() {
        // Longer T0 hurts more at high loss than at low loss.
        let ratio = |p: f64| throughput_full(p, RTT, 1.0, 1.0, 1e6) / throughput_full(p, RTT, 0.2, 1.0, 1e6);
        assert!(ratio(0.2) < ratio(0.001));
        assert!(ratio(0.001) > 0.9);
    }
}
