//! DropTail: a FIFO that drops arrivals when it holds `limit_pkts` packets (or, when set,
//! when the arrival would exceed `limit_bytes`). The baseline of every paper.

use super::registry::DisciplineSpec;
use super::{DropReason, Fifo, QCtx, Qdisc};
use crate::error::Result;
use crate::net::PktId;
use crate::spec::bad;

/// `type = "droptail"`: a FIFO with a packet limit and an optional byte limit.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailSpec {
    /// Buffer size, packets.
    pub limit_pkts: u32,
    /// Buffer size, bytes: an arrival that would exceed it is dropped. Default: none.
    #[serde(default)]
    pub limit_bytes: Option<u64>,
}

impl DisciplineSpec for DropTailSpec {
    const MINIMAL: &'static str = "limit_pkts = 100";
    fn check(&self, field: &str) -> Result<()> {
        if self.limit_pkts == 0 {
            return bad(format!("{field}.limit_pkts"), "must be at least 1 packet");
        }
        if self.limit_bytes == Some(0) {
            return bad(format!("{field}.limit_bytes"), "must be at least 1 byte (or omitted)");
        }
        Ok(())
    }
    fn build(&self, _pkt_bytes: u32) -> Box<dyn Qdisc> {
        Box::new(DropTail::new(self.limit_pkts as usize, self.limit_bytes))
    }
}

pub struct DropTail {
    q: Fifo,
    limit_pkts: usize,
    limit_bytes: Option<u64>,
}

impl DropTail {
    pub fn new(limit_pkts: usize, limit_bytes: Option<u64>) -> Self {
        DropTail { q: Fifo::with_capacity(limit_pkts.min(1 << 16)), limit_pkts, limit_bytes }
    }
}

impl Qdisc for DropTail {
    fn kind(&self) -> &'static str {
        "droptail"
    }
    fn enqueue(&mut self, p: PktId, cx: &mut QCtx) -> bool {
        let size = cx.pkts.get(p).size as u64;
        let over_bytes = self.limit_bytes.is_some_and(|b| self.q.bytes() + size > b);
        if self.q.len() >= self.limit_pkts || over_bytes {
            cx.drop(p, DropReason::Overflow);
            return false;
        }
        self.q.push(p, cx.pkts);
        true
    }
    fn dequeue(&mut self, cx: &mut QCtx) -> Option<PktId> {
        self.q.pop(cx.pkts)
    }
    fn len_pkts(&self) -> usize {
        self.q.len()
    }
    fn empty_dequeue_is_noop(&self) -> bool {
        true
    }
    fn idle_pass_max_bytes(&self) -> Option<u64> {
        // An empty queue admits any packet within the byte limit (limit_pkts is at least 1),
        // and a FIFO's enqueue and dequeue do nothing else.
        (self.limit_pkts >= 1).then(|| self.limit_bytes.unwrap_or(u64::MAX))
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::testutil::Bench;
    use crate::net::ClassMark;
    use crate::net::Ecn;

    #[test]
    fn fifo_order_and_tail_drop_at_limit() {
        let mut b = Bench::new(1);
        let mut q = DropTail::new(3, None);
        let ids: Vec<_> = (0..5).map(|i| b.pkt(i, 0, ClassMark::None, Ecn::NotEct)).collect();
        for (i, &p) in ids.iter().enumerate() {
            let (ok, drops) = b.offer(&mut q, p);
            assert_eq!(ok, i < 3);
            if i >= 3 {
                assert_eq!(drops, vec![(p, DropReason::Overflow)]);
            }
        }
        assert_eq!(q.len_pkts(), 3);
        assert_eq!(q.len_bytes(), 4500);
        let out: Vec<_> = std::iter::from_fn(|| b.take(&mut q)).collect();
        assert_eq!(out, ids[..3].to_vec());
    }

    #[test]
    fn byte_limit() {
        let mut b = Bench::new(1);
        let mut q = DropTail::new(100, Some(3000));
        let a = b.pkt(0, 0, ClassMark::None, Ecn::NotEct);
        let c = b.pkt(0, 1, ClassMark::None, Ecn::NotEct);
        let d = b.pkt(0, 2, ClassMark::None, Ecn::NotEct);
        assert!(b.offer(&mut q, a).0);
        assert!(b.offer(&mut q, c).0);
        assert!(!b.offer(&mut q, d).0);
    }

    #[test]
    fn spec_checks_name_the_limit() {
        let s: DropTailSpec = toml::from_str("limit_pkts = 10").unwrap();
        assert_eq!(s.limit_bytes, None);
        s.check("q").unwrap();
        let e = DropTailSpec { limit_pkts: 0, ..s.clone() }.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.limit_pkts"), "{e}");
        let e = DropTailSpec { limit_bytes: Some(0), ..s }.check("q").unwrap_err().to_string();
        assert!(e.starts_with("q.limit_bytes"), "{e}");
        assert!(toml::from_str::<DropTailSpec>("").is_err(), "limit_pkts is required");
    }
}
