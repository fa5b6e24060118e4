//! Selective acknowledgements: the receiver's SACK blocks (RFC 2018, with D-SACK, RFC 2883)
//! and the sender's scoreboard with RFC 6675's queries (IsLost, SetPipe, NextSeg's
//! retransmission rules). Sequence numbers count packets, so RFC 6675's "octets" and
//! "(DupThresh - 1) * SMSS bytes" become packets: IsLost(s) holds when at least DupThresh
//! packets above s are SACKed (which also means DupThresh discontiguous octets).
//!
//! Readings: the ACK's option carries at most `sack_blocks` blocks (4 fill the 40 option
//! bytes without timestamps, 3 with); its wire size is 8n + 4 bytes (the 8n + 2 of RFC 2018
//! section 3 padded to a multiple of 4 with two NOPs, as Linux sends it). Only pure ACKs
//! carry SACK (a receiver sending data has no holes to report in this simulator's
//! request/response exchanges). Both ends take the option from the same `[tcp]` table, so
//! SACK-permitted is taken as negotiated. The scoreboard is a bit ring preallocated from
//! the window and reused with the endpoint: nothing is allocated per packet.

use crate::net::packet::SackOpt;

/// Bytes the SACK option adds to an ACK with `n` blocks (RFC 2018 section 3, padded).
pub fn option_bytes(n: u8) -> u32 {
    if n == 0 {
        0
    } else {
        8 * n as u32 + 4
    }
}

/// Bits of a ring covering a window of `max_window` packets.
fn ring_words(max_window: u32) -> usize {
    ((max_window as usize + 1).next_power_of_two().max(64)) / 64
}

/// The end of the ACK's D-SACK block, if its first block is one (RFC 2883 section 4: it
/// lies below the cumulative ACK, or inside the second block).
pub fn dsack_end(opt: &SackOpt, ack: u64) -> Option<u64> {
    if opt.n == 0 {
        return None;
    }
    let range = |i: usize| {
        let (off, len) = opt.blocks[i];
        let lo = ack as i64 + off as i64;
        (lo, lo + len as i64)
    };
    let (lo, hi) = range(0);
    let inside_second = opt.n >= 2 && {
        let (lo2, hi2) = range(1);
        lo2 <= lo && hi <= hi2
    };
    (hi <= ack as i64 || inside_second).then_some(hi.max(0) as u64)
}

// ------------------------------------------------------------------ receiver

/// The receiver's memory of what it reported: the most recent out-of-order arrivals, one
/// per block, newest first (RFC 2018 section 4), and a duplicate to report (RFC 2883).
#[derive(Clone, Copy, Debug, Default)]
pub struct SackReceiver {
    recent: [u64; 4],
    n: u8,
    dup: Option<u64>,
}

/// The contiguous run of held packets around `seq` (which is held), never below `floor`.
fn block_of(seq: u64, floor: u64, held: &impl Fn(u64) -> bool) -> (u64, u64) {
    let mut lo = seq;
    while lo > floor && held(lo - 1) {
        lo -= 1;
    }
    let mut hi = seq + 1;
    while held(hi) {
        hi += 1;
    }
    (lo, hi)
}

impl SackReceiver {
    /// Out-of-order packet `seq` was stored above `rcv_nxt`: it heads the next option
    /// (RFC 2018 section 4: the first block holds the segment that triggered the ACK);
    /// remembered arrivals now in the same block are dropped so each entry is one block.
    pub fn on_out_of_order(&mut self, seq: u64, rcv_nxt: u64, held: &impl Fn(u64) -> bool) {
        let (lo, hi) = block_of(seq, rcv_nxt + 1, held);
        let mut kept = [seq; 4];
        let mut k = 1;
        for &r in &self.recent[..self.n as usize] {
            if k < 4 && !(lo..hi).contains(&r) {
                kept[k] = r;
                k += 1;
            }
        }
        self.recent = kept;
        self.n = k as u8;
    }

    /// A duplicate of `seq` arrived: the next ACK reports it first (RFC 2883 section 4).
    pub fn on_duplicate(&mut self, seq: u64) {
        self.dup = Some(seq);
    }

    /// The option for an ACK of `ack`: a D-SACK block first when one is owed and `dsack`,
    /// then the blocks of the most recent arrivals still above `ack` (RFC 2018 section 4:
    /// the most recently reported blocks are repeated), at most `max` in all.
    pub fn build(&mut self, ack: u64, max: u8, dsack: bool, held: &impl Fn(u64) -> bool) -> SackOpt {
        let mut opt = SackOpt::NONE;
        let put = |opt: &mut SackOpt, lo: u64, hi: u64| {
            let off = lo as i64 - ack as i64;
            if opt.n < max && (i16::MIN as i64..=i16::MAX as i64).contains(&off) && hi - lo <= u16::MAX as u64 {
                opt.blocks[opt.n as usize] = (off as i16, (hi - lo) as u16);
                opt.n += 1;
            }
        };
        if let Some(d) = self.dup.take() {
            if dsack {
                // RFC 2883 section 4 (1): the first block reports the duplicate segment.
                put(&mut opt, d, d + 1);
            }
        }
        let mut k = 0;
        let mut emitted: [(u64, u64); 4] = [(0, 0); 4];
        let mut ne = 0;
        for i in 0..self.n as usize {
            let r = self.recent[i];
            if r < ack || !held(r) {
                continue; // delivered in order since, or never held
            }
            let (lo, hi) = block_of(r, ack + 1, held);
            if emitted[..ne].iter().any(|&(a, b)| lo < b && a < hi) {
                continue; // merged with a newer block
            }
            emitted[ne] = (lo, hi);
            ne += 1;
            self.recent[k] = r;
            k += 1;
            put(&mut opt, lo, hi);
        }
        self.n = k as u8;
        opt
    }
}

// ------------------------------------------------------------------ sender

/// The sender's scoreboard: which packets of [snd_una, snd_max) were SACKed.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    bits: Vec<u64>,
    /// Packets SACKed in [snd_una, snd_max).
    sacked: u64,
    /// One past the highest SACKed packet (0: none yet).
    high: u64,
}

impl Scoreboard {
    /// A scoreboard for windows up to `max_window`, reusing `bits`' memory; `on` false
    /// (no SACK) allocates nothing.
    pub fn new(mut bits: Vec<u64>, max_window: u32, on: bool) -> Self {
        bits.clear();
        if on {
            bits.resize(ring_words(max_window), 0);
        }
        Scoreboard { bits, sacked: 0, high: 0 }
    }

    pub fn take_buffer(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.bits)
    }

    #[inline]
    fn idx(&self, s: u64) -> (usize, u64) {
        let i = (s as usize) & (self.bits.len() * 64 - 1);
        (i / 64, 1u64 << (i % 64))
    }

    #[inline]
    pub fn is_sacked(&self, s: u64) -> bool {
        let (w, m) = self.idx(s);
        self.bits[w] & m != 0
    }

    /// Packets SACKed above snd_una.
    pub fn sacked(&self) -> u64 {
        self.sacked
    }

    /// One past the highest SACKed packet (RFC 6675's "highest octet covered by any
    /// received SACK", plus one); 0 if none.
    pub fn high(&self) -> u64 {
        self.high
    }

    /// RFC 6675 section 4, Update(): mark the blocks of `opt` (relative to `ack`) that lie
    /// in [`una`, `max`); a D-SACK block (below the ACK, or already SACKed) changes nothing.
    /// Returns the packets newly SACKed.
    pub fn update(&mut self, opt: &SackOpt, ack: u64, una: u64, max: u64) -> u64 {
        let mut newly = 0;
        let lo_bound = una.max(ack);
        for &(off, len) in &opt.blocks[..opt.n as usize] {
            let lo = (ack as i64 + off as i64).max(lo_bound as i64) as u64;
            let hi = (ack as i64 + off as i64 + len as i64).clamp(0, max as i64) as u64;
            for s in lo..hi {
                let (w, m) = self.idx(s);
                if self.bits[w] & m == 0 {
                    self.bits[w] |= m;
                    newly += 1;
                }
            }
            if hi > lo {
                self.high = self.high.max(hi);
            }
        }
        self.sacked += newly;
        newly
    }

    /// snd_una moved from `old` to `new`: forget the packets now cumulatively acknowledged.
    pub fn advance(&mut self, old: u64, new: u64) {
        for s in old..new {
            let (w, m) = self.idx(s);
            if self.bits[w] & m != 0 {
                self.bits[w] &= !m;
                self.sacked -= 1;
            }
        }
    }

    /// RFC 6675 section 4, IsLost(s): at least `dupthresh` packets above `s` are SACKed.
    pub fn is_lost(&self, s: u64, dupthresh: u32) -> bool {
        let mut n = 0;
        for x in s + 1..self.high {
            if self.is_sacked(x) {
                n += 1;
                if n >= dupthresh as u64 {
                    return true;
                }
            }
        }
        false
    }

    /// RFC 6675 section 4, SetPipe(): over the packets of [`una`, `max`) not SACKed, one
    /// for each not lost (still in the network) and one more for each below `rxt_next`
    /// (retransmitted: "S1 <= HighRxt"). One pass from the top, counting SACKed above.
    pub fn pipe(&self, una: u64, max: u64, rxt_next: u64, dupthresh: u32) -> u64 {
        let mut pipe = 0;
        let mut above = 0u64;
        let mut s = max;
        while s > una {
            s -= 1;
            if self.is_sacked(s) {
                above += 1;
                continue;
            }
            if above < dupthresh as u64 {
                pipe += 1; // (a) not lost
            }
            if s < rxt_next {
                pipe += 1; // (b) retransmitted
            }
        }
        pipe
    }

    /// NextSeg()'s retransmission candidates from `from` (RFC 6675 section 4 (1.a): above
    /// HighRxt) up to the highest SACK (1.b): the first lost unSACKed packet (rule 1), and
    /// the first unSACKed one (rule 3).
    pub fn holes(&self, una: u64, from: u64, dupthresh: u32) -> (Option<u64>, Option<u64>) {
        // SACKed packets above s = all SACKed - those in [una, s].
        let mut below = 0u64;
        let mut first_unsacked = None;
        for s in una..self.high {
            if self.is_sacked(s) {
                below += 1;
                continue;
            }
            if s < from {
                continue;
            }
            if first_unsacked.is_none() {
                first_unsacked = Some(s);
            }
            if self.sacked - below >= dupthresh as u64 {
                return (Some(s), first_unsacked);
            }
            // Lost-ness only decreases upwards: no later hole is lost.
            return (None, first_unsacked);
        }
        (None, first_unsacked)
    }

    /// The highest unSACKed packet below `max` (NextSeg rule 4, the rescue retransmission).
    pub fn highest_unsacked(&self, una: u64, max: u64) -> Option<u64> {
        (una..max).rev().find(|&s| !self.is_sacked(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opt(ack: u64, blocks: &[(u64, u64)]) -> SackOpt {
        let mut o = SackOpt::NONE;
        for &(lo, hi) in blocks {
            o.blocks[o.n as usize] = ((lo as i64 - ack as i64) as i16, (hi - lo) as u16);
            o.n += 1;
        }
        o
    }

    #[test]
    fn scoreboard_counts_and_forgets() {
        let mut b = Scoreboard::new(Vec::new(), 128, true);
        assert_eq!(b.update(&opt(0, &[(2, 5), (7, 8)]), 0, 0, 10), 4);
        assert_eq!(b.update(&opt(0, &[(2, 6)]), 0, 0, 10), 1, "only 5 is new");
        assert_eq!((b.sacked(), b.high()), (5, 8));
        assert!(b.is_lost(0, 3) && b.is_lost(1, 3) && !b.is_lost(6, 3));
        // pipe over [0, 10): 0,1 lost (not counted), 6 has 1 SACKed above: in flight, 8,9 too.
        assert_eq!(b.pipe(0, 10, 0, 3), 3);
        assert_eq!(b.pipe(0, 10, 1, 3), 4, "0 retransmitted counts once more");
        assert_eq!(b.holes(0, 0, 3), (Some(0), Some(0)));
        assert_eq!(b.holes(0, 2, 3), (None, Some(6)));
        b.advance(0, 4);
        assert_eq!(b.sacked(), 3);
        assert_eq!(b.highest_unsacked(4, 10), Some(9));
    }

    #[test]
    fn receiver_blocks_most_recent_first() {
        let held = |s: u64| [3, 4, 7, 10].contains(&s);
        let mut r = SackReceiver::default();
        r.on_out_of_order(3, 0, &held);
        r.on_out_of_order(4, 0, &held);
        r.on_out_of_order(10, 0, &held);
        r.on_out_of_order(7, 0, &held);
        let o = r.build(0, 4, false, &held);
        assert_eq!(o.n, 3);
        assert_eq!(&o.blocks[..3], &[(7, 1), (10, 1), (3, 2)]);
        assert_eq!(option_bytes(o.n), 28);
    }
}
