//! Segment-level tests of the congestion controls beyond the Reno family, each named after
//! the rule it checks and citing its section: CUBIC (RFC 9438), HyStart++ (RFC 9406) and
//! DCTCP (RFC 8257, sender and receiver). Built on `tcp::harness` as tests/tcp_rfc.rs: no
//! simulator, a clock set by hand, hand-made ACKs and data. Windows count packets. Then two
//! behaviour tests on a dumbbell: one CUBIC flow, and DCTCP through a step-marking queue.

use std::collections::VecDeque;

use savanna_core::api::{load, run, Format, RunOptions};
use savanna_core::engine::Time;
use savanna_core::metrics::RunOutput;
use savanna_core::net::packet::FLAG_ECE;
use savanna_core::net::{Ecn, Packet, PktKind};
use savanna_core::tcp::cc::cubic::{self, Cubic};
use savanna_core::tcp::cc::dctcp::{Dctcp, G};
use savanna_core::tcp::cc::hystart::{Phase, Rule, CSS_GROWTH_DIVISOR};
use savanna_core::tcp::cc::Cc;
use savanna_core::tcp::harness::{has_ece, ms, seqs, Harness};
use savanna_core::tcp::{TcpConfig, Variant};

fn cfg(variant: Variant) -> TcpConfig {
    TcpConfig { variant, handshake: false, max_window: 100_000, init_ssthresh: 1e9, ..TcpConfig::default() }
}

fn cubic_cfg(hystart: bool) -> TcpConfig {
    cfg(Variant::Cubic { hystart, hystart_rule: Rule::Rfc9406 })
}

fn cub(h: &Harness) -> &Cubic {
    match h.ep.cc() {
        Cc::Cubic(c) => c,
        c => panic!("not CUBIC: {c:?}"),
    }
}

fn dct(h: &Harness) -> &Dctcp {
    match h.ep.cc() {
        Cc::Dctcp(c) => c,
        c => panic!("not DCTCP: {c:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

/// A CUBIC sender (no HyStart++) with `n` packets in flight, sent at t = 0, that took a
/// fast retransmit on three duplicate ACKs at t = 100 ms and left recovery with the full
/// ACK at t = 200 ms.
fn cubic_after_one_loss(n: u32) -> Harness {
    let mut h = Harness::sender(TcpConfig { init_cwnd: n, ..cubic_cfg(false) }, 1_000_000);
    h.open();
    h.at(ms(100.0));
    h.dupacks(0, 3);
    h.at(ms(200.0));
    h.ack(n as u64);
    assert!(!h.ep.in_recovery());
    h
}

/// A lossless pipe of fixed round trip: every data packet the sender emits is acknowledged
/// (cumulatively, one ACK per packet) `rtt` later. Runs until `until`, calling `each` after
/// every ACK with the clock.
fn pipe(h: &mut Harness, first: Vec<Packet>, rtt: Time, until: Time, mut each: impl FnMut(&Harness, Time)) {
    let mut wire: VecDeque<(Time, u64)> = VecDeque::new();
    let t0 = h.now;
    wire.extend(seqs(&first).into_iter().map(|s| (t0 + rtt, s + 1)));
    while let Some((t, ack)) = wire.pop_front() {
        if t > until {
            break;
        }
        h.at(t);
        let out = h.ack(ack);
        wire.extend(seqs(&out).into_iter().map(|s| (t + rtt, s + 1)));
        each(h, t);
    }
}

// ------------------------------------------------------------------ CUBIC, RFC 9438

/// RFC 9438 4.6: a congestion event sets ssthresh = beta cwnd (beta = 0.7) and W_max = cwnd;
/// fast recovery then inflates from ssthresh as RFC 5681 3.2 does. A timeout sets the same
/// ssthresh and cwnd = 1 (4.8); an ECN-Echo sets cwnd = ssthresh at once.
#[test]
fn rfc9438_4_6_congestion_event_sets_ssthresh_to_beta_cwnd() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 20, ..cubic_cfg(false) }, 1000);
    h.open();
    assert_eq!(seqs(&h.dupacks(0, 3)), vec![0], "the fast retransmit");
    assert!(close(h.ep.ssthresh(), 14.0), "0.7 x 20 = 14, got {}", h.ep.ssthresh());
    assert!(close(h.ep.cwnd(), 17.0), "ssthresh + 3");
    assert_eq!(cub(&h).w_max(), Some(20.0));
    h.ack(20);
    assert!(close(h.ep.cwnd(), 14.0), "the full ACK deflates to ssthresh");

    let mut h = Harness::sender(TcpConfig { init_cwnd: 30, ..cubic_cfg(false) }, 1000);
    h.open();
    h.fire_rto();
    assert!(close(h.ep.ssthresh(), 21.0) && h.ep.cwnd() == 1.0, "timeout: ssthresh 0.7 x 30, cwnd 1");

    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ecn: true, ..cubic_cfg(false) }, 1000);
    h.open();
    h.ack_with(1, FLAG_ECE);
    assert!(close(h.ep.cwnd(), 7.0) && close(h.ep.ssthresh(), 7.0), "ECN-Echo: cwnd = 0.7 x 10");
    assert_eq!(cub(&h).w_max(), Some(10.0));
}

/// RFC 9438 4.7: with fast convergence, a congestion event at a window below the last
/// W_max sets W_max = cwnd (1 + beta) / 2; one at or above it sets W_max = cwnd.
#[test]
fn rfc9438_4_7_fast_convergence_lowers_w_max() {
    let mut h = cubic_after_one_loss(20);
    assert_eq!(cub(&h).w_max(), Some(20.0));
    // One new ACK beyond `recover` (RFC 6582: duplicates at `recover` start nothing), then
    // a loss at cwnd ~14 < W_max = 20.
    h.at(ms(300.0));
    h.ack(21);
    let cwnd = h.ep.cwnd();
    assert!(cwnd < 20.0);
    h.dupacks(21, 3);
    assert!(close(cub(&h).w_max().unwrap(), cwnd * 1.7 / 2.0), "W_max {:?}, cwnd {cwnd}", cub(&h).w_max());
    assert!(close(h.ep.ssthresh(), 0.7 * cwnd));

    // A loss above the last W_max: W_max is the window itself.
    let mut h = Harness::sender(TcpConfig { init_cwnd: 40, ..cubic_cfg(false) }, 1000);
    h.open();
    h.dupacks(0, 3);
    assert_eq!(cub(&h).w_max(), Some(40.0));
}

/// RFC 9438 4.8 with Linux's tcp_enter_loss: a timeout within a loss episode (here during
/// fast recovery) is no second congestion event: ssthresh and W_max stay, cwnd = 1.
#[test]
fn rfc9438_4_8_timeout_in_fast_recovery_keeps_ssthresh_and_w_max() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 20, ..cubic_cfg(false) }, 1000);
    h.open();
    h.dupacks(0, 3);
    h.dupacks(0, 30); // inflation: cwnd 14 + 33
    assert!(h.ep.in_recovery() && h.ep.cwnd() > 40.0);
    h.fire_rto();
    assert!(close(h.ep.ssthresh(), 14.0) && h.ep.cwnd() == 1.0, "ssthresh {}", h.ep.ssthresh());
    assert_eq!(cub(&h).w_max(), Some(20.0));
    // A timeout outside any loss episode is a congestion event.
    let mut h = Harness::sender(TcpConfig { init_cwnd: 20, ..cubic_cfg(false) }, 1000);
    h.open();
    h.fire_rto();
    assert!(close(h.ep.ssthresh(), 14.0));
}

/// RFC 9438 4.8: during the first congestion avoidance stage after a timeout, K = 0 and
/// W_max = cwnd at the start of that stage (and W_est = cwnd): the window grows from where
/// slow start left it along the convex curve, not back toward the W_max of before the
/// timeout.
#[test]
fn rfc9438_4_8_after_a_timeout_k_is_zero_and_w_max_is_cwnd_at_the_start_of_avoidance() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 30, ..cubic_cfg(false) }, 1000);
    h.open();
    h.fire_rto();
    assert!(close(h.ep.ssthresh(), 21.0) && h.ep.cwnd() == 1.0);
    // Slow start from 1 packet, one ACK per packet, until the first ACK in avoidance.
    let mut ack = 0;
    while cub(&h).epoch().is_none() {
        ack += 1;
        assert!(ack < 30, "no congestion-avoidance epoch by ACK {ack}");
        h.at(h.now + ms(1.0));
        h.ack(ack);
    }
    let e = cub(&h).epoch().unwrap();
    assert_eq!(e.k, 0.0, "K after a timeout, cwnd_epoch {}", e.cwnd_epoch);
    assert_eq!(cub(&h).w_max(), Some(e.cwnd_epoch), "W_max = cwnd at the start of avoidance");
    assert!(e.cwnd_epoch >= 21.0 && e.cwnd_epoch < 30.0);
    assert!(close(cub(&h).w_est(), e.cwnd_epoch + cubic::ALPHA / e.cwnd_epoch), "W_est starts at cwnd");
}

/// RFC 9438 4.2 eq. 2: the epoch starts at the first ACK in congestion avoidance, with
/// K = cbrt((W_max - cwnd_epoch) / C); after a fast recovery, cwnd_epoch = beta W_max, so
/// K = cbrt(W_max (1 - beta) / C). Without a congestion event (slow start ended at
/// ssthresh), W_max = cwnd and K = 0 (4.10).
#[test]
fn rfc9438_4_2_k_is_the_cube_root_of_w_max_minus_cwnd_epoch_over_c() {
    let mut h = cubic_after_one_loss(100);
    assert_eq!(cub(&h).epoch(), None, "no epoch before the first ACK in congestion avoidance");
    let out = h.ack(0); // nothing new: no epoch yet
    assert!(out.is_empty() && cub(&h).epoch().is_none());
    h.at(ms(300.0));
    h.ack(101);
    let e = cub(&h).epoch().expect("the epoch started");
    assert_eq!((e.start, e.cwnd_epoch), (ms(300.0), 70.0));
    assert!(close(e.k, ((100.0 - 70.0) / cubic::C).cbrt()));
    assert!(close(e.k, (100.0f64 * 0.3 / 0.4).cbrt()), "K = {}", e.k);

    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, init_ssthresh: 10.0, ..cubic_cfg(false) }, 1000);
    h.open();
    h.at(ms(50.0));
    h.ack(1);
    let e = cub(&h).epoch().unwrap();
    assert_eq!((e.k, cub(&h).w_max()), (0.0, Some(10.0)));
}

/// RFC 9438 4.4 and 4.5: in the CUBIC region each ACK adds (target - cwnd) / cwnd with
/// target = W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd], t the simulator time since the
/// epoch began and RTT the smoothed RTT.
#[test]
fn rfc9438_4_4_each_ack_steps_toward_w_cubic_one_rtt_ahead() {
    let mut h = cubic_after_one_loss(100);
    h.at(ms(300.0));
    h.ack(101);
    let e = cub(&h).epoch().unwrap();
    let srtt = h.ep.srtt().unwrap();
    for (i, t_ms) in [(102u64, 450.0), (103, 900.0), (104, 2000.0)] {
        let before = h.ep.cwnd();
        h.at(ms(t_ms));
        h.ack(i);
        let srtt_now = h.ep.srtt().unwrap();
        assert_ne!(srtt_now, srtt, "each ACK's sample moved SRTT");
        let t = (ms(t_ms) - e.start) as f64 * 1e-9;
        let target = cubic::w_cubic(t + srtt_now, e.k, 100.0).clamp(before, 1.5 * before);
        let want = before + (target - before) / before;
        assert!(close(h.ep.cwnd(), want), "ACK {i} at {t_ms} ms: cwnd {} want {want}", h.ep.cwnd());
        assert!(h.ep.cwnd() > before);
    }
}

/// RFC 9438 4.2: over a loss-free epoch the window follows W_cubic(t) = C (t - K)^3 + W_max
/// (within 5%, the issue's criterion): concave up to K (growth slowing toward the plateau
/// at W_max), convex after it (growth speeding up).
#[test]
fn rfc9438_4_2_window_follows_w_cubic_concave_then_convex() {
    let mut h = cubic_after_one_loss(100);
    let k = (100.0f64 * 0.3 / cubic::C).cbrt();
    let rtt = ms(100.0);
    // The full ACK at 200 ms sent the epoch's first 70 packets (100..170): the pipe
    // acknowledges them one RTT later.
    let mut samples: Vec<(f64, f64)> = Vec::new();
    let flight: Vec<Packet> = (100..h.ep.snd_max()).map(|s| h.segment(PktKind::Data, s, 0, Ecn::NotEct, 0)).collect();
    let mut epoch_start = None;
    pipe(&mut h, flight, rtt, ms(1200.0) + (2.0 * k * 1e9) as Time, |h, t| {
        let e = cub(h).epoch().expect("in congestion avoidance");
        epoch_start.get_or_insert(e.start);
        samples.push(((t - e.start) as f64 * 1e-9, h.ep.cwnd()));
    });
    let at = |x: f64| samples.iter().find(|s| s.0 >= x).map(|s| s.1).expect("sampled");
    for frac in [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75] {
        let t = frac * k;
        let want = cubic::w_cubic(t, k, 100.0);
        let got = at(t);
        assert!((got - want).abs() / want < 0.05, "t = {t:.2} s: cwnd {got:.2}, W_cubic {want:.2}");
    }
    // Concave: the first quarter of K grows more than the last; convex: the reverse after K.
    let d = |a: f64, b: f64| at(b * k) - at(a * k);
    assert!(d(0.0, 0.25) > 2.0 * d(0.75, 1.0), "concave before K");
    assert!(d(1.75, 2.0) > 2.0 * d(1.0, 1.25), "convex after K");
}

/// RFC 9438 4.2 with SACK (RFC 6675 recovery, PRR): the same curve. The SACK sender must
/// hand CUBIC each ACK's clock and smoothed RTT as the NewReno sender does; without them t
/// stays 0, W_cubic(t) stays at cwnd_epoch, and cwnd creeps up along W_est (4.3) instead.
#[test]
fn rfc9438_4_2_with_sack_the_window_still_follows_w_cubic() {
    let n = 100u64;
    let cfg = TcpConfig { init_cwnd: n as u32, sack: true, ..cubic_cfg(false) };
    let mut h = Harness::sender(cfg, 1_000_000);
    h.open();
    // Packet 0 lost; the receiver holds 1.., reported in SACK blocks (RFC 6675 5 (1)).
    h.at(ms(100.0));
    for hi in 2..=4 {
        h.ack_sack(0, &[(1, hi)]);
    }
    assert!(h.ep.in_recovery());
    h.at(ms(200.0));
    h.ack(n);
    assert!(!h.ep.in_recovery());
    let w_max = cub(&h).w_max().expect("W_max set by the loss");
    assert!(close(w_max, n as f64), "W_max {w_max}");
    let k = (w_max * 0.3 / cubic::C).cbrt();
    let mut samples: Vec<(f64, f64)> = Vec::new();
    let flight: Vec<Packet> = (n..h.ep.snd_max()).map(|s| h.segment(PktKind::Data, s, 0, Ecn::NotEct, 0)).collect();
    pipe(&mut h, flight, ms(100.0), ms(1200.0) + (2.0 * k * 1e9) as Time, |h, t| {
        let e = cub(h).epoch().expect("in congestion avoidance");
        samples.push(((t - e.start) as f64 * 1e-9, h.ep.cwnd()));
    });
    let at = |x: f64| samples.iter().find(|s| s.0 >= x).map(|s| s.1).expect("sampled");
    for frac in [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75] {
        let t = frac * k;
        let want = cubic::w_cubic(t, k, w_max);
        let got = at(t);
        assert!((got - want).abs() / want < 0.05, "t = {t:.2} s: cwnd {got:.2}, W_cubic {want:.2}");
    }
}

/// RFC 9438 4.3: W_est grows by alpha = 3 (1 - beta) / (1 + beta) per window acknowledged
/// (1 once it reaches cwnd_prior); where W_cubic(t) is below it (small BDP: short RTT, small
/// W_max, so K is many RTTs long) cwnd = W_est, the Reno-friendly region.
#[test]
fn rfc9438_4_3_reno_friendly_region_takes_over_at_small_bdp() {
    let mut h = cubic_after_one_loss(10);
    let rtt = ms(10.0);
    let flight: Vec<Packet> = (10..h.ep.snd_max()).map(|s| h.segment(PktKind::Data, s, 0, Ecn::NotEct, 0)).collect();
    let mut in_reno_region = 0;
    let mut first_window = None;
    pipe(&mut h, flight, rtt, ms(200.0) + ms(400.0), |h, t| {
        let c = cub(h);
        let e = c.epoch().unwrap();
        let w_c = cubic::w_cubic((t - e.start) as f64 * 1e-9, e.k, c.w_max().unwrap());
        if close(h.ep.cwnd(), c.w_est()) && c.w_est() > w_c {
            in_reno_region += 1;
        }
        if h.ep.snd_una() == 10 + 7 {
            first_window.get_or_insert(c.w_est());
        }
    });
    // W_est after the first window of 7 packets: 7 + alpha (one window).
    let w1 = first_window.expect("first window acknowledged");
    assert!((w1 - (7.0 + cubic::ALPHA)).abs() < 0.05, "W_est after one window {w1}");
    let c = cub(&h);
    let e = c.epoch().unwrap();
    let t = (h.now - e.start) as f64 * 1e-9;
    assert!(t < e.k, "still before K = {}", e.k);
    assert!(close(h.ep.cwnd(), c.w_est()), "cwnd follows W_est");
    assert!(h.ep.cwnd() > 1.5 * cubic::w_cubic(t, e.k, 10.0), "W_est well above W_cubic");
    assert!(in_reno_region > 100, "{in_reno_region} ACKs in the Reno-friendly region");
}

// ------------------------------------------------------------------ HyStart++, RFC 9406

/// One slow-start round: everything in flight was sent at `t` and is acknowledged, one
/// ACK per packet, `rtt` later. Returns the time the next round's packets were sent.
fn round(h: &mut Harness, t: Time, rtt: f64) -> Time {
    let t1 = t + ms(rtt);
    h.at(t1);
    for a in h.ep.snd_una() + 1..=h.ep.snd_max() {
        h.ack(a);
    }
    t1
}

fn phase(h: &Harness) -> Option<Phase> {
    cub(h).hystart().map(|s| s.phase())
}

/// A HyStart++ sender (IW 10) after round one at `base` ms and round two at `second` ms.
fn two_rounds(base: f64, second: f64) -> (Harness, Time) {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ..cubic_cfg(true) }, 1_000_000);
    h.open();
    let t = round(&mut h, 0, base);
    assert_eq!(phase(&h), Some(Phase::SlowStart));
    let t = round(&mut h, t, second);
    (h, t)
}

/// RFC 9406 4.2: slow start gives way to CSS once a round's minimum RTT (over at least
/// N_RTT_SAMPLE = 8 samples) exceeds the last round's by RttThresh = clamp(last / 8, 4 ms,
/// 16 ms): 12.5 ms at 100 ms, clamped up to 4 ms at 20 ms and down to 16 ms at 200 ms.
#[test]
fn rfc9406_4_2_rtt_rise_above_the_clamped_threshold_enters_css() {
    for (base, below, above) in [(100.0, 112.4, 112.6), (20.0, 23.9, 24.1), (200.0, 215.9, 216.1)] {
        let (h, _) = two_rounds(base, below);
        assert_eq!(phase(&h), Some(Phase::SlowStart), "base {base} ms, rise to {below} ms");
        let (h, _) = two_rounds(base, above);
        match phase(&h) {
            Some(Phase::Css { baseline_s, rounds: 1 }) => assert!(close(baseline_s, above * 1e-3)),
            p => panic!("base {base} ms, rise to {above} ms: {p:?}"),
        }
        assert!(h.ep.ssthresh() > 1e8, "CSS is still slow start: ssthresh untouched");
    }
}

/// RFC 9406 4.2: in CSS cwnd grows by 1 / CSS_GROWTH_DIVISOR per ACK; a round whose minimum
/// RTT falls below the CSS baseline (the rise was spurious) returns to slow start.
#[test]
fn rfc9406_4_2_css_grows_a_quarter_and_returns_to_slow_start_when_rtt_drops() {
    let (mut h, t) = two_rounds(100.0, 120.0);
    assert!(matches!(phase(&h), Some(Phase::Css { .. })));
    let t1 = t + ms(105.0);
    h.at(t1);
    let una = h.ep.snd_una();
    let before = h.ep.cwnd();
    h.ack(una + 1);
    assert!(close(h.ep.cwnd(), before + 1.0 / CSS_GROWTH_DIVISOR), "CSS growth");
    for a in una + 2..=una + 7 {
        h.ack(a);
    }
    assert!(matches!(phase(&h), Some(Phase::Css { .. })), "7 samples are not enough");
    h.ack(una + 8);
    assert_eq!(phase(&h), Some(Phase::SlowStart), "105 ms < 120 ms baseline after 8 samples");
    let before = h.ep.cwnd();
    h.ack(una + 9);
    assert!(close(h.ep.cwnd(), before + 1.0), "slow-start growth again");
}

/// RFC 9406 4.2: after CSS_ROUNDS = 5 rounds in CSS (the one it began in counts) slow start
/// ends: ssthresh = cwnd, and CUBIC's congestion avoidance begins (K = 0, 4.10).
#[test]
fn rfc9406_4_2_css_rounds_end_slow_start() {
    let (mut h, mut t) = two_rounds(100.0, 120.0);
    for r in 2..=5 {
        t = round(&mut h, t, 120.0);
        assert_eq!(phase(&h).map(|p| matches!(p, Phase::Css { rounds, .. } if rounds == r)), Some(true));
    }
    assert!(h.ep.ssthresh() > 1e8);
    h.at(t + ms(120.0));
    let una = h.ep.snd_una();
    let cwnd = h.ep.cwnd();
    h.ack(una + 1);
    assert!(close(h.ep.ssthresh(), cwnd), "ssthresh = cwnd {cwnd}, got {}", h.ep.ssthresh());
    assert!(phase(&h).is_none(), "HyStart++ is over");
    let e = cub(&h).epoch().expect("congestion avoidance");
    assert_eq!((e.k, e.cwnd_epoch), (0.0, cwnd));
}

/// RFC 9406 4.3: HyStart++ runs for the initial slow start only; a loss ends it.
#[test]
fn rfc9406_4_3_a_loss_ends_hystart() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ..cubic_cfg(true) }, 1000);
    h.open();
    assert_eq!(phase(&h), Some(Phase::SlowStart));
    h.dupacks(0, 3);
    assert!(phase(&h).is_none());
}

/// A sender (IW `iw`, one ACK per packet) under `rule`, after rounds at the given RTTs (ms).
fn rounds(rule: Rule, iw: u32, rtts: &[f64]) -> (Harness, Time) {
    let c = TcpConfig { init_cwnd: iw, ..cfg(Variant::Cubic { hystart: true, hystart_rule: rule }) };
    let mut h = Harness::sender(c, 1_000_000);
    h.open();
    let mut t = 0;
    for &r in rtts {
        t = round(&mut h, t, r);
    }
    (h, t)
}

/// Linux's HyStart (tcp_cubic.c hystart_update, HYSTART_DELAY): slow start ends, with
/// ssthresh = cwnd and no CSS, once a round's minimum RTT exceeds the connection's minimum
/// (not the last round's, as RFC 9406) by clamp(min / 8, 4 ms, 16 ms): rounds at 100, 108
/// and 116 ms end it (116 > 112.5), 100, 108, 112 do not; HyStart++ stays in slow start on
/// both (each round rises 8 ms, under its 12.5 ms).
#[test]
fn linux_hystart_delay_round_min_above_connection_min_ends_slow_start() {
    let (h, _) = rounds(Rule::Linux, 10, &[100.0, 108.0, 112.0]);
    assert_eq!(phase(&h), Some(Phase::SlowStart));
    let (h, _) = rounds(Rule::Rfc9406, 10, &[100.0, 108.0, 116.0]);
    assert_eq!(phase(&h), Some(Phase::SlowStart), "HyStart++ compares consecutive rounds");
    let (mut h, t) = rounds(Rule::Linux, 10, &[100.0, 108.0]);
    h.at(t + ms(116.0));
    let una = h.ep.snd_una();
    // HYSTART_MIN_SAMPLES: the first 8 samples of the round are taken, the 9th tests.
    for a in una + 1..=una + 8 {
        h.ack(a);
    }
    assert_eq!(phase(&h), Some(Phase::SlowStart));
    assert!(h.ep.ssthresh() > 1e8);
    let cwnd = h.ep.cwnd();
    h.ack(una + 9);
    assert!(close(h.ep.ssthresh(), cwnd), "ssthresh = cwnd {cwnd}, got {}", h.ep.ssthresh());
    assert!(h.ep.cwnd() - cwnd < 0.1, "congestion avoidance's growth, not slow start's, on that ACK");
    assert!(phase(&h).is_none(), "slow start is over, no CSS");
    let e = cub(&h).epoch().expect("congestion avoidance");
    assert_eq!((e.k, e.cwnd_epoch), (0.0, cwnd));
}

/// Linux's HyStart tests nothing below hystart_low_window = 16: a sender held at a window
/// of 15 (max_window) whose RTT doubles stays in slow start; held at 16 it leaves.
#[test]
fn linux_hystart_low_window_16_no_test_below() {
    for (cap, leaves) in [(15, false), (16, true)] {
        let c = TcpConfig {
            init_cwnd: 10,
            max_window: cap,
            ..cfg(Variant::Cubic { hystart: true, hystart_rule: Rule::Linux })
        };
        let mut h = Harness::sender(c, 1_000_000);
        h.open();
        let mut t = 0;
        for r in [100.0, 200.0, 200.0] {
            t = round(&mut h, t, r);
        }
        assert_eq!(h.ep.cwnd(), cap as f64);
        assert_eq!(h.ep.ssthresh() < 1e8, leaves, "window {cap}: ssthresh {}", h.ep.ssthresh());
    }
}

// ------------------------------------------------------------------ DCTCP, RFC 8257

fn dctcp_sender(iw: u32) -> Harness {
    let mut h = Harness::sender(TcpConfig { init_cwnd: iw, ecn: true, ..cfg(Variant::Dctcp) }, 100_000);
    h.open();
    h
}

/// RFC 8257 3.3: alpha starts at 1 and, each time an ACK passes WindowEnd (once per window
/// of data), becomes (1 - g) alpha + g F with g = 1/16 and F the fraction of the window's
/// acknowledged packets whose ACKs carried ECE; then WindowEnd = SND.NXT.
#[test]
fn rfc8257_3_3_alpha_is_an_ewma_of_the_marked_fraction_per_window() {
    let mut h = dctcp_sender(10);
    assert_eq!(dct(&h).alpha(), 1.0);
    h.at(ms(10.0));
    h.ack(1); // passes WindowEnd = 0: F = 0 over one packet
    let a1 = (1.0 - G) * 1.0;
    assert!(close(dct(&h).alpha(), a1));
    assert_eq!(dct(&h).window_end(), 10, "SND.NXT when the window began");
    // The window [1, 10]: 3 of 10 acknowledged packets are echoed as marked.
    for a in 2..=11u64 {
        let before = dct(&h).alpha();
        h.ack_with(a, if (5..=7).contains(&a) { FLAG_ECE } else { 0 });
        if a <= 10 {
            assert_eq!(dct(&h).alpha(), before, "no update before the ACK passes WindowEnd");
        }
    }
    let a2 = (1.0 - G) * a1 + G * 0.3;
    assert!(close(dct(&h).alpha(), a2), "alpha {} want {a2}", dct(&h).alpha());
}

/// RFC 8257 3.3: on ECE the sender sets cwnd = cwnd (1 - alpha / 2), at most once per
/// window of data (RFC 3168 6.1.2's rule, kept by DCTCP).
#[test]
fn rfc8257_3_3_ece_reduces_cwnd_by_alpha_over_two_once_per_window() {
    let mut h = dctcp_sender(40);
    h.at(ms(10.0));
    h.ack(1);
    h.ack(2);
    let alpha = dct(&h).alpha();
    let cwnd = h.ep.cwnd();
    h.ack_with(3, FLAG_ECE);
    let want = cwnd * (1.0 - alpha / 2.0);
    assert!(close(h.ep.cwnd(), want) && close(h.ep.ssthresh(), want), "cwnd {} want {want}", h.ep.cwnd());
    assert!(want > 0.5 * cwnd + 1.0, "a gentler cut than RFC 3168's halving");
    // Further ECEs in the same window change nothing (no growth either: cwnd >= ssthresh
    // means congestion avoidance, +1/cwnd per ACK without ECE only ... and with ECE).
    let snd_max = h.ep.snd_max();
    for a in 4..snd_max {
        let before = h.ep.cwnd();
        h.ack_with(a, FLAG_ECE);
        assert!(h.ep.cwnd() >= before, "no second reduction in the window, ACK {a}");
    }
    let before = h.ep.cwnd();
    h.ack_with(snd_max + 1, FLAG_ECE);
    assert!(h.ep.cwnd() < before, "an ECE beyond the window reduces again");
}

/// RFC 8257 3.2: without delayed ACKs every ACK echoes the CE state of the packet it
/// acknowledges; CWR is ignored (unlike RFC 3168's echo until CWR).
#[test]
fn rfc8257_3_2_receiver_echoes_each_packets_ce_state() {
    let mut h = Harness::receiver(TcpConfig { ecn: true, ..cfg(Variant::Dctcp) }, 100);
    let expect = [(Ecn::Ce, true), (Ecn::Ect, false), (Ecn::Ce, true), (Ecn::Ce, true), (Ecn::Ect, false)];
    for (seq, (ecn, ece)) in expect.into_iter().enumerate() {
        let out = h.data_with(seq as u64, ecn, 0);
        assert_eq!(out.len(), 1);
        assert_eq!(has_ece(&out[0]), ece, "packet {seq} ({ecn:?})");
    }
    // CWR does not clear the echo of a CE packet.
    let out = h.data_with(5, Ecn::Ce, savanna_core::net::packet::FLAG_CWR);
    assert!(has_ece(&out[0]));
}

/// RFC 8257 3.2: with delayed ACKs, a change of CE state sends the held ACK at once, with
/// the old state, for the packets before the change; otherwise one ACK per two packets.
#[test]
fn rfc8257_3_2_delayed_ack_goes_at_once_when_ce_state_changes() {
    let mut h = Harness::receiver(TcpConfig { ecn: true, delayed_ack: true, ..cfg(Variant::Dctcp) }, 100);
    assert!(h.data_with(0, Ecn::Ect, 0).is_empty(), "held for a delayed ACK");
    let out = h.data_with(1, Ecn::Ce, 0);
    assert_eq!(out.len(), 1, "the held ACK, at once");
    assert_eq!((out[0].ack, has_ece(&out[0])), (1, false), "it covers packet 0, with the old state");
    let out = h.data_with(2, Ecn::Ce, 0);
    assert_eq!(out.len(), 1, "second packet: the delayed ACK is due");
    assert_eq!((out[0].ack, has_ece(&out[0])), (3, true));
    assert!(h.data_with(3, Ecn::Ce, 0).is_empty(), "no change: held as usual");
    let out = h.data_with(4, Ecn::Ect, 0);
    assert_eq!((out[0].ack, has_ece(&out[0])), (4, true), "the change releases the CE ACK for 3");
    let out = h.fire_delack();
    assert_eq!((out[0].ack, has_ece(&out[0])), (5, false));
}

// ------------------------------------------------------------------ behaviour

fn sim(toml: &str) -> RunOutput {
    let sc = load(toml, Format::Toml, std::path::Path::new("."), &RunOptions::default()).expect("valid scenario");
    run(&sc).expect("run")
}

/// One CUBIC flow with SACK through a 20 Mb/s, 100 ms dumbbell with a BDP of buffer (167
/// packets): the bottleneck stays busy (above 90% over 120 s, slow start included; 0.9945
/// measured, no timeout), and between losses the traced window is concave on the way up to
/// the last maximum and convex beyond it. Without SACK the same flow takes timeouts (a
/// window with several losses ends in one under NewReno recovery), and since each is
/// followed by RFC 9438 4.8's convex restart from the current window (K = 0), which
/// overshoots with several losses again, it measured 0.857 with 16 timeouts (0.933 and 9
/// while Savanna kept the pre-timeout W_max, against 4.8).
#[test]
fn one_cubic_flow_fills_the_bottleneck_with_concave_then_convex_growth() {
    let toml = r#"
duration_s = 120.0
[topology]
type = "dumbbell"
pairs = 1
access_rate_mbps = 1000.0
access_delay_ms = 5.0
bottleneck_rate_mbps = 20.0
bottleneck_delay_ms = 40.0
bottleneck_queue = { type = "droptail", limit_pkts = 167 }
[tcp]
cc = "cubic"
sack = true
max_window = 5000
[[traffic]]
type = "persistent"
count = 1
[trace]
flows = [0]
"#;
    let out = sim(toml);
    let q = out.summary.queues.iter().find(|q| q.name == "left->right").unwrap();
    let f = &out.flows[0];
    eprintln!("utilisation {} timeouts {} fast retransmits {}", q.utilisation, f.timeouts, f.fast_retransmits);
    assert!(q.utilisation > 0.9, "utilisation {}", q.utilisation);
    assert!(q.dropped > 0);
    // Congestion-avoidance epochs: runs of samples in congestion avoidance (out of
    // recovery, cwnd >= ssthresh) with one ssthresh; each cut in four equal times.
    let tr: Vec<_> = out
        .traces
        .iter()
        .filter(|t| t.side == 0 && t.event == "packet" && !t.in_recovery && t.cwnd_pkts >= t.ssthresh_pkts)
        .collect();
    let (mut concave, mut convex) = (0, 0);
    for ep in tr.chunk_by(|a, b| a.ssthresh_pkts == b.ssthresh_pkts && b.t_s - a.t_s < 0.5) {
        if ep.len() < 2000 {
            continue;
        }
        let (t0, t1) = (ep[0].t_s, ep[ep.len() - 1].t_s);
        let at = |f: f64| ep.iter().find(|s| s.t_s >= t0 + f * (t1 - t0)).unwrap().cwnd_pkts;
        let d: Vec<f64> = (0..4).map(|k| at((k + 1) as f64 / 4.0) - at(k as f64 / 4.0)).collect();
        concave += (d[0] > d[1] && d[1] > 0.0) as u32;
        convex += (d[3] > d[2] && d[2] > 0.0) as u32;
    }
    assert!(concave >= 2 && convex >= 2, "{concave} concave and {convex} convex epochs");
}

/// Two long flows through a step-marking queue (K = 20 packets, buffer 400) at 100 Mb/s
/// and a 10 ms RTT (BDP 83 packets). DCTCP holds the queue near K with no drop and the link
/// busy; NewReno with ECN through the same queue halves on each mark and leaves the link
/// idle part of the time (the gap RFC 8257 section 1 describes).
#[test]
fn dctcp_with_a_step_queue_holds_the_queue_near_k_without_drops() {
    let scenario = |tcp: &str| {
        format!(
            r#"
duration_s = 20.0
[topology]
type = "dumbbell"
pairs = 2
access_rate_mbps = 1000.0
access_delay_ms = 0.05
bottleneck_rate_mbps = 100.0
bottleneck_delay_ms = 4.9
bottleneck_queue = {{ type = "step", limit_pkts = 400, k_pkts = 20 }}
[tcp]
{tcp}
max_window = 2000
[[traffic]]
type = "persistent"
count = 2
[sampling]
interval_s = 0.001
"#
        )
    };
    let out = sim(&scenario("cc = \"dctcp\""));
    let q = out.summary.queues.iter().find(|q| q.name == "left->right").unwrap();
    assert_eq!(q.dropped, 0, "no drops");
    assert!(q.marked > 1000, "marks {}", q.marked);
    assert!(q.utilisation > 0.97, "utilisation {}", q.utilisation);
    let lens: Vec<f64> =
        out.queues.iter().filter(|s| s.queue == "left->right" && s.t_s > 2.0).map(|s| s.len_pkts as f64).collect();
    let mean = lens.iter().sum::<f64>() / lens.len() as f64;
    let max = lens.iter().cloned().fold(0.0, f64::max);
    assert!((12.0..=25.0).contains(&mean), "mean queue {mean} packets, K = 20");
    assert!(max < 40.0, "max queue {max}");

    let reno = sim(&scenario("ecn = true"));
    let r = reno.summary.queues.iter().find(|q| q.name == "left->right").unwrap();
    assert!(q.utilisation > r.utilisation + 0.05, "DCTCP {} vs NewReno-ECN {}", q.utilisation, r.utilisation);
}
