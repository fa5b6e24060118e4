//! summary.json writer: the `RunSummary` as pretty-printed JSON.
//!
//! Keys appear in the order the struct fields are declared (per-queue maps are `BTreeMap`s,
//! so they are sorted), which keeps the file deterministic and diff-friendly. Non-finite
//! floats (which a correct run never produces) are written as `null` by serde_json.

use crate::metrics::records::RunSummary;

/// Render `summary` as pretty-printed JSON with a trailing newline.
pub fn to_json(summary: &RunSummary) -> String {
    // Serialising plain structs, u64/f64 fields and string-keyed maps cannot fail.
    let mut s = serde_json::to_string_pretty(summary).expect("RunSummary always serialises to JSON");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::records::{ClassTotals, QueueTotals};

    fn sample() -> RunSummary {
        let mut q = QueueTotals {
            name: "r0->r1".into(),
            discipline: "red".into(),
            arrivals: 10,
            enqueued: 9,
            departed: 8,
            dropped: 1,
            utilisation: 0.5,
            ..Default::default()
        };
        q.dropped_by_reason.insert("overflow".into(), 1);
        q.by_class.insert("short".into(), ClassTotals { arrivals: 4, ..Default::default() });
        q.by_class.insert("long".into(), ClassTotals { arrivals: 6, dropped: 1, ..Default::default() });
        RunSummary {
            savanna_version: "0.1.0".into(),
            scenario: "dumbbell".into(),
            seed: 7,
            sim_seconds: 10.0,
            wall_seconds: 0.25,
            events: 1234,
            flows_started: 3,
            flows_finished: 2,
            queues: vec![q],
            ..Default::default()
        }
    }

    #[test]
    fn pretty_stable_and_newline_terminated() {
        let s = to_json(&sample());
        assert!(s.ends_with("}\n"));
        assert!(s.contains("\n  \"seed\": 7,"));
        assert_eq!(s, to_json(&sample()));
        // Field order follows the struct declaration.
        let pos = |k: &str| s.find(&format!("\"{k}\"")).unwrap();
        let order = [
            "savanna_version",
            "scenario",
            "seed",
            "sim_seconds",
            "wall_seconds",
            "events",
            "packets_forwarded",
            "packets_created",
            "packets_delivered",
            "packets_dropped",
            "packets_in_network_at_end",
            "link_losses",
            "flows_started",
            "flows_finished",
            "queues",
        ];
        for w in order.windows(2) {
            assert!(pos(w[0]) < pos(w[1]), "{} before {}", w[0], w[1]);
        }
        // Class maps are sorted by key.
        assert!(s.find("\"long\"").unwrap() < s.find("\"short\"").unwrap());
    }

    #[test]
    fn parses_back() {
        let v: serde_json::Value = serde_json::from_str(&to_json(&sample())).unwrap();
        assert_eq!(v["sim_seconds"], 10.0);
        assert_eq!(v["flows_finished"], 2);
        assert_eq!(v["queues"][0]["utilisation"], 0.5);
        assert_eq!(v["queues"][0]["dropped_by_reason"]["overflow"], 1);
        assert_eq!(v["queues"][0]["by_class"]["long"]["dropped"], 1);
    }
}
