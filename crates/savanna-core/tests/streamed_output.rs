//! `run_to_dir` hands each flow record to a `FlowWriter` as the flow retires (spooled to
//! a scratch file, written as flows.parquet at the end) instead of collecting every flow
//! record first. These tests check that the file holds exactly the records of the
//! in-memory path for the same run (in retirement order) and that its row groups stay
//! bounded (parquet.rs tests the spool itself and its removal; output.rs, that a failing
//! streamed run leaves nothing behind).

use savanna_core::api::{load, run, run_to_dir, Format, RunOptions};
use savanna_core::metrics::parquet::{write_flows, ROW_GROUP_ROWS};
use std::fs;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("savanna-streamed-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The ns-3 comparison's DropTail dumbbell for `secs` seconds: about 22 flows a second.
fn dumbbell(secs: f64) -> String {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/dumbbell-droptail.toml"))
        .unwrap();
    text.replace("duration_s = 500.0", &format!("duration_s = {secs}"))
}

#[test]
fn streamed_flows_file_is_the_in_memory_one_byte_for_byte() {
    let dir = scratch("same");
    let text = dumbbell(200.0);
    let opts = RunOptions::default();
    let summary = run_to_dir(&text, Format::Toml, Path::new("."), &dir.join("run"), &opts).unwrap();
    // Enough flows to fill many spool blocks (128 records each).
    assert!(summary.flows_started > 4000, "{} flows", summary.flows_started);

    let sc = load(&text, Format::Toml, Path::new("."), &opts).unwrap();
    let out = run(&sc).unwrap();
    assert_eq!(out.flows.len() as u64, summary.flows_started);
    // In memory, row i is flow i; the file has the rows in the order flows retired.
    assert!(out.flows.iter().enumerate().all(|(i, f)| f.flow_id == i as u64));
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;
    let reader = SerializedFileReader::new(fs::File::open(dir.join("run").join("flows.parquet")).unwrap()).unwrap();
    let order: Vec<usize> =
        reader.get_row_iter(None).unwrap().map(|r| r.unwrap().get_long(0).unwrap() as usize).collect();
    assert_eq!(order.len(), out.flows.len());
    assert!(order.windows(2).any(|w| w[0] > w[1]), "rows in flow order: were they written only at the end?");
    let in_file_order: Vec<_> = order.iter().map(|&i| out.flows[i].clone()).collect();
    write_flows(&dir.join("memory.parquet"), &in_file_order).unwrap();
    let streamed = fs::read(dir.join("run").join("flows.parquet")).unwrap();
    let memory = fs::read(dir.join("memory.parquet")).unwrap();
    assert!(streamed == memory, "flows.parquet differs between run_to_dir and run + write_flows");

    let meta = reader.metadata();
    assert_eq!(meta.num_row_groups(), out.flows.len().div_ceil(ROW_GROUP_ROWS));
    assert_eq!(meta.file_metadata().num_rows() as usize, out.flows.len());
    let names: Vec<String> =
        fs::read_dir(dir.join("run")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(names.iter().all(|n| !n.starts_with(".partial-")), "staging left behind: {names:?}");
    fs::remove_dir_all(&dir).unwrap();
}
