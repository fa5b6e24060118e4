//! RACK-TLP (RFC 8985): time-based loss detection and the tail loss probe, for a SACK
//! sender (the endpoint's `rack_*` and `tlp_*` methods call it). RACK deems a segment lost
//! when a segment sent sufficiently later has been delivered (RACK.xmit_ts, RACK.end_seq,
//! a reordering window of min_RTT / 4 grown by D-SACK rounds, and a timer for what is not
//! yet past the window); TLP sends a probe 2 SRTT after the last transmission so that a
//! tail loss is repaired by fast recovery rather than by the RTO.
//!
//! Readings: sequence numbers count packets (Segment.end_seq = seq + 1); without TCP
//! timestamps the spurious-retransmission check of 6.2 step 2 is the min_RTT one; min_RTT
//! is the windowed minimum of the RFC 6298 samples over Linux's 300 s (`rtt::WindowedMin`);
//! after an RTO only what 6.3 deems lost is retransmitted; a lost segment keeps its time
//! with a `lost` flag in place of INFINITE_TS. Per-segment state is a ring sized from the
//! maximum window and reused with the endpoint (nothing allocated per packet), with
//! Linux's counters (lost_out, retrans_out) so that pipe is flight - SACKed - lost +
//! retransmitted in flight (RFC 6675's two parts) without a scan.

use super::rtt::{WindowedMin, MIN_RTT_WINDOW};
use super::sack::Scoreboard;
use crate::engine::Time;

/// RFC 8985 7.2: WCDelAckT, the worst-case delayed-ACK time added to the PTO when one
/// segment is in flight.
pub const WC_DEL_ACK_T: Time = 200_000_000;
/// RFC 8985 7.2: the PTO before any RTT sample (the initial RTO of RFC 6298).
pub const PTO_NO_SRTT: Time = 1_000_000_000;
/// RFC 8985 6.2 step 4: D-SACK-free recoveries before reo_wnd_mult returns to 1.
pub const REO_WND_PERSIST: u32 = 16;

/// RFC 8985 5.2: what the sender keeps of each segment in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seg {
    /// Segment.xmit_ts: the time of its latest transmission.
    pub ts: Time,
    /// Segment.retransmitted.
    pub ever_retx: bool,
    /// Segment.lost: deemed lost and not retransmitted since.
    pub lost: bool,
    /// A retransmission of it is in flight (not deemed lost since; Linux's SACKED_RETRANS).
    pub rtx: bool,
    /// That retransmission was sent while the segment was not deemed lost (a probe): the
    /// original may still be in flight too, so pipe counts it twice.
    pub rtx_extra: bool,
}

/// RFC 8985 6.2 step 2: (t1, seq1) was sent after (t2, seq2).
pub fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// RACK and TLP's per-connection state (RFC 8985 5.3).
#[derive(Clone, Debug)]
pub struct Rack {
    segs: Vec<Seg>,
    /// RACK.xmit_ts and RACK.end_seq: the latest-sent segment delivered so far.
    xmit_ts: Time,
    end_seq: u64,
    /// RACK.rtt: the RTT of that segment, ns.
    rtt: Time,
    /// RACK.min_RTT, ns: the windowed minimum of 6.2 step 1.
    min_rtt: WindowedMin,
    /// RACK.fack: the highest end_seq delivered.
    fack: u64,
    reordering_seen: bool,
    reo_wnd_mult: u32,
    reo_wnd_persist: u32,
    dsack_round: Option<u64>,
    /// RACK.reo_wnd as last computed, ns.
    reo_wnd: Time,
    /// Segments deemed lost and not retransmitted since (Linux's lost_out).
    lost_out: u64,
    /// Retransmissions in flight (Linux's retrans_out).
    rtx_out: u64,
    /// Those of them sent while their segment was not deemed lost.
    rtx_extra_out: u64,
    /// Segments in flight that were ever retransmitted (their times may be out of
    /// sequence order).
    retx_in_flight: u64,
    /// An RTO recovery is under way (RFC 8985 6.2 step 4's "RTO recovery").
    pub rto_recovery: bool,
    /// The RACK reordering timer (RFC 8985 6.2 step 5).
    pub reo_deadline: Option<Time>,
    /// TLP.end_seq and TLP.is_retrans (RFC 8985 7.1).
    tlp_end_seq: Option<u64>,
    tlp_is_retrans: bool,
    /// The PTO timer (RFC 8985 7.2).
    pub pto_deadline: Option<Time>,
}

impl Default for Rack {
    fn default() -> Self {
        Rack::new(Vec::new(), 0, false)
    }
}

/// What TLP_process_ack concluded (RFC 8985 7.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpAck {
    /// No probe outstanding, or not yet resolved.
    Pending,
    /// The probe was not needed, or carried new data: no loss.
    NoLoss,
    /// The probe repaired a loss: the congestion control must respond.
    RepairedLoss,
}

impl Rack {
    /// State for windows up to `max_window`, reusing `segs`' memory; `on` false (RACK off)
    /// allocates nothing.
    pub fn new(mut segs: Vec<Seg>, max_window: u32, on: bool) -> Self {
        segs.clear();
        if on {
            segs.resize((max_window as usize + 1).next_power_of_two().max(64), Seg::default());
        }
        Rack {
            segs,
            xmit_ts: 0,
            end_seq: 0,
            rtt: 0,
            min_rtt: WindowedMin::default(),
            fack: 0,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            dsack_round: None,
            reo_wnd: 0,
            lost_out: 0,
            rtx_out: 0,
            rtx_extra_out: 0,
            retx_in_flight: 0,
            rto_recovery: false,
            reo_deadline: None,
            tlp_end_seq: None,
            tlp_is_retrans: false,
            pto_deadline: None,
        }
    }

    pub fn take_buffer(&mut self) -> Vec<Seg> {
        std::mem::take(&mut self.segs)
    }

    #[inline]
    fn slot(&self, s: u64) -> usize {
        (s as usize) & (self.segs.len() - 1)
    }

    /// The state kept of segment `s` (in flight).
    pub fn seg(&self, s: u64) -> Seg {
        self.segs[self.slot(s)]
    }
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt.get()
    }
    pub fn reo_wnd(&self) -> Time {
        self.reo_wnd
    }
    pub fn reo_wnd_mult(&self) -> u32 {
        self.reo_wnd_mult
    }
    pub fn reordering_seen(&self) -> bool {
        self.reordering_seen
    }
    /// RACK.xmit_ts and RACK.end_seq.
    pub fn latest_delivered(&self) -> (Time, u64) {
        (self.xmit_ts, self.end_seq)
    }
    pub fn lost_out(&self) -> u64 {
        self.lost_out
    }
    /// Retransmissions in flight (Linux's retrans_out).
    pub fn retrans_out(&self) -> u64 {
        self.rtx_out
    }
    pub fn tlp_end_seq(&self) -> Option<u64> {
        self.tlp_end_seq
    }

    /// RFC 8985 6.1: segment `s` is (re)transmitted at `now`: Segment.xmit_ts = now, and
    /// Segment.retransmitted for a retransmission.
    #[inline]
    pub fn on_send(&mut self, s: u64, now: Time, retx: bool) {
        let i = self.slot(s);
        let e = &mut self.segs[i];
        if !retx {
            *e = Seg { ts: now, ..Seg::default() };
            return;
        }
        e.ts = now;
        let was_lost = e.lost;
        if e.lost {
            e.lost = false;
            self.lost_out -= 1;
        }
        if was_lost == e.rtx_extra {
            // Counted twice in pipe iff the segment was not deemed lost.
            e.rtx_extra = !was_lost;
            if was_lost {
                self.rtx_extra_out -= 1;
            } else {
                self.rtx_extra_out += 1;
            }
        }
        if !e.rtx {
            e.rtx = true;
            self.rtx_out += 1;
        }
        if !e.ever_retx {
            e.ever_retx = true;
            self.retx_in_flight += 1;
        }
    }

    /// RFC 8985 6.2 step 1: RACK.min_RTT from an RFC 6298 sample taken at `now`, ns: "a
    /// windowed min-filtered estimate of recent RTT measurements" (SHOULD), over Linux's
    /// 300 s window (tcp_min_rtt_wlen).
    pub fn on_rtt_sample(&mut self, rtt: Time, now: Time) {
        self.min_rtt.update(now, rtt, MIN_RTT_WINDOW);
    }

    /// Segment `s` was newly delivered (cumulatively or selectively) at `now`; the caller
    /// gives them in ascending order. RFC 8985 6.2 steps 2 and 3.
    pub fn on_delivered(&mut self, s: u64, now: Time) {
        let i = self.slot(s);
        let e = self.segs[i];
        self.segs[i] = Seg { ts: e.ts, ever_retx: e.ever_retx, ..Seg::default() };
        self.lost_out -= e.lost as u64;
        self.rtx_out -= e.rtx as u64;
        self.rtx_extra_out -= e.rtx_extra as u64;
        self.retx_in_flight -= e.ever_retx as u64;
        // Step 2: a retransmitted segment delivered faster than min_RTT was delivered by
        // its original transmission (no timestamps to tell): it does not update RACK. A
        // segment deemed lost has no valid xmit_ts (INFINITE_TS).
        let rtt = now.saturating_sub(e.ts);
        let ambiguous = e.ever_retx && self.min_rtt.get().is_some_and(|m| rtt < m);
        if !e.lost && !ambiguous {
            self.rtt = rtt;
            if sent_after(e.ts, s + 1, self.xmit_ts, self.end_seq) {
                self.xmit_ts = e.ts;
                self.end_seq = s + 1;
            }
        }
        // Step 3: a never-retransmitted segment delivered below RACK.fack was reordered.
        if s + 1 > self.fack {
            self.fack = s + 1;
        } else if s + 1 < self.fack && !e.ever_retx {
            self.reordering_seen = true;
        }
    }

    /// RFC 8985 6.2 step 4 (RACK_update_reo_wnd), D-SACK part: `dsack` is the ACK's
    /// D-SACK, `snd_una` / `snd_nxt` after it.
    pub fn on_ack_dsack(&mut self, dsack: bool, snd_una: u64, snd_nxt: u64) {
        if self.dsack_round.is_some_and(|r| snd_una >= r) {
            self.dsack_round = None;
        }
        // One step of the multiplier per round trip that sees a D-SACK.
        if self.dsack_round.is_none() && dsack {
            self.dsack_round = Some(snd_nxt);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
    }

    /// RFC 8985 6.2 step 4: fast or RTO recovery ended; after 16 recoveries without
    /// D-SACK the multiplier returns to 1.
    pub fn on_recovery_exit(&mut self) {
        self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
        if self.reo_wnd_persist == 0 {
            self.reo_wnd_mult = 1;
        }
    }

    /// RFC 8985 6.2 step 4: RACK.reo_wnd. Zero while no reordering was seen, in recovery
    /// or once DupThresh segments are SACKed; else min(reo_wnd_mult * min_RTT / 4, SRTT).
    pub fn update_reo_wnd(&mut self, in_recovery: bool, sacked: u64, dupthresh: u32, srtt: Option<Time>) -> Time {
        self.reo_wnd = if !self.reordering_seen && (in_recovery || sacked >= dupthresh as u64) {
            0
        } else {
            let w = self.reo_wnd_mult as Time * self.min_rtt.get().unwrap_or(0) / 4;
            srtt.map_or(w, |s| w.min(s))
        };
        self.reo_wnd
    }

    /// RFC 8985 6.2 step 5 (RACK_detect_loss_and_arm_timer): mark lost every unSACKed
    /// segment of [`una`, `max`) sent before RACK.xmit_ts by more than RACK.rtt + reo_wnd
    /// ago; arm the RACK timer for the latest one still inside. Returns how many were
    /// newly marked.
    pub fn detect_loss(&mut self, now: Time, una: u64, max: u64, board: &Scoreboard) -> u64 {
        self.reo_deadline = None;
        if una >= max {
            return 0;
        }
        // Nothing SACKed, lost or retransmitted in flight: times rise with the sequence, so
        // only snd_una can have been sent before RACK.xmit_ts.
        if board.sacked() == 0
            && self.lost_out == 0
            && self.retx_in_flight == 0
            && !sent_after(self.xmit_ts, self.end_seq, self.seg(una).ts, una + 1)
        {
            return 0;
        }
        let mut newly = 0;
        let mut timeout: i64 = 0;
        for s in una..max {
            let i = self.slot(s);
            let e = self.segs[i];
            if e.lost || board.is_sacked(s) || !sent_after(self.xmit_ts, self.end_seq, e.ts, s + 1) {
                continue;
            }
            let remaining = e.ts as i64 + self.rtt as i64 + self.reo_wnd as i64 - now as i64;
            if remaining <= 0 {
                // A retransmission lost again is no longer in flight.
                self.mark_lost(i);
                newly += 1;
            } else {
                timeout = timeout.max(remaining);
            }
        }
        if timeout > 0 {
            self.reo_deadline = Some(now + timeout as Time);
        }
        newly
    }

    /// RFC 6675's pipe from the flags (Linux's packets_out - sacked_out - lost_out +
    /// retrans_out): each unSACKed segment counts once unless deemed lost and not
    /// retransmitted since (0), or retransmitted while not deemed lost (2).
    pub fn pipe(&self, flight: u64, sacked: u64) -> u64 {
        (flight + self.rtx_extra_out).saturating_sub(sacked + self.lost_out)
    }

    /// The first segment of [`una`, `max`) deemed lost and not SACKed (NextSeg rule 1 with
    /// RACK's marks).
    pub fn first_lost(&self, una: u64, max: u64) -> Option<u64> {
        if self.lost_out == 0 {
            return None;
        }
        (una..max).find(|&s| self.seg(s).lost)
    }

    /// The retransmission timer expired (RFC 8985 6.3, RACK_mark_losses_on_RTO): an RTO
    /// recovery starts, no probe is outstanding (7.1), and of the segments neither
    /// cumulatively nor selectively acknowledged, SND.UNA is deemed lost (it was sent an
    /// RTO ago) and every other one only once RACK.rtt + RACK.reo_wnd have passed since
    /// its last transmission; the rest stay in flight, for RACK to judge as ACKs return
    /// (a retransmission in flight keeps its count in pipe, as Linux's
    /// tcp_timeout_mark_lost keeps SACKED_RETRANS on what it does not mark). The window is
    /// step 4's for an RTO recovery (zero unless reordering was seen). Returns how many
    /// were newly marked.
    pub fn on_rto(&mut self, now: Time, una: u64, max: u64, board: &Scoreboard, srtt: Option<Time>) -> u64 {
        self.rto_recovery = true;
        self.reo_deadline = None;
        self.tlp_reset();
        let reo_wnd = self.update_reo_wnd(true, board.sacked(), 0, srtt);
        let mut newly = 0;
        for s in una..max {
            let i = self.slot(s);
            let e = self.segs[i];
            if e.lost || board.is_sacked(s) {
                continue;
            }
            // RFC 8985 6.3: SEG.SEQ == SND.UNA, or Segment.xmit_ts + RACK.rtt +
            // RACK.reo_wnd - Now() <= 0.
            if s != una && e.ts + self.rtt + reo_wnd > now {
                continue;
            }
            self.mark_lost(i);
            newly += 1;
        }
        newly
    }

    /// Deem the segment in slot `i` lost: it leaves pipe, and a retransmission of it in
    /// flight is lost too (Linux's tcp_mark_skb_lost).
    fn mark_lost(&mut self, i: usize) {
        let e = &mut self.segs[i];
        e.lost = true;
        self.lost_out += 1;
        if e.rtx {
            e.rtx = false;
            self.rtx_out -= 1;
        }
        if e.rtx_extra {
            e.rtx_extra = false;
            self.rtx_extra_out -= 1;
        }
    }

    /// RFC 8985 7.1: no probe outstanding (a connection, fast or RTO recovery starts).
    pub fn tlp_reset(&mut self) {
        self.tlp_end_seq = None;
        self.tlp_is_retrans = false;
        self.pto_deadline = None;
    }

    /// RFC 8985 7.2: the PTO: 2 SRTT, plus WCDelAckT when one segment is in flight
    /// (1 s before any RTT sample), and never later than the RTO would fire.
    pub fn pto(now: Time, srtt: Option<Time>, flight: u64, rto_deadline: Option<Time>) -> Time {
        let pto = match srtt {
            Some(s) => 2 * s + if flight == 1 { WC_DEL_ACK_T } else { 0 },
            None => PTO_NO_SRTT,
        };
        let at = now + pto;
        rto_deadline.map_or(at, |r| at.min(r))
    }

    /// RFC 8985 7.3: a probe was sent; `end_seq` is SND.NXT after it.
    pub fn tlp_sent(&mut self, end_seq: u64, is_retrans: bool) {
        self.tlp_end_seq = Some(end_seq);
        self.tlp_is_retrans = is_retrans;
        self.pto_deadline = None;
    }

    /// RFC 8985 7.4.2 (TLP_process_ack): an ACK of `ack`; `dsack_end` the end of its D-SACK
    /// block if it has one; `dup_no_sack` a duplicate ACK without SACK blocks.
    pub fn tlp_process_ack(&mut self, ack: u64, dsack_end: Option<u64>, dup_no_sack: bool) -> TlpAck {
        let Some(end) = self.tlp_end_seq else { return TlpAck::Pending };
        if ack < end {
            return TlpAck::Pending;
        }
        // The probe carried new data, delivered; or its retransmission was redundant (a
        // D-SACK of it).
        let r = if !self.tlp_is_retrans || dsack_end == Some(end) {
            TlpAck::NoLoss
        } else if ack > end {
            TlpAck::RepairedLoss // the probe repaired the single loss
        } else if dup_no_sack {
            TlpAck::NoLoss // the original and the probe both arrived
        } else {
            return TlpAck::Pending;
        };
        self.tlp_end_seq = None;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::SackOpt;

    #[test]
    fn sent_after_orders_by_time_then_sequence() {
        assert!(sent_after(2, 1, 1, 5));
        assert!(sent_after(1, 6, 1, 5));
        assert!(!sent_after(1, 5, 1, 5));
    }

    #[test]
    fn pipe_counts_lost_and_retransmitted_as_rfc6675() {
        let board = Scoreboard::new(Vec::new(), 64, true);
        let mut r = Rack::new(Vec::new(), 64, true);
        for s in 0..4 {
            r.on_send(s, 10, false);
        }
        r.on_delivered(3, 100);
        assert_eq!(r.detect_loss(100, 0, 4, &board), 3, "0..3 sent before 3, RACK.rtt 90 ago");
        assert_eq!(r.pipe(4, 1), 0);
        r.on_send(0, 120, true);
        assert_eq!(r.pipe(4, 1), 1, "a lost segment retransmitted counts once");
        assert_eq!(r.first_lost(0, 4), Some(1));
        // A retransmission of a segment not deemed lost (a probe) counts twice.
        let mut r = Rack::new(Vec::new(), 64, true);
        for s in 0..4 {
            r.on_send(s, 10, false);
        }
        r.on_send(3, 50, true);
        assert_eq!(r.pipe(4, 0), 5);
        r.on_delivered(3, 100);
        assert_eq!(r.pipe(4, 1), 3);
    }

    /// RFC 8985 6.3 with step 4's window: in an RTO recovery after reordering was seen,
    /// reo_wnd is min_RTT / 4, so a segment sent less than RACK.rtt + min_RTT / 4 before
    /// the RTO stays in flight while SND.UNA is lost however recent; SACKed segments are
    /// never marked.
    #[test]
    fn rfc8985_6_3_rto_marks_with_the_reordering_window() {
        let mut board = Scoreboard::new(Vec::new(), 64, true);
        let mut r = Rack::new(Vec::new(), 64, true);
        for s in 0..5 {
            r.on_send(s, 10 * s, false);
        }
        r.on_send(5, 80, false);
        r.on_rtt_sample(100, 0);
        // 4 delivered first, then 3 (below fack, never retransmitted): reordering.
        r.on_delivered(4, 140);
        r.on_delivered(3, 141);
        assert!(r.reordering_seen());
        let opt = SackOpt { n: 1, blocks: [(3, 2), (0, 0), (0, 0), (0, 0)] };
        board.update(&opt, 0, 0, 6);
        assert!(board.is_sacked(3) && board.is_sacked(4));
        // RACK.rtt = 141 - 30 = 111 ns, reo_wnd = 100 / 4 = 25 ns: lost iff ts <= 200 - 136.
        r.on_send(0, 190, true); // SND.UNA was retransmitted 10 ns ago
        assert_eq!(r.on_rto(200, 0, 6, &board, Some(100)), 3);
        assert_eq!(r.reo_wnd(), 25);
        assert!(r.seg(0).lost, "SND.UNA, however recent");
        assert!(r.seg(1).lost && r.seg(2).lost, "sent at 10 and 20 <= 64");
        assert!(!r.seg(3).lost && !r.seg(4).lost, "SACKed");
        assert!(!r.seg(5).lost, "sent at 80 > 64: within RACK.rtt + reo_wnd");
        assert!(r.rto_recovery);
        assert_eq!(r.pipe(6, 2), 1, "5 alone is in flight");
    }

    /// RFC 8985 6.2 step 4 with step 1's windowed min_RTT: the reordering window is a
    /// quarter of the minimum of the last 300 s, so it grows when the path lengthens (a
    /// global minimum would keep it at the old path's).
    #[test]
    fn rfc8985_6_2_step4_reo_wnd_follows_the_windowed_min_rtt() {
        const S: Time = 1_000_000_000;
        let mut r = Rack::new(Vec::new(), 64, true);
        r.reordering_seen = true;
        r.on_rtt_sample(100_000_000, 0);
        for k in 1..=400u64 {
            r.on_rtt_sample(200_000_000, k * S);
            if k == 300 {
                assert_eq!(r.update_reo_wnd(false, 0, 3, None), 25_000_000, "100 ms is 300 s old");
            }
        }
        assert_eq!(r.min_rtt(), Some(200_000_000));
        assert_eq!(r.update_reo_wnd(false, 0, 3, None), 50_000_000);
    }
}
