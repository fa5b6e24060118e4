//! The registry of queue disciplines, in the manner of Linux's `Qdisc_ops` table: each
//! discipline's file owns its spec (keys, defaults, docs), its check and its construction
//! behind `DisciplineSpec`; the one list at the bottom names each discipline's `type` tag
//! and spec once, and generates from it the `QueueSpec` enum, its deserialization by `type`
//! (`crate::spec::tagged!`, so errors keep their field paths) and every dispatch the
//! scenario builder and the simulator need. Adding a discipline: write its file, add one
//! line to the list (docs/components.md).

use super::Qdisc;
use crate::error::Result;
use crate::model::tokuda::SizeFn;
use crate::net::Mark;

/// What a queue discipline's spec provides. Implemented in the discipline's own file.
pub trait DisciplineSpec: Clone + std::fmt::Debug + serde::de::DeserializeOwned {
    /// The smallest table the discipline accepts: its required keys (none: "") with
    /// workable values. The registry's tests build every discipline from it and check
    /// that each of its keys is indeed required.
    const MINIMAL: &'static str;
    /// The mark edge classifiers write that this discipline acts on, if any (a scenario's
    /// classifier needs a queue that reads what it writes).
    fn reads(&self) -> Option<Mark> {
        None
    }
    /// Check the parameters; an error names the key under `field`, this table's path
    /// (`topology.bottleneck_queue`).
    fn check(&self, field: &str) -> Result<()>;
    /// The discipline, for a scenario whose full data packets are `pkt_bytes` long.
    fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc>;
    /// Whether some parameters are derived from models once the packet size is known
    /// (RED-diff's `a_long_from`); queues with equal specs then share one derivation.
    fn derives_models(&self) -> bool {
        false
    }
    /// Derive them; `sizes` turns a size table into a distribution in packets, `field`
    /// names the queue. Runs after `check`.
    fn resolve_models(&mut self, _field: &str, _sizes: &SizeFn) -> Result<()> {
        Ok(())
    }
}

/// Generate `QueueSpec` and its dispatch from the list of `"type" => Variant(Spec)` lines.
macro_rules! disciplines {
    ($($(#[$doc:meta])* $name:literal => $var:ident($spec:ty)),+ $(,)?) => {
        /// A queue discipline's specification, chosen by its `type` key.
        #[derive(Clone, Debug)]
        pub enum QueueSpec {
            $($(#[$doc])* $var($spec),)+
        }

        crate::spec::tagged!(QueueSpec, "type", "queue discipline", { $($name => $var),+ });

        impl QueueSpec {
            /// Every registered `type`, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The registered `type`s that read `mark` in their minimal form (for errors).
            pub fn readers_of(mark: Mark) -> Vec<&'static str> {
                let reads = |name: &str, minimal: &str| {
                    let text = format!("type = \"{name}\"\n{minimal}");
                    toml::from_str::<toml::Value>(&text)
                        .ok()
                        .and_then(|v| crate::spec::sub::<QueueSpec>(v).ok())
                        .is_some_and(|q| q.reads() == Some(mark))
                };
                [$(($name, <$spec as DisciplineSpec>::MINIMAL)),+]
                    .into_iter()
                    .filter_map(|(n, m)| reads(n, m).then_some(n))
                    .collect()
            }
            /// The `MINIMAL` table of the discipline registered as `name`.
            pub fn minimal(name: &str) -> Option<&'static str> {
                match name {
                    $($name => Some(<$spec as DisciplineSpec>::MINIMAL),)+
                    _ => None,
                }
            }
            /// The `type` this spec was given under (also the built discipline's `kind`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(QueueSpec::$var(_) => $name,)+
                }
            }
            /// Check the parameters (`field` names this table).
            pub fn check(&self, field: &str) -> Result<()> {
                match self {
                    $(QueueSpec::$var(s) => DisciplineSpec::check(s, field),)+
                }
            }
            /// Build the discipline.
            pub fn build(&self, pkt_bytes: u32) -> Box<dyn Qdisc> {
                match self {
                    $(QueueSpec::$var(s) => DisciplineSpec::build(s, pkt_bytes),)+
                }
            }
            /// The mark edge classifiers write that the discipline acts on, if any.
            pub fn reads(&self) -> Option<Mark> {
                match self {
                    $(QueueSpec::$var(s) => DisciplineSpec::reads(s),)+
                }
            }
            /// Whether some parameters are derived from models (`resolve_models`).
            pub fn derives_models(&self) -> bool {
                match self {
                    $(QueueSpec::$var(s) => DisciplineSpec::derives_models(s),)+
                }
            }
            /// Derive the parameters that come from models (`field` names the queue).
            pub fn resolve_models(&mut self, field: &str, sizes: &SizeFn) -> Result<()> {
                match self {
                    $(QueueSpec::$var(s) => DisciplineSpec::resolve_models(s, field, sizes),)+
                }
            }
        }
    };
}

disciplines! {
    /// Tail drop at a packet (or byte) limit.
    "droptail" => Droptail(super::droptail::DropTailSpec),
    /// RED (Floyd & Jacobson 1993) as ns-2 runs it.
    "red" => Red(super::red::RedSpec),
    /// RIO (Clark & Fang 1998), Guo & Matta 2001's RIO-PS core queue.
    "rio" => Rio(super::rio::RioSpec),
    /// FavorQueue (Anelli, Diana & Lochin 2013).
    "favorqueue" => Favorqueue(super::favorqueue::FavorQueueSpec),
    /// Class isolation on one link (Matta & Guo 2000): two queues, deficit round robin.
    "drr" => Drr(super::drr::DrrSpec),
    /// CoDel, RFC 8289.
    "codel" => Codel(super::codel::CodelSpec),
    /// FQ-CoDel, RFC 8290.
    "fq_codel" => FqCodel(super::fq_codel::FqCodelSpec),
    /// PIE, RFC 8033.
    "pie" => Pie(super::pie::PieSpec),
    /// The PI controller of Hollot, Misra, Towsley & Gong 2001.
    "pi" => Pi(super::pi::PiSpec),
    /// CHOKe (Pan, Prabhakar & Psounis 2000), the FavorQueue 2013 baseline.
    "choke" => Choke(super::choke::ChokeSpec),
    /// LAS (Rai, Biersack & Urvoy-Keller 2005), the FavorQueue 2013 baseline.
    "las" => Las(super::las::LasSpec),
    /// RuN2C (Avrachenkov et al. 2004) as FavorQueue 2013 configures it.
    "run2c" => Run2c(super::run2c::Run2cSpec),
    /// PRQ of Tokuda, Hasegawa & Murata 2002: strict priority for class-short packets.
    "prq" => Prq(super::prq::PrqSpec),
    /// RED-based differentiation of Tokuda et al. 2002 (p_s = 0, p_l = p_t / a_l).
    "reddiff" => Reddiff(super::reddiff::RedDiffSpec),
    /// pFabric (Alizadeh et al. 2013): serve the smallest remaining size, drop the largest.
    "pfabric" => Pfabric(super::pfabric::PfabricSpec),
    /// PIAS (Bai et al. 2015): K strict-priority queues, per-queue ECN threshold.
    "pias" => Pias(super::pias::PiasSpec),
    /// SP-PIFO (Alcoz et al. 2020): strict-priority queues with push-up/push-down bounds.
    "sppifo" => Sppifo(super::sppifo::SpPifoSpec),
    /// AIFO (Yu et al. 2021): one FIFO, quantile admission over a window of ranks.
    "aifo" => Aifo(super::aifo::AifoSpec),
    /// Step marking on the instantaneous queue or sojourn (DCTCP's switch, RFC 8257 3.1).
    "step" => Step(super::step::StepSpec),
    /// DualPI2 (RFC 9332): coupled L4S (ECT(1)/CE) and classic queues with PI2.
    "dualpi2" => Dualpi2(super::dualpi2::DualPi2Spec),
    /// FQ-PIE (Linux `sch_fq_pie`): FQ-CoDel's flow queues, a PIE controller per queue.
    "fq_pie" => FqPie(super::fq_pie::FqPieSpec),
    /// COBALT (CAKE's AQM, Linux `sch_cake.c`): CoDel with CAKE's re-entry, plus BLUE.
    "cobalt" => Cobalt(super::cobalt::CobaltSpec),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, table: &str) -> std::result::Result<QueueSpec, String> {
        let text = format!("type = \"{name}\"\n{table}");
        crate::spec::sub::<QueueSpec>(toml::Value::Table(toml::from_str(&text).unwrap()))
    }

    #[test]
    fn every_registered_discipline_round_trips() {
        for &name in QueueSpec::NAMES {
            let minimal = QueueSpec::minimal(name).unwrap();
            let q = parse(name, minimal).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(q.name(), name);
            q.check("q").unwrap_or_else(|e| panic!("{name}: {e}"));
            let built = q.build(1500);
            assert_eq!(built.kind(), name, "the built discipline names itself as registered");
            assert_eq!((built.len_pkts(), built.len_bytes()), (0, 0));
        }
    }

    #[test]
    fn every_key_of_a_minimal_table_is_required() {
        for &name in QueueSpec::NAMES {
            let minimal = QueueSpec::minimal(name).unwrap();
            for line in minimal.lines() {
                let key = line.split('=').next().unwrap().trim();
                let without: Vec<&str> = minimal.lines().filter(|l| *l != line).collect();
                let e = parse(name, &without.join("\n")).unwrap_err();
                assert!(e.contains(&format!("missing field `{key}`")), "{name} without {key}: {e}");
            }
        }
    }

    #[test]
    fn an_unknown_type_lists_every_registered_name() {
        let e = parse("fifo", "limit_pkts = 10").unwrap_err();
        let (path, msg) = crate::spec::decode(&e);
        assert_eq!(path, "type");
        assert!(msg.starts_with("unknown queue discipline 'fifo'"), "{msg}");
        let listed = msg.split("expected one of: ").nth(1).unwrap();
        assert_eq!(listed.split(", ").collect::<Vec<_>>(), QueueSpec::NAMES);
    }

    #[test]
    fn readers_are_the_disciplines_that_act_on_each_mark() {
        assert_eq!(QueueSpec::readers_of(Mark::Class), ["rio", "drr", "prq", "reddiff"]);
        assert_eq!(QueueSpec::readers_of(Mark::Tag), ["pfabric", "pias", "sppifo", "aifo"]);
        // SP-PIFO and AIFO read the tag only when their rank is the remaining size.
        for q in ["sppifo", "aifo"] {
            for (rank, reads) in [("remaining", Some(Mark::Tag)), ("attained", None), ("fifo", None)] {
                let spec = parse(q, &format!("limit_pkts = 10\nrank = \"{rank}\"")).unwrap();
                assert_eq!(spec.reads(), reads, "{q} with rank {rank}");
            }
        }
    }
}
