//! Atomic output directories: `write_run` puts flows.parquet, queues.parquet (only when
//! queue sampling is on) and summary.json into `--out DIR` so that a reader never sees a
//! half-written run.
//!
//! Files are first written into a fresh hidden staging directory inside DIR
//! (`.partial-<pid>-<n>`), then renamed into place: a stale summary.json is removed first,
//! the Parquet files are renamed next, and summary.json is renamed last, so the presence of
//! summary.json means the directory holds one complete run. On error the staging directory
//! is removed, as are any directories this call created (if still empty).
//!
//! Nothing is fsync'd: the protocol guards against a run that fails or is killed and
//! against concurrent readers, not against losing the machine mid-write (an operating
//! system crash may leave a directory whose files are empty; run it again). The sweep store
//! syncs the runs it keeps (`python/savanna/store.py`); syncing here cost about 3 ms a file,
//! more than the rest of the work outside the event loop (issue 21).
//!
//! `write_run_streamed` is the same protocol for a run that writes its own flows.parquet
//! into the staging directory while it runs (`api::run_to_dir` does this: rows go out as
//! flows retire, so a run never holds all its flow records at once); the staging
//! directory then exists for the whole run.

use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};
use crate::metrics::parquet::{
    write_classifiers, write_flows, write_goodput, write_network, write_queues, write_traces,
};
use crate::metrics::summary::to_json;
use crate::metrics::RunOutput;

/// File names inside an output directory.
pub const FLOWS_FILE: &str = "flows.parquet";
pub const QUEUES_FILE: &str = "queues.parquet";
pub const CLASSIFIERS_FILE: &str = "classifiers.parquet";
pub const TRACES_FILE: &str = "traces.parquet";
pub const GOODPUT_FILE: &str = "goodput.parquet";
pub const NETWORK_FILE: &str = "network.parquet";
pub const SUMMARY_FILE: &str = "summary.json";

/// Prefix of staging directories (hidden; left behind only if the process is killed).
pub const STAGING_PREFIX: &str = ".partial-";

/// The CLI flag that names the output directory; used as the field of input errors.
const OUT_FIELD: &str = "--out";

/// Check, before a run, that `out_dir` can receive its output: it is a directory or can be
/// created, and files can be created in it. Directories created to find out are removed
/// again, so a successful check leaves the file system as it was.
pub fn check_writable(out_dir: &Path) -> Result<()> {
    let created = create_out_dir(out_dir)?;
    let probe = make_staging(out_dir);
    if let Ok(p) = &probe {
        let _ = fs::remove_dir(p);
    }
    remove_created(&created);
    probe.map(|_| ())
}

/// Write one run's output into `out_dir` atomically (see the module docs). Creates
/// `out_dir` (and missing parents) if needed; replaces the files of a previous run.
pub fn write_run(out_dir: &Path, out: &RunOutput) -> Result<()> {
    write_run_with(out_dir, out, write_run_files)
}

/// Write the run's files directly into the existing directory `dir`, not atomically:
/// flows.parquet, then queues.parquet if `out.queue_sampling`, then summary.json.
/// `write_run` uses this to fill its staging directory.
pub fn write_run_files(dir: &Path, out: &RunOutput) -> Result<()> {
    write_flows(&dir.join(FLOWS_FILE), &out.flows)?;
    write_files_after_flows(dir, out)
}

/// Everything `write_run_files` writes after flows.parquet.
/// (The time series are already there when the run spooled them, `RunOutput::spooled`.)
fn write_files_after_flows(dir: &Path, out: &RunOutput) -> Result<()> {
    if !out.spooled {
        if out.queue_sampling {
            write_queues(&dir.join(QUEUES_FILE), &out.queues)?;
            write_network(&dir.join(NETWORK_FILE), &out.network)?;
        }
        if out.goodput_on {
            write_goodput(&dir.join(GOODPUT_FILE), &out.goodput)?;
        }
        if out.classifier_sampling {
            write_classifiers(&dir.join(CLASSIFIERS_FILE), &out.classifiers)?;
        }
        if out.tracing {
            write_traces(&dir.join(TRACES_FILE), &out.traces)?;
        }
    }
    write_summary(&dir.join(SUMMARY_FILE), out)
}

/// Like `write_run`, for a run that writes its own flows.parquet while it finishes:
/// `produce` gets the staging directory, must write `FLOWS_FILE` there and return the rest
/// of the output (its `flows` are not written again). The same guarantees as `write_run`:
/// nothing appears in `out_dir` unless the whole run succeeded, and a failed run leaves
/// behind no staging directory and no directory this call created.
pub fn write_run_streamed(out_dir: &Path, produce: impl FnOnce(&Path) -> Result<RunOutput>) -> Result<RunOutput> {
    write_run_staged(out_dir, |staging| {
        let out = produce(staging)?;
        write_files_after_flows(staging, &out)?;
        commit(staging, out_dir, &out)?;
        Ok(out)
    })
}

/// `write_run` with the staging writer as a parameter (tests inject failures here).
fn write_run_with(
    out_dir: &Path,
    out: &RunOutput,
    write_files: impl FnOnce(&Path, &RunOutput) -> Result<()>,
) -> Result<()> {
    write_run_staged(out_dir, |staging| write_files(staging, out).and_then(|()| commit(staging, out_dir, out)))
}

/// Create `out_dir` and a staging directory in it, let `fill_and_commit` write the files
/// there and move them into place, then remove the staging directory; on failure also
/// remove the directories this call created.
fn write_run_staged<T>(out_dir: &Path, fill_and_commit: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    let created = create_out_dir(out_dir)?;
    let result = make_staging(out_dir).and_then(|staging| {
        let r = fill_and_commit(&staging);
        // On success the staging directory is empty; on failure it may hold partial files.
        let _ = fs::remove_dir_all(&staging);
        r
    });
    if result.is_err() {
        remove_created(&created);
    }
    result
}

/// Move the staged files into `out_dir`, summary.json last.
fn commit(staging: &Path, out_dir: &Path, out: &RunOutput) -> Result<()> {
    // Nothing may look complete while old and new files are mixed.
    remove_if_exists(&out_dir.join(SUMMARY_FILE))?;
    rename(&staging.join(FLOWS_FILE), &out_dir.join(FLOWS_FILE))?;
    // Optional files: move this run's, remove a previous run's.
    for (written, name) in [
        (out.queue_sampling, QUEUES_FILE),
        (out.queue_sampling, NETWORK_FILE),
        (out.goodput_on, GOODPUT_FILE),
        (out.classifier_sampling, CLASSIFIERS_FILE),
        (out.tracing, TRACES_FILE),
    ] {
        if written {
            rename(&staging.join(name), &out_dir.join(name))?;
        } else {
            remove_if_exists(&out_dir.join(name))?;
        }
    }
    rename(&staging.join(SUMMARY_FILE), &out_dir.join(SUMMARY_FILE))
}

fn write_summary(path: &Path, out: &RunOutput) -> Result<()> {
    let io_err = |e: std::io::Error| Error::io(path.display().to_string(), e);
    let mut f = File::create(path).map_err(io_err)?;
    f.write_all(to_json(&out.summary).as_bytes()).map_err(io_err)
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| Error::io(to.display().to_string(), e))
}

fn remove_if_exists(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path.display().to_string(), e)),
    }
}

/// The directories that do not exist yet on the way to `out_dir`, deepest first.
/// Fails with an input error if `out_dir` or one of its ancestors is not a directory.
fn missing_dirs(out_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut p = out_dir;
    loop {
        match fs::metadata(p) {
            Ok(m) if m.is_dir() => return Ok(missing),
            Ok(_) if p == out_dir => {
                return Err(Error::input(OUT_FIELD, format!("{} exists and is not a directory", out_dir.display())))
            }
            Ok(_) => {
                return Err(Error::input(
                    OUT_FIELD,
                    format!("cannot create {}: {} is not a directory", out_dir.display(), p.display()),
                ))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                missing.push(p.to_path_buf());
                match p.parent() {
                    // A relative path's last ancestor is "", i.e. the working directory.
                    Some(parent) if !parent.as_os_str().is_empty() => p = parent,
                    _ => return Ok(missing),
                }
            }
            Err(e) => return Err(Error::input(OUT_FIELD, format!("cannot access {}: {e}", p.display()))),
        }
    }
}

/// Create `out_dir` and its missing parents; return the directories created, deepest first.
fn create_out_dir(out_dir: &Path) -> Result<Vec<PathBuf>> {
    let missing = missing_dirs(out_dir)?;
    if missing.is_empty() {
        return Ok(missing);
    }
    // A concurrent cleanup of an empty shared parent (another run's check_writable) can
    // make creation fail with NotFound; trying again resolves that.
    let mut attempt = 0;
    loop {
        match fs::create_dir_all(out_dir) {
            Ok(()) => return Ok(missing),
            Err(e) if e.kind() == ErrorKind::NotFound && attempt < 3 => attempt += 1,
            Err(e) => {
                remove_created(&missing);
                return Err(Error::input(OUT_FIELD, format!("cannot create directory {}: {e}", out_dir.display())));
            }
        }
    }
}

/// Remove directories this call created (deepest first), stopping at the first that is
/// not empty or is already gone.
fn remove_created(created: &[PathBuf]) {
    for d in created {
        if fs::remove_dir(d).is_err() {
            break;
        }
    }
}

/// Create a fresh, empty staging directory inside `out_dir`.
fn make_staging(out_dir: &Path) -> Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let pid = std::process::id();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = out_dir.join(format!("{STAGING_PREFIX}{pid}-{n}"));
        match fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            // Left behind by an earlier process with the same pid: pick the next name.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 1_000_000 => continue,
            Err(e) => return Err(Error::input(OUT_FIELD, format!("cannot write in {}: {e}", out_dir.display()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::records::{FlowRecord, QueueSample, RunSummary};
    use std::sync::atomic::AtomicUsize;

    fn scratch(name: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("savanna-output-test-{}-{name}-{n}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    fn run(n_flows: u64, sampling: bool) -> RunOutput {
        RunOutput {
            flows: (0..n_flows).map(|i| FlowRecord { flow_id: i, kind: "tcp", ..Default::default() }).collect(),
            queues: vec![QueueSample { t_s: 0.1, queue: "q".into(), ..Default::default() }],
            queue_sampling: sampling,
            summary: RunSummary { flows_started: n_flows, ..Default::default() },
            ..Default::default()
        }
    }

    fn flow_row_groups(path: &Path) -> usize {
        use ::parquet::file::reader::{FileReader, SerializedFileReader};
        SerializedFileReader::new(File::open(path).unwrap()).unwrap().metadata().num_row_groups()
    }

    fn flow_rows(path: &Path) -> i64 {
        use ::parquet::file::reader::{FileReader, SerializedFileReader};
        let r = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        r.metadata().file_metadata().num_rows()
    }

    #[test]
    fn writes_three_files_and_no_staging() {
        let base = scratch("three");
        let out = base.join("a").join("b");
        write_run(&out, &run(3, true)).unwrap();
        assert_eq!(entries(&out), [FLOWS_FILE, NETWORK_FILE, QUEUES_FILE, SUMMARY_FILE]);
        assert_eq!(flow_rows(&out.join(FLOWS_FILE)), 3);
        let s = fs::read_to_string(out.join(SUMMARY_FILE)).unwrap();
        assert_eq!(s, to_json(&run(3, true).summary));
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn rerun_replaces_files_and_drops_stale_queues() {
        let out = scratch("rerun");
        write_run(&out, &run(3, true)).unwrap();
        write_run(&out, &run(5, false)).unwrap();
        assert_eq!(entries(&out), [FLOWS_FILE, SUMMARY_FILE]);
        assert_eq!(flow_rows(&out.join(FLOWS_FILE)), 5);
        assert!(fs::read_to_string(out.join(SUMMARY_FILE)).unwrap().contains("\"flows_started\": 5"));
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn same_input_same_bytes() {
        let base = scratch("determinism");
        let (a, b) = (base.join("a"), base.join("b"));
        write_run(&a, &run(4, true)).unwrap();
        write_run(&b, &run(4, true)).unwrap();
        for f in [FLOWS_FILE, QUEUES_FILE, SUMMARY_FILE] {
            assert_eq!(fs::read(a.join(f)).unwrap(), fs::read(b.join(f)).unwrap(), "{f}");
        }
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn out_dir_that_is_a_file_is_an_input_error() {
        let base = scratch("isfile");
        let out = base.join("out");
        fs::write(&out, b"not a dir").unwrap();
        let err = check_writable(&out).unwrap_err();
        assert!(matches!(&err, Error::Input { field, .. } if field == "--out"), "{err:?}");
        let err = write_run(&out, &run(1, true)).unwrap_err();
        assert!(matches!(&err, Error::Input { field, .. } if field == "--out"), "{err:?}");
        assert_eq!(fs::read(&out).unwrap(), b"not a dir");
        assert_eq!(entries(&base), ["out"]);
        // A file in the middle of the path is reported too, and nothing is created.
        let nested = out.join("sub");
        assert!(matches!(check_writable(&nested), Err(Error::Input { .. })));
        assert!(matches!(write_run(&nested, &run(1, true)), Err(Error::Input { .. })));
        assert_eq!(entries(&base), ["out"]);
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn check_writable_leaves_no_trace() {
        let base = scratch("check");
        check_writable(&base.join("x").join("y")).unwrap();
        check_writable(&base).unwrap();
        assert!(entries(&base).is_empty());
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn failure_while_staging_removes_created_dirs() {
        let base = scratch("fail-stage");
        let out = base.join("new").join("out");
        let err = write_run_with(&out, &run(2, true), |dir, o| {
            write_flows(&dir.join(FLOWS_FILE), &o.flows)?;
            Err(Error::io("injected", "disk full"))
        })
        .unwrap_err();
        assert!(matches!(err, Error::Io { .. }));
        assert!(entries(&base).is_empty(), "{:?}", entries(&base));
        fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn failure_while_staging_keeps_previous_run() {
        let out = scratch("fail-keep");
        write_run(&out, &run(3, true)).unwrap();
        let before: Vec<Vec<u8>> =
            [FLOWS_FILE, QUEUES_FILE, SUMMARY_FILE].iter().map(|f| fs::read(out.join(f)).unwrap()).collect();
        let r = write_run_with(&out, &run(9, true), |_, _| Err(Error::io("injected", "boom")));
        assert!(r.is_err());
        assert_eq!(entries(&out), [FLOWS_FILE, NETWORK_FILE, QUEUES_FILE, SUMMARY_FILE]);
        let after: Vec<Vec<u8>> =
            [FLOWS_FILE, QUEUES_FILE, SUMMARY_FILE].iter().map(|f| fs::read(out.join(f)).unwrap()).collect();
        assert_eq!(before, after);
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn failure_while_committing_never_looks_complete() {
        let out = scratch("fail-commit");
        write_run(&out, &run(3, true)).unwrap();
        // A non-empty directory where flows.parquet should go makes the rename fail.
        fs::remove_file(out.join(FLOWS_FILE)).unwrap();
        fs::create_dir(out.join(FLOWS_FILE)).unwrap();
        fs::write(out.join(FLOWS_FILE).join("x"), b"x").unwrap();
        let err = write_run(&out, &run(4, true)).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
        // The old summary is gone (the directory no longer claims a complete run) and no
        // staging directory remains.
        assert_eq!(entries(&out), [FLOWS_FILE, NETWORK_FILE, QUEUES_FILE]);
        fs::remove_dir_all(&out).unwrap();
    }

    #[test]
    fn streamed_run_writes_the_same_files_as_write_run() {
        let a = scratch("stream-a");
        let b = scratch("stream-b");
        write_run(&a, &run(5, true)).unwrap();
        let out = write_run_streamed(&b, |staging| {
            let full = run(5, true);
            let mut fw = crate::metrics::parquet::FlowWriter::create(&staging.join(FLOWS_FILE))?;
            fw.write(&full.flows[..2])?;
            fw.write(&full.flows[2..])?;
            fw.finish()?;
            Ok(RunOutput { flows: Vec::new(), ..full })
        })
        .unwrap();
        assert!(out.flows.is_empty());
        assert_eq!(entries(&a), entries(&b));
        // Written in two batches (2 and 3 rows), flows.parquet is still one row group, the
        // same bytes as write_run's.
        for f in entries(&a) {
            assert_eq!(fs::read(a.join(&f)).unwrap(), fs::read(b.join(&f)).unwrap(), "{f}");
        }
        assert_eq!(flow_rows(&b.join(FLOWS_FILE)), 5);
        assert_eq!(flow_row_groups(&b.join(FLOWS_FILE)), 1);
        fs::remove_dir_all(&a).unwrap();
        fs::remove_dir_all(&b).unwrap();
    }

    #[test]
    fn streamed_run_that_fails_leaves_nothing_and_keeps_previous_run() {
        let base = scratch("stream-fail");
        let out = base.join("new").join("out");
        let err = write_run_streamed(&out, |staging| {
            let mut fw = crate::metrics::parquet::FlowWriter::create(&staging.join(FLOWS_FILE))?;
            fw.write(&run(3, false).flows)?;
            Err(Error::Internal("injected failure mid-run".into()))
        })
        .unwrap_err();
        assert!(matches!(err, Error::Internal(_)));
        assert!(entries(&base).is_empty(), "{:?}", entries(&base));

        let out = scratch("stream-keep");
        write_run(&out, &run(3, true)).unwrap();
        let before = fs::read(out.join(FLOWS_FILE)).unwrap();
        let r = write_run_streamed(&out, |_| Err(Error::io("injected", "boom")));
        assert!(r.is_err());
        assert_eq!(entries(&out), [FLOWS_FILE, NETWORK_FILE, QUEUES_FILE, SUMMARY_FILE]);
        assert_eq!(fs::read(out.join(FLOWS_FILE)).unwrap(), before);
        fs::remove_dir_all(&base).unwrap();
        fs::remove_dir_all(&out).unwrap();
    }
}
