//! Segment-level tests of one TCP endpoint, each named after the RFC rule it checks and
//! citing its section: RFC 5681 (congestion control), RFC 6582 (NewReno), RFC 6298 (RTO),
//! RFC 3168 (ECN), the Tahoe and Reno variants, RFC 3042 (limited transmit), RFC 2018 and
//! 2883 (SACK, D-SACK), RFC 6675 (SACK recovery), RFC 6937 (PRR) and ns-2's tick rounding.
//! Built on `tcp::harness`: no simulator, hand-made segments and clock, assertions on what
//! the endpoint sends, its window and its timers. Windows and sequence numbers count packets.

use savanna_core::net::packet::{FLAG_CWR, FLAG_ECE};
use savanna_core::net::{Ecn, PktKind};
use savanna_core::tcp::cc::hystart::Rule;
use savanna_core::tcp::endpoint::{AckState, EceEcho, State};
use savanna_core::tcp::harness::{has_ece, is_retx, ms, sack_blocks, seqs, Harness};
use savanna_core::tcp::recovery::RecoveryState;
use savanna_core::tcp::{RecoveryRate, TcpConfig, Variant};

/// The papers' settings without a handshake (so a test starts with data at t = 0).
fn cfg() -> TcpConfig {
    TcpConfig { handshake: false, ..TcpConfig::default() }
}

/// An established sender that has sent segments 0..n (initial window n, ssthresh high).
fn sender_with_flight(c: TcpConfig, n: u32, total: u64) -> Harness {
    let mut h = Harness::sender(TcpConfig { init_cwnd: n, ..c }, total);
    let sent = h.open();
    assert_eq!(seqs(&sent), (0..n as u64).collect::<Vec<_>>());
    h
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

// ------------------------------------------------------------------ RFC 5681

/// RFC 5681 3.1: the initial window (IW) is sent at once; no more.
#[test]
fn rfc5681_3_1_initial_window_is_sent_at_once() {
    for iw in [1, 2, 4, 10] {
        let mut h = Harness::sender(TcpConfig { init_cwnd: iw, ..cfg() }, 100);
        let sent = h.open();
        assert_eq!(seqs(&sent), (0..iw as u64).collect::<Vec<_>>(), "IW {iw}");
        assert!(sent.iter().all(|p| !is_retx(p) && p.size == 1500));
        assert_eq!(h.ep.cwnd(), iw as f64);
    }
}

/// RFC 5681 3.1: in slow start (cwnd < ssthresh) cwnd grows by one segment per ACK of new
/// data, so each ACK releases two new segments.
#[test]
fn rfc5681_3_1_slow_start_adds_one_segment_per_ack() {
    let mut h = sender_with_flight(cfg(), 2, 100);
    h.at(ms(100.0));
    assert_eq!(seqs(&h.ack(1)), vec![2, 3]);
    assert_eq!(h.ep.cwnd(), 3.0);
    assert_eq!(seqs(&h.ack(2)), vec![4, 5]);
    assert_eq!(h.ep.cwnd(), 4.0);
}

/// RFC 3465 2.2 (Appropriate Byte Counting): with slow_start_increase = "acked" an ACK
/// covering N segments adds min(N, L) to cwnd; L = 2 (the RFC's recommendation) caps a
/// stretch ACK of 4 at 2. The default (RFC 5681's min(N, SMSS)) adds 1 for the same ACK.
#[test]
fn rfc3465_2_2_slow_start_counts_acked_segments_up_to_l() {
    for (limit, grow) in [(1, 1.0), (2, 2.0), (u32::MAX, 4.0)] {
        let mut h = sender_with_flight(TcpConfig { abc_limit: limit, ..cfg() }, 8, 100);
        h.at(ms(100.0));
        // One ACK for four segments (a stretch ACK).
        let out = h.ack(4);
        assert_eq!(h.ep.cwnd(), 8.0 + grow, "L = {limit}");
        // The window slides by 4 and grows by `grow`: that many new segments go out.
        assert_eq!(seqs(&out), (8..12 + grow as u64).collect::<Vec<_>>(), "L = {limit}");
    }
}

/// Linux `tcp_slow_start` (tcp_cong.c: cwnd + acked, RFC 3465 without L): under delayed
/// ACKs (one ACK per two segments) slow start doubles cwnd per round trip; RFC 5681's one
/// segment per ACK grows it by half.
#[test]
fn linux_tcp_slow_start_doubles_per_round_under_delayed_acks() {
    for (limit, after) in [(u32::MAX, 20.0), (1, 15.0)] {
        let mut h = sender_with_flight(TcpConfig { abc_limit: limit, ..cfg() }, 10, 1000);
        h.at(ms(100.0));
        for a in [2, 4, 6, 8, 10] {
            h.ack(a);
        }
        assert_eq!(h.ep.cwnd(), after, "abc_limit {limit}");
    }
    // CUBIC's slow start (and HyStart++'s, before any RTT rise) counts the same way.
    let c = TcpConfig {
        variant: Variant::Cubic { hystart: true, hystart_rule: Rule::Rfc9406 },
        abc_limit: u32::MAX,
        ..cfg()
    };
    let mut h = sender_with_flight(c, 10, 1000);
    h.at(ms(100.0));
    for a in [2, 4, 6, 8, 10] {
        h.ack(a);
    }
    assert_eq!(h.ep.cwnd(), 20.0);
}

/// Linux `tcp_slow_start` (min(cwnd + acked, ssthresh), the rest of the ACK to
/// `tcp_cong_avoid_ai`): counting every segment an ACK covers, the slow-start step stops
/// at ssthresh. After a timeout the retransmission that fills the hole draws a cumulative
/// ACK over everything the receiver held; cwnd goes to ssthresh (plus the rest's share in
/// congestion avoidance), not past it, and that many segments leave at once.
#[test]
fn linux_slow_start_step_stops_at_ssthresh() {
    for (limit, cwnd, burst) in [(u32::MAX, 10.9, 10), (1, 2.0, 2)] {
        let mut h = sender_with_flight(TcpConfig { abc_limit: limit, ..cfg() }, 20, 100);
        assert_eq!(seqs(&h.fire_rto()), vec![0]);
        assert_eq!((h.ep.cwnd(), h.ep.ssthresh()), (1.0, 10.0));
        // The receiver held 1..17: the retransmitted 0 draws an ACK for 18 segments.
        let out = h.ack(18);
        assert!(close(h.ep.cwnd(), cwnd), "abc_limit {limit}: cwnd {}", h.ep.cwnd());
        assert_eq!(seqs(&out), (18..18 + burst).collect::<Vec<_>>(), "abc_limit {limit}");
    }
}

/// RFC 5681 3.1: in congestion avoidance (cwnd >= ssthresh) cwnd grows by about one
/// segment per RTT: cwnd += 1/cwnd per ACK (eq. 3), and the sender uses floor(cwnd).
#[test]
fn rfc5681_3_1_congestion_avoidance_adds_one_over_cwnd_per_ack() {
    let mut h = sender_with_flight(TcpConfig { init_ssthresh: 2.0, ..cfg() }, 2, 100);
    h.at(ms(100.0));
    assert_eq!(seqs(&h.ack(1)), vec![2]);
    assert!(close(h.ep.cwnd(), 2.5));
    assert_eq!(seqs(&h.ack(2)), vec![3]);
    assert!(close(h.ep.cwnd(), 2.9));
    // 2.9 + 1/2.9 crosses 3: the window opens by one.
    assert_eq!(seqs(&h.ack(3)), vec![4, 5]);
    assert!(close(h.ep.cwnd(), 2.9 + 1.0 / 2.9));
}

/// RFC 5681 3.1: slow start applies while cwnd < ssthresh; at cwnd = ssthresh the sender is
/// in congestion avoidance (the RFC leaves equality to the implementation; ns-2 does this).
#[test]
fn rfc5681_3_1_slow_start_ends_when_cwnd_reaches_ssthresh() {
    let mut h = sender_with_flight(TcpConfig { init_ssthresh: 3.0, ..cfg() }, 2, 100);
    h.at(ms(100.0));
    h.ack(1);
    assert_eq!(h.ep.cwnd(), 3.0, "slow start below ssthresh");
    h.ack(2);
    assert!(close(h.ep.cwnd(), 3.0 + 1.0 / 3.0), "congestion avoidance at ssthresh");
}

/// RFC 5681 2 and 3.1: the sender sends at most min(cwnd, rwnd); cwnd is capped at the
/// receiver window (`max_window`) so it does not grow while the receiver limits the flight.
#[test]
fn rfc5681_3_1_flight_and_cwnd_bounded_by_receiver_window() {
    let mut h = sender_with_flight(TcpConfig { max_window: 4, init_ssthresh: 100.0, ..cfg() }, 4, 100);
    h.at(ms(100.0));
    for a in 1..=20 {
        h.ack(a);
        assert!(h.ep.snd_max() - h.ep.snd_una() <= 4);
    }
    assert_eq!(h.ep.cwnd(), 4.0);
}

/// RFC 5681 2 and 3.2: fast recovery's inflation may take cwnd above the receiver window,
/// but the flight never exceeds it.
#[test]
fn rfc5681_3_2_inflated_window_still_bounded_by_receiver_window() {
    let mut h = sender_with_flight(TcpConfig { max_window: 10, ..cfg() }, 10, 100);
    let sent = h.dupacks(0, 20);
    assert_eq!(seqs(&sent), vec![0], "only the fast retransmit");
    assert_eq!(h.ep.cwnd(), 5.0 + 3.0 + 17.0);
    assert_eq!(h.ep.snd_max() - h.ep.snd_una(), 10);
}

/// RFC 5681 3.1 eq. (4): on a timeout ssthresh = max(FlightSize / 2, 2 SMSS) and cwnd = 1
/// (the loss window).
#[test]
fn rfc5681_3_1_timeout_sets_ssthresh_to_half_the_flight_and_cwnd_to_one() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.fire_rto();
    assert_eq!(h.ep.ssthresh(), 5.0);
    assert_eq!(h.ep.cwnd(), 1.0);
    let mut h = sender_with_flight(cfg(), 7, 100);
    h.fire_rto();
    assert_eq!(h.ep.ssthresh(), 3.0, "FlightSize / 2 in whole segments");
}

/// RFC 5681 3.1 eq. (4): ssthresh is never below 2 segments.
#[test]
fn rfc5681_3_1_loss_ssthresh_is_at_least_two_segments() {
    for n in [1, 2, 3] {
        let mut h = sender_with_flight(cfg(), n, 100);
        h.fire_rto();
        assert_eq!(h.ep.ssthresh(), 2.0, "flight {n}");
    }
}

/// RFC 5681 3.1 (and RFC 6298 5.4): after a timeout the sender retransmits the earliest
/// unacknowledged segment alone (cwnd = 1) and goes back N as ACKs arrive.
#[test]
fn rfc5681_3_1_timeout_retransmits_snd_una_then_goes_back_n() {
    let mut h = sender_with_flight(cfg(), 6, 100);
    let sent = h.fire_rto();
    assert_eq!(seqs(&sent), vec![0]);
    assert!(is_retx(&sent[0]));
    // Slow start again from cwnd 1: the ACK of 0 releases 1 and 2, already sent once.
    let sent = h.ack(1);
    assert_eq!(seqs(&sent), vec![1, 2]);
    assert!(sent.iter().all(is_retx));
    assert_eq!(h.ep.cwnd(), 2.0);
}

/// RFC 5681 3.2 step 2: the third duplicate ACK (not the first or second) triggers a fast
/// retransmit of the segment the ACKs ask for.
#[test]
fn rfc5681_3_2_fast_retransmit_on_third_duplicate_ack() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.at(ms(100.0));
    assert!(h.dupacks(0, 2).is_empty());
    assert_eq!(h.ep.stats.fast_retransmits, 0);
    let sent = h.ack(0);
    assert_eq!(seqs(&sent), vec![0]);
    assert!(is_retx(&sent[0]));
    assert_eq!(h.ep.stats.fast_retransmits, 1);
    assert!(h.ep.in_recovery());
}

/// RFC 5681 3.2 step 2-3: on fast retransmit ssthresh = max(FlightSize / 2, 2) and
/// cwnd = ssthresh + 3 (the three segments that left the network).
#[test]
fn rfc5681_3_2_fast_recovery_sets_cwnd_to_ssthresh_plus_three() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.dupacks(0, 3);
    assert_eq!(h.ep.ssthresh(), 5.0);
    assert_eq!(h.ep.cwnd(), 8.0);
}

/// RFC 5681 3.2 step 4-5: each further duplicate ACK inflates cwnd by one; new data goes out
/// once the inflated window exceeds the flight.
#[test]
fn rfc5681_3_2_fast_recovery_inflates_cwnd_per_duplicate_ack() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.dupacks(0, 3);
    assert!(h.dupacks(0, 2).is_empty(), "cwnd 10 = the flight: nothing new yet");
    assert_eq!(h.ep.cwnd(), 10.0);
    assert_eq!(seqs(&h.ack(0)), vec![10]);
    assert_eq!(seqs(&h.ack(0)), vec![11]);
    assert_eq!(h.ep.cwnd(), 12.0);
    assert_eq!(h.ep.ssthresh(), 5.0, "no further reduction");
}

/// RFC 5681 2 (DUPLICATE ACKNOWLEDGMENT): a segment carrying data is not a duplicate ACK,
/// even when its acknowledgement number repeats.
#[test]
fn rfc5681_2_segments_carrying_data_are_not_duplicate_acks() {
    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ..cfg() }, 100);
    // Both directions carry data: this endpoint also receives 5 packets.
    h.ep.reset(0, 0, 0, 1, 0, &h.cfg, 100, 5);
    h.open();
    for s in 0..4 {
        h.data(s); // each acknowledges nothing new (ack 0)
    }
    assert_eq!(h.ep.stats.fast_retransmits, 0);
    assert!(!h.ep.in_recovery());
    assert_eq!(h.ep.recovery_state(), RecoveryState::Open { dupacks: 0 });
}

/// RFC 5681 2 (DUPLICATE ACKNOWLEDGMENT, condition a): there must be outstanding data; an
/// ACK repeated when everything is acknowledged counts for nothing.
#[test]
fn rfc5681_2_duplicate_ack_needs_outstanding_data() {
    let mut h = sender_with_flight(cfg(), 2, 2);
    h.ack(2);
    assert!(h.ep.tx_done());
    assert!(h.dupacks(2, 5).is_empty());
    assert_eq!(h.ep.stats.fast_retransmits, 0);
}

/// RFC 5681 4.2: with delayed ACKs, an ACK is sent for at least every second full-sized
/// segment; the first is held with the delayed-ACK timer running.
#[test]
fn rfc5681_4_2_delayed_ack_for_every_second_segment() {
    let mut h = Harness::receiver(TcpConfig { delayed_ack: true, ..cfg() }, 10);
    h.at(ms(10.0));
    assert!(h.data(0).is_empty());
    assert_eq!(h.ep.delack_deadline(), Some(ms(210.0)));
    let sent = h.data(1);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].kind, sent[0].ack), (PktKind::Ack, 2));
    assert_eq!(h.ep.ack_state(), AckState::Idle);
    assert_eq!(h.ep.delack_deadline(), None, "the timer is cancelled with the ACK");
    assert!(h.data(2).is_empty(), "the count starts again");
}

/// RFC 5681 4.2 (RFC 1122 4.2.3.2): a held ACK is sent when the delayed-ACK timer expires
/// (`delack_timeout_s`, under the RFC's 500 ms bound).
#[test]
fn rfc5681_4_2_delayed_ack_sent_when_timer_expires() {
    let mut h = Harness::receiver(TcpConfig { delayed_ack: true, delack_timeout_s: 0.1, ..cfg() }, 10);
    h.at(ms(5.0));
    assert!(h.data(0).is_empty());
    let sent = h.fire_delack();
    assert_eq!(h.now, ms(105.0));
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].kind, sent[0].ack), (PktKind::Ack, 1));
    assert_eq!(h.ep.delack_deadline(), None);
}

/// RFC 5681 4.2: an out-of-order segment is acknowledged at once (a duplicate ACK), even
/// with delayed ACKs.
#[test]
fn rfc5681_4_2_out_of_order_segment_acknowledged_immediately() {
    let mut h = Harness::receiver(TcpConfig { delayed_ack: true, ..cfg() }, 10);
    assert!(h.data(0).is_empty());
    let sent = h.data(2);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].kind, sent[0].ack), (PktKind::Ack, 1));
    let sent = h.data(3);
    assert_eq!((sent.len(), sent[0].ack), (1, 1), "every out-of-order segment");
}

/// RFC 5681 4.2: a segment that fills a hole is acknowledged at once, for everything now
/// received in order.
#[test]
fn rfc5681_4_2_segment_filling_a_hole_acknowledged_immediately() {
    let mut h = Harness::receiver(TcpConfig { delayed_ack: true, ..cfg() }, 10);
    h.data(0);
    h.data(2);
    h.data(3);
    let sent = h.data(1);
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].kind, sent[0].ack), (PktKind::Ack, 4));
}

/// RFC 5681 4.2 does not require delayed ACKs: without them every segment is acknowledged.
#[test]
fn rfc5681_4_2_without_delayed_acks_every_segment_is_acknowledged() {
    let mut h = Harness::receiver(cfg(), 10);
    for s in 0..4 {
        let sent = h.data(s);
        assert_eq!((sent.len(), sent[0].ack), (1, s as u32 + 1));
    }
}

// ------------------------------------------------------------------ RFC 6582

/// A sender of segments 0..10 that lost 0 and 5: eight duplicate ACKs for 0 (from 1-4 and
/// 6-9) put it in fast recovery and inflate cwnd to 13, so it sent 10, 11, 12.
fn two_holes(c: TcpConfig) -> Harness {
    let mut h = sender_with_flight(c, 10, 100);
    h.at(ms(100.0));
    let sent = h.dupacks(0, 8);
    if h.cfg.variant != Variant::Tahoe {
        assert_eq!(seqs(&sent), vec![0, 10, 11, 12]);
        assert_eq!(h.ep.cwnd(), 13.0);
    }
    h
}

/// RFC 6582 3.2 step 1-2: `recover` is set to the highest sequence sent when fast
/// retransmit starts.
#[test]
fn rfc6582_3_2_recover_is_highest_sent_at_fast_retransmit() {
    let h = two_holes(cfg());
    assert_eq!(h.ep.recover(), Some(10));
}

/// RFC 6582 3.2 step 3: a partial ACK (below `recover`) retransmits the first unacknowledged
/// segment and keeps the sender in fast recovery.
#[test]
fn rfc6582_3_2_partial_ack_retransmits_next_hole() {
    let mut h = two_holes(cfg());
    h.at(ms(200.0));
    let sent = h.ack(5);
    assert_eq!(seqs(&sent)[0], 5);
    assert!(is_retx(&sent[0]));
    assert!(h.ep.in_recovery());
    assert_eq!(h.ep.recovery_state(), RecoveryState::FastRecovery { partial_acks: 1 });
}

/// RFC 6582 3.2 step 3: a partial ACK deflates cwnd by the amount acknowledged and adds one
/// segment back, then sends what that window allows.
#[test]
fn rfc6582_3_2_partial_ack_deflates_by_amount_acknowledged_plus_one() {
    let mut h = two_holes(cfg());
    let sent = h.ack(5);
    assert_eq!(h.ep.cwnd(), 13.0 - 5.0 + 1.0);
    // snd_una 5 + cwnd 9 = 14: one new segment after the retransmission.
    assert_eq!(seqs(&sent), vec![5, 13]);
    assert!(!is_retx(&sent[1]));
    assert_eq!(h.ep.ssthresh(), 5.0, "no new reduction");
}

/// RFC 6582 4 ("Impatient" variant, as ns-2): the retransmit timer is reset on the first
/// partial ACK only, so a long series of holes ends in a timeout rather than one RTT each.
#[test]
fn rfc6582_4_timer_reset_on_first_partial_ack_only() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.at(ms(100.0));
    h.dupacks(0, 4);
    h.at(ms(200.0));
    h.ack(3);
    let first = h.ep.rto_deadline().unwrap();
    assert_eq!(first, ms(200.0) + ms(3000.0), "reset on the first partial ACK (ITO: no RTT sample yet)");
    h.at(ms(300.0));
    h.ack(6);
    assert!(h.ep.in_recovery());
    assert_eq!(h.ep.rto_deadline(), Some(first), "not reset on the second");
}

/// RFC 6582 4 ("Slow-but-Steady", `partial_ack_timer = "every"`, as Linux re-arms on every
/// ACK of new data): each partial ACK re-arms the timer, so holes are repaired one per RTT
/// without a timeout.
#[test]
fn rfc6582_4_slow_but_steady_resets_the_timer_on_every_partial_ack() {
    let mut h = sender_with_flight(TcpConfig { restart_rto_on_every_partial_ack: true, ..cfg() }, 10, 100);
    h.at(ms(100.0));
    h.dupacks(0, 4);
    h.at(ms(200.0));
    h.ack(3);
    assert_eq!(h.ep.rto_deadline(), Some(ms(200.0) + ms(3000.0)));
    h.at(ms(300.0));
    h.ack(6);
    assert!(h.ep.in_recovery());
    assert_eq!(h.ep.rto_deadline(), Some(ms(300.0) + ms(3000.0)), "re-armed on the second");
}

/// RFC 6582 3.2 step 4: the ACK covering `recover` (a full ACK) ends fast recovery with
/// cwnd = ssthresh (the second of the RFC's two options).
#[test]
fn rfc6582_3_2_full_ack_exits_recovery_with_cwnd_ssthresh() {
    let mut h = two_holes(cfg());
    h.ack(5);
    h.ack(13);
    assert!(!h.ep.in_recovery());
    assert_eq!(h.ep.cwnd(), 5.0);
    assert_eq!(h.ep.recovery_state(), RecoveryState::Open { dupacks: 0 });
}

/// RFC 6582 3.2 step 2 / 5.1: duplicate ACKs during fast recovery never start a second fast
/// retransmit nor a second reduction, however many arrive.
#[test]
fn rfc6582_3_2_one_reduction_per_recovery() {
    let mut h = two_holes(cfg());
    h.dupacks(0, 20);
    h.ack(5);
    h.dupacks(5, 10);
    assert_eq!(h.ep.stats.fast_retransmits, 1);
    assert_eq!(h.ep.ssthresh(), 5.0);
}

/// RFC 6582 3.2 step 2: after a recovery, three duplicate ACKs covering more than `recover`
/// start a new fast retransmit (a new loss, a new reduction).
#[test]
fn rfc6582_3_2_duplicates_beyond_recover_start_a_new_recovery() {
    let mut h = two_holes(cfg());
    h.ack(5);
    h.ack(11); // full ACK (>= recover 10): cwnd 5, 11..14 outstanding, 14 and 15 sent
    assert!(!h.ep.in_recovery());
    let sent = h.dupacks(11, 3);
    assert_eq!(seqs(&sent), vec![11]);
    assert_eq!(h.ep.stats.fast_retransmits, 2);
    assert!(h.ep.in_recovery());
    assert_eq!(h.ep.recover(), Some(h.ep.snd_max()));
}

/// RFC 6582 4 (after a retransmit timeout): `recover` is set to the highest sequence sent,
/// so the duplicate ACKs raised by go-back-N's repeated segments start no fast retransmit.
#[test]
fn rfc6582_4_no_fast_retransmit_from_duplicates_after_timeout() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.fire_rto();
    assert_eq!(h.ep.recover(), Some(10));
    h.ack(1); // cwnd 2: 1 and 2 go again
    let sent = h.dupacks(1, 3); // the receiver already had 1 and 2
    assert!(sent.is_empty());
    assert_eq!(h.ep.stats.fast_retransmits, 0);
}

/// RFC 6582 3.2 step 2: duplicate ACKs that do not cover more than `recover` start
/// nothing, including those exactly at `recover` (go-back-N's copies of segments the
/// receiver already had, after a timeout). ns-3 3.44 accepts ACKs equal to it (RFC 6675's
/// rule for SACK senders); docs/tcp.md keeps RFC 6582's.
#[test]
fn rfc6582_3_2_duplicates_at_recover_start_nothing() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.fire_rto();
    assert_eq!(h.ep.recover(), Some(10));
    assert_eq!(seqs(&h.ack(10)), vec![10, 11], "everything up to recover arrived");
    assert!(h.dupacks(10, 3).is_empty(), "ACK = recover: no fast retransmit");
    assert_eq!(h.ep.stats.fast_retransmits, 0);
    assert!(!h.ep.in_recovery());
}

/// RFC 6582 4 / RFC 5681 3.1: a timeout during fast recovery ends it: cwnd = 1,
/// ssthresh from the flight, `recover` = highest sent.
#[test]
fn rfc6582_4_timeout_during_fast_recovery_leaves_it() {
    let mut h = two_holes(cfg());
    let sent = h.fire_rto();
    assert!(!h.ep.in_recovery());
    assert_eq!(h.ep.cwnd(), 1.0);
    assert_eq!(h.ep.ssthresh(), 6.0, "flight 13 at the timeout");
    assert_eq!(h.ep.recover(), Some(13));
    assert_eq!(seqs(&sent), vec![0]);
}

// ------------------------------------------------------------------ RFC 6298

/// RFC 6298 2.1 (and 5.7 for the papers' 3 s): before any RTT sample the timer is the
/// initial RTO, started when the first data segment is sent.
#[test]
fn rfc6298_2_1_initial_rto_before_any_sample() {
    for ito in [1.0, 3.0] {
        let mut h = Harness::sender(TcpConfig { ito_s: ito, ..cfg() }, 10);
        h.at(ms(7.0));
        h.open();
        assert_eq!(h.ep.rto_deadline(), Some(ms(7.0) + ms(ito * 1000.0)));
        assert_eq!(h.ep.srtt(), None);
    }
}

/// RFC 6298 2.2: the first sample R sets SRTT = R, RTTVAR = R/2 and
/// RTO = SRTT + max(G, 4 RTTVAR); the timer restarts with it.
#[test]
fn rfc6298_2_2_first_sample_sets_srtt_and_rttvar() {
    let mut h = sender_with_flight(cfg(), 2, 100);
    h.at(ms(100.0));
    h.ack(1);
    assert!(close(h.ep.srtt().unwrap(), 0.1));
    assert!(close(h.ep.rttvar(), 0.05));
    assert!(close(h.ep.current_rto_s(), 0.3));
    assert_eq!(h.ep.rto_deadline(), Some(ms(400.0)));
}

/// RFC 6298 2.3: later samples: RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R| (with the old SRTT),
/// then SRTT = 7/8 SRTT + 1/8 R.
#[test]
fn rfc6298_2_3_later_samples_smooth_with_one_eighth_and_one_quarter() {
    let mut h = sender_with_flight(cfg(), 2, 100);
    h.at(ms(100.0));
    h.ack(1); // R = 0.1 (segment 0 sent at 0)
    h.at(ms(300.0));
    h.ack(2); // R = 0.3 (segment 1 sent at 0)
    let rttvar = 0.75 * 0.05 + 0.25 * (0.1f64 - 0.3).abs();
    let srtt = 0.875 * 0.1 + 0.125 * 0.3;
    assert!(close(h.ep.rttvar(), rttvar), "{}", h.ep.rttvar());
    assert!(close(h.ep.srtt().unwrap(), srtt));
    assert!(close(h.ep.current_rto_s(), srtt + 4.0 * rttvar));
}

/// RFC 6298 2.4: the RTO is rounded up to the minimum RTO (the RFC's 1 s, or `min_rto_s`).
#[test]
fn rfc6298_2_4_rto_never_below_minimum() {
    for min in [0.2, 1.0] {
        let mut h = sender_with_flight(TcpConfig { min_rto_s: min, ..cfg() }, 2, 100);
        h.at(ms(10.0));
        h.ack(1); // R = 10 ms: SRTT + 4 RTTVAR = 30 ms
        assert_eq!(h.ep.current_rto_s(), min);
        assert_eq!(h.ep.rto_deadline(), Some(ms(10.0) + ms(min * 1000.0)));
    }
}

/// RFC 6298 2.4 (G): the clock granularity is the floor of the variance term.
#[test]
fn rfc6298_2_2_granularity_floors_the_variance_term() {
    let mut h = sender_with_flight(TcpConfig { min_rto_s: 0.0, granularity_s: 0.5, ..cfg() }, 2, 100);
    h.at(ms(100.0));
    h.ack(1); // 4 RTTVAR = 0.2 < G
    assert!(close(h.ep.current_rto_s(), 0.6));
}

/// RFC 6298 5.5: on each expiry the timer backs off (doubles).
#[test]
fn rfc6298_5_5_backoff_doubles_the_timer() {
    let mut h = sender_with_flight(TcpConfig { ito_s: 1.0, ..cfg() }, 2, 100);
    let mut fired = vec![];
    for _ in 0..4 {
        h.fire_rto();
        fired.push(h.now);
    }
    assert_eq!(fired, vec![ms(1000.0), ms(3000.0), ms(7000.0), ms(15000.0)]);
    assert_eq!(h.ep.stats.timeouts, 4);
}

/// RFC 6298 2.5 and 5.5: the backed-off timer never exceeds the maximum RTO.
#[test]
fn rfc6298_5_5_backoff_capped_at_max_rto() {
    let mut h = sender_with_flight(TcpConfig { ito_s: 1.0, max_rto_s: 4.0, ..cfg() }, 2, 100);
    let mut gaps = vec![];
    for _ in 0..5 {
        let before = h.now;
        h.fire_rto();
        gaps.push(h.now - before);
    }
    assert_eq!(gaps, vec![ms(1000.0), ms(2000.0), ms(4000.0), ms(4000.0), ms(4000.0)]);
}

/// RFC 6298 3 (Karn) and 5.7: no RTT sample from an ACK covering a retransmitted segment,
/// and the backed-off RTO stays until a valid sample arrives.
#[test]
fn rfc6298_3_karn_no_sample_from_retransmission_and_backoff_kept() {
    let mut h = sender_with_flight(TcpConfig { ito_s: 1.0, ..cfg() }, 2, 100);
    h.fire_rto(); // t = 1 s; segment 0 retransmitted
    h.at(ms(1100.0));
    h.ack(1); // covers the retransmission: no sample
    assert_eq!(h.ep.srtt(), None);
    assert_eq!(h.ep.rto_backoff(), 1);
    assert_eq!(h.ep.rto_deadline(), Some(ms(1100.0) + ms(2000.0)), "backed-off timer restarted");
    // Segments 1 (again) and 2 (new) are out; an ACK of 2 still covers a retransmission.
    h.at(ms(1200.0));
    h.ack(2);
    assert_eq!(h.ep.srtt(), None);
    // The ACK of 3 covers only segment 2, sent once at 1.1 s: a valid sample resets the backoff.
    h.at(ms(1300.0));
    h.ack(3);
    assert!(close(h.ep.srtt().unwrap(), 0.2));
    assert_eq!(h.ep.rto_backoff(), 0);
}

/// RFC 6298 5.3: the timer restarts on every ACK of new data (with data outstanding), with
/// the RTO of the latest sample.
#[test]
fn rfc6298_5_3_timer_restarted_on_ack_of_new_data() {
    let mut h = sender_with_flight(cfg(), 4, 100);
    h.at(ms(100.0));
    h.ack(1); // R = 0.1: RTO 0.3
    assert_eq!(h.ep.rto_deadline(), Some(ms(400.0)));
    h.at(ms(150.0));
    h.ack(2); // R = 0.15: SRTT 0.10625, RTTVAR 0.05, RTO 0.30625
    assert_eq!(h.ep.rto_deadline(), Some(ms(150.0 + 306.25)));
}

/// RFC 6298 5.2: the timer stops when all outstanding data is acknowledged.
#[test]
fn rfc6298_5_2_timer_stopped_when_everything_acknowledged() {
    let mut h = sender_with_flight(cfg(), 3, 3);
    h.at(ms(100.0));
    h.ack(3);
    assert_eq!(h.ep.rto_deadline(), None);
    assert!(h.notice.tx_complete);
    assert!(h.ep.tx_done());
}

/// RFC 6298 5.1: sending data while the timer runs does not restart it (here: new data
/// released by window inflation during fast recovery).
#[test]
fn rfc6298_5_1_sending_does_not_restart_a_running_timer() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.at(ms(100.0));
    h.dupacks(0, 3);
    let d = h.ep.rto_deadline();
    h.at(ms(120.0));
    let sent = h.dupacks(0, 3);
    assert_eq!(seqs(&sent), vec![10]);
    assert_eq!(h.ep.rto_deadline(), d);
}

/// RFC 6298 5.1 read literally (ns-3): a fast retransmit does not restart a running timer
/// when `restart_rto_on_fast_retransmit = false`; Linux and ns-2 restart it (the default).
#[test]
fn rfc6298_5_1_fast_retransmit_keeps_running_timer_when_configured() {
    let mut h = sender_with_flight(TcpConfig { restart_rto_on_fast_retransmit: false, ..cfg() }, 10, 100);
    let d = h.ep.rto_deadline();
    h.at(ms(100.0));
    h.dupacks(0, 3);
    assert_eq!(h.ep.rto_deadline(), d);
    let mut h = sender_with_flight(cfg(), 10, 100);
    h.at(ms(100.0));
    h.dupacks(0, 3);
    assert_eq!(h.ep.rto_deadline(), Some(ms(100.0) + ms(3000.0)));
}

/// RFC 6298 2 / 5.7: an RTT sample is taken from a handshake that was not retransmitted.
#[test]
fn rfc6298_2_handshake_gives_the_first_rtt_sample() {
    let mut h = Harness::sender(TcpConfig::default(), 10);
    let sent = h.open();
    assert_eq!(sent[0].kind, PktKind::Syn);
    assert!(matches!(h.ep.state(), State::SynSent { .. }));
    assert_eq!(h.ep.rto_deadline(), Some(ms(3000.0)), "the SYN is timed with the ITO");
    h.at(ms(50.0));
    let p = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    let sent = h.deliver(p);
    assert_eq!(h.ep.state(), State::Established);
    assert!(close(h.ep.srtt().unwrap(), 0.05));
    assert_eq!(sent[0].kind, PktKind::Ack);
    assert_eq!(seqs(&sent), vec![0, 1]);
}

/// ns-2's one-way TCP with `syn_` (`handshake_ack = false`): no third handshake packet; the
/// client's first data packet acknowledges the SYN-ACK and the server becomes established
/// on it, timing the handshake from its SYN-ACK (RFC 6298 2).
#[test]
fn handshake_ack_false_sends_data_first() {
    let c = TcpConfig { handshake_ack: false, ..TcpConfig::default() };
    let mut h = Harness::sender(c.clone(), 10);
    h.open();
    h.at(ms(50.0));
    let sent = h.deliver(h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0));
    assert!(sent.iter().all(|p| p.kind == PktKind::Data), "no pure ACK: {:?}", sent.iter().map(|p| p.kind));
    assert_eq!(seqs(&sent), vec![0, 1]);
    let mut srv = Harness::listener(c, 10);
    srv.deliver(srv.segment(PktKind::Syn, 0, 0, Ecn::NotEct, 0));
    srv.at(ms(50.0));
    let answer = srv.deliver(srv.segment(PktKind::Data, 0, 0, Ecn::NotEct, 0));
    assert_eq!(srv.ep.state(), State::Established);
    assert!(close(srv.ep.srtt().unwrap(), 0.05), "the SYN-ACK's RTT sample");
    assert_eq!(answer[0].kind, PktKind::Ack);
    assert_eq!(answer[0].ack, 1, "the data is taken");
}

/// RFC 6298 5.7: if the SYN was retransmitted, no sample is taken and data transmission
/// starts again from the initial RTO (not the backed-off one).
#[test]
fn rfc6298_5_7_retransmitted_syn_restarts_data_from_ito() {
    let mut h = Harness::sender(TcpConfig::default(), 10);
    h.open();
    let sent = h.fire_rto();
    assert_eq!(sent[0].kind, PktKind::Syn);
    assert_eq!(h.ep.stats.syn_sent, 2);
    assert_eq!(h.ep.rto_deadline(), Some(ms(3000.0) + ms(6000.0)), "SYN backoff");
    h.at(ms(3050.0));
    let p = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    h.deliver(p);
    assert_eq!(h.ep.srtt(), None);
    assert_eq!(h.ep.rto_deadline(), Some(ms(3050.0) + ms(3000.0)));
}

// ------------------------------------------------------------------ RFC 3168

/// RFC 3168 6.1.1: ECN is negotiated by a SYN with ECE and CWR answered by a SYN-ACK with
/// ECE only; a SYN without them gets a SYN-ACK without ECE, and no data is ECT.
#[test]
fn rfc3168_6_1_1_negotiation_on_syn_and_synack() {
    let c = TcpConfig { ecn: true, ..TcpConfig::default() };
    let mut client = Harness::sender(c.clone(), 10);
    let syn = client.open();
    assert_eq!(syn[0].flags & (FLAG_ECE | FLAG_CWR), FLAG_ECE | FLAG_CWR);
    assert_eq!(syn[0].ecn, Ecn::NotEct, "a SYN is not ECT");

    let mut server = Harness::listener(c.clone(), 10);
    let p = server.segment(PktKind::Syn, 0, 0, Ecn::NotEct, FLAG_ECE | FLAG_CWR);
    let synack = server.deliver(p);
    assert_eq!(synack[0].kind, PktKind::SynAck);
    assert_eq!(synack[0].flags & (FLAG_ECE | FLAG_CWR), FLAG_ECE);
    assert_eq!(synack[0].ecn, Ecn::NotEct);

    let mut server = Harness::listener(c, 10);
    let p = server.segment(PktKind::Syn, 0, 0, Ecn::NotEct, 0);
    let synack = server.deliver(p);
    assert_eq!(synack[0].flags & FLAG_ECE, 0, "the peer is not ECN-capable");

    let p = client.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    let sent = client.deliver(p);
    assert!(sent.iter().all(|p| p.ecn == Ecn::NotEct), "SYN-ACK without ECE: no ECT data");
}

/// RFC 3168 6.1.1 / 6.1.5 (as implemented): new data segments are ECT(0); retransmissions
/// and pure ACKs are not.
#[test]
fn rfc3168_6_1_5_data_ect_retransmissions_and_pure_acks_not() {
    let c = TcpConfig { ecn: true, ..cfg() };
    let mut h = Harness::sender(TcpConfig { init_cwnd: 10, ..c.clone() }, 100);
    let sent = h.open();
    assert!(sent.iter().all(|p| p.ecn == Ecn::Ect));
    let sent = h.dupacks(0, 3);
    assert!(is_retx(&sent[0]));
    assert_eq!(sent[0].ecn, Ecn::NotEct);
    let mut r = Harness::receiver(c, 10);
    let ack = r.data_with(0, Ecn::Ect, 0);
    assert_eq!((ack[0].kind, ack[0].ecn), (PktKind::Ack, Ecn::NotEct));
}

/// RFC 3168 6.1.2: an ECE halves the window (ssthresh = max(FlightSize/2, 2), cwnd =
/// ssthresh) at most once per window of data: further ECEs are ignored until the data sent
/// at the reduction is acknowledged.
#[test]
fn rfc3168_6_1_2_ece_reduces_once_per_window() {
    let mut h = sender_with_flight(TcpConfig { ecn: true, ..cfg() }, 10, 100);
    h.at(ms(100.0));
    h.ack_with(1, FLAG_ECE);
    assert_eq!(h.ep.ssthresh(), 4.0, "flight 9 after the ACK");
    assert_eq!(h.ep.cwnd(), 4.0);
    h.ack_with(2, FLAG_ECE);
    h.ack_with(10, FLAG_ECE);
    assert_eq!(h.ep.ssthresh(), 4.0, "ACKs up to the window at the reduction: no new cut");
    assert!(h.ep.cwnd() > 4.0, "they still open the window");
    let before = h.ep.cwnd();
    h.ack_with(11, FLAG_ECE); // beyond: a new window, a new reduction
    assert!(h.ep.cwnd() < before);
    assert_eq!(h.ep.stats.fast_retransmits, 0, "an ECN reduction retransmits nothing");
}

/// RFC 3168 6.1.2: after reducing for an ECE the sender sets CWR on the next new data
/// segment, and on that one only.
#[test]
fn rfc3168_6_1_2_cwr_on_the_next_new_data_segment() {
    let mut h = sender_with_flight(TcpConfig { ecn: true, ..cfg() }, 4, 100);
    h.at(ms(100.0));
    let sent = h.ack_with(1, FLAG_ECE); // cwnd 2 (flight 3 / 2 -> 2): nothing new yet
    assert!(sent.is_empty());
    let sent = h.ack(3);
    assert_eq!(seqs(&sent), vec![4]);
    assert_eq!(sent[0].flags & FLAG_CWR, FLAG_CWR);
    let sent = h.ack(4);
    assert!(!sent.is_empty() && sent.iter().all(|p| p.flags & FLAG_CWR == 0));
}

/// RFC 3168 6.1.2: no reduction for an ECE during fast recovery (the loss already halved
/// the window for this window of data).
#[test]
fn rfc3168_6_1_2_no_ece_reduction_in_fast_recovery() {
    let mut h = two_holes(TcpConfig { ecn: true, ..cfg() });
    h.ack_with(5, FLAG_ECE);
    assert_eq!(h.ep.cwnd(), 9.0, "deflated as a partial ACK, not halved");
    assert_eq!(h.ep.ssthresh(), 5.0);
}

/// RFC 3168 6.1.3: the receiver sets ECE on every ACK from a CE-marked segment until a
/// data segment with CWR arrives.
#[test]
fn rfc3168_6_1_3_receiver_echoes_ece_until_cwr() {
    let mut h = Harness::receiver(TcpConfig { ecn: true, ..cfg() }, 10);
    assert!(!has_ece(&h.data_with(0, Ecn::Ect, 0)[0]));
    assert!(has_ece(&h.data_with(1, Ecn::Ce, 0)[0]));
    assert_eq!(h.ep.ece_echo(), EceEcho::Echoing);
    assert!(has_ece(&h.data_with(2, Ecn::Ect, 0)[0]), "still echoing");
    assert!(!has_ece(&h.data_with(3, Ecn::Ect, FLAG_CWR)[0]), "CWR ends the echo");
    assert_eq!(h.ep.stats.ecn_marks, 1);
}

/// RFC 3168 6.1.3 (as Linux's quick ACK): a CE-marked segment is acknowledged at once,
/// even with delayed ACKs, so the echo is not held back.
#[test]
fn rfc3168_6_1_3_ce_marked_segment_acknowledged_at_once() {
    let mut h = Harness::receiver(TcpConfig { ecn: true, delayed_ack: true, ..cfg() }, 10);
    assert!(h.data_with(0, Ecn::Ect, 0).is_empty(), "delayed");
    let sent = h.data_with(2, Ecn::Ce, 0);
    assert_eq!(sent.len(), 1);
    let mut h = Harness::receiver(TcpConfig { ecn: true, delayed_ack: true, ..cfg() }, 10);
    let sent = h.data_with(0, Ecn::Ce, 0);
    assert_eq!(sent.len(), 1, "in order but CE: at once");
    assert!(has_ece(&sent[0]));
}

// ------------------------------------------------------------------ Tahoe and Reno

/// Tahoe (RFC 5681 3.1 and 3.2 without fast recovery): on the third duplicate ACK,
/// ssthresh = max(FlightSize / 2, 2), cwnd = 1, retransmit snd_una and go back N.
#[test]
fn tahoe_fast_retransmit_sets_cwnd_to_one_and_goes_back_n() {
    let mut h = sender_with_flight(TcpConfig { variant: Variant::Tahoe, ..cfg() }, 10, 100);
    h.at(ms(100.0));
    let sent = h.dupacks(0, 3);
    assert_eq!(seqs(&sent), vec![0]);
    assert_eq!((h.ep.cwnd(), h.ep.ssthresh()), (1.0, 5.0));
    assert!(!h.ep.in_recovery(), "no fast recovery");
    assert!(h.dupacks(0, 5).is_empty(), "no inflation");
    assert_eq!(h.ep.cwnd(), 1.0);
    let sent = h.ack(1);
    assert_eq!(seqs(&sent), vec![1, 2], "slow start from one, going back N");
    assert!(sent.iter().all(is_retx));
    assert_eq!(h.ep.rto_backoff(), 0, "not a timeout: no backoff");
}

/// Reno (RFC 5681 3.2 step 6): any ACK of new data ends fast recovery with cwnd = ssthresh;
/// a partial ACK retransmits nothing.
#[test]
fn reno_exits_recovery_on_first_new_ack() {
    let mut h = two_holes(TcpConfig { variant: Variant::Reno, ..cfg() });
    let sent = h.ack(5);
    assert!(!h.ep.in_recovery());
    assert_eq!(h.ep.cwnd(), 5.0);
    assert!(!seqs(&sent).contains(&5), "no retransmission of the second hole");
}

/// Reno (RFC 5681 3.2, which has no `recover`; ns-2's `RenoTcpAgent::dupack_action`):
/// after a fast recovery ended, three duplicates for a second hole in the same window start
/// a second fast retransmit and a second halving (docs/tcp.md, issue 17 3b).
#[test]
fn reno_rfc5681_3_2_second_hole_in_a_window_gives_a_second_fast_retransmit() {
    let mut h = two_holes(TcpConfig { variant: Variant::Reno, ..cfg() });
    h.ack(5); // leaves recovery: cwnd = ssthresh = 5, 5..10 outstanding
    assert_eq!(h.ep.cwnd(), 5.0);
    let sent = h.dupacks(5, 3);
    assert_eq!(seqs(&sent), vec![5], "second fast retransmit");
    assert!(is_retx(&sent[0]));
    assert_eq!(h.ep.stats.fast_retransmits, 2);
    assert_eq!(h.ep.ssthresh(), 4.0, "halved again: flight 13 - 5 = 8, / 2");
    assert_eq!(h.ep.stats.timeouts, 0);
}

/// Reno keeps the `recover` check after a timeout (ns-2's `bugFix_` in
/// `RenoTcpAgent::timeout`; RFC 6582 section 4's reason): the duplicates raised by
/// go-back-N's copies start no fast retransmit until the ACK passes `recover`.
#[test]
fn reno_no_fast_retransmit_from_duplicates_after_timeout() {
    let mut h = sender_with_flight(TcpConfig { variant: Variant::Reno, ..cfg() }, 10, 100);
    h.fire_rto();
    assert_eq!(h.ep.recover(), Some(10));
    h.ack(1);
    assert!(h.dupacks(1, 3).is_empty());
    assert_eq!(h.ep.stats.fast_retransmits, 0);
}

/// NewReno and Tahoe keep RFC 6582's check after a fast retransmit too: the second hole of
/// a window is not a second fast retransmit (NewReno repairs it with a partial ACK).
#[test]
fn rfc6582_3_2_newreno_and_tahoe_no_second_fast_retransmit_in_a_window() {
    let mut h = sender_with_flight(TcpConfig { variant: Variant::Tahoe, ..cfg() }, 10, 100);
    h.dupacks(0, 3);
    h.ack(5);
    h.dupacks(5, 3);
    assert_eq!(h.ep.stats.fast_retransmits, 1);
}

// ------------------------------------------------------------------ RFC 3042

fn lt() -> TcpConfig {
    TcpConfig { limited_transmit: true, ..cfg() }
}

/// RFC 3042 section 2: on each of the first two duplicate ACKs the sender sends one new
/// segment, and cwnd does not change.
#[test]
fn rfc3042_2_new_segment_on_first_and_second_duplicate_ack() {
    let mut h = sender_with_flight(lt(), 10, 100);
    assert_eq!(seqs(&h.ack(0)), vec![10]);
    assert_eq!(seqs(&h.ack(0)), vec![11]);
    assert_eq!(h.ep.cwnd(), 10.0, "cwnd unchanged");
    let sent = h.ack(0);
    assert_eq!(seqs(&sent), vec![0], "the third is the fast retransmit");
}

/// RFC 3042 section 2: off (the default, ns-2 before 2.1b9), a duplicate ACK sends nothing.
#[test]
fn rfc3042_2_off_by_default() {
    let mut h = sender_with_flight(cfg(), 10, 100);
    assert!(h.dupacks(0, 2).is_empty());
}

/// RFC 3042 section 2: only if the receiver's advertised window allows.
#[test]
fn rfc3042_2_limited_transmit_within_receiver_window() {
    let mut h = sender_with_flight(TcpConfig { max_window: 10, ..lt() }, 10, 100);
    assert!(h.dupacks(0, 2).is_empty());
}

/// RFC 3042 section 2: only previously unsent data; nothing when all is sent.
#[test]
fn rfc3042_2_only_new_data() {
    let mut h = sender_with_flight(lt(), 10, 10);
    assert!(h.dupacks(0, 2).is_empty());
}

/// RFC 5681 3.2 step 2 with RFC 3042: the segments sent by limited transmit are not in the
/// FlightSize that sets ssthresh.
#[test]
fn rfc5681_3_2_limited_transmit_segments_not_in_ssthresh() {
    let mut h = sender_with_flight(lt(), 10, 100);
    h.dupacks(0, 3);
    assert_eq!(h.ep.stats.fast_retransmits, 1);
    assert_eq!(h.ep.ssthresh(), 5.0, "10 / 2, not 12 / 2");
}

// ------------------------------------------------------------------ ns-2 tcpTick (issue 17 3c)

/// ns-2.35 `TcpAgent::rtt_update` / `rtt_timeout` with `tick_s`: the sample is a whole number
/// of ticks, and the RTO is floor(SRTT + 4 RTTVAR) ticks (3 ticks per sample tick after the
/// first sample), with no G term however large `granularity_s` is.
#[test]
fn ns2_tick_samples_and_rto_in_whole_ticks() {
    let c = TcpConfig { tick_s: 0.1, min_rto_s: 0.0, granularity_s: 0.5, ..cfg() };
    let mut h = sender_with_flight(c, 1, 100);
    h.at(ms(150.0));
    h.ack(1);
    let srtt = h.ep.srtt().unwrap();
    let k = (srtt / 0.1).round();
    assert!(k == 1.0 || k == 2.0, "a 150 ms round trip crosses 1 or 2 ticks, got {srtt}");
    assert!((srtt - k * 0.1).abs() < 1e-12);
    assert!((h.ep.current_rto_s() - 3.0 * k * 0.1).abs() < 1e-12, "rto {}", h.ep.current_rto_s());
}

/// ns-2 `rtt_timeout` (`rfc2988_`): the minimum RTO bounds the tick-rounded RTO.
#[test]
fn ns2_tick_rto_at_least_min_rto() {
    let c = TcpConfig { tick_s: 0.01, min_rto_s: 1.0, ..cfg() };
    let mut h = sender_with_flight(c, 1, 100);
    h.at(ms(100.0));
    h.ack(1);
    assert_eq!(h.ep.current_rto_s(), 1.0);
}

// ------------------------------------------------------------------ RFC 2018, RFC 2883: receiver

fn sack() -> TcpConfig {
    TcpConfig { sack: true, ..cfg() }
}

/// RFC 2018 section 4: the first block holds the segment that triggered the ACK, the others
/// repeat the most recently reported blocks; RFC 2018 section 3: the option's 8n + 2 bytes
/// (padded to 8n + 4) are counted in the ACK's size.
#[test]
fn rfc2018_4_first_block_holds_the_triggering_segment() {
    let mut h = Harness::receiver(sack(), 100);
    h.data(0);
    h.data(2);
    h.data(3);
    let a = h.data(6);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 1);
    assert_eq!(sack_blocks(&a[0]), vec![(6, 7), (2, 4)]);
    assert_eq!(a[0].size, 40 + 8 * 2 + 4);
}

/// RFC 2018 section 4: as many blocks as the option holds (`sack_blocks`), newest first.
#[test]
fn rfc2018_4_blocks_limited_to_the_option_space() {
    let mut h = Harness::receiver(TcpConfig { sack_blocks: 3, ..sack() }, 100);
    let mut last = vec![];
    for s in [2, 4, 6, 8, 10] {
        last = h.data(s);
    }
    assert_eq!(sack_blocks(&last[0]), vec![(10, 11), (8, 9), (6, 7)]);
    assert_eq!(last[0].size, 40 + 28);
}

/// RFC 2018 section 4: blocks below the cumulative ACK are not reported; with no hole the
/// ACK carries no option and is `header_bytes` long.
#[test]
fn rfc2018_4_no_blocks_once_the_holes_are_filled() {
    let mut h = Harness::receiver(sack(), 100);
    h.data(1);
    let a = h.data(0);
    assert_eq!(a[0].ack, 2);
    assert!(sack_blocks(&a[0]).is_empty());
    assert_eq!(a[0].size, 40);
}

/// RFC 2883 section 4 (1): with `dsack`, a duplicate segment is reported in the first block
/// of the next ACK, below the cumulative ACK; without it, nothing is reported.
#[test]
fn rfc2883_4_duplicate_reported_in_first_block() {
    let mut h = Harness::receiver(TcpConfig { dsack: true, ..sack() }, 100);
    h.data(0);
    h.data(1);
    let a = h.data(1);
    assert_eq!(sack_blocks(&a[0]), vec![(1, 2)]);
    assert_eq!(a[0].ack, 2, "the D-SACK block lies below the ACK");
    let mut h = Harness::receiver(sack(), 100);
    h.data(0);
    let a = h.data(0);
    assert!(sack_blocks(&a[0]).is_empty());
}

/// RFC 2883 section 4 (2): a duplicate of an out-of-order segment is reported first, then
/// the block holding it.
#[test]
fn rfc2883_4_duplicate_above_the_ack_then_its_block() {
    let mut h = Harness::receiver(TcpConfig { dsack: true, ..sack() }, 100);
    h.data(3);
    h.data(4);
    let a = h.data(4);
    assert_eq!(sack_blocks(&a[0]), vec![(4, 5), (3, 5)]);
}

// ------------------------------------------------------------------ RFC 6675: sender

fn sack6675() -> TcpConfig {
    TcpConfig { recovery_rate: RecoveryRate::Rfc6675, ..sack() }
}

/// A SACK sender with segments 0..n out that lost 0: duplicate ACKs SACK 1, 1-2, 1-3.
fn sack_lost_first(c: TcpConfig, n: u32, total: u64) -> (Harness, Vec<savanna_core::net::Packet>) {
    let mut h = sender_with_flight(c, n, total);
    h.at(ms(100.0));
    let mut sent = h.ack_sack(0, &[(1, 2)]);
    sent.extend(h.ack_sack(0, &[(1, 3)]));
    sent.extend(h.ack_sack(0, &[(1, 4)]));
    (h, sent)
}

/// RFC 6675 section 5 (4): on the DupThresh-th duplicate ACK, RecoveryPoint = HighData,
/// ssthresh = cwnd = FlightSize / 2, and HighACK + 1 is retransmitted; SetPipe then counts
/// the 6 unSACKed packets not lost plus the retransmission (7 > cwnd 5: nothing more).
#[test]
fn rfc6675_5_4_fast_retransmit_enters_recovery() {
    let (h, sent) = sack_lost_first(sack6675(), 10, 100);
    assert_eq!(seqs(&sent), vec![0]);
    assert!(is_retx(&sent[0]));
    assert!(h.ep.in_sack_recovery());
    assert_eq!(h.ep.recover(), Some(10));
    assert_eq!((h.ep.cwnd(), h.ep.ssthresh()), (5.0, 5.0));
    assert_eq!(h.ep.pipe(), 7);
    assert_eq!(h.ep.scoreboard().sacked(), 3);
}

/// RFC 6675 section 5 (2): IsLost(HighACK + 1), three packets SACKed above it, starts
/// recovery on the first duplicate ACK.
#[test]
fn rfc6675_5_2_islost_enters_recovery_before_dupthresh() {
    let mut h = sender_with_flight(sack6675(), 10, 100);
    let sent = h.ack_sack(0, &[(1, 4)]);
    assert_eq!(seqs(&sent), vec![0]);
    assert!(h.ep.in_sack_recovery());
}

/// RFC 6675 section 5 (C) with RFC 6675's rate: once pipe falls below cwnd, one segment
/// per SACKed packet (cwnd - pipe >= 1).
#[test]
fn rfc6675_5_c_sends_while_cwnd_exceeds_pipe() {
    let c = TcpConfig { init_ssthresh: 1000.0, max_window: 1000, ..sack6675() };
    let (mut h, _) = sack_lost_first(c, 20, 100);
    assert_eq!((h.ep.cwnd(), h.ep.pipe()), (10.0, 17));
    let mut sent = vec![];
    for k in 4..14 {
        sent.extend(h.ack_sack(0, &[(1, k + 1)]));
    }
    // pipe falls by one per SACKed packet: 10 after seven, then one new segment per ACK.
    assert_eq!(seqs(&sent), vec![20, 21, 22]);
    assert_eq!(h.ep.pipe(), 10);
}

/// RFC 6675 section 4, NextSeg rule (1) before rule (2): a hole that IsLost is
/// retransmitted before any new data.
#[test]
fn rfc6675_4_nextseg_lost_hole_before_new_data() {
    let (mut h, _) = sack_lost_first(sack6675(), 10, 100);
    // 5 is lost too (6, 7, 8 SACKed above it): pipe = 1 (0, resent) + 1 (9) = 2, so
    // cwnd 5 allows three: the hole first (rule 1), then new data (rule 2).
    let sent = h.ack_sack(0, &[(6, 9), (1, 5)]);
    assert_eq!(seqs(&sent), vec![5, 10, 11]);
    assert!(is_retx(&sent[0]) && !is_retx(&sent[1]));
    // 9 SACKed: pipe = 0 and 5 (resent) + 10, 11 = 4: one more, new.
    let sent = h.ack_sack(0, &[(6, 10), (1, 5)]);
    assert_eq!(seqs(&sent), vec![12]);
}

/// RFC 6675 section 5 (A): a cumulative ACK covering RecoveryPoint ends recovery
/// (cwnd = ssthresh); one below it does not.
#[test]
fn rfc6675_5_a_ack_beyond_recovery_point_ends_recovery() {
    let (mut h, _) = sack_lost_first(sack6675(), 10, 100);
    h.ack_sack(4, &[]);
    assert!(h.ep.in_sack_recovery(), "partial ACK: still in recovery");
    h.ack(10);
    assert!(!h.ep.in_sack_recovery());
    assert_eq!(h.ep.cwnd(), 5.0);
}

/// RFC 6675 section 4 rule (4): with no lost hole, no new data and no hole below the
/// highest SACK, one rescue retransmission of the highest unSACKed packet, once HighACK has
/// passed RescueRxt, and only once per recovery.
#[test]
fn rfc6675_4_rescue_retransmission_once_per_recovery() {
    let mut h = sender_with_flight(sack6675(), 10, 10);
    for k in 2..10 {
        h.ack_sack(0, &[(1, k)]);
    }
    assert!(h.ep.in_sack_recovery());
    let sent = h.ack_sack(9, &[]);
    assert_eq!(seqs(&sent), vec![9], "the rescue retransmission of the tail");
    assert!(is_retx(&sent[0]));
    assert!(h.ack_sack(9, &[]).is_empty(), "one rescue per recovery");
}

/// RFC 6675 section 5.1: a timeout ends recovery with RecoveryPoint = HighData; no new
/// recovery until the cumulative ACK reaches it; the retransmissions skip SACKed packets.
#[test]
fn rfc6675_5_1_timeout_ends_recovery_and_keeps_the_scoreboard() {
    let (mut h, _) = sack_lost_first(sack6675(), 10, 100);
    let sent = h.fire_rto();
    assert_eq!(seqs(&sent), vec![0]);
    assert!(!h.ep.in_sack_recovery());
    assert_eq!(h.ep.cwnd(), 1.0);
    let sent = h.ack_sack(4, &[]);
    assert_eq!(seqs(&sent), vec![4, 5], "1-3 were SACKed; go-back-N resumes at 4");
    // Duplicates below RecoveryPoint (10) start nothing.
    for k in 0..4 {
        assert!(h.ack_sack(4, &[(6, 7 + k)]).is_empty(), "IsLost(4) holds, but ACK 4 < 10");
    }
    assert_eq!(h.ep.stats.fast_retransmits, 1);
}

/// RFC 6675 section 5 (3) with limited transmit: on the first duplicates, send new data
/// while cwnd - pipe >= 1 (the SACKed packet left the pipe): one per duplicate, as RFC 3042.
#[test]
fn rfc6675_5_3_limited_transmit_governed_by_pipe() {
    let mut h = sender_with_flight(TcpConfig { limited_transmit: true, ..sack6675() }, 10, 100);
    assert_eq!(seqs(&h.ack_sack(0, &[(1, 2)])), vec![10]);
    assert_eq!(seqs(&h.ack_sack(0, &[(1, 3)])), vec![11]);
    assert_eq!(h.ep.cwnd(), 10.0);
}

// ------------------------------------------------------------------ RFC 6937 (PRR)

/// RFC 6937 section 3: while pipe > ssthresh, PRR sends CEIL(prr_delivered * ssthresh /
/// RecoverFS) - prr_out: with ssthresh half the flight, one segment per two delivered.
#[test]
fn rfc6937_3_proportional_reduction_one_for_two_delivered() {
    let c = TcpConfig { init_ssthresh: 1000.0, max_window: 1000, ..sack() };
    let (mut h, sent) = sack_lost_first(c, 20, 100);
    assert_eq!(seqs(&sent), vec![0], "the fast retransmit (prr_out = 1)");
    let mut sent = vec![];
    for k in 4..14 {
        sent.extend(h.ack_sack(0, &[(1, k + 1)]));
    }
    // prr_delivered = 1 + 10 = 11: ceil(11 * 10 / 20) = 6 sent in all, 5 of them new.
    assert_eq!(seqs(&sent), vec![20, 21, 22, 23, 24]);
}

/// RFC 6937 section 3, PRR-SSRB: once pipe <= ssthresh, at most the data delivered plus one
/// packet per ACK, and at most ssthresh - pipe.
#[test]
fn rfc6937_3_slow_start_reduction_bound() {
    let (mut h, _) = sack_lost_first(sack(), 10, 100);
    // A partial ACK of 0-3 and SACK of 5-9 (delivered 1 + 5 = 6): 4 is lost (five SACKed
    // above), so pipe = 0 < ssthresh 5. prr_delivered = 1 + 6 = 7, prr_out = 1: the bound
    // is min(ssthresh - pipe, max(7 - 1, 6) + 1) = min(5, 7) = 5.
    let sent = h.ack_sack(4, &[(5, 10)]);
    assert_eq!(seqs(&sent), vec![4, 10, 11, 12, 13]);
    assert_eq!(h.ep.pipe(), 5, "pipe back to ssthresh, no further");
}

/// RFC 6937: recovery ends as RFC 6675's with cwnd = ssthresh.
#[test]
fn rfc6937_recovery_ends_with_cwnd_ssthresh() {
    let (mut h, _) = sack_lost_first(sack(), 10, 100);
    h.ack(10);
    assert!(!h.ep.in_sack_recovery());
    assert_eq!(h.ep.cwnd(), 5.0);
}

// ------------------------------------------------------------------ RFC 6937 without SACK

/// NewReno without SACK at PRR's rate (`nosack_recovery_rate = "prr"`).
fn nosack_prr() -> TcpConfig {
    TcpConfig { nosack_prr: true, max_window: 100, ..cfg() }
}

/// RFC 6937 section 3 without SACK: each duplicate ACK counts one packet delivered, and
/// while pipe exceeds ssthresh the sender sends CEIL(prr_delivered * ssthresh / RecoverFS)
/// minus prr_out. Flight 20, ssthresh 10: the third duplicate sends the fast retransmit (1
/// of 1 delivered), eight more send four new packets (5 of 9), where RFC 6582's inflation
/// (cwnd 10 + 3 + 8 = 21 over a flight of 20) sends one.
#[test]
fn rfc6937_3_without_sack_duplicate_acks_count_as_delivered() {
    let mut h = sender_with_flight(nosack_prr(), 20, 1000);
    h.at(ms(100.0));
    let entry = h.dupacks(0, 3);
    assert_eq!(seqs(&entry), vec![0]);
    assert!(is_retx(&entry[0]) && h.ep.in_recovery());
    assert_eq!(h.ep.ssthresh(), 10.0);
    let more = h.dupacks(0, 8);
    assert_eq!(seqs(&more), vec![20, 21, 22, 23], "ceil(9 * 10 / 20) - 1 = 4");
    assert!(more.iter().all(|p| !is_retx(p)));

    let mut h = sender_with_flight(TcpConfig { max_window: 100, ..cfg() }, 20, 1000);
    h.at(ms(100.0));
    h.dupacks(0, 3);
    assert_eq!(seqs(&h.dupacks(0, 8)), vec![20], "RFC 6582's inflation, for contrast");
}

/// RFC 6937 section 3 without SACK: an ACK of new data delivers what it acknowledges minus
/// the packets its duplicate ACKs already counted (at least one). Three duplicates, then a
/// partial ACK of 5 packets: 5 - 3 = 2 delivered (prr_delivered 3), which resends the new
/// hole (ceil(3 * 10 / 20) - 1 = 1); four more duplicates (prr_delivered 7) send
/// ceil(70 / 20) - 2 = 2 new packets. Counting the partial ACK's 5 in full would send 3.
#[test]
fn rfc6937_3_without_sack_partial_ack_counts_acked_minus_duplicates() {
    let mut h = sender_with_flight(nosack_prr(), 20, 1000);
    h.at(ms(100.0));
    h.dupacks(0, 3);
    h.at(ms(200.0));
    let partial = h.ack(5);
    assert_eq!(seqs(&partial), vec![5]);
    assert!(is_retx(&partial[0]) && h.ep.in_recovery());
    assert_eq!(seqs(&h.dupacks(5, 4)), vec![20, 21]);
}

/// RFC 6937 section 3 without SACK, below ssthresh: once pipe is under ssthresh the
/// sender sends what was delivered and not yet sent (Linux's bound without the extra
/// packet, MIN(ssthresh - pipe, MAX(prr_delivered - prr_out, DeliveredData))), and the
/// full ACK ends recovery with cwnd = ssthresh (RFC 6582 3.2 step 4).
#[test]
fn rfc6937_3_without_sack_below_ssthresh_sends_what_was_delivered() {
    let mut h = sender_with_flight(nosack_prr(), 20, 1000);
    h.at(ms(100.0));
    h.dupacks(0, 3);
    h.at(ms(200.0));
    // A partial ACK of 18: flight 2, pipe 1 (the hole, not yet resent), delivered 15
    // (prr_delivered 16, prr_out 1): min(10 - 1, 15) = 9: the hole and 8 new packets.
    let out = h.ack(18);
    assert_eq!(seqs(&out), [18].into_iter().chain(20..28).collect::<Vec<_>>());
    assert_eq!(h.ep.cwnd(), 10.0);
    h.at(ms(300.0));
    h.ack(20);
    assert!(!h.ep.in_recovery());
    assert_eq!(h.ep.cwnd(), 10.0);
}
