"""Contract tests of the simulator as users see it (docs/cli.md, docs/scenario.md, the
design's contracts): bad scenarios are rejected with one line naming the field and leave
no output; runs are deterministic; the workload follows the seed rule; packets are
conserved; the output files have the promised columns and meanings; an interrupted run
leaves nothing that looks complete.

The runs are short (30 simulated seconds of the dumbbell scenarios take well under a
second), so the whole file runs in a few seconds."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import savanna
from conftest import SCENARIOS, _savanna_command, sigint_default
from savanna import ScenarioError

DROPTAIL = SCENARIOS / "dumbbell-droptail.toml"
RED = SCENARIOS / "dumbbell-red.toml"
# Simulated seconds of the runs below: long enough for hundreds of flows, drops at the
# bottleneck and some unfinished flows at the end.
RUN_S = 30.0

OUTPUT_FILES = ("flows.parquet", "queues.parquet", "summary.json")


def _looks_complete(out: Path) -> list:
    """The output files present at the top level of `out` (none if it does not exist)."""
    return [f for f in OUTPUT_FILES if (out / f).exists()]


# ---- a. bad input ----------------------------------------------------------------------

# A small valid scenario that touches every section; each bad case changes one thing.
BASE = """\
name = "contract-base"
seed = 1
duration_s = 2.0
packet_bytes = 1500
header_bytes = 40

[topology]
type = "dumbbell"
pairs = 2
access_rate_mbps = 100.0
access_delay_ms = 5.0
bottleneck_rate_mbps = 10.0
bottleneck_delay_ms = 40.0
bottleneck_queue = { type = "red", limit_pkts = 80, min_th = 12.0, max_th = 40.0, max_p = 0.1 }
access_queue = { type = "droptail", limit_pkts = 1000 }

[tcp]
variant = "newreno"
ito_s = 3.0

[[traffic]]
type = "poisson"
name = "web"
load = 0.5
size = { dist = "pareto", shape = 1.3, mean = 30.0 }

[[traffic]]
type = "flows"
name = "probe"
flows = [{ start_s = 0.5, size_pkts = 10, src = "src0", dst = "dst1" }]

[[faults]]
link = "bottleneck"
flow = 0
kind = "data"
seq = 0

[sampling]
interval_s = 0.1
queues = ["bottleneck"]
"""

# (id, text replaced in BASE, replacement, field path the error must name, other words
# the message must contain)
BAD_CASES = [
    ("unknown-key-top", "seed = 1\n", "seed = 1\nbogus_top = 3\n", "bogus_top", []),
    ("unknown-key-topology", "pairs = 2\n", "pairs = 2\nbogus_topo = 3\n", "topology.bogus_topo", []),
    ("unknown-key-tcp", "ito_s = 3.0\n", "ito_s = 3.0\nbogus_tcp = 3\n", "tcp.bogus_tcp", []),
    ("wrong-type-top", "duration_s = 2.0", 'duration_s = "two"', "duration_s", []),
    (
        "wrong-type-topology",
        "bottleneck_rate_mbps = 10.0",
        'bottleneck_rate_mbps = "ten"',
        "topology.bottleneck_rate_mbps",
        [],
    ),
    ("wrong-type-tcp", "ito_s = 3.0", 'ito_s = "three"', "tcp.ito_s", []),
    ("wrong-type-traffic", "load = 0.5", 'load = "high"', "traffic[0].load", []),
    ("negative-rate", "bottleneck_rate_mbps = 10.0", "bottleneck_rate_mbps = -10", "topology.bottleneck_rate_mbps", []),
    ("red-min-above-max", "min_th = 12.0", "min_th = 50.0", "topology.bottleneck_queue.min_th", []),
    ("red-max-p-zero", "max_p = 0.1", "max_p = 0.0", "topology.bottleneck_queue.max_p", []),
    ("load-one", "load = 0.5", "load = 1.0", "traffic[0].load", []),
    ("load-missing", "load = 0.5\n", "", "traffic[0]", ["load"]),
    ("pareto-shape-le-1-with-mean", "shape = 1.3", "shape = 1.0", "traffic[0].size.shape", []),
    (
        "unknown-discipline",
        'type = "red", limit_pkts = 80',
        'type = "fifo_xyz", limit_pkts = 80',
        "topology.bottleneck_queue",
        ["fifo_xyz", "droptail", "red"],
    ),
    (
        "empirical-file-missing",
        'size = { dist = "pareto", shape = 1.3, mean = 30.0 }',
        'size = { dist = "empirical", file = "no-such-cdf.csv" }',
        "traffic[0].size.file",
        ["no-such-cdf.csv"],
    ),
    ("flow-unknown-host", 'dst = "dst1"', 'dst = "nohost7"', "traffic[1].flows[0].dst", ["nohost7"]),
    ("fault-unknown-link", 'link = "bottleneck"', 'link = "left->nowhere"', "faults[0].link", ["left->nowhere"]),
    ("duration-zero", "duration_s = 2.0", "duration_s = 0", "duration_s", []),
]


def _bad_scenario(old: str, new: str) -> str:
    assert BASE.count(old) == 1, f"{old!r} must occur exactly once in BASE"
    return BASE.replace(old, new)


def test_base_scenario_is_valid(cli, write, tmp_path):
    # The control: each bad case differs from this valid scenario by one change only.
    base = write("base.toml", BASE)
    proc = cli("validate", base)
    assert proc.returncode == 0, proc.stderr
    r = savanna.run(base, out=tmp_path / "out")
    assert len(r.flows) > 0
    assert "probe" in set(r.flows["source"])


@pytest.mark.parametrize("old,new,field,words", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_cli_rejects_bad_scenario(cli, expect_error, write, tmp_path, old, new, field, words):
    bad = write("bad.toml", _bad_scenario(old, new))
    out = tmp_path / "out"
    # expect_error: exit 2, exactly one `savanna: error:` line on stderr, no traceback.
    line = expect_error(cli("run", bad, "--out", out))
    assert field in line, f"the error does not name {field!r}: {line}"
    for w in words:
        assert w in line, f"the error does not mention {w!r}: {line}"
    assert not _looks_complete(out), _looks_complete(out)


@pytest.mark.parametrize("old,new,field,words", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_api_rejects_bad_scenario(tmp_path, old, new, field, words):
    out = tmp_path / "out"
    with pytest.raises(ScenarioError) as info:
        savanna.run(_bad_scenario(old, new), base_dir=tmp_path, out=out)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    assert "\n" not in msg.strip(), msg
    assert field in msg, f"the error does not name {field!r}: {msg}"
    for w in words:
        assert w in msg, f"the error does not mention {w!r}: {msg}"
    assert not _looks_complete(out)


# ---- b. determinism ---------------------------------------------------------------------


def test_same_inputs_give_byte_identical_outputs(cli, tmp_path):
    outs = [tmp_path / "cli1", tmp_path / "cli2"]
    for out in outs:
        proc = cli("run", DROPTAIL, "--out", out, "--duration", RUN_S, "--quiet")
        assert proc.returncode == 0, proc.stderr
    # The Python API goes through the same core: same bytes again.
    api = tmp_path / "api"
    savanna.run(DROPTAIL, duration_s=RUN_S, out=api)
    outs.append(api)

    first = outs[0]
    assert pq.read_metadata(first / "flows.parquet").num_rows > 100
    for other in outs[1:]:
        for f in ("flows.parquet", "queues.parquet"):
            assert (first / f).read_bytes() == (other / f).read_bytes(), f"{f} differs: {other}"
        a, b = (json.loads((d / "summary.json").read_text()) for d in (first, other))
        a.pop("wall_seconds")
        b.pop("wall_seconds")
        assert a == b


# ---- c. the seed rule -------------------------------------------------------------------

WORKLOAD = ["flow_id", "start_s", "size_pkts", "src", "dst"]


def _bottleneck(summary: dict) -> dict:
    (q,) = [q for q in summary["queues"] if q["name"] == "left->right"]
    return q


def test_same_seed_same_workload_across_disciplines():
    dt = savanna.run(DROPTAIL, seed=5, duration_s=RUN_S)
    red = savanna.run(RED, seed=5, duration_s=RUN_S)
    # The two runs really differ in the queue, and so in the outcome...
    assert _bottleneck(dt.summary)["discipline"] == "droptail"
    assert _bottleneck(red.summary)["discipline"] == "red"
    assert not dt.flows["fct_s"].equals(red.flows["fct_s"])
    # ...but carry exactly the same flows.
    assert len(dt.flows) > 100
    pd.testing.assert_frame_equal(
        dt.flows[WORKLOAD].reset_index(drop=True),
        red.flows[WORKLOAD].reset_index(drop=True),
        check_exact=True,
    )


def test_different_seed_different_workload():
    a = savanna.run(DROPTAIL, seed=5, duration_s=RUN_S).flows
    b = savanna.run(DROPTAIL, seed=6, duration_s=RUN_S).flows
    n = min(len(a), len(b))
    assert n > 100
    # Not just shifted: the start times, sizes and hosts of the first flows differ.
    for col in ("start_s", "size_pkts", "src"):
        x = a[col].head(n).to_numpy()
        y = b[col].head(n).to_numpy()
        assert (x != y).mean() > 0.5, col


def test_workload_does_not_depend_on_duration():
    long = savanna.run(DROPTAIL, seed=5, duration_s=RUN_S).flows
    short = savanna.run(DROPTAIL, seed=5, duration_s=RUN_S / 2).flows
    assert 0 < len(short) < len(long)
    pd.testing.assert_frame_equal(
        short[WORKLOAD].reset_index(drop=True),
        long[WORKLOAD].head(len(short)).reset_index(drop=True),
        check_exact=True,
    )


def test_adding_a_traffic_block_leaves_the_others_flows_alone(scenario_dict):
    # Workload streams are named after their traffic block: another block (here a few
    # persistent flows) must not change the flows of the existing one.
    d = json.loads(json.dumps(scenario_dict))
    d["traffic"].append({"type": "persistent", "name": "bulk", "count": 3, "start_s": 1.0})
    base = savanna.run(DROPTAIL, seed=5, duration_s=RUN_S).flows
    more = savanna.run(d, seed=5, duration_s=RUN_S, base_dir=SCENARIOS).flows
    assert (more["source"] == "bulk").sum() == 3
    cols = ["start_s", "size_pkts", "src", "dst"]
    # (size_pkts is float in `more`: the persistent flows have no size.)
    same_block = more.loc[more["source"] == "pareto", cols].astype({"size_pkts": "int64"})
    pd.testing.assert_frame_equal(
        base[cols].reset_index(drop=True), same_block.reset_index(drop=True), check_exact=True
    )


# ---- d. conservation --------------------------------------------------------------------

CLASS_FIELDS = ("arrivals", "enqueued", "departed", "dropped", "marked", "pushed_out")


def _lossy_scenario() -> dict:
    # The DropTail dumbbell with random loss on both directions of the bottleneck, so that
    # link losses (not queue drops) enter the balance too.
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    d = tomllib.loads(DROPTAIL.read_text())
    d["topology"]["bottleneck_loss"] = 0.01
    d["topology"]["reverse_loss"] = 0.01
    return d


@pytest.mark.parametrize("which", ["droptail", "red", "lossy"])
def test_conservation_in_summary(which):
    scenario = {"droptail": DROPTAIL, "red": RED, "lossy": _lossy_scenario()}[which]
    s = savanna.run(scenario, duration_s=RUN_S, base_dir=SCENARIOS).summary
    assert s["packets_created"] > 0
    assert s["packets_created"] == (s["packets_delivered"] + s["packets_dropped"] + s["packets_in_network_at_end"])
    queue_drops = 0
    link_losses = 0
    for q in s["queues"]:
        name = q["name"]
        assert q["arrivals"] == q["departed"] + q["dropped"] + q["occupancy_at_end"], name
        # Packets refused on arrival are drops; pushed-out packets are drops too.
        assert q["arrivals"] - q["enqueued"] <= q["dropped"], name
        assert q["pushed_out"] <= q["dropped"], name
        by_reason = dict(q["dropped_by_reason"])
        link_losses += by_reason.pop("link_loss", 0)
        assert sum(by_reason.values()) == q["dropped"], name
        queue_drops += q["dropped"]
        # Per class: the classes add up to the queue's totals, and no class loses more
        # than it brought (occupancy by class is not in summary.json).
        classes = q["by_class"]
        assert classes, name
        for k in CLASS_FIELDS:
            assert sum(c[k] for c in classes.values()) == q[k], (name, k)
        for cname, c in classes.items():
            assert c["departed"] + c["dropped"] <= c["arrivals"], (name, cname)
    assert link_losses == s["link_losses"]
    # Every lost packet was lost either in a queue or on a link.
    assert s["packets_dropped"] == queue_drops + s["link_losses"]
    # Every transmission on a link is one departure from that link's queue.
    assert s["packets_forwarded"] == sum(q["departed"] for q in s["queues"])
    if which == "lossy":
        assert s["link_losses"] > 0
    else:
        assert s["link_losses"] == 0
        assert _bottleneck(s)["dropped"] > 0


def test_queue_series_adds_up_to_summary_totals():
    # queues.parquet rows cover (t_s - interval, t_s]; with a duration that is a multiple
    # of the interval, the series must account for the whole run.
    r = savanna.run(DROPTAIL, duration_s=RUN_S)
    q = r.queues
    bn = _bottleneck(r.summary)
    n = round(RUN_S / 0.1)
    assert list(q["t_s"].round(9)) == [round(0.1 * k, 9) for k in range(1, n + 1)]
    for col, key in (("departures", "departed"), ("drops", "dropped"), ("marks", "marked")):
        total = int(q[[f"{col}_none", f"{col}_short", f"{col}_long"]].to_numpy().sum())
        assert total == bn[key], (col, total, bn[key])


# ---- e. the output contract -------------------------------------------------------------


def _is_str(t):
    return pa.types.is_string(t) or pa.types.is_large_string(t)


FLOW_TYPES = {
    "flow_id": pa.types.is_integer,
    "src": _is_str,
    "dst": _is_str,
    "kind": _is_str,
    "start_s": pa.types.is_floating,
    "end_s": pa.types.is_floating,
    "size_bytes": pa.types.is_integer,
    "size_pkts": pa.types.is_integer,
    "fct_s": pa.types.is_floating,
    "data_pkts_sent": pa.types.is_integer,
    "retransmits": pa.types.is_integer,
    "timeouts": pa.types.is_integer,
    "fast_retransmits": pa.types.is_integer,
    "drops": pa.types.is_integer,
    "ecn_marks": pa.types.is_integer,
    "syn_drops": pa.types.is_integer,
    "first_data_drop": pa.types.is_boolean,
    "favored_pkts": pa.types.is_integer,
    "class_at_end": _is_str,
    "path": _is_str,
    "base_rtt_s": pa.types.is_floating,
    "delivered_pkts": pa.types.is_integer,
}
SUMMARY_KEYS = (
    "sim_seconds",
    "wall_seconds",
    "events",
    "packets_forwarded",
    "flows_started",
    "flows_finished",
    "queues",
)
QUEUE_KEYS = ("enqueued", "dropped", "marked", "pushed_out", "utilisation", "by_class")


@pytest.fixture(scope="module")
def droptail_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("contract") / "droptail"
    return savanna.run(DROPTAIL, duration_s=RUN_S, out=out)


def test_flows_parquet_columns_and_types(droptail_run):
    schema = pq.read_schema(droptail_run.out_dir / "flows.parquet")
    for name, ok in FLOW_TYPES.items():
        assert name in schema.names, f"flows.parquet lacks {name}"
        assert ok(schema.field(name).type), (name, schema.field(name).type)


def test_fct_matches_start_and_end(droptail_run):
    f = droptail_run.flows
    unfinished = f["end_s"].isna()
    assert unfinished.any() and (~unfinished).any()
    # fct_s is null exactly where end_s is null.
    assert (f["fct_s"].isna() == unfinished).all()
    done = f[~unfinished]
    assert ((done["end_s"] - done["start_s"] - done["fct_s"]).abs() < 1e-9).all()
    assert (done["fct_s"] > 0).all()
    assert (done["end_s"] <= RUN_S).all() and (f["start_s"] < RUN_S).all()
    # With the handshake, the last byte cannot arrive before 1.5 base RTTs.
    assert (done["fct_s"] >= 1.5 * done["base_rtt_s"]).all()


def test_flow_sizes_and_delivery(droptail_run):
    f = droptail_run.flows
    # Payload per packet = packet_bytes - header_bytes = 1460 B.
    assert (f["size_bytes"] == f["size_pkts"] * 1460).all()
    assert (f["size_pkts"] >= 1).all()
    done = f["end_s"].notna()
    assert (f.loc[done, "delivered_pkts"] == f.loc[done, "size_pkts"]).all()
    assert (f.loc[~done, "delivered_pkts"] < f.loc[~done, "size_pkts"]).all()
    assert (f["data_pkts_sent"] >= f["delivered_pkts"]).all()
    # Every path of the dumbbell: 2 x (5 + 40 + 5) ms.
    assert (f["base_rtt_s"] - 0.1).abs().max() < 1e-12
    assert set(f["kind"]) == {"tcp"}
    assert set(f["source"]) == {"pareto"}
    assert set(f["src"]) <= {f"src{i}" for i in range(20)}
    # Poisson flows go from a sender to its own receiver.
    assert (f["src"].str[3:] == f["dst"].str[3:]).all()


def test_summary_json_keys_and_queue_names(droptail_run):
    s = json.loads((droptail_run.out_dir / "summary.json").read_text())
    for k in SUMMARY_KEYS:
        assert k in s, f"summary.json lacks {k}"
    assert s["sim_seconds"] == pytest.approx(RUN_S)
    for q in s["queues"]:
        for k in QUEUE_KEYS:
            assert k in q, (q.get("name"), k)
        assert 0.0 <= q["utilisation"] <= 1.0
    # One queue per link, named "from->to".
    names = {q["name"] for q in s["queues"]}
    expected = {"left->right", "right->left"}
    for i in range(20):
        expected |= {f"src{i}->left", f"left->src{i}", f"dst{i}->right", f"right->dst{i}"}
    assert names == expected
    assert _bottleneck(s)["utilisation"] > 0.3


def test_queues_parquet(droptail_run, tmp_path):
    schema = pq.read_schema(droptail_run.out_dir / "queues.parquet")
    for name in ("t_s", "queue", "len_pkts", "len_bytes", "avg_pkts"):
        assert name in schema.names
    for prefix in ("len", "departures", "drops", "marks"):
        for cls in ("none", "short", "long"):
            assert pa.types.is_integer(schema.field(f"{prefix}_{cls}").type)
    q = droptail_run.queues
    # sampling.queues = ["bottleneck"]: the alias of left->right.
    assert set(q["queue"]) == {"left->right"}
    assert (q["len_pkts"] <= 8).all() and q["len_pkts"].max() > 0
    # DropTail keeps no average; RED does.
    assert q["avg_pkts"].isna().all()
    red = savanna.run(RED, duration_s=RUN_S).queues
    assert red["avg_pkts"].notna().all() and red["avg_pkts"].max() > 0


# ---- f. interrupted runs ----------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("pre_existing", [False, True], ids=["new-dir", "existing-dir"])
def test_interrupted_run_leaves_nothing_complete(tmp_path, sig, pre_existing):
    out = tmp_path / "out"
    if pre_existing:
        out.mkdir()
    proc = subprocess.Popen(
        _savanna_command() + ["run", str(DROPTAIL), "--out", str(out), "--duration", "100000"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=sigint_default,
    )
    try:
        time.sleep(1.0)
        assert proc.poll() is None, "the long run ended before it could be interrupted"
        proc.send_signal(sig)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert proc.returncode != 0
    assert not _looks_complete(out), _looks_complete(out)
