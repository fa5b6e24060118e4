//! A size oracle: the flow's true size is known at the edge (Matta & Guo 2000's size-based
//! splitting assumes it), so a flow is short for its whole life when its size is at most
//! `threshold` packets and long otherwise; persistent flows are long. It keeps no table.

use super::registry::EdgeClassifierSpec;
use super::{Classifier, ClassifierReport};
use crate::engine::Time;
use crate::error::Result;
use crate::net::ClassMark;
use crate::net::Packet;

/// `type = "oracle"`: short when the flow's true size is at most `threshold` packets.
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OracleClassifierSpec {
    /// Node on whose ingress packets are marked.
    pub node: String,
    /// Flows of at most this many data packets are short.
    pub threshold: u64,
}

impl EdgeClassifierSpec for OracleClassifierSpec {
    const MINIMAL: &'static str = "node = \"edge\"\nthreshold = 10";
    fn node(&self) -> &str {
        &self.node
    }
    fn check(&self, field: &str) -> Result<()> {
        if self.threshold == 0 {
            return crate::spec::bad(format!("{field}.threshold"), "must be at least 1 packet");
        }
        Ok(())
    }
    fn build(&self, _seed: u64) -> Box<dyn Classifier> {
        Box::new(SizeOracle { threshold: self.threshold })
    }
}

pub struct SizeOracle {
    pub threshold: u64,
}

impl Classifier for SizeOracle {
    fn kind(&self) -> &'static str {
        "oracle"
    }
    fn classify(&mut self, p: &mut Packet, _now: Time, flow_size: Option<u64>) {
        p.class = match flow_size {
            Some(n) if n <= self.threshold => ClassMark::Short,
            _ => ClassMark::Long,
        };
    }
    fn report(&self) -> ClassifierReport {
        ClassifierReport { flows_short: 0, flows_long: 0, threshold: self.threshold as f64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_by_true_size() {
        let mut o = SizeOracle { threshold: 10 };
        let mut p = Packet::test_data(0, 0);
        o.classify(&mut p, 0, Some(10));
        assert_eq!(p.class, ClassMark::Short);
        o.classify(&mut p, 0, Some(11));
        assert_eq!(p.class, ClassMark::Long);
        o.classify(&mut p, 0, None);
        assert_eq!(p.class, ClassMark::Long);
    }
}
