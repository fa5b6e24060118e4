//! Segment-level tests of the two rules where ns-2.35 and RFC 5681 part (docs/ns2.md,
//! "Other differences found on the way"), each named after the rule and citing the RFC
//! section or the ns-2 function it follows:
//!
//! - `tcp.ssthresh_base`: what ssthresh halves. "flight" (the default) is RFC 5681 eq. (4),
//!   FlightSize / 2; "cwnd" is ns-2.35's `TcpAgent::slowdown` with `CLOSE_SSTHRESH_HALF`,
//!   max(floor(min(cwnd, window) / 2), 2) with cwnd taken without the fast-recovery
//!   inflation (ns-2 keeps that in `dupwnd_`).
//! - `tcp.iw_after_syn_loss`: RFC 5681 3.1, the initial window after a lost SYN or SYN-ACK
//!   (ns-2.35 `TcpAgent::timeout` with `bugfix_ss_`); unset keeps `init_cwnd`.
//! - `tcp.recovery_exit_increase`: the ACK that ends fast recovery also grows cwnd, as
//!   ns-2's `NewRenoTcpAgent::recv` does (`recv_newack_helper` calls `opencwnd` after
//!   zeroing `dupwnd_`); RFC 6582 3.2 step 4 (the default) sets cwnd = ssthresh only.
//!
//! Built on `tcp::harness` like tests/tcp_rfc.rs. Windows and sequence numbers count
//! packets.

use savanna_core::net::{Ecn, PktKind};
use savanna_core::tcp::endpoint::State;
use savanna_core::tcp::harness::{ms, seqs, Harness};
use savanna_core::tcp::{SsthreshBase, TcpConfig, TcpEndpoint};

fn cfg(base: SsthreshBase) -> TcpConfig {
    TcpConfig { handshake: false, ssthresh_base: base, ..TcpConfig::default() }
}

/// An established sender that has sent segments 0..n (initial window n, ssthresh high).
fn sender_with_flight(c: TcpConfig, n: u32, total: u64) -> Harness {
    let mut h = Harness::sender(TcpConfig { init_cwnd: n, ..c }, total);
    let sent = h.open();
    assert_eq!(seqs(&sent), (0..n as u64).collect::<Vec<_>>());
    h
}

/// 20 segments out, segment 0 lost: three duplicates start fast recovery (ssthresh 10,
/// cwnd 13), ten more inflate cwnd to 23 and send segments 20-22, so 23 are in flight.
fn in_fast_recovery(base: SsthreshBase) -> Harness {
    in_fast_recovery_with(cfg(base))
}

fn in_fast_recovery_with(c: TcpConfig) -> Harness {
    let mut h = sender_with_flight(c, 20, 100);
    h.at(ms(100.0));
    assert_eq!(seqs(&h.dupacks(0, 3)), vec![0]);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (10.0, 13.0));
    assert_eq!(seqs(&h.dupacks(0, 10)), vec![20, 21, 22]);
    assert_eq!(h.ep.cwnd(), 23.0);
    h
}

// ------------------------------------------------------------------ ssthresh_base

/// RFC 5681 3.1 eq. (4) (the default, "flight"): a timeout during fast recovery takes
/// FlightSize / 2, and FlightSize counts the new data the inflated window sent, so
/// ssthresh rises from 10 to 11.
#[test]
fn rfc5681_3_1_timeout_in_fast_recovery_halves_the_flight() {
    let mut h = in_fast_recovery(SsthreshBase::Flight);
    assert_eq!(seqs(&h.fire_rto()), vec![0]);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (11.0, 1.0));
}

/// ns-2.35 `TcpAgent::slowdown` (`CLOSE_SSTHRESH_HALF`, from `TcpAgent::timeout` after
/// `RenoTcpAgent::timeout` zeroed `dupwnd_`): a timeout during fast recovery halves the
/// window without its inflation, the already halved 10, again: ssthresh 5.
#[test]
fn ns2_slowdown_timeout_in_fast_recovery_halves_the_uninflated_cwnd() {
    let mut h = in_fast_recovery(SsthreshBase::Cwnd);
    assert_eq!(seqs(&h.fire_rto()), vec![0]);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (5.0, 1.0));
}

/// ns-2.35 `TcpAgent::slowdown`: at a fast retransmit ssthresh is half of cwnd, not of the
/// flight; an application-limited sender (6 segments, cwnd 10) gets 5, RFC 5681's rule 3.
#[test]
fn ns2_slowdown_fast_retransmit_halves_cwnd_not_the_flight() {
    for (base, want) in [(SsthreshBase::Cwnd, 5.0), (SsthreshBase::Flight, 3.0)] {
        let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ..cfg(base) }, 6);
        assert_eq!(seqs(&h.open()), vec![0, 1, 2, 3, 4, 5]);
        h.at(ms(100.0));
        assert_eq!(seqs(&h.dupacks(0, 3)), vec![0]);
        assert_eq!(h.ep.ssthresh(), want, "{base:?}");
    }
}

/// ns-2.35 `TcpAgent::windowd`: the window halved is min(cwnd, receiver window), and the
/// result is floor(... / 2), at least 2 (`slowdown`'s `if (ssthresh_ < 2)`).
#[test]
fn ns2_slowdown_halves_min_of_cwnd_and_window_at_least_two() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 16, max_window: 9, ..cfg(SsthreshBase::Cwnd) }, 100);
    assert_eq!(seqs(&h.open()).len(), 9);
    h.fire_rto();
    assert_eq!(h.ep.ssthresh(), 4.0, "floor(min(16, 9) / 2)");
    // cwnd is now 1: a second timeout gives the floor of 2.
    h.fire_rto();
    assert_eq!(h.ep.ssthresh(), 2.0);
}

/// RFC 5681 3.1 ("when ... the given segment has already been retransmitted by way of the
/// retransmission timer at least once, the value of ssthresh is held constant"): with
/// "flight" a second timeout on the same segment finds the same FlightSize (snd_max does
/// not move back) and keeps ssthresh; ns-2's "cwnd" halves the loss window instead (2).
#[test]
fn rfc5681_3_1_repeated_timeout_holds_ssthresh_with_flight() {
    for (base, want) in [(SsthreshBase::Flight, 10.0), (SsthreshBase::Cwnd, 2.0)] {
        let mut h = sender_with_flight(cfg(base), 20, 100);
        assert_eq!(seqs(&h.fire_rto()), vec![0]);
        assert_eq!(h.ep.ssthresh(), 10.0);
        assert_eq!(seqs(&h.fire_rto()), vec![0]);
        assert_eq!(h.ep.ssthresh(), want, "{base:?}");
    }
}

// ------------------------------------------------------------------ iw_after_syn_loss

fn client(iw: Option<u32>) -> Harness {
    let c = TcpConfig { handshake: true, init_cwnd: 4, iw_after_syn_loss: iw, ..TcpConfig::default() };
    Harness::sender(c, 100)
}

/// RFC 5681 3.1: "if the SYN or SYN/ACK is lost, the initial window used by a sender after
/// a correctly transmitted SYN MUST be one segment" (ns-2.35 `TcpAgent::timeout`: the
/// first packet timed out and `bugfix_ss_`, so `wnd_init_ = 1`). The client sees either
/// loss as its SYN timing out.
#[test]
fn rfc5681_3_1_initial_window_is_one_segment_after_a_lost_syn() {
    for (iw, lost, want) in [(Some(1), true, 1), (None, true, 4), (Some(1), false, 4)] {
        let mut h = client(iw);
        let syn = h.open();
        assert_eq!(syn[0].kind, PktKind::Syn);
        if lost {
            assert_eq!(h.fire_rto()[0].kind, PktKind::Syn);
        }
        h.at(h.now + ms(100.0));
        let p = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
        let sent = h.deliver(p);
        assert_eq!(h.ep.state(), State::Established);
        assert_eq!(seqs(&sent).len(), want, "iw_after_syn_loss {iw:?}, SYN lost {lost}");
        assert_eq!(h.ep.cwnd(), want as f64);
    }
}

/// RFC 5681 3.1 on the passive side: a server whose SYN-ACK timed out and was sent again
/// starts its data with one segment.
#[test]
fn rfc5681_3_1_initial_window_is_one_segment_after_a_lost_synack() {
    for (iw, lost, want) in [(Some(1), true, 1), (None, true, 4), (Some(1), false, 4)] {
        let c = TcpConfig { handshake: true, init_cwnd: 4, iw_after_syn_loss: iw, ..TcpConfig::default() };
        let mut h = Harness::listener(c, 0);
        h.ep = TcpEndpoint::new(0, 1, 1, 0, 0, &h.cfg, 100, 0);
        let p = h.segment(PktKind::Syn, 0, 0, Ecn::NotEct, 0);
        assert_eq!(h.deliver(p)[0].kind, PktKind::SynAck);
        if lost {
            assert_eq!(h.fire_rto()[0].kind, PktKind::SynAck);
        }
        h.at(h.now + ms(100.0));
        let sent = h.ack(0);
        assert_eq!(h.ep.state(), State::Established);
        assert_eq!(seqs(&sent).len(), want, "iw_after_syn_loss {iw:?}, SYN-ACK lost {lost}");
    }
}

// ------------------------------------------------------------------ recovery_exit_increase

/// RFC 6582 3.2 step 4 (the default): the full ACK deflates cwnd to ssthresh, 10, and the
/// window then grows from there, 1/cwnd per ACK; ten more ACKs bring it to 10.96, still a
/// window of 10.
#[test]
fn rfc6582_3_2_full_ack_sets_cwnd_to_ssthresh_and_nothing_more() {
    let mut h = in_fast_recovery(SsthreshBase::Cwnd);
    assert_eq!(seqs(&h.ack(23)), (23..33).collect::<Vec<_>>());
    assert_eq!(h.ep.cwnd(), 10.0);
    for a in 24..34 {
        h.ack(a);
    }
    assert!(h.ep.cwnd() < 11.0, "{}", h.ep.cwnd());
}

/// ns-2.35 `NewRenoTcpAgent::recv`: on the ACK at or beyond `recover_` it zeroes `dupwnd_`
/// and calls `recv_newack_helper`, whose `opencwnd` grows the halved cwnd by 1/cwnd as on
/// any new ACK: 10.1 after the full ACK, so the window reaches 11 one ACK sooner than
/// under RFC 6582 and one more segment is sent in that round.
#[test]
fn ns2_newreno_full_ack_opens_cwnd_after_the_deflation() {
    let c = TcpConfig { recovery_exit_increase: true, ..cfg(SsthreshBase::Cwnd) };
    let mut h = in_fast_recovery_with(c);
    assert_eq!(seqs(&h.ack(23)), (23..33).collect::<Vec<_>>());
    assert!((h.ep.cwnd() - 10.1).abs() < 1e-9, "{}", h.ep.cwnd());
    let mut sent = 0;
    for a in 24..34 {
        sent += h.ack(a).len();
    }
    assert!(h.ep.cwnd() >= 11.0, "{}", h.ep.cwnd());
    assert_eq!(sent, 11, "ten ACKs release ten segments and the eleventh of the larger window");
}
