//! The registry of edge classifiers: each classifier's file owns its spec (keys, defaults,
//! docs), its check and its construction behind `EdgeClassifierSpec`; the one list at the
//! bottom names each classifier's `type` tag and spec once, and generates from it the
//! `ClassifierSpec` enum, its deserialization by `type` (`crate::spec::tagged!`) and its
//! dispatch. Adding a classifier: write its file, add one line to the list
//! (docs/components.md).

use super::Classifier;
use crate::error::Result;
use crate::model::tokuda::{KSpec, SizeFn};
use crate::net::Mark;

/// What an edge classifier's spec provides. Implemented in the classifier's own file.
pub trait EdgeClassifierSpec: Clone + std::fmt::Debug + serde::de::DeserializeOwned {
    /// The smallest table the classifier accepts: its required keys (`node` and any
    /// other) with workable values. The registry's tests build every classifier from it
    /// and check that each of its keys is indeed required.
    const MINIMAL: &'static str;
    /// What it writes into the packets it classifies.
    const WRITES: Mark = Mark::Class;
    /// The node on whose ingress the classifier marks packets (every spec has `node`).
    fn node(&self) -> &str;
    /// Check the parameters; an error names the key under `field` (`classifiers[0]`).
    /// Runs after `resolve_models`.
    fn check(&self, field: &str) -> Result<()>;
    /// The classifier; `seed` is the scenario's, for classifiers that draw.
    fn build(&self, seed: u64) -> Box<dyn Classifier>;
    /// Derive parameters that come from models (K by Tokuda's F(K) criterion) once the
    /// packet size is known; `sizes` turns a size table into packets.
    fn resolve_models(&mut self, _field: &str, _sizes: &SizeFn) -> Result<()> {
        Ok(())
    }
}

/// K chosen by the F(K) criterion when the spec asks for it (`k = { criterion = ... }`),
/// for the classifiers that take K; `field` names the classifier.
pub fn resolve_k(k: &mut KSpec, field: &str, sizes: &SizeFn) -> Result<()> {
    *k = KSpec::Pkts(k.resolve(&format!("{field}.k"), None, sizes)?);
    Ok(())
}

/// Generate `ClassifierSpec` and its dispatch from the list of `"type" => Variant(Spec)`.
macro_rules! classifiers {
    ($($(#[$doc:meta])* $name:literal => $var:ident($spec:ty)),+ $(,)?) => {
        /// An edge classifier on the ingress of `node`, chosen by `type`.
        #[derive(Clone, Debug)]
        pub enum ClassifierSpec {
            $($(#[$doc])* $var($spec),)+
        }

        crate::spec::tagged!(ClassifierSpec, "type", "classifier", { $($name => $var),+ });

        impl ClassifierSpec {
            /// Every registered `type`, in registry order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The `MINIMAL` table of the classifier registered as `name`.
            pub fn minimal(name: &str) -> Option<&'static str> {
                match name {
                    $($name => Some(<$spec as EdgeClassifierSpec>::MINIMAL),)+
                    _ => None,
                }
            }
            /// The `type` this spec was given under (also the built classifier's `kind`).
            pub fn name(&self) -> &'static str {
                match self {
                    $(ClassifierSpec::$var(_) => $name,)+
                }
            }
            /// What it writes into the packets it classifies.
            pub fn writes(&self) -> Mark {
                match self {
                    $(ClassifierSpec::$var(_) => <$spec as EdgeClassifierSpec>::WRITES,)+
                }
            }
            /// The node whose ingress it marks.
            pub fn node(&self) -> &str {
                match self {
                    $(ClassifierSpec::$var(s) => EdgeClassifierSpec::node(s),)+
                }
            }
            /// Check the parameters (`field` names this table).
            pub fn check(&self, field: &str) -> Result<()> {
                match self {
                    $(ClassifierSpec::$var(s) => EdgeClassifierSpec::check(s, field),)+
                }
            }
            /// Build the classifier.
            pub fn build(&self, seed: u64) -> Box<dyn Classifier> {
                match self {
                    $(ClassifierSpec::$var(s) => EdgeClassifierSpec::build(s, seed),)+
                }
            }
            /// Derive the parameters that come from models (`field` names the classifier).
            pub fn resolve_models(&mut self, field: &str, sizes: &SizeFn) -> Result<()> {
                match self {
                    $(ClassifierSpec::$var(s) => EdgeClassifierSpec::resolve_models(s, field, sizes),)+
                }
            }
        }
    };
}

classifiers! {
    /// Guo & Matta 2001: per-flow packet counter, threshold L_t, soft state, SLR control.
    "threshold" => Threshold(super::threshold::ThresholdClassifierSpec),
    /// The flow's true size against a fixed threshold.
    "oracle" => Oracle(super::oracle::OracleClassifierSpec),
    /// Tokuda et al. 2002 "marking": exact per-connection counter at the edge, reset by SYNs.
    "marking" => Marking(super::marking::MarkingClassifierSpec),
    /// Tokuda et al. 2002 "sampling": 1-in-I sampling, classification table updated every T.
    "sampling" => Sampling(super::sampling::SamplingClassifierSpec),
    /// Tokuda et al. 2002 "hashing": fixed table of (counter, timestamp), reset after T_bar idle.
    "hashing" => Hashing(super::hashing::HashingClassifierSpec),
    /// pFabric's remaining flow size (oracle) as a priority tag.
    "remaining" => Remaining(super::remaining::RemainingClassifierSpec),
    /// PIAS (Bai et al. 2015): priority tag demoted as a flow's bytes sent cross thresholds.
    "pias" => Pias(super::pias::PiasClassifierSpec),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(name: &str, table: &str) -> std::result::Result<ClassifierSpec, String> {
        let text = format!("type = \"{name}\"\n{table}");
        crate::spec::sub::<ClassifierSpec>(toml::Value::Table(toml::from_str(&text).unwrap()))
    }

    #[test]
    fn every_registered_classifier_round_trips() {
        let no_sizes = |_: &str, _: &crate::traffic::SizeSpec| -> Result<crate::traffic::SizeDist> {
            unreachable!("the minimal tables give K in packets")
        };
        for &name in ClassifierSpec::NAMES {
            let mut c = parse(name, ClassifierSpec::minimal(name).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.name(), name);
            c.resolve_models("c", &no_sizes).unwrap();
            c.check("c").unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(c.build(1).kind(), name, "the built classifier names itself as registered");
        }
    }

    #[test]
    fn every_key_of_a_minimal_table_is_required() {
        for &name in ClassifierSpec::NAMES {
            let minimal = ClassifierSpec::minimal(name).unwrap();
            assert!(minimal.lines().any(|l| l.starts_with("node =")), "{name}: every classifier names its node");
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
        let e = parse("counter", "node = \"edge\"").unwrap_err();
        let (path, msg) = crate::spec::decode(&e);
        assert_eq!(path, "type");
        assert!(msg.starts_with("unknown classifier 'counter'"), "{msg}");
        let listed = msg.split("expected one of: ").nth(1).unwrap();
        assert_eq!(listed.split(", ").collect::<Vec<_>>(), ClassifierSpec::NAMES);
    }
}
