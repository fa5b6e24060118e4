//! Parquet writers for `flows.parquet` (one row per `FlowRecord`) and `queues.parquet`
//! (one row per `QueueSample`), using the low-level `parquet` column-writer API.
//!
//! Each table is described once, as an ordered list of columns (name, physical type,
//! nullability, and how to read the value off a record); the schema text and the column
//! writes are both derived from that list, so they cannot drift apart. Files are Snappy
//! compressed, written in row groups of at most `ROW_GROUP_ROWS` rows (flows.parquet is
//! spooled to a scratch file while a run goes on and written at its end, see `FlowWriter`),
//! and deterministic: the same records give byte-identical files (`created_by` is fixed, no
//! timestamps).
//! Strings are BYTE_ARRAY with logical type STRING, so pandas/pyarrow read them as `str`.
//! Unsigned counters are stored as INT64 (saturating at `i64::MAX`, never reached in practice).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::basic::Compression;
use ::parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};
use ::parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use ::parquet::schema::parser::parse_message_type;
use ::parquet::schema::types::ColumnPath;

use crate::error::{Error, Result};
use crate::metrics::records::{ClassifierSample, FlowRecord, GoodputSample, NetSample, QueueSample, TraceSample};

/// Maximum rows per row group: bounds the writer's buffered memory on long runs.
pub const ROW_GROUP_ROWS: usize = 64 * 1024;

/// Value written into the file footer's `created_by` (fixed, for byte-identical output).
pub const CREATED_BY: &str = "savanna";

/// Reads one value of type `T` off a record of type `R`.
type Reader<R, T> = Box<dyn Fn(&R) -> T>;

/// How to read one column's value off a record of type `R`.
enum Getter<R> {
    I64(Reader<R, i64>),
    OptI64(Reader<R, Option<i64>>),
    F64(Reader<R, f64>),
    OptF64(Reader<R, Option<f64>>),
    Bool(Reader<R, bool>),
    Str(Box<dyn Fn(&R) -> &str>),
}

/// One column of a table: its name and how to get its value.
struct Column<R> {
    name: String,
    get: Getter<R>,
}

impl<R> Column<R> {
    fn schema_line(&self) -> String {
        let (rep, ty, annot) = match self.get {
            Getter::I64(_) => ("REQUIRED", "INT64", ""),
            Getter::OptI64(_) => ("OPTIONAL", "INT64", ""),
            Getter::F64(_) => ("REQUIRED", "DOUBLE", ""),
            Getter::OptF64(_) => ("OPTIONAL", "DOUBLE", ""),
            Getter::Bool(_) => ("REQUIRED", "BOOLEAN", ""),
            Getter::Str(_) => ("REQUIRED", "BYTE_ARRAY", " (STRING)"),
        };
        format!("  {rep} {ty} {}{annot};\n", self.name)
    }
}

fn col<R>(name: impl Into<String>, get: Getter<R>) -> Column<R> {
    Column { name: name.into(), get }
}

/// u64 counter to INT64, saturating (counters never approach 2^63).
fn sat(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn i64_col<R>(name: &str, f: impl Fn(&R) -> u64 + 'static) -> Column<R> {
    col(name, Getter::I64(Box::new(move |r| sat(f(r)))))
}

fn opt_i64_col<R>(name: &str, f: impl Fn(&R) -> Option<u64> + 'static) -> Column<R> {
    col(name, Getter::OptI64(Box::new(move |r| f(r).map(sat))))
}

fn f64_col<R>(name: &str, f: impl Fn(&R) -> f64 + 'static) -> Column<R> {
    col(name, Getter::F64(Box::new(f)))
}

fn opt_f64_col<R>(name: &str, f: impl Fn(&R) -> Option<f64> + 'static) -> Column<R> {
    col(name, Getter::OptF64(Box::new(f)))
}

fn str_col<R>(name: &str, f: impl Fn(&R) -> &str + 'static) -> Column<R> {
    col(name, Getter::Str(Box::new(f)))
}

fn bool_col<R>(name: &str, f: impl Fn(&R) -> bool + 'static) -> Column<R> {
    col(name, Getter::Bool(Box::new(f)))
}

/// flows.parquet's columns in file order, each with its type (`"int64"`, `"float64"`,
/// `"bool"` or `"string"`): what another writer of the same table (the emulator) builds
/// its schema from.
pub fn flow_schema() -> Vec<(String, &'static str)> {
    flow_columns()
        .into_iter()
        .map(|c| {
            let ty = match c.get {
                Getter::I64(_) | Getter::OptI64(_) => "int64",
                Getter::F64(_) | Getter::OptF64(_) => "float64",
                Getter::Bool(_) => "bool",
                Getter::Str(_) => "string",
            };
            (c.name, ty)
        })
        .collect()
}

/// Columns of flows.parquet, in file order, without the optional ones.
fn flow_columns() -> Vec<Column<FlowRecord>> {
    flow_columns_with(false)
}

/// Columns of flows.parquet, in file order; with `qdelay` (`sampling.flow_qdelay`) the
/// per-flow queueing delay columns come last, so every other column keeps its place.
fn flow_columns_with(qdelay: bool) -> Vec<Column<FlowRecord>> {
    let mut cols = vec![
        i64_col("flow_id", |r: &FlowRecord| r.flow_id),
        str_col("src", |r: &FlowRecord| &r.src),
        str_col("dst", |r: &FlowRecord| &r.dst),
        str_col("kind", |r: &FlowRecord| r.kind),
        str_col("source", |r: &FlowRecord| &r.source),
        str_col("tag", |r: &FlowRecord| &r.tag),
        f64_col("start_s", |r: &FlowRecord| r.start_s),
        opt_f64_col("end_s", |r: &FlowRecord| r.end_s),
        opt_i64_col("size_bytes", |r: &FlowRecord| r.size_bytes),
        opt_i64_col("size_pkts", |r: &FlowRecord| r.size_pkts),
        opt_f64_col("fct_s", |r: &FlowRecord| r.fct_s),
        i64_col("data_pkts_sent", |r: &FlowRecord| r.data_pkts_sent),
        i64_col("retransmits", |r: &FlowRecord| r.retransmits),
        i64_col("timeouts", |r: &FlowRecord| r.timeouts),
        i64_col("fast_retransmits", |r: &FlowRecord| r.fast_retransmits),
        i64_col("drops", |r: &FlowRecord| r.drops),
        i64_col("ecn_marks", |r: &FlowRecord| r.ecn_marks),
        i64_col("syn_drops", |r: &FlowRecord| r.syn_drops),
        bool_col("first_data_drop", |r: &FlowRecord| r.first_data_drop),
        i64_col("favored_pkts", |r: &FlowRecord| r.favored_pkts),
        str_col("class_at_end", |r: &FlowRecord| r.class_at_end.as_str()),
        str_col("path", |r: &FlowRecord| &r.path),
        f64_col("base_rtt_s", |r: &FlowRecord| r.base_rtt_s),
        i64_col("delivered_pkts", |r: &FlowRecord| r.delivered_pkts),
        i64_col("syn_sent", |r: &FlowRecord| r.syn_sent),
        i64_col("synack_drops", |r: &FlowRecord| r.synack_drops),
        i64_col("pushed_out", |r: &FlowRecord| r.pushed_out),
    ];
    if qdelay {
        cols.push(f64_col("qdelay_s", |r: &FlowRecord| r.qdelay.map_or(0.0, |q| q.wait_s())));
        cols.push(i64_col("qdelay_pkts", |r: &FlowRecord| r.qdelay.map_or(0, |q| q.pkts)));
    }
    cols
}

/// Columns of queues.parquet, in file order. The per-class arrays become three columns
/// each, suffixed with the class name in `ClassMark::ALL` order (none, short, long).
fn queue_columns() -> Vec<Column<QueueSample>> {
    use crate::net::ClassMark;
    let mut cols = vec![
        f64_col("t_s", |q: &QueueSample| q.t_s),
        str_col("queue", |q: &QueueSample| q.queue.as_str()),
        i64_col("len_pkts", |q: &QueueSample| q.len_pkts),
        i64_col("len_bytes", |q: &QueueSample| q.len_bytes),
        opt_f64_col("avg_pkts", |q: &QueueSample| q.avg_pkts),
    ];
    type Arr = fn(&QueueSample) -> &[u64; 3];
    let arrays: [(&str, Arr); 4] = [
        ("len", |q| &q.len_by_class),
        ("departures", |q| &q.departures),
        ("drops", |q| &q.drops),
        ("marks", |q| &q.marks),
    ];
    for (prefix, arr) in arrays {
        for class in ClassMark::ALL {
            let i = class.index();
            cols.push(i64_col(&format!("{prefix}_{}", class.as_str()), move |q: &QueueSample| arr(q)[i]));
        }
    }
    cols.push(f64_col("utilisation", |q: &QueueSample| q.utilisation));
    cols
}

/// Columns of goodput.parquet, in file order.
fn goodput_columns() -> Vec<Column<GoodputSample>> {
    vec![
        f64_col("t_s", |g: &GoodputSample| g.t_s),
        i64_col("flow_id", |g: &GoodputSample| g.flow_id),
        i64_col("delivered_pkts", |g: &GoodputSample| g.delivered_pkts),
    ]
}

/// Write `rows` to `path` as goodput.parquet.
pub fn write_goodput(path: &Path, rows: &[GoodputSample]) -> Result<()> {
    write_table(path, "goodput", goodput_columns(), rows)
}

/// goodput.parquet written while the run goes (see `SpoolWriter`).
pub fn goodput_writer(path: &Path) -> Result<SpoolWriter<GoodputSample>> {
    SpoolWriter::new(path, "goodput", goodput_columns(), false, ROW_GROUP_ROWS)
}

/// Columns of network.parquet, in file order.
fn network_columns() -> Vec<Column<NetSample>> {
    vec![
        f64_col("t_s", |n: &NetSample| n.t_s),
        i64_col("active_tcp_flows", |n: &NetSample| n.active_tcp_flows),
        i64_col("active_udp_flows", |n: &NetSample| n.active_udp_flows),
        i64_col("packets_in_network", |n: &NetSample| n.packets_in_network),
    ]
}

/// Write `rows` to `path` as network.parquet.
pub fn write_network(path: &Path, rows: &[NetSample]) -> Result<()> {
    write_table(path, "network", network_columns(), rows)
}

/// network.parquet written while the run goes (see `SpoolWriter`).
pub fn network_writer(path: &Path) -> Result<SpoolWriter<NetSample>> {
    SpoolWriter::new(path, "network", network_columns(), false, ROW_GROUP_ROWS)
}

/// Columns of classifiers.parquet, in file order.
fn classifier_columns() -> Vec<Column<ClassifierSample>> {
    vec![
        f64_col("t_s", |c: &ClassifierSample| c.t_s),
        str_col("node", |c: &ClassifierSample| c.node.as_str()),
        str_col("classifier", |c: &ClassifierSample| c.classifier.as_str()),
        i64_col("flows_short", |c: &ClassifierSample| c.flows_short),
        i64_col("flows_long", |c: &ClassifierSample| c.flows_long),
        f64_col("threshold", |c: &ClassifierSample| c.threshold),
    ]
}

/// Write `samples` to `path` as classifiers.parquet (overwriting any existing file).
pub fn write_classifiers(path: &Path, samples: &[ClassifierSample]) -> Result<()> {
    write_table(path, "classifiers", classifier_columns(), samples)
}

/// classifiers.parquet written while the run goes (see `SpoolWriter`).
pub fn classifier_writer(path: &Path) -> Result<SpoolWriter<ClassifierSample>> {
    SpoolWriter::new(path, "classifiers", classifier_columns(), false, ROW_GROUP_ROWS)
}

/// Columns of traces.parquet, in file order.
fn trace_columns() -> Vec<Column<TraceSample>> {
    vec![
        f64_col("t_s", |r: &TraceSample| r.t_s),
        i64_col("flow_id", |r: &TraceSample| r.flow_id),
        i64_col("side", |r: &TraceSample| r.side as u64),
        str_col("event", |r: &TraceSample| r.event),
        f64_col("cwnd_pkts", |r: &TraceSample| r.cwnd_pkts),
        f64_col("ssthresh_pkts", |r: &TraceSample| r.ssthresh_pkts),
        i64_col("snd_una", |r: &TraceSample| r.snd_una),
        i64_col("snd_max", |r: &TraceSample| r.snd_max),
        bool_col("in_recovery", |r: &TraceSample| r.in_recovery),
        opt_f64_col("srtt_s", |r: &TraceSample| r.srtt_s),
        f64_col("rto_s", |r: &TraceSample| r.rto_s),
        i64_col("timeouts", |r: &TraceSample| r.timeouts),
    ]
}

/// Write `rows` to `path` as traces.parquet (overwriting any existing file).
pub fn write_traces(path: &Path, rows: &[TraceSample]) -> Result<()> {
    write_table(path, "traces", trace_columns(), rows)
}

/// traces.parquet written while the run goes (see `SpoolWriter`).
pub fn trace_writer(path: &Path) -> Result<SpoolWriter<TraceSample>> {
    SpoolWriter::new(path, "traces", trace_columns(), false, ROW_GROUP_ROWS)
}

/// Names of the flows.parquet columns, in file order.
pub fn flow_column_names() -> Vec<String> {
    flow_columns().into_iter().map(|c| c.name).collect()
}

/// Names of the queues.parquet columns, in file order.
pub fn queue_column_names() -> Vec<String> {
    queue_columns().into_iter().map(|c| c.name).collect()
}

/// Write `flows` to `path` as flows.parquet (overwriting any existing file), in row groups
/// of `ROW_GROUP_ROWS`: the same bytes as a `FlowWriter` fed the same records.
pub fn write_flows(path: &Path, flows: &[FlowRecord]) -> Result<()> {
    let mut w = FlowWriter::create_with(path, flows.iter().any(|f| f.qdelay.is_some()))?;
    w.write(flows)?;
    w.finish()
}

/// A Parquet table written incrementally, with memory that does not grow with the number
/// of records: each record pushed is spooled to a scratch file next to the output
/// (`.<name>.spool`, removed by `finish` or when the writer is dropped), and `finish` turns
/// the spool into Parquet column by column, in row groups of `ROW_GROUP_ROWS`. Keeping
/// records in memory until a row group is full would hold about 0.3 MB per 1024 flow
/// records (a 64K-row group of queue samples, 10 MB), and every row group written leaves
/// about 20 KB of metadata held until the footer: at 1024-row groups a 500 s dumbbell run
/// held 0.5 MB for its flows and a 1 Gb/s one 4 MB.
///
/// The spool is a sequence of blocks of `SPOOL_BLOCK_ROWS` records, each column-major:
/// one little-endian 8-byte word per record for each slot (a column's value; an optional
/// column has a presence slot first; a string is the index of its first occurrence in
/// the writer's table of distinct strings), so that writing a column reads only its own
/// words. The file does not depend on how records are batched (`push`, `write`); it
/// depends on `batch_rows`, the values handed to the Parquet column writer at a time (its
/// pages are cut between batches): `FlowWriter` hands `FLOW_BATCH_ROWS`, the time-series
/// writers a whole row group as `write_table` does, so they write the same bytes as it.
pub struct SpoolWriter<R> {
    table: TableWriter<R>,
    spool: Spool,
    /// First slot of each column.
    slot: Vec<usize>,
    slots: usize,
    /// The block being filled: `slots * SPOOL_BLOCK_ROWS` words, column-major.
    block: Vec<u8>,
    rows: usize,
    batch_rows: usize,
    /// Distinct strings in order of first use, and their indices.
    strings: Vec<ByteArray>,
    /// ahash rather than std's SipHash (made to resist chosen keys, which these few short
    /// strings are not): the lookup is per record. The table's order, and so the file,
    /// does not depend on the hash.
    string_ids: HashMap<Box<str>, u64, ahash::RandomState>,
}

/// flows.parquet written as flows retire (`sim::run_streamed`).
pub type FlowWriter = SpoolWriter<FlowRecord>;

/// Records per spool block (`SpoolWriter`); `ROW_GROUP_ROWS` is a multiple of it, so a row
/// group starts at a block. A column's words of a block are read back at once (8 KB):
/// with 128-record blocks, finishing the reference dumbbell's 11,154 flow records took
/// 2,728 seeks and reads of 1 KB (strace), about a fifth of the 13 ms it took.
const SPOOL_BLOCK_ROWS: usize = 1024;
const _: () = assert!(ROW_GROUP_ROWS.is_multiple_of(SPOOL_BLOCK_ROWS));

/// Flow records handed to the Parquet column writer at a time: where flows.parquet's pages
/// are cut, so the file's bytes depend on it (kept from when it was the spool block).
const FLOW_BATCH_ROWS: usize = 128;

impl SpoolWriter<FlowRecord> {
    pub fn create(path: &Path) -> Result<Self> {
        Self::create_with(path, false)
    }

    /// A writer whose file has the per-flow queueing delay columns when `qdelay` is set
    /// (`sampling.flow_qdelay`).
    pub fn create_with(path: &Path, qdelay: bool) -> Result<Self> {
        SpoolWriter::new(path, "flows", flow_columns_with(qdelay), true, FLOW_BATCH_ROWS)
    }
}

impl<R> SpoolWriter<R> {
    /// A writer of table `message` at `path`; `strings_only` as in `writer_properties`;
    /// `batch_rows` (dividing `ROW_GROUP_ROWS`): see above.
    fn new(path: &Path, message: &str, cols: Vec<Column<R>>, strings_only: bool, batch_rows: usize) -> Result<Self> {
        debug_assert!(ROW_GROUP_ROWS.is_multiple_of(batch_rows));
        let table = TableWriter::create(path, message, cols, strings_only)?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let spool_path = path.with_file_name(format!(".{name}.spool"));
        let spool = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&spool_path)
            .map_err(|e| Error::io(spool_path.display().to_string(), e))?;
        let spool = Spool { path: spool_path, file: spool };
        let mut slot = Vec::with_capacity(table.cols.len());
        let mut slots = 0;
        for c in &table.cols {
            slot.push(slots);
            slots += if matches!(c.get, Getter::OptI64(_) | Getter::OptF64(_)) { 2 } else { 1 };
        }
        Ok(SpoolWriter {
            table,
            spool,
            slot,
            slots,
            block: vec![0; slots * SPOOL_BLOCK_ROWS * 8],
            rows: 0,
            batch_rows,
            strings: Vec::new(),
            string_ids: HashMap::default(),
        })
    }

    /// Add one record (to the spool; nothing is written to the table before `finish`).
    pub fn push(&mut self, rec: R) -> Result<()> {
        self.push_ref(&rec)
    }

    fn push_ref(&mut self, rec: &R) -> Result<()> {
        let row = self.rows % SPOOL_BLOCK_ROWS;
        let SpoolWriter { table, slot, block, strings, string_ids, .. } = self;
        let mut put = |s: usize, w: u64| {
            let at = (s * SPOOL_BLOCK_ROWS + row) * 8;
            block[at..at + 8].copy_from_slice(&w.to_le_bytes());
        };
        for (c, &s) in table.cols.iter().zip(slot.iter()) {
            match &c.get {
                Getter::I64(f) => put(s, f(rec) as u64),
                Getter::F64(f) => put(s, f(rec).to_bits()),
                Getter::Bool(f) => put(s, u64::from(f(rec))),
                Getter::OptI64(f) => {
                    let v = f(rec);
                    put(s, u64::from(v.is_some()));
                    put(s + 1, v.unwrap_or(0) as u64);
                }
                Getter::OptF64(f) => {
                    let v = f(rec);
                    put(s, u64::from(v.is_some()));
                    put(s + 1, v.unwrap_or(0.0).to_bits());
                }
                Getter::Str(f) => {
                    let text = f(rec);
                    let id = match string_ids.get(text) {
                        Some(&id) => id,
                        None => {
                            let id = strings.len() as u64;
                            strings.push(ByteArray::from(text));
                            string_ids.insert(text.into(), id);
                            id
                        }
                    };
                    put(s, id);
                }
            }
        }
        self.rows += 1;
        if self.rows.is_multiple_of(SPOOL_BLOCK_ROWS) {
            self.spool_block()?;
        }
        Ok(())
    }

    pub fn write(&mut self, rows: &[R]) -> Result<()> {
        rows.iter().try_for_each(|r| self.push_ref(r))
    }

    fn spool_block(&mut self) -> Result<()> {
        (&self.spool.file).write_all(&self.block).map_err(|e| self.spool.error(e))
    }

    /// Write the table from the spool; the spool is removed.
    pub fn finish(mut self) -> Result<()> {
        if !self.rows.is_multiple_of(SPOOL_BLOCK_ROWS) {
            self.spool_block()?;
        }
        let SpoolWriter { mut table, spool, slot, slots, rows, batch_rows, strings, .. } = self;
        let spool_err = |e: std::io::Error| spool.error(e);
        let mut reader = SpoolReader { file: &spool.file, slots, cache: Default::default(), last: 0 };
        let shown = table.shown.clone();
        let io_err = |e: &dyn std::fmt::Display| Error::io(shown.clone(), e);
        for first in (0..rows).step_by(ROW_GROUP_ROWS) {
            let end = rows.min(first + ROW_GROUP_ROWS);
            let mut rg = table.writer.next_row_group().map_err(|e| io_err(&e))?;
            for (c, &s) in table.cols.iter().zip(slot.iter()) {
                let mut cw = rg.next_column().map_err(|e| io_err(&e))?.ok_or_else(|| {
                    Error::Internal(format!("{}: schema has fewer columns than {}", table.message, c.name))
                })?;
                for batch_first in (first..end).step_by(batch_rows) {
                    let batch_end = end.min(batch_first + batch_rows);
                    // The batch's words of this column's slot (and presence slot), block by block.
                    let mut words = Vec::with_capacity(batch_end - batch_first);
                    let mut present = Vec::new();
                    let optional = matches!(c.get, Getter::OptI64(_) | Getter::OptF64(_));
                    let mut at = batch_first;
                    while at < batch_end {
                        let (block, from) = (at / SPOOL_BLOCK_ROWS, at % SPOOL_BLOCK_ROWS);
                        let n = (SPOOL_BLOCK_ROWS - from).min(batch_end - at);
                        if optional {
                            let (def, vals) = reader.optional(block, s, from, n).map_err(spool_err)?;
                            present.extend(def);
                            words.extend(vals);
                        } else {
                            words.extend(reader.words(block, s, from, n).map_err(spool_err)?);
                        }
                        at += n;
                    }
                    let r = match &c.get {
                        Getter::I64(_) | Getter::OptI64(_) => {
                            let vals: Vec<i64> = words.into_iter().map(|w| w as i64).collect();
                            cw.typed::<Int64Type>().write_batch(&vals, optional.then_some(&present[..]), None)
                        }
                        Getter::F64(_) | Getter::OptF64(_) => {
                            let vals: Vec<f64> = words.into_iter().map(f64::from_bits).collect();
                            cw.typed::<DoubleType>().write_batch(&vals, optional.then_some(&present[..]), None)
                        }
                        Getter::Bool(_) => {
                            let vals: Vec<bool> = words.into_iter().map(|w| w != 0).collect();
                            cw.typed::<BoolType>().write_batch(&vals, None, None)
                        }
                        Getter::Str(_) => {
                            let vals: Vec<ByteArray> = words.into_iter().map(|w| strings[w as usize].clone()).collect();
                            cw.typed::<ByteArrayType>().write_batch(&vals, None, None)
                        }
                    };
                    r.map_err(|e| io_err(&e))?;
                }
                cw.close().map_err(|e| io_err(&e))?;
            }
            rg.close().map_err(|e| io_err(&e))?;
        }
        table.finish()
    }
}

/// A `SpoolWriter`'s scratch file, removed when dropped (whether or not the writer finished).
struct Spool {
    path: PathBuf,
    file: File,
}

impl Spool {
    fn error(&self, e: std::io::Error) -> Error {
        Error::io(self.path.display().to_string(), e)
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A spool block and a slot in it.
type BlockSlot = (usize, usize);

/// Reads one slot's words of one block back from a `SpoolWriter`'s spool: the slot's whole
/// block at once, the last two kept (an optional column reads its presence slot and its
/// value slot alternately, a batch at a time).
struct SpoolReader<'a> {
    file: &'a File,
    slots: usize,
    /// (block, slot) read into each buffer, if any; the one used last at `last`.
    cache: [(Option<BlockSlot>, Vec<u8>); 2],
    last: usize,
}

impl SpoolReader<'_> {
    /// Words `from .. from + n` of `slot` in `block`.
    fn words(
        &mut self,
        block: usize,
        slot: usize,
        from: usize,
        n: usize,
    ) -> std::io::Result<impl Iterator<Item = u64> + '_> {
        let i = match self.cache.iter().position(|c| c.0 == Some((block, slot))) {
            Some(i) => i,
            None => {
                let i = 1 - self.last;
                let c = &mut self.cache[i];
                c.0 = None;
                c.1.resize(SPOOL_BLOCK_ROWS * 8, 0);
                let mut file = self.file;
                file.seek(SeekFrom::Start(((block * self.slots + slot) * SPOOL_BLOCK_ROWS * 8) as u64))?;
                file.read_exact(&mut c.1)?;
                c.0 = Some((block, slot));
                i
            }
        };
        self.last = i;
        let bytes = &self.cache[i].1[from * 8..(from + n) * 8];
        Ok(bytes.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))))
    }

    /// An optional column's definition levels (its presence slot) and present values.
    fn optional(&mut self, block: usize, slot: usize, from: usize, n: usize) -> std::io::Result<(Vec<i16>, Vec<u64>)> {
        let def: Vec<i16> = self.words(block, slot, from, n)?.map(|w| w as i16).collect();
        let vals = self.words(block, slot + 1, from, n)?.zip(&def).filter(|(_, &d)| d == 1).map(|(w, _)| w).collect();
        Ok((def, vals))
    }
}

/// Write `samples` to `path` as queues.parquet (overwriting any existing file).
pub fn write_queues(path: &Path, samples: &[QueueSample]) -> Result<()> {
    write_table(path, "queues", queue_columns(), samples)
}

/// queues.parquet written while the run goes (see `SpoolWriter`).
pub fn queue_writer(path: &Path) -> Result<SpoolWriter<QueueSample>> {
    SpoolWriter::new(path, "queues", queue_columns(), false, ROW_GROUP_ROWS)
}

/// Snappy; min/max statistics per column chunk (what row-group pruning uses) but no page
/// index (the writer would keep it for every page until the file is closed); pages at most
/// `PAGE_BYTES`. Columns are dictionary-encoded, except the numbers of flows.parquet
/// (`strings_only`): times and sizes there are mostly distinct, so their dictionaries
/// would only grow with the run (the writer's memory, and code for every index width and
/// for the fallback to plain encoding that only long runs reach), and Snappy compresses
/// the counters' zeros as well. The time series keep theirs: their counters repeat, and
/// plain encoding made queues.parquet three times larger.
fn writer_properties<R>(cols: &[Column<R>], strings_only: bool) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(CREATED_BY.to_string())
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_offset_index_disabled(true)
        .set_dictionary_enabled(!strings_only)
        .set_data_page_size_limit(PAGE_BYTES)
        .set_dictionary_page_size_limit(PAGE_BYTES);
    if strings_only {
        for c in cols {
            if matches!(c.get, Getter::Str(_)) {
                b = b.set_column_dictionary_enabled(ColumnPath::from(c.name.as_str()), true);
            }
        }
    }
    b.build()
}

/// Size limit of data and dictionary pages (Parquet's default is 1 MiB): what the writer
/// holds for the column it is writing (at 64 KB a DropTail 0.5 run peaked 0.13 MiB higher).
const PAGE_BYTES: usize = 16 * 1024;

fn write_table<R>(path: &Path, message: &str, cols: Vec<Column<R>>, rows: &[R]) -> Result<()> {
    let mut w = TableWriter::create(path, message, cols, false)?;
    w.write(rows)?;
    w.finish()
}

/// A Parquet file open for writing: the schema is derived from `cols`; rows are written as
/// row groups of at most `ROW_GROUP_ROWS`.
struct TableWriter<R> {
    shown: String,
    message: String,
    cols: Vec<Column<R>>,
    writer: SerializedFileWriter<BufWriter<File>>,
}

impl<R> TableWriter<R> {
    /// `strings_only`: dictionary-encode only the string columns (see `writer_properties`).
    fn create(path: &Path, message: &str, cols: Vec<Column<R>>, strings_only: bool) -> Result<Self> {
        let shown = path.display().to_string();
        let mut schema_text = format!("message {message} {{\n");
        for c in &cols {
            schema_text.push_str(&c.schema_line());
        }
        schema_text.push('}');
        let schema =
            parse_message_type(&schema_text).map_err(|e| Error::Internal(format!("{message} parquet schema: {e}")))?;
        let file = File::create(path).map_err(|e| Error::io(shown.clone(), e))?;
        let writer = SerializedFileWriter::new(
            BufWriter::new(file),
            Arc::new(schema),
            Arc::new(writer_properties(&cols, strings_only)),
        )
        .map_err(|e| Error::io(shown.clone(), e))?;
        Ok(TableWriter { shown, message: message.to_string(), cols, writer })
    }

    fn write(&mut self, rows: &[R]) -> Result<()> {
        let io_err = |e: &dyn std::fmt::Display| Error::io(self.shown.clone(), e);
        for chunk in rows.chunks(ROW_GROUP_ROWS) {
            let mut rg = self.writer.next_row_group().map_err(|e| io_err(&e))?;
            for c in &self.cols {
                let mut cw = rg.next_column().map_err(|e| io_err(&e))?.ok_or_else(|| {
                    Error::Internal(format!("{}: schema has fewer columns than {}", self.message, c.name))
                })?;
                write_column(&mut cw, &c.get, chunk).map_err(|e| io_err(&e))?;
                cw.close().map_err(|e| io_err(&e))?;
            }
            rg.close().map_err(|e| io_err(&e))?;
        }
        Ok(())
    }

    fn finish(self) -> Result<()> {
        let shown = self.shown;
        // Flushed, not synced (see `metrics::output`).
        let buf = self.writer.into_inner().map_err(|e| Error::io(shown.clone(), e))?;
        buf.into_inner().map_err(|e| Error::io(shown, e.error()))?;
        Ok(())
    }
}

/// Definition levels of an optional column: 1 where the value is present, 0 where null.
fn def_levels<T>(vals: &[Option<T>]) -> Vec<i16> {
    vals.iter().map(|v| i16::from(v.is_some())).collect()
}

fn write_column<R>(cw: &mut SerializedColumnWriter<'_>, get: &Getter<R>, rows: &[R]) -> ::parquet::errors::Result<()> {
    match get {
        Getter::I64(f) => {
            let vals: Vec<i64> = rows.iter().map(f).collect();
            cw.typed::<Int64Type>().write_batch(&vals, None, None)?;
        }
        Getter::OptI64(f) => {
            let opts: Vec<Option<i64>> = rows.iter().map(f).collect();
            let vals: Vec<i64> = opts.iter().flatten().copied().collect();
            cw.typed::<Int64Type>().write_batch(&vals, Some(&def_levels(&opts)), None)?;
        }
        Getter::F64(f) => {
            let vals: Vec<f64> = rows.iter().map(f).collect();
            cw.typed::<DoubleType>().write_batch(&vals, None, None)?;
        }
        Getter::OptF64(f) => {
            let opts: Vec<Option<f64>> = rows.iter().map(f).collect();
            let vals: Vec<f64> = opts.iter().flatten().copied().collect();
            cw.typed::<DoubleType>().write_batch(&vals, Some(&def_levels(&opts)), None)?;
        }
        Getter::Bool(f) => {
            let vals: Vec<bool> = rows.iter().map(f).collect();
            cw.typed::<BoolType>().write_batch(&vals, None, None)?;
        }
        Getter::Str(f) => {
            let vals: Vec<ByteArray> = rows.iter().map(|r| ByteArray::from(f(r))).collect();
            cw.typed::<ByteArrayType>().write_batch(&vals, None, None)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::records::FlowQdelay;
    use crate::net::ClassMark;
    use ::parquet::file::reader::{FileReader, SerializedFileReader};
    use ::parquet::record::{Field, RowAccessor};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn scratch(name: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("savanna-parquet-test-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn sample_flows() -> Vec<FlowRecord> {
        vec![
            FlowRecord {
                flow_id: 0,
                src: "s0".into(),
                dst: "d0".into(),
                kind: "tcp",
                source: "web".into(),
                tag: "foreground".into(),
                start_s: 0.5,
                end_s: Some(1.25),
                size_bytes: Some(14600),
                size_pkts: Some(10),
                fct_s: Some(0.75),
                data_pkts_sent: 12,
                retransmits: 2,
                timeouts: 1,
                fast_retransmits: 1,
                drops: 2,
                ecn_marks: 3,
                syn_drops: 0,
                first_data_drop: true,
                favored_pkts: 7,
                class_at_end: ClassMark::Short,
                path: "s0>r0>d0".into(),
                base_rtt_s: 0.1,
                delivered_pkts: 10,
                syn_sent: 2,
                synack_drops: 1,
                pushed_out: 3,
                qdelay: None,
            },
            FlowRecord {
                flow_id: 1,
                src: "s1".into(),
                dst: "d1".into(),
                kind: "udp",
                source: "cbr".into(),
                tag: "".into(),
                start_s: 2.0,
                end_s: None,
                size_bytes: None,
                size_pkts: None,
                fct_s: None,
                data_pkts_sent: 100,
                class_at_end: ClassMark::Long,
                path: "s1>r0>d1".into(),
                base_rtt_s: 0.04,
                delivered_pkts: 99,
                ..Default::default()
            },
            FlowRecord {
                flow_id: u64::MAX,
                src: "héllo".into(),
                kind: "tcp",
                end_s: Some(3.0),
                size_pkts: Some(1),
                ..Default::default()
            },
        ]
    }

    fn sample_queues() -> Vec<QueueSample> {
        vec![
            QueueSample {
                t_s: 0.1,
                queue: "r0->d0".into(),
                len_pkts: 5,
                len_bytes: 7500,
                avg_pkts: Some(3.5),
                len_by_class: [1, 2, 2],
                departures: [3, 4, 5],
                drops: [0, 1, 2],
                marks: [6, 7, 8],
                utilisation: 0.75,
            },
            QueueSample { t_s: 0.2, queue: "r0->d1".into(), avg_pkts: None, ..Default::default() },
        ]
    }

    fn read_rows(path: &Path) -> (Vec<String>, Vec<Vec<Field>>) {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let names = schema.columns().iter().map(|c| c.name().to_string()).collect();
        let rows = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect())
            .collect();
        (names, rows)
    }

    fn get<'a>(names: &[String], row: &'a [Field], name: &str) -> &'a Field {
        &row[names.iter().position(|n| n == name).unwrap_or_else(|| panic!("no column {name}"))]
    }

    #[test]
    fn goodput_written_while_running_is_the_same_file_as_written_at_the_end() {
        let dir = scratch("goodput-spool");
        // Two full row groups and a partial one: the spooled file must split them alike.
        let rows: Vec<GoodputSample> = (0..2 * ROW_GROUP_ROWS + 5)
            .map(|i| GoodputSample { t_s: (i / 7) as f64 * 0.1, flow_id: (i % 7) as u64, delivered_pkts: i as u64 })
            .collect();
        write_goodput(&dir.join("whole.parquet"), &rows).unwrap();
        let mut w = goodput_writer(&dir.join("spooled.parquet")).unwrap();
        for r in &rows {
            w.push(r.clone()).unwrap();
        }
        w.finish().unwrap();
        let whole = std::fs::read(dir.join("whole.parquet")).unwrap();
        assert_eq!(whole, std::fs::read(dir.join("spooled.parquet")).unwrap());
        let r = SerializedFileReader::new(File::open(dir.join("spooled.parquet")).unwrap()).unwrap();
        assert_eq!(r.metadata().num_row_groups(), 3);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `rows` written at the end (`write`) and spooled while running (`writer`) must give
    /// the same bytes, and no spool may be left behind.
    fn spooled_equals_whole<R: Clone>(
        name: &str,
        rows: &[R],
        write: fn(&Path, &[R]) -> Result<()>,
        writer: fn(&Path) -> Result<SpoolWriter<R>>,
    ) {
        let dir = scratch(name);
        write(&dir.join("whole.parquet"), rows).unwrap();
        let mut w = writer(&dir.join("spooled.parquet")).unwrap();
        for r in rows {
            w.push(r.clone()).unwrap();
        }
        w.finish().unwrap();
        let whole = std::fs::read(dir.join("whole.parquet")).unwrap();
        assert!(whole == std::fs::read(dir.join("spooled.parquet")).unwrap(), "{name}: files differ");
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left.len(), 2, "{name}: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn time_series_written_while_running_are_the_same_files_as_written_at_the_end() {
        // Two full row groups and a partial one, with strings, nulls and booleans whose
        // page boundaries depend on how values reach the column writer.
        let n = 2 * ROW_GROUP_ROWS + 77;
        let queues: Vec<QueueSample> = (0..n)
            .map(|i| QueueSample {
                t_s: (i / 3) as f64 * 0.1,
                queue: format!("q{}", i % 3),
                len_pkts: (i * 7 % 101) as u64,
                len_bytes: (i * 7 % 101 * 1500) as u64,
                avg_pkts: (i % 5 != 0).then_some(i as f64 / 9.0),
                len_by_class: [i as u64 % 4, 0, i as u64 % 9],
                departures: [i as u64, 1, 2],
                drops: [i as u64 % 2, 0, 0],
                marks: [0, i as u64 % 3, 0],
                utilisation: (i % 1000) as f64 / 1000.0,
            })
            .collect();
        spooled_equals_whole("queues-spool", &queues, write_queues, queue_writer);
        let net: Vec<NetSample> = (0..n)
            .map(|i| NetSample {
                t_s: i as f64 * 0.1,
                active_tcp_flows: (i % 1234) as u64,
                active_udp_flows: (i % 3) as u64,
                packets_in_network: (i * 13 % 977) as u64,
            })
            .collect();
        spooled_equals_whole("network-spool", &net, write_network, network_writer);
        let cls: Vec<ClassifierSample> = (0..n)
            .map(|i| ClassifierSample {
                t_s: (i / 2) as f64,
                node: format!("r{}", i % 2),
                classifier: "threshold".into(),
                flows_short: (i % 50) as u64,
                flows_long: (i % 7) as u64,
                threshold: 20.0 + (i % 11) as f64,
            })
            .collect();
        spooled_equals_whole("classifiers-spool", &cls, write_classifiers, classifier_writer);
        let traces: Vec<TraceSample> = (0..n)
            .map(|i| TraceSample {
                t_s: i as f64 * 1e-3,
                flow_id: (i % 4) as u64,
                side: (i % 2) as u8,
                event: ["ack", "send", "rto"][i % 3],
                cwnd_pkts: (i % 64) as f64,
                ssthresh_pkts: 32.0,
                snd_una: i as u64,
                snd_max: i as u64 + 5,
                in_recovery: i % 17 == 0,
                srtt_s: (i % 4 != 0).then_some(0.1 + (i % 9) as f64 * 1e-3),
                rto_s: 1.0,
                timeouts: (i / 1000) as u64,
            })
            .collect();
        spooled_equals_whole("traces-spool", &traces, write_traces, trace_writer);
    }

    #[test]
    fn flows_round_trip_with_nulls() {
        let dir = scratch("flows");
        let path = dir.join("flows.parquet");
        let flows = sample_flows();
        write_flows(&path, &flows).unwrap();
        let (names, rows) = read_rows(&path);
        assert_eq!(names, flow_column_names());
        assert_eq!(rows.len(), 3);
        let r0 = &rows[0];
        assert_eq!(get(&names, r0, "flow_id"), &Field::Long(0));
        assert_eq!(get(&names, r0, "src"), &Field::Str("s0".into()));
        assert_eq!(get(&names, r0, "kind"), &Field::Str("tcp".into()));
        assert_eq!(get(&names, r0, "tag"), &Field::Str("foreground".into()));
        assert_eq!(get(&names, r0, "start_s"), &Field::Double(0.5));
        assert_eq!(get(&names, r0, "end_s"), &Field::Double(1.25));
        assert_eq!(get(&names, r0, "size_bytes"), &Field::Long(14600));
        assert_eq!(get(&names, r0, "size_pkts"), &Field::Long(10));
        assert_eq!(get(&names, r0, "fct_s"), &Field::Double(0.75));
        assert_eq!(get(&names, r0, "retransmits"), &Field::Long(2));
        assert_eq!(get(&names, r0, "ecn_marks"), &Field::Long(3));
        assert_eq!(get(&names, r0, "first_data_drop"), &Field::Bool(true));
        assert_eq!(get(&names, r0, "favored_pkts"), &Field::Long(7));
        assert_eq!(get(&names, r0, "class_at_end"), &Field::Str("short".into()));
        assert_eq!(get(&names, r0, "path"), &Field::Str("s0>r0>d0".into()));
        assert_eq!(get(&names, r0, "base_rtt_s"), &Field::Double(0.1));
        assert_eq!(get(&names, r0, "delivered_pkts"), &Field::Long(10));

        let r1 = &rows[1];
        assert_eq!(get(&names, r1, "kind"), &Field::Str("udp".into()));
        assert_eq!(get(&names, r1, "tag"), &Field::Str(String::new()));
        assert_eq!(get(&names, r1, "end_s"), &Field::Null);
        assert_eq!(get(&names, r1, "size_bytes"), &Field::Null);
        assert_eq!(get(&names, r1, "size_pkts"), &Field::Null);
        assert_eq!(get(&names, r1, "fct_s"), &Field::Null);
        assert_eq!(get(&names, r1, "first_data_drop"), &Field::Bool(false));
        assert_eq!(get(&names, r1, "class_at_end"), &Field::Str("long".into()));
        assert_eq!(get(&names, r1, "data_pkts_sent"), &Field::Long(100));

        // Mixed nulls within one row, a non-ASCII string and a saturated id.
        let r2 = &rows[2];
        assert_eq!(get(&names, r2, "flow_id"), &Field::Long(i64::MAX));
        assert_eq!(get(&names, r2, "src"), &Field::Str("héllo".into()));
        assert_eq!(get(&names, r2, "end_s"), &Field::Double(3.0));
        assert_eq!(get(&names, r2, "size_bytes"), &Field::Null);
        assert_eq!(get(&names, r2, "size_pkts"), &Field::Long(1));
        assert_eq!(get(&names, r2, "class_at_end"), &Field::Str("none".into()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn queueing_delay_columns_come_last_and_only_when_recorded() {
        let dir = scratch("flows-qdelay");
        let mut flows = sample_flows();
        write_flows(&dir.join("plain.parquet"), &flows).unwrap();
        let (plain, _) = read_rows(&dir.join("plain.parquet"));
        assert!(!plain.iter().any(|n| n.starts_with("qdelay")), "{plain:?}");
        let mut q = FlowQdelay::default();
        q.add(1_500_000);
        q.add(500_000);
        flows[0].qdelay = Some(q);
        flows[1].qdelay = Some(FlowQdelay::default());
        flows[2].qdelay = Some(FlowQdelay::default());
        write_flows(&dir.join("qdelay.parquet"), &flows).unwrap();
        let (names, rows) = read_rows(&dir.join("qdelay.parquet"));
        assert_eq!(names[..plain.len()], plain[..]);
        assert_eq!(names[plain.len()..], ["qdelay_s".to_string(), "qdelay_pkts".to_string()]);
        assert_eq!(get(&names, &rows[0], "qdelay_s"), &Field::Double(0.002));
        assert_eq!(get(&names, &rows[0], "qdelay_pkts"), &Field::Long(2));
        assert_eq!(get(&names, &rows[1], "qdelay_pkts"), &Field::Long(0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn schema_types_and_metadata() {
        use ::parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
        let dir = scratch("schema");
        let path = dir.join("flows.parquet");
        write_flows(&path, &sample_flows()).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().created_by(), Some(CREATED_BY));
        assert!(meta.file_metadata().key_value_metadata().is_none());
        let descr = meta.file_metadata().schema_descr();
        let by_name = |n: &str| descr.columns().iter().find(|c| c.name() == n).unwrap().clone();
        let src = by_name("src");
        assert_eq!(src.physical_type(), PhysicalType::BYTE_ARRAY);
        assert_eq!(src.logical_type_ref(), Some(&LogicalType::String));
        let end = by_name("end_s");
        assert_eq!(end.physical_type(), PhysicalType::DOUBLE);
        assert_eq!(end.self_type().get_basic_info().repetition(), Repetition::OPTIONAL);
        let fid = by_name("flow_id");
        assert_eq!(fid.physical_type(), PhysicalType::INT64);
        assert_eq!(fid.self_type().get_basic_info().repetition(), Repetition::REQUIRED);
        assert_eq!(by_name("first_data_drop").physical_type(), PhysicalType::BOOLEAN);
        for rg in meta.row_groups() {
            for c in rg.columns() {
                assert_eq!(c.compression(), Compression::SNAPPY);
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn queues_round_trip() {
        let dir = scratch("queues");
        let path = dir.join("queues.parquet");
        write_queues(&path, &sample_queues()).unwrap();
        let (names, rows) = read_rows(&path);
        let expected: Vec<String> = [
            "t_s",
            "queue",
            "len_pkts",
            "len_bytes",
            "avg_pkts",
            "len_none",
            "len_short",
            "len_long",
            "departures_none",
            "departures_short",
            "departures_long",
            "drops_none",
            "drops_short",
            "drops_long",
            "marks_none",
            "marks_short",
            "marks_long",
            "utilisation",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(names, expected);
        assert_eq!(rows.len(), 2);
        let r0 = &rows[0];
        assert_eq!(get(&names, r0, "t_s"), &Field::Double(0.1));
        assert_eq!(get(&names, r0, "queue"), &Field::Str("r0->d0".into()));
        assert_eq!(get(&names, r0, "len_bytes"), &Field::Long(7500));
        assert_eq!(get(&names, r0, "avg_pkts"), &Field::Double(3.5));
        assert_eq!(get(&names, r0, "len_short"), &Field::Long(2));
        assert_eq!(get(&names, r0, "departures_long"), &Field::Long(5));
        assert_eq!(get(&names, r0, "drops_short"), &Field::Long(1));
        assert_eq!(get(&names, r0, "marks_none"), &Field::Long(6));
        assert_eq!(get(&names, r0, "marks_long"), &Field::Long(8));
        assert_eq!(get(&names, &rows[1], "avg_pkts"), &Field::Null);
        assert_eq!(get(&names, &rows[1], "len_pkts"), &Field::Long(0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn deterministic_bytes() {
        let dir = scratch("determinism");
        let (a, b) = (dir.join("a.parquet"), dir.join("b.parquet"));
        write_flows(&a, &sample_flows()).unwrap();
        write_flows(&b, &sample_flows()).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        write_queues(&a, &sample_queues()).unwrap();
        write_queues(&b, &sample_queues()).unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn empty_tables_are_valid() {
        let dir = scratch("empty");
        let f = dir.join("flows.parquet");
        let q = dir.join("queues.parquet");
        write_flows(&f, &[]).unwrap();
        write_queues(&q, &[]).unwrap();
        let (names, rows) = read_rows(&f);
        assert_eq!(names, flow_column_names());
        assert!(rows.is_empty());
        let (names, rows) = read_rows(&q);
        assert_eq!(names, queue_column_names());
        assert!(rows.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn splits_into_bounded_row_groups() {
        let dir = scratch("rowgroups");
        let path = dir.join("queues.parquet");
        let n = ROW_GROUP_ROWS * 2 + 17;
        let samples: Vec<QueueSample> = (0..n)
            .map(|i| QueueSample {
                t_s: i as f64 * 1e-3,
                queue: "q".into(),
                len_pkts: i as u64,
                avg_pkts: (i % 3 == 0).then_some(i as f64),
                ..Default::default()
            })
            .collect();
        write_queues(&path, &samples).unwrap();
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.num_row_groups(), 3);
        assert!(meta.row_groups().iter().all(|rg| rg.num_rows() as usize <= ROW_GROUP_ROWS));
        assert_eq!(meta.file_metadata().num_rows() as usize, n);
        let last = reader.get_row_iter(None).unwrap().last().unwrap().unwrap();
        assert_eq!(last.get_long(2).unwrap(), (n - 1) as i64);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Flow record `i` of a synthetic run: values, nulls and strings vary with `i`.
    fn synthetic_flow(i: u64) -> FlowRecord {
        let every = |k: u64| i.is_multiple_of(k);
        FlowRecord {
            flow_id: i,
            src: format!("s{}", i % 7).into(),
            dst: format!("d{}", i % 11).into(),
            kind: if every(13) { "udp" } else { "tcp" },
            source: "web".into(),
            tag: if every(2) { "".into() } else { "bg".into() },
            start_s: i as f64 * 0.01,
            end_s: (!every(5)).then_some(i as f64 * 0.01 + 0.25),
            size_bytes: (!every(3)).then_some(i * 1460),
            size_pkts: (!every(4)).then_some(i),
            fct_s: (!every(5)).then_some(0.25 + i as f64 * 1e-9),
            data_pkts_sent: i + 1,
            retransmits: i % 9,
            timeouts: i % 2,
            first_data_drop: every(6),
            class_at_end: [ClassMark::None, ClassMark::Short, ClassMark::Long][(i % 3) as usize],
            path: format!("s{}>r0>d{}", i % 7, i % 11).into(),
            base_rtt_s: 0.1,
            delivered_pkts: i,
            pushed_out: u64::MAX - i,
            ..Default::default()
        }
    }

    /// Every column of `rec` as the reader should return it (the column getters say what
    /// each column holds; the spool must not change it).
    fn expected_fields(rec: &FlowRecord) -> Vec<Field> {
        flow_columns()
            .iter()
            .map(|c| match &c.get {
                Getter::I64(f) => Field::Long(f(rec)),
                Getter::OptI64(f) => f(rec).map_or(Field::Null, Field::Long),
                Getter::F64(f) => Field::Double(f(rec)),
                Getter::OptF64(f) => f(rec).map_or(Field::Null, Field::Double),
                Getter::Bool(f) => Field::Bool(f(rec)),
                Getter::Str(f) => Field::Str(f(rec).to_string()),
            })
            .collect()
    }

    #[test]
    fn spooled_flows_come_back_whole_across_blocks_and_row_groups() {
        let dir = scratch("spool");
        let path = dir.join("flows.parquet");
        // Two row groups, the second ending in a partial spool block.
        let n = (ROW_GROUP_ROWS + 3 * SPOOL_BLOCK_ROWS + 5) as u64;
        let mut w = FlowWriter::create(&path).unwrap();
        let spool = dir.join(".flows.parquet.spool");
        assert!(spool.exists());
        // Records in uneven batches and one at a time.
        let batch: Vec<FlowRecord> = (0..77).map(synthetic_flow).collect();
        w.write(&batch).unwrap();
        for i in 77..n {
            w.push(synthetic_flow(i)).unwrap();
        }
        w.finish().unwrap();
        assert!(!spool.exists(), "spool left behind");

        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let groups: Vec<i64> = reader.metadata().row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(groups, [ROW_GROUP_ROWS as i64, n as i64 - ROW_GROUP_ROWS as i64]);
        let mut count = 0;
        for (i, row) in reader.get_row_iter(None).unwrap().enumerate() {
            let got: Vec<Field> = row.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect();
            assert_eq!(got, expected_fields(&synthetic_flow(i as u64)), "row {i}");
            count += 1;
        }
        assert_eq!(count, n);
        // The same records written at once give the same bytes.
        let again = dir.join("again.parquet");
        write_flows(&again, &(0..n).map(synthetic_flow).collect::<Vec<_>>()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&again).unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_dropped_flow_writer_leaves_no_spool() {
        let dir = scratch("spool-drop");
        let mut w = FlowWriter::create(&dir.join("flows.parquet")).unwrap();
        for i in 0..(SPOOL_BLOCK_ROWS as u64 + 1) {
            w.push(synthetic_flow(i)).unwrap();
        }
        assert!(dir.join(".flows.parquet.spool").exists());
        drop(w);
        assert!(!dir.join(".flows.parquet.spool").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unwritable_path_is_io_error() {
        let dir = scratch("unwritable");
        let err = write_flows(&dir.join("missing").join("flows.parquet"), &[]).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
