//! The core's top-level modules form layers that point one way (design.md, "Layers"): a
//! module may use modules of lower layers only. This test reads every source file, collects
//! the `crate::<module>` paths it names (including grouped `use crate::{a, b}` imports and
//! unit tests inside the file), and fails naming the offending file if a module reaches up
//! or sideways, or if the module graph has a cycle. `cargo test --test layers -- --nocapture`
//! prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers from the bottom. Modules in one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["error"],
    &["spec", "engine"],
    &["net"],
    &["metrics", "traffic"],
    &["model"],
    &["aqm", "classify", "tcp"],
    &["scenario"],
    &["sim"],
    &["api"],
];

fn layer_of(m: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&m))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules named by `crate::...` paths in `text` (comments skipped).
fn used_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // `use crate::{a::X, b};`: the names at the group's top level.
                let mut depth = 0;
                let mut start = true;
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        c if start && (c.is_ascii_alphabetic() || c == '_') => {
                            out.insert(ident_at(&group[j..]).to_string());
                            start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                let id = ident_at(after);
                if !id.is_empty() {
                    out.insert(id.to_string());
                }
            }
            rest = after;
        }
    }
    out
}

fn module_graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    // graph[from][to] = files of `from` that name `to`
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        if first == "bin" || first == "lib.rs" {
            continue; // the binary and the crate root sit above every layer
        }
        let from = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        let entry = graph.entry(from.clone()).or_default();
        for to in used_modules(&text) {
            if to != from && to != "Error" && to != "Result" && to != "VERSION" {
                entry.entry(to).or_default().insert(rel.display().to_string());
            }
        }
    }
    graph
}

#[test]
fn every_top_level_module_has_a_layer() {
    for m in module_graph().keys() {
        assert!(layer_of(m).is_some(), "module `{m}` is in no layer; add it to LAYERS in tests/layers.rs");
    }
}

#[test]
fn modules_use_only_lower_layers() {
    let graph = module_graph();
    let mut bad = Vec::new();
    for (from, tos) in &graph {
        println!("{from} -> {}", tos.keys().cloned().collect::<Vec<_>>().join(", "));
        let lf = layer_of(from).unwrap_or(usize::MAX);
        for (to, files) in tos {
            let lt = layer_of(to).unwrap_or(usize::MAX);
            if lt >= lf {
                bad.push(format!("{from} -> {to} (in {})", files.iter().cloned().collect::<Vec<_>>().join(", ")));
            }
        }
    }
    assert!(bad.is_empty(), "modules reaching up or sideways:\n  {}", bad.join("\n  "));
}

#[test]
fn module_graph_has_no_cycle() {
    let graph = module_graph();
    // Kahn's algorithm: repeatedly remove modules nothing remaining depends on.
    let mut left: BTreeSet<&String> = graph.keys().collect();
    loop {
        let free: Vec<&String> = left
            .iter()
            .copied()
            .filter(|m| !left.iter().any(|o| graph[*o].contains_key(m.as_str()) && *o != *m))
            .collect();
        if free.is_empty() {
            break;
        }
        for m in free {
            left.remove(m);
        }
    }
    assert!(left.is_empty(), "a cycle among: {left:?}");
}

#[test]
fn the_scanner_reads_grouped_and_plain_paths() {
    let m = used_modules("use crate::{aqm::{A, B}, net, tcp::X};\nlet x = crate::sim::f(); // crate::api\n");
    assert_eq!(m.into_iter().collect::<Vec<_>>(), ["aqm", "net", "sim", "tcp"]);
}
