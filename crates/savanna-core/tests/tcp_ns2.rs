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
//! - `tcp.recovery_exit_cwnd = "deflated"`: the full ACK leaves the window without its
//!   inflation where partial ACKs deflated it, as ns-2.35's `NewRenoTcpAgent::recv`
//!   (`exit_recovery_fix_ 0`) and `partialnewack` do, not at ssthresh.
//! - `tcp.fast_retransmit_cwnd = "half"`: fast recovery starts from min(cwnd, window) / 2
//!   as a real number, ns-2.35's `TcpAgent::slowdown` with `precisionReduce_` true.
//!
//! Built on `tcp::harness` like tests/tcp_rfc.rs. Windows and sequence numbers count
//! packets.

use savanna_core::net::{Ecn, PktKind};
use savanna_core::tcp::endpoint::State;
use savanna_core::tcp::harness::{ms, seqs, Harness};
use savanna_core::tcp::{FastRetransmitCwnd, RecoveryExitCwnd, SsthreshBase, TcpConfig, TcpEndpoint};

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

// ------------------------------------------------------------------ recovery_exit_cwnd

/// 20 segments out, 0 and 19 lost. Segments 1-18 give 18 duplicates: fast retransmit of 0
/// (ssthresh 10, cwnd 13) and 15 more inflate cwnd to 28, sending 20-27. The retransmission
/// draws the partial ACK 19, which acknowledges 19 packets, more than the 18 of inflation:
/// cwnd 10 (28 - 19 + 1) either way; 19 is resent and 28 sent. 20-27 give 8 duplicates
/// (cwnd 18, sending 29-36), and the retransmission of 19 the full ACK 28, with 28-36 (9)
/// in flight. Returns what that ACK sends.
fn exit_after_tail_loss(exit: RecoveryExitCwnd, increase: bool) -> (Harness, Vec<u64>) {
    let c = TcpConfig { recovery_exit_cwnd: exit, recovery_exit_increase: increase, ..cfg(SsthreshBase::Cwnd) };
    let mut h = sender_with_flight(c, 20, 100);
    h.at(ms(100.0));
    assert_eq!(seqs(&h.dupacks(0, 3)), vec![0]);
    assert_eq!(seqs(&h.dupacks(0, 15)), (20..28).collect::<Vec<_>>());
    assert_eq!(h.ep.cwnd(), 28.0);
    assert_eq!(seqs(&h.ack(19)), vec![19, 28]);
    assert_eq!(h.ep.cwnd(), 10.0, "the same total window either way");
    assert_eq!(seqs(&h.dupacks(19, 8)), (29..37).collect::<Vec<_>>());
    let sent = seqs(&h.ack(28));
    (h, sent)
}

/// ns-2.35 `NewRenoTcpAgent::partialnewack` (tcp-newreno.cc 1.58, `partial_window_deflation_`
/// 1: "if (dupwnd_ > deflate) ... else { cwnd_ -= (deflate - dupwnd_); dupwnd_ = 1; }") and
/// `NewRenoTcpAgent::recv` (`exit_recovery_fix_` 0: the full ACK only zeroes `dupwnd_`):
/// the partial ACK of 19 packets took one more than the 18 of inflation out of cwnd_ (10 ->
/// 9), so recovery ends at 9, below ssthresh 10: with 9 in flight nothing leaves, and the
/// next ACK is in slow start (+1: two segments). With RFC 6582 3.2 step 4 cwnd = ssthresh
/// = 10 (one segment leaves) and the next ACK adds 1/10 (one segment).
#[test]
fn ns2_newreno_exit_keeps_the_window_partial_acks_deflated() {
    let (mut h, sent) = exit_after_tail_loss(RecoveryExitCwnd::Deflated, false);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (10.0, 9.0));
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(seqs(&h.ack(29)), vec![37, 38], "slow start from below ssthresh");
    assert_eq!(h.ep.cwnd(), 10.0);

    let (mut h, sent) = exit_after_tail_loss(RecoveryExitCwnd::Ssthresh, false);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (10.0, 10.0));
    assert_eq!(sent, vec![37]);
    assert_eq!(seqs(&h.ack(29)), vec![38]);
}

/// ns-2.35's two exit rules together (`recv_newack_helper`'s `opencwnd` after the exit):
/// cwnd_ 9 is below ssthresh, so the exiting ACK adds a whole packet (slow start), not
/// 1/cwnd: cwnd 10, one segment leaves.
#[test]
fn ns2_newreno_exit_below_ssthresh_opens_cwnd_by_one() {
    let (h, sent) = exit_after_tail_loss(RecoveryExitCwnd::Deflated, true);
    assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (10.0, 10.0));
    assert_eq!(sent, vec![37]);
}

/// ns-2.35 `partialnewack`: `if (cwnd_ < 1) cwnd_ = 1` with `dupwnd_` left at 1, so a
/// partial ACK never leaves a window below 2 there; RFC 6582's deflation can reach 1. Three
/// duplicates (cwnd 13, inflation 3), then a partial ACK of 14 packets: 13 - 14 + 1 = 0.
#[test]
fn ns2_newreno_partial_ack_leaves_a_window_of_at_least_two() {
    for (exit, want) in [(RecoveryExitCwnd::Deflated, 2.0), (RecoveryExitCwnd::Ssthresh, 1.0)] {
        let c = TcpConfig { recovery_exit_cwnd: exit, ..cfg(SsthreshBase::Cwnd) };
        let mut h = sender_with_flight(c, 20, 100);
        h.at(ms(100.0));
        assert_eq!(seqs(&h.dupacks(0, 3)), vec![0]);
        assert_eq!(seqs(&h.ack(14))[0], 14);
        assert_eq!(h.ep.cwnd(), want, "{exit:?}");
    }
}

/// ns-2.35 `RenoTcpAgent::timeout` zeroes `dupwnd_` and `TcpAgent::slowdown` halves what
/// is left, `cwnd_`: after the partial ACK of 19 packets took it to 9, a timeout gives
/// ssthresh floor(9 / 2) = 4; with RFC 6582's exit the window without inflation is
/// ssthresh, 10, so 5.
#[test]
fn ns2_slowdown_timeout_after_a_deep_partial_ack_halves_the_deflated_cwnd() {
    for (exit, want) in [(RecoveryExitCwnd::Deflated, 4.0), (RecoveryExitCwnd::Ssthresh, 5.0)] {
        let c = TcpConfig { recovery_exit_cwnd: exit, ..cfg(SsthreshBase::Cwnd) };
        let mut h = sender_with_flight(c, 20, 100);
        h.at(ms(100.0));
        h.dupacks(0, 18);
        assert_eq!(seqs(&h.ack(19)), vec![19, 28]);
        assert_eq!(seqs(&h.fire_rto()), vec![19]);
        assert_eq!((h.ep.ssthresh(), h.ep.cwnd()), (want, 1.0), "{exit:?}");
    }
}

// ------------------------------------------------------------------ fast_retransmit_cwnd

/// ns-2.35 `TcpAgent::slowdown` (tcp.cc 1.182, `precisionReduce_` true, its default since
/// 2006: "halfwin = windowd() / 2", "cwnd_ = halfwin", "ssthresh_ = (int) halfwin"): 21
/// segments out, segment 0 lost; the fast retransmit halves cwnd 21 to 10.5 (ssthresh 10),
/// and recovery ends there, so the window reaches 11 after 6 ACKs (10.5 + 1/cwnd each)
/// where RFC 5681's cwnd = ssthresh = 10 needs 10.
#[test]
fn ns2_slowdown_precision_reduce_halves_cwnd_as_a_real_number() {
    for (halving, exit_cwnd, sent_after) in
        [(FastRetransmitCwnd::Half, 10.5, 7), (FastRetransmitCwnd::Ssthresh, 10.0, 6)]
    {
        let c = TcpConfig {
            fast_retransmit_cwnd: halving,
            recovery_exit_cwnd: RecoveryExitCwnd::Deflated,
            ..cfg(SsthreshBase::Cwnd)
        };
        let mut h = sender_with_flight(c, 21, 200);
        h.at(ms(100.0));
        assert_eq!(seqs(&h.dupacks(0, 3)), vec![0]);
        assert_eq!(h.ep.ssthresh(), 10.0, "{halving:?}");
        assert_eq!(seqs(&h.dupacks(0, 17)), (21..30).collect::<Vec<_>>(), "{halving:?}");
        assert_eq!(seqs(&h.ack(30)), (30..40).collect::<Vec<_>>(), "{halving:?}");
        assert_eq!(h.ep.cwnd(), exit_cwnd, "{halving:?}");
        let sent: usize = (31..37).map(|a| h.ack(a).len()).sum();
        assert_eq!(sent, sent_after, "{halving:?}");
    }
}
