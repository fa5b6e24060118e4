//! Segment-level tests of RACK-TLP (RFC 8985) and of pacing at Linux's rate, each named
//! after the rule it checks (section cited), on `tcp::harness`: hand-made ACKs with SACK
//! blocks, a clock set by hand, assertions on what the sender sends, its RACK state and
//! its timers. Windows and sequence numbers count packets.

use savanna_core::net::{Ecn, PktKind};
use savanna_core::tcp::endpoint::autosize;
use savanna_core::tcp::harness::{is_retx, ms, seqs, Harness};
use savanna_core::tcp::rack::{PTO_NO_SRTT, WC_DEL_ACK_T};
use savanna_core::tcp::TcpConfig;

/// A SACK sender with RACK-TLP, no handshake, IW 10.
fn rcfg() -> TcpConfig {
    TcpConfig { handshake: false, sack: true, dsack: true, rack: true, init_cwnd: 10, ..TcpConfig::default() }
}

/// Segments 0..9 sent at 0; segment 0 acknowledged at 100 ms (SRTT = min_RTT = 100 ms),
/// which sends 10 and 11.
fn after_first_ack(total: u64) -> Harness {
    let mut h = Harness::sender(rcfg(), total);
    assert_eq!(seqs(&h.open()), (0..10).collect::<Vec<_>>());
    let out = h.at(ms(100.0)).ack(1);
    assert_eq!(seqs(&out), vec![10, 11]);
    assert_eq!(h.ep.rack().min_rtt(), Some(ms(100.0)));
    h
}

// ------------------------------------------------------------------ RACK (section 6)

/// RFC 8985 6.1: every transmission records Segment.xmit_ts; a retransmission also sets
/// Segment.retransmitted.
#[test]
fn rfc8985_6_1_each_transmission_records_its_time() {
    let mut h = after_first_ack(100);
    assert_eq!(h.ep.rack().seg(5).ts, 0);
    assert_eq!(h.ep.rack().seg(11).ts, ms(100.0));
    assert!(!h.ep.rack().seg(1).ever_retx);
    let out = h.at(ms(101.0)).ack_sack(1, &[(2, 5)]);
    assert_eq!(seqs(&out)[0], 1);
    let s = h.ep.rack().seg(1);
    assert!(s.ever_retx && s.rtx && !s.lost);
    assert_eq!(s.ts, ms(101.0));
}

/// RFC 8985 6.2 step 1: min_RTT takes every RFC 6298 sample, the handshake's included,
/// and keeps the smallest.
#[test]
fn rfc8985_6_2_step1_min_rtt_from_every_rtt_sample() {
    let mut h = Harness::sender(TcpConfig { handshake: true, ..rcfg() }, 100);
    h.open();
    let synack = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    h.at(ms(80.0)).deliver(synack);
    assert_eq!(h.ep.rack().min_rtt(), Some(ms(80.0)));
    h.at(ms(200.0)).ack(1);
    assert_eq!(h.ep.rack().min_rtt(), Some(ms(80.0)), "a 120 ms sample keeps 80 ms");
}

/// RFC 8985 6.2 step 2: RACK.xmit_ts / RACK.end_seq follow the latest-sent segment
/// delivered, ties in time broken by the sequence.
#[test]
fn rfc8985_6_2_step2_rack_follows_the_latest_sent_delivered_segment() {
    let mut h = after_first_ack(100);
    assert_eq!(h.ep.rack().latest_delivered(), (0, 1));
    h.at(ms(101.0)).ack_sack(1, &[(3, 4)]);
    assert_eq!(h.ep.rack().latest_delivered(), (0, 4));
    h.at(ms(102.0)).ack_sack(1, &[(10, 11), (3, 4)]);
    assert_eq!(h.ep.rack().latest_delivered(), (ms(100.0), 11));
    // A segment sent earlier delivered later does not move it back.
    h.at(ms(103.0)).ack_sack(1, &[(5, 6), (10, 11), (3, 4)]);
    assert_eq!(h.ep.rack().latest_delivered(), (ms(100.0), 11));
}

/// RFC 8985 6.2 step 2: without timestamps, a retransmitted segment acknowledged sooner
/// than min_RTT after its retransmission was delivered by the original: it does not
/// update RACK.
#[test]
fn rfc8985_6_2_step2_retransmission_acked_faster_than_min_rtt_is_ignored() {
    let mut h = after_first_ack(100);
    let out = h.at(ms(101.0)).ack_sack(1, &[(2, 5)]);
    assert_eq!(seqs(&out)[0], 1, "three SACKed: segment 1 lost at once");
    assert_eq!(h.ep.rack().latest_delivered(), (0, 5));
    h.at(ms(105.0)).ack(5);
    assert_eq!(h.ep.rack().latest_delivered(), (0, 5), "4 ms < min_RTT: the original was ACKed");
}

/// RFC 8985 6.2 step 3: a segment never retransmitted delivered below RACK.fack means
/// reordering; the window is then min_RTT / 4 even with DupThresh segments SACKed.
#[test]
fn rfc8985_6_2_step3_delivery_below_fack_is_reordering() {
    let mut h = after_first_ack(100);
    h.at(ms(101.0)).ack_sack(1, &[(3, 4)]);
    assert!(!h.ep.rack().reordering_seen());
    let out = h.at(ms(102.0)).ack(4);
    assert!(seqs(&out).iter().all(|&s| s >= 12), "nothing retransmitted");
    assert!(h.ep.rack().reordering_seen(), "1 and 2 arrived after 3");
    h.at(ms(103.0)).ack_sack(4, &[(5, 8)]);
    assert_eq!(h.ep.rack().reo_wnd(), ms(25.0), "min_RTT / 4 despite 3 SACKed");
}

/// RFC 8985 6.2 step 4: without reordering seen the window is min_RTT / 4 while fewer
/// than DupThresh segments are SACKed, and zero from DupThresh on.
#[test]
fn rfc8985_6_2_step4_reo_wnd_quarter_min_rtt_then_zero_at_dupthresh() {
    let mut h = after_first_ack(100);
    h.at(ms(101.0)).ack_sack(1, &[(2, 3)]);
    assert_eq!(h.ep.rack().reo_wnd(), ms(25.0));
    h.at(ms(101.5)).ack_sack(1, &[(2, 4)]);
    assert_eq!(h.ep.rack().reo_wnd(), ms(25.0));
    h.at(ms(102.0)).ack_sack(1, &[(2, 5)]);
    assert_eq!(h.ep.rack().reo_wnd(), 0);
}

/// RFC 8985 6.2 step 4: a D-SACK grows reo_wnd_mult by one per round trip (not per
/// D-SACK), and the window with it.
#[test]
fn rfc8985_6_2_step4_dsack_grows_the_multiplier_once_per_round() {
    let mut h = after_first_ack(100);
    assert_eq!(h.ep.rack().reo_wnd_mult(), 1);
    // D-SACK of segment 0 (below the cumulative ACK), twice in the same round.
    h.at(ms(101.0)).ack_sack(1, &[(0, 1)]);
    assert_eq!(h.ep.rack().reo_wnd_mult(), 2);
    h.at(ms(102.0)).ack_sack(1, &[(0, 1)]);
    assert_eq!(h.ep.rack().reo_wnd_mult(), 2, "same round");
    // The round ends when snd_una passes SND.NXT of the first D-SACK (12).
    h.at(ms(200.0)).ack(12);
    h.at(ms(201.0)).ack_sack(12, &[(11, 12)]);
    assert_eq!(h.ep.rack().reo_wnd_mult(), 3);
    h.at(ms(202.0)).ack_sack(12, &[(13, 14)]);
    assert_eq!(h.ep.rack().reo_wnd(), 3 * ms(100.0) / 4);
}

/// RFC 8985 6.2 step 5: a segment sent before a delivered one is lost once RACK.rtt +
/// reo_wnd has passed since it was sent; until then the RACK timer is armed for it, and
/// its expiry starts fast recovery with that segment's retransmission.
#[test]
fn rfc8985_6_2_step5_rack_timer_marks_the_loss_after_rtt_plus_reo_wnd() {
    let mut h = after_first_ack(100);
    let out = h.at(ms(101.0)).ack_sack(1, &[(2, 3)]);
    assert!(out.iter().all(|p| !is_retx(p)), "not yet: within the reordering window");
    // 0 + RACK.rtt (101 ms) + reo_wnd (25 ms).
    assert_eq!(h.ep.rack().reo_deadline, Some(ms(126.0)));
    assert_eq!(h.ep.timer_deadline(), Some(ms(126.0)));
    let out = h.fire_timer();
    assert_eq!(seqs(&out), vec![1]);
    assert!(is_retx(&out[0]));
    assert!(h.ep.in_sack_recovery());
    assert_eq!(h.ep.stats.timeouts, 0);
}

/// RFC 8985 6.2 step 5 with step 4's zero window: DupThresh SACKed segments make every
/// earlier-sent unSACKed one lost at once (the DupThresh rule, in time).
#[test]
fn rfc8985_6_2_step5_dupthresh_sacked_marks_the_hole_lost_at_once() {
    let mut h = after_first_ack(100);
    let out = h.at(ms(101.0)).ack_sack(1, &[(2, 5)]);
    assert_eq!(seqs(&out)[0], 1);
    assert!(is_retx(&out[0]) && h.ep.in_sack_recovery());
    assert_eq!(h.ep.stats.fast_retransmits, 1);
}

/// RFC 8985 6.2 step 5 (and section 3's motivation): a lost retransmission is detected
/// like any segment, when a segment sent after it is delivered, without an RTO.
#[test]
fn rfc8985_6_2_step5_lost_retransmission_is_detected_without_rto() {
    let mut h = after_first_ack(100);
    let mut sent_new = vec![];
    let out = h.at(ms(101.0)).ack_sack(1, &[(2, 5)]);
    assert_eq!(seqs(&out)[0], 1);
    // Segments 5..11 are SACKed one by one; PRR sends new data meanwhile.
    for k in 5..12u64 {
        let out = h.at(ms(101.0 + k as f64)).ack_sack(1, &[(2, k + 1)]);
        sent_new.extend(seqs(&out).into_iter().filter(|&s| s >= 12));
    }
    let first_new = *sent_new.first().expect("PRR sent new data in recovery");
    assert!(!h.ep.rack().seg(1).lost);
    // The new segment is SACKed while 1's retransmission (sent before it) is not: lost.
    let out = h.at(ms(260.0)).ack_sack(1, &[(2, first_new + 1)]);
    assert!(
        h.ep.rack().seg(1).lost || seqs(&out).contains(&1),
        "the retransmission of 1 is deemed lost (and resent when the rate allows)"
    );
    assert_eq!(h.ep.stats.timeouts, 0);
}

// ------------------------------------------------------------------ RTO (section 6.3)

/// An RTO in fast recovery: 1 lost at 101 ms starts recovery (1 and 12 sent); 5..11 are
/// SACKed from 350 ms on (RACK.rtt 286 ms at the last), PRR sending 13, 14 and 15 at 356,
/// 368 and 386 ms; nothing acknowledges 1's retransmission and the RTO fires at 401 ms.
fn rto_in_recovery() -> (Harness, Vec<u64>) {
    let mut h = after_first_ack(100);
    assert_eq!(seqs(&h.at(ms(101.0)).ack_sack(1, &[(2, 5)])), vec![1, 12]);
    for k in 5..12u64 {
        h.at(ms(350.0 + 6.0 * (k - 5) as f64)).ack_sack(1, &[(2, k + 1)]);
    }
    assert_eq!(h.ep.snd_max(), 16);
    assert_eq!(h.ep.rack().seg(15).ts, ms(386.0));
    assert_eq!(h.ep.rto_deadline(), Some(ms(401.0)));
    let out = h.fire_timer();
    assert_eq!(h.ep.stats.timeouts, 1);
    (h, seqs(&out))
}

/// RFC 8985 6.3: on the RTO, SND.UNA is deemed lost whatever its age (1, retransmitted
/// 300 ms before, less than RACK.rtt + reo_wnd), and the other unacknowledged segments
/// only if sent at least RACK.rtt + reo_wnd before (12, sent at 101 ms; not 13..15, sent
/// within the last 286 ms); only SND.UNA is retransmitted at once (cwnd = 1).
#[test]
fn rfc8985_6_3_rto_marks_snd_una_and_what_was_sent_rack_rtt_ago() {
    let (h, out) = rto_in_recovery();
    assert_eq!(out, vec![1]);
    assert_eq!(h.ep.cwnd(), 1.0);
    let r = h.ep.rack();
    assert!(r.seg(12).lost, "sent 300 ms before the RTO: lost");
    for s in 13..16 {
        assert!(!r.seg(s).lost && !r.seg(s).ever_retx, "{s} was sent within RACK.rtt: in flight");
    }
    assert_eq!(r.lost_out(), 1);
    // pipe: 1's retransmission and 13..15 (RFC 6675's two parts with RACK's marks).
    assert_eq!(r.pipe(h.ep.snd_max() - h.ep.snd_una(), h.ep.scoreboard().sacked()), 4);
}

/// RFC 8985 6.3 (against go-back-N): in the RTO recovery the sender retransmits what
/// RACK deems lost and nothing else: when the cumulative ACK reaches 12, the segments
/// sent after it and still in flight are not resent (go-back-N would resend 12 and 13 at
/// cwnd 2); once 13 and 14 are SACKed, pipe leaves room and 12 alone goes.
#[test]
fn rfc8985_6_3_rto_recovery_retransmits_only_what_rack_deems_lost() {
    let (mut h, _) = rto_in_recovery();
    // The first retransmission of 1 was slow, not lost: it arrives 1 ms after the RTO's
    // (a sample under min_RTT, ignored by step 2); 2..11 were SACKed.
    let out = h.at(ms(402.0)).ack(12);
    assert_eq!(h.ep.cwnd(), 2.0);
    assert!(out.is_empty(), "pipe 3 (13..15) >= cwnd 2: nothing, got {:?}", seqs(&out));
    let out = h.at(ms(460.0)).ack_sack(12, &[(13, 15)]);
    assert_eq!(seqs(&out), vec![12]);
    assert!(is_retx(&out[0]));
    assert!(!h.ep.rack().seg(15).ever_retx, "15 is still in flight");
}

// ------------------------------------------------------------------ TLP (section 7)

/// RFC 8985 7.2: the PTO is 1 s before an RTT sample, then 2 SRTT, plus WCDelAckT with
/// one segment in flight, and never after the RTO would fire.
#[test]
fn rfc8985_7_2_pto_is_two_srtt_capped_by_the_rto() {
    let mut h = Harness::sender(rcfg(), 6);
    h.open();
    assert_eq!(h.ep.rack().pto_deadline, Some(PTO_NO_SRTT));
    h.at(ms(100.0)).ack(3);
    // flight 3: 2 SRTT after the ACK, before the RTO (3 SRTT on the first sample).
    assert_eq!(h.ep.rack().pto_deadline, Some(ms(300.0)));
    assert_eq!(h.ep.rto_deadline(), Some(ms(400.0)));
    h.at(ms(110.0)).ack(5);
    // flight 1: 2 SRTT + 200 ms would pass the RTO: capped there.
    let srtt = (h.ep.srtt().unwrap() * 1e9).round() as u64;
    let rto = h.ep.rto_deadline().unwrap();
    assert!(ms(110.0) + 2 * srtt + WC_DEL_ACK_T > rto);
    assert_eq!(h.ep.rack().pto_deadline, Some(rto));
}

/// RFC 8985 7.2: no PTO while segments are SACKed or in fast recovery.
#[test]
fn rfc8985_7_2_no_pto_with_sacked_segments_or_in_recovery() {
    let mut h = after_first_ack(100);
    assert!(h.ep.rack().pto_deadline.is_some());
    h.at(ms(101.0)).ack_sack(1, &[(2, 3)]);
    assert_eq!(h.ep.rack().pto_deadline, None);
    h.at(ms(102.0)).ack_sack(1, &[(2, 5)]);
    assert!(h.ep.in_sack_recovery());
    assert_eq!(h.ep.rack().pto_deadline, None);
}

/// RFC 8985 7.3: the probe is a new segment when one is available and the receiver window
/// allows it (cwnd aside); the RTO, not the PTO, is re-armed after it.
#[test]
fn rfc8985_7_3_probe_sends_new_data_when_it_can() {
    let mut h = after_first_ack(100);
    let pto = h.ep.rack().pto_deadline.unwrap();
    assert_eq!(pto, ms(300.0));
    let out = h.fire_timer();
    assert_eq!(seqs(&out), vec![12]);
    assert!(!is_retx(&out[0]));
    assert_eq!(h.ep.rack().tlp_end_seq(), Some(13));
    assert_eq!(h.ep.rack().pto_deadline, None);
    assert_eq!(h.ep.rto_deadline(), Some(pto + ms(300.0)), "RTO re-armed from the probe");
    assert_eq!(h.ep.stats.tlp_probes, 1);
}

/// RFC 8985 7.3: with nothing new to send, the probe retransmits the last segment sent.
#[test]
fn rfc8985_7_3_probe_retransmits_the_last_segment_otherwise() {
    let mut h = after_first_ack(12);
    let out = h.fire_timer();
    assert_eq!(seqs(&out), vec![11]);
    assert!(is_retx(&out[0]));
    assert_eq!(h.ep.rack().tlp_end_seq(), Some(12));
    assert_eq!(h.ep.stats.timeouts, 0);
}

/// RFC 8985 7.4.2: a retransmitted probe followed by an ACK beyond TLP.end_seq without a
/// D-SACK repaired a loss: the congestion control responds (cwnd = ssthresh, halved).
#[test]
fn rfc8985_7_4_probe_that_repaired_a_loss_reduces_cwnd() {
    let c = TcpConfig { max_window: 11, ..rcfg() };
    let mut h = Harness::sender(c, 40);
    h.open();
    h.at(ms(100.0)).ack(1);
    assert_eq!(h.ep.snd_max(), 12, "receiver window 11 reached");
    let out = h.fire_timer();
    assert_eq!(seqs(&out), vec![11], "no new data allowed: the last segment");
    h.at(ms(400.0)).ack(12);
    assert_eq!(h.ep.rack().tlp_end_seq(), Some(12), "SEG.ACK == TLP.end_seq: not resolved");
    let cwnd = h.ep.cwnd();
    h.at(ms(410.0)).ack(13);
    assert_eq!(h.ep.rack().tlp_end_seq(), None);
    assert!(h.ep.cwnd() < 0.7 * cwnd, "cwnd {} after {}", h.ep.cwnd(), cwnd);
}

/// RFC 8985 7.4.2: a D-SACK of the probe says both copies arrived: no loss, no response.
#[test]
fn rfc8985_7_4_dsack_of_the_probe_means_no_loss() {
    let c = TcpConfig { max_window: 11, ..rcfg() };
    let mut h = Harness::sender(c, 40);
    h.open();
    h.at(ms(100.0)).ack(1);
    h.fire_timer();
    let cwnd = h.ep.cwnd();
    h.at(ms(400.0)).ack_sack(12, &[(11, 12)]);
    assert_eq!(h.ep.rack().tlp_end_seq(), None);
    assert!(h.ep.cwnd() >= cwnd);
}

/// RFC 8985 7 (the point of TLP): a tail loss is repaired by the probe and fast recovery,
/// not by the RTO: the probe's SACK lets RACK deem the earlier tail segments lost.
#[test]
fn rfc8985_7_tail_loss_is_repaired_by_probe_and_fast_recovery() {
    let mut h = Harness::sender(rcfg(), 10);
    h.open();
    h.at(ms(100.0)).ack(7); // 7, 8, 9 lost
    assert_eq!(h.ep.rack().pto_deadline, Some(ms(300.0)));
    let out = h.fire_timer();
    assert_eq!(seqs(&out), vec![9]);
    let out = h.at(ms(400.0)).ack_sack(7, &[(9, 10)]);
    assert!(h.ep.in_sack_recovery());
    assert_eq!(seqs(&out)[0], 7);
    assert_eq!(h.ep.stats.timeouts, 0);
}

// ------------------------------------------------------------------ pacing (Linux)

fn pcfg() -> TcpConfig {
    TcpConfig { handshake: false, pacing: true, init_cwnd: 10, ..TcpConfig::default() }
}

/// Linux tcp_update_pacing_rate: twice cwnd / srtt while cwnd < ssthresh / 2
/// (tcp_pacing_ss_ratio 200), counted over max(cwnd, packets out).
#[test]
fn pacing_rate_is_twice_cwnd_over_srtt_in_slow_start() {
    let mut h = Harness::sender(pcfg(), 1000);
    h.open();
    assert_eq!(h.ep.pace_interval(), None, "no RTT sample: unpaced");
    h.at(ms(100.0)).ack(1);
    // cwnd 11 < 128 / 2: 100 ms / (2 * 11).
    assert_eq!(h.ep.pace_interval(), Some((1e8f64 / 22.0).round() as u64));
}

/// Linux tcp_update_pacing_rate: 1.2 cwnd / srtt from ssthresh / 2 on
/// (tcp_pacing_ca_ratio 120).
#[test]
fn pacing_rate_is_1_2_cwnd_over_srtt_after_half_ssthresh() {
    let mut h = Harness::sender(TcpConfig { init_ssthresh: 20.0, ..pcfg() }, 1000);
    h.open();
    h.at(ms(100.0)).ack(1);
    // cwnd 11 >= 20 / 2.
    assert_eq!(h.ep.pace_interval(), Some((1e8f64 / (1.2 * 11.0)).round() as u64));
}

/// Linux tcp_update_skb_after_send: the first 10 packets go unpaced; from then on one
/// packet per interval, the pacing timer releasing what the window allows.
#[test]
fn pacing_spaces_packets_after_the_first_ten() {
    let c = TcpConfig { handshake: true, init_cwnd: 20, ..pcfg() };
    let mut h = Harness::sender(c, 1000);
    h.open();
    let synack = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    let out = h.at(ms(100.0)).deliver(synack);
    assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>(), "10 at once, the rest held");
    // SRTT 100 ms, cwnd 20 < 64: 100 ms / 40 = 2.5 ms.
    assert_eq!(h.ep.pace_interval(), Some(ms(2.5)));
    assert_eq!(h.ep.pace_deadline(), Some(ms(102.5)));
    for k in 0..10 {
        let out = h.fire_timer();
        assert_eq!(seqs(&out), vec![10 + k]);
        assert_eq!(h.now, ms(102.5 + 2.5 * k as f64));
    }
    assert_eq!(h.ep.pace_deadline(), None, "the window (20) is full");
}

/// Linux tcp_update_skb_after_send: a packet sent late (here on an ACK, after the pacing
/// time had passed) takes up to half an interval of its lateness as credit.
#[test]
fn pacing_late_send_gets_at_most_half_an_interval_of_credit() {
    let c = TcpConfig { handshake: true, init_cwnd: 12, ..pcfg() };
    let mut h = Harness::sender(c, 1000);
    h.open();
    let synack = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    h.at(ms(100.0)).deliver(synack);
    assert!(h.ep.pace_deadline().is_some());
    // The ACK of segment 0 comes 100 ms later, long after the pacing time.
    let out = h.at(ms(200.0)).ack(1);
    assert_eq!(seqs(&out).len(), 1, "one packet, then paced again");
    let iv = h.ep.pace_interval().unwrap();
    assert_eq!(h.ep.pace_deadline(), Some(ms(200.0) + iv - iv / 2));
}

/// Pacing off (the default): the whole window leaves at once, no pacing timer.
#[test]
fn pacing_off_sends_the_window_at_once() {
    let mut h = Harness::sender(TcpConfig { pacing: false, ..pcfg() }, 1000);
    h.open();
    let out = h.at(ms(100.0)).ack(1);
    assert_eq!(seqs(&out).len(), 2);
    assert_eq!((h.ep.pace_interval(), h.ep.pace_deadline()), (None, None));
}

/// Linux paces socket-buffer chunks, not segments: `tcp_tso_autosize` gives a chunk at
/// least tcp_min_tso_segs = 2 segments, and `tcp_update_skb_after_send` advances the
/// pacing time by the chunk's length. With pacing_burst = 2, pairs leave back to back,
/// two intervals apart.
#[test]
fn linux_tcp_tso_autosize_paces_pairs_of_tcp_min_tso_segs() {
    let c = TcpConfig { handshake: true, init_cwnd: 20, pacing_burst: 2, ..pcfg() };
    let mut h = Harness::sender(c, 1000);
    h.open();
    let synack = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    let out = h.at(ms(100.0)).deliver(synack);
    assert_eq!(seqs(&out), (0..10).collect::<Vec<_>>(), "10 at once, the rest held");
    // SRTT 100 ms, cwnd 20: 2.5 ms per packet; the tenth packet closes a pair: 5 ms.
    assert_eq!(h.ep.pace_interval(), Some(ms(2.5)));
    assert_eq!(h.ep.pace_deadline(), Some(ms(105.0)));
    for k in 0..5 {
        let out = h.fire_timer();
        assert_eq!(seqs(&out), vec![10 + 2 * k, 11 + 2 * k], "a pair");
        assert_eq!(h.now, ms(105.0 + 5.0 * k as f64));
    }
    assert_eq!(h.ep.pace_deadline(), None, "the window (20) is full");
}

/// A chunk the window cuts short is charged only its own segments: one packet released by
/// an ACK waits one interval, as a one-segment skb in Linux; a late chunk gets half its
/// length as credit at most.
#[test]
fn linux_tcp_update_skb_after_send_charges_the_chunk_it_sent() {
    let c = TcpConfig { handshake: true, init_cwnd: 12, pacing_burst: 2, ..pcfg() };
    let mut h = Harness::sender(c, 1000);
    h.open();
    let synack = h.segment(PktKind::SynAck, 0, 0, Ecn::NotEct, 0);
    h.at(ms(100.0)).deliver(synack);
    // The ACK of segment 0 comes 100 ms later: cwnd 13, flight 11, two packets go as a pair.
    let out = h.at(ms(200.0)).ack(1);
    assert_eq!(seqs(&out).len(), 2, "a pair, then paced again");
    let iv = h.ep.pace_interval().unwrap();
    assert_eq!(h.ep.pace_deadline(), Some(ms(200.0) + 2 * iv - iv));
}

/// Linux `tcp_tso_autosize`: the chunk is the data the pacing rate sends in 2^-10 s
/// (sk_pacing_shift 10), plus 64 KB >> (min RTT / 512 us) (tcp_tso_rtt_log 9), at most
/// 64 KB, at least tcp_min_tso_segs.
#[test]
fn linux_tcp_tso_autosize_grows_the_chunk_with_the_rate() {
    let mss = 1460;
    let iv = |mbps: f64| (mss as f64 * 8.0 / (mbps * 1e6) * 1e9).round() as u64;
    // 20 Mb/s: 2.4 KB per ms, under two segments: tcp_min_tso_segs.
    assert_eq!(autosize(iv(20.0), mss, Some(ms(100.0)), 2), 2);
    // 100 Mb/s: 12.2 KB per 1/1024 s: 8 segments.
    assert_eq!(autosize(iv(100.0), mss, Some(ms(100.0)), 2), 8);
    // 10 Gb/s: capped at 64 KB, 44 segments.
    assert_eq!(autosize(iv(10_000.0), mss, Some(ms(100.0)), 2), 44);
    // A 1 ms min RTT adds 64 KB >> 1 = 32 KB: 22 segments even at 20 Mb/s.
    assert_eq!(autosize(iv(20.0), mss, Some(ms(1.0)), 2), (2441 + 32768) / mss);
    // Without a min RTT, or with a long one, no RTT term.
    assert_eq!(autosize(iv(20.0), mss, None, 1), 1);
}
