"""CI-sized smoke test of the ns-2.35 side-by-side comparison (`benchmarks/vs_ns2.py
--quick`): both simulators carry the same flows, and flows that lost nothing in either
finish at the same instant in both (the FCT methods agree, so the per-bucket comparison is
about the models). The full comparison (500 s, three loads, ten seeds) is a benchmark:
`python3 benchmarks/vs_ns2.py`. Skipped when `ns` is not installed (`apt-get install ns2`;
the benchmark itself installs it when run as root)."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("ns") is None, reason="ns-2.35 (`ns`) not installed: apt-get install -y ns2"
)


def test_quick_comparison_with_ns2(tmp_path):
    out = tmp_path / "vs.md"
    p = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "vs_ns2.py"), "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    md = out.read_text()
    assert "## Speed and memory" in md
    for name in ("dumbbell-droptail load 0.8", "dumbbell-red load 0.8"):
        assert f"### {name}" in md
    rows = re.findall(r"\| flows finished \| (\d+) \| (\d+) \|", md)
    assert len(rows) == 2, rows
    for sv, ns in rows:
        assert int(ns) > 100
        assert abs(int(sv) - int(ns)) <= 0.05 * int(ns), (sv, ns)
    util = re.findall(r"\| bottleneck utilisation \| ([0-9.]+) \| ([0-9.]+) \|", md)
    for row in util:
        assert all(0.2 < float(x) < 1.0 for x in row), row


def test_lossless_flows_finish_at_the_same_instant_in_both(tmp_path):
    """A flow with no loss in either simulator has a deterministic FCT (handshake, slow
    start, transmission and propagation); the two must agree to a few microseconds, which
    checks the ns-2 script's topology, packet sizes, queue placement and FCT reckoning."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2

    sc = vs_ns2.scenario("dumbbell-red.toml", 0.5, 1, 20.0, handshake=True)
    _, _, _, sv = vs_ns2.run_savanna(sc, tmp_path / "sv")
    _, _, _, ns = vs_ns2.run_ns2(vs_ns2.ensure_ns(), sc, sv, tmp_path / "ns.csv", "reuse", True, False)
    j = sv.set_index("flow_id").join(ns.set_index("flow_id"), how="inner", suffixes=("", "_ns"))
    clean = j[(j["retransmits"] == 0) & (j["retransmits_ns"] == 0) & (j["syn_drops"] == 0)]
    # Lossless in both, and alone enough that queueing did not differ: most such flows.
    assert len(clean) > 100
    close = ((clean["fct_s"] - clean["fct_s_ns"]).abs() < 1e-4).mean()
    assert close > 0.8, close


def _paper_tcl(tmp_path, rows, *args):
    flows = tmp_path / "flows.csv"
    flows.write_text("flow_id,start_s,size_pkts,pair,session\n" + "".join(f"{','.join(map(str, r))}\n" for r in rows))
    out = tmp_path / "out.csv"
    cmd = ["ns", str(ROOT / "benchmarks" / "ns2" / "paper.tcl"), f"flows={flows}", f"out={out}", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def test_edge_marker_sends_the_first_lt_packets_in_and_the_rest_out(tmp_path):
    """paper.tcl's RIO edge rule: a flow's first L_t packets (its SYN counted) carry fid 1
    (In), every later one fid 0 (Out), read off ns-2's own packet trace of the bottleneck."""
    trace = tmp_path / "b.tr"
    _paper_tcl(tmp_path, [(0, 0.5, 50, 0, -1)], "queue=rio", "mark=20", "duration=5", "pairs=1", f"trace={trace}")
    fid = {}
    for line in trace.read_text().splitlines():
        f = line.split()
        if f[0] == "-" and f[4] == "tcp":
            fid.setdefault(int(f[10]), set()).add(int(f[7]))
    assert sorted(fid) == list(range(51))  # the SYN and 50 data packets, none lost
    assert all(fid[s] == {1} for s in range(20))
    assert all(fid[s] == {0} for s in range(20, 51))


def test_closed_loop_session_starts_each_transfer_when_the_last_ends(tmp_path):
    """A session's flows run one after another: each starts when the one before is done,
    and a flow starting alone on an idle dumbbell finishes in the same time as the first."""
    out = _paper_tcl(tmp_path, [(0, 0.5, 30, 0, 0), (1, 0, 30, 0, 0), (2, 0, 30, 0, 0)], "duration=20", "pairs=1")
    import pandas as pd

    r = pd.read_csv(out).set_index("flow_id")
    assert list(r.index) == [0, 1, 2]
    assert r.loc[1, "start_s"] > r.loc[0, "end_s"]
    assert r.loc[2, "start_s"] > r.loc[1, "end_s"]
    assert abs(r.loc[1, "fct_s"] - r.loc[0, "fct_s"]) < 1e-6
    assert (r["delivered"] == 30).all()


def test_ns2_column_names_model_when_ns2_reproduces_and_setup_when_it_misses():
    """ns2column's rule: ns-2 judged with the claim's own spec; reproduced by ns-2 but not
    by us -> model; missed by both -> set-up; reproduced by both on ns-2's set-up but not
    in the reproduction -> set-up; a declared cause wins; a row marked not comparable shows
    ns-2's number but draws no cause."""
    sys.path.insert(0, str(ROOT / "python"))
    from savanna.report import ClaimSpec, judge
    from savanna.reproduce.ns2column import annotate

    specs = [ClaimSpec(k, "x", 100.0, "pkts", rel_tol=0.1) for k in ("a", "b", "c", "d", "e")]
    claims = [judge(s, [50.0, 52.0]) for s in specs]
    ns2 = {
        "a": {"ns2": 101.0, "ns2_samples": [100.0, 102.0]},
        "b": {"ns2": 51.0, "ns2_samples": [50.0, 52.0]},
        "c": {"ns2": 101.0, "ns2_samples": [101.0], "comparable": False},
        "d": {"ns2": 51.0, "ns2_samples": [51.0]},
        "e": {"ns2": 101.0, "ns2_samples": [101.0], "savanna_same_setup": 99.0},
    }
    out = {c.id: c for c in annotate(claims, specs, {"d": ("paper ambiguity", "quoted")}, ns2)}
    assert out["a"].cause == "model" and out["a"].ns2 == 101.0
    assert out["b"].cause == "set-up"
    assert out["c"].cause == "" and "not comparable" in out["c"].ns2_verdict
    assert out["d"].cause == "paper ambiguity" and out["d"].evidence == "quoted"
    # both reproduce on ns-2's set-up: the reproduction's set-up is what differs
    assert out["e"].cause == "set-up" and "both reproduce" in out["e"].evidence


def _paper_tcl_cols(tmp_path, header, rows, *args):
    flows = tmp_path / "flows.csv"
    flows.write_text(header + "\n" + "".join(f"{','.join(map(str, r))}\n" for r in rows))
    out = tmp_path / "out.csv"
    cmd = ["ns", str(ROOT / "benchmarks" / "ns2" / "paper.tcl"), f"flows={flows}", f"out={out}", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def test_cbq_classes_share_the_link_by_allotment_and_drop_only_at_their_own_limit(tmp_path):
    """paper.tcl's CBQ isolation (Matta & Guo's two classes): with both classes backlogged
    the long class (fid 1, allot 0.6) sends 60% of the packets, and every drop of a class
    falls when that class alone holds its own limit, read off ns-2's packet trace."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2

    trace = tmp_path / "b.tr"
    rows = [(i, 0.1 * i, 100000, i, -1, i % 2) for i in range(10)]
    q = {"share_short": 0.4, "share_long": 0.6, "limit_short_pkts": 20, "limit_long_pkts": 30}
    _paper_tcl_cols(
        tmp_path,
        "flow_id,start_s,size_pkts,pair,session,fid",
        rows,
        *vs_ns2.cbq_args(q),
        "duration=30",
        "pairs=10",
        f"trace={trace}",
    )
    chk = vs_ns2.cbq_check(trace, (20, 30), (0.4, 0.6))
    assert sum(chk["departures_both_backlogged"]) > 10000
    assert abs(chk["share_when_both_backlogged"][1] - 0.6) < 0.02, chk
    assert min(chk["drops"]) > 0
    assert chk["drops_at_own_limit"] == chk["drops"], chk


def test_cbq_priority_sends_long_packets_only_when_no_short_one_waits(tmp_path):
    """paper.tcl's PRQ for Tokuda (marking with K = 7, short class at priority 1): a flow's
    first 7 packets leave marked short, and long packets leave while a short one waits in
    well under 1% of cases (CBQ's link-sharing regulator, not the strict rule, decides the
    rest)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2

    trace = tmp_path / "b.tr"
    rows = [(i, 0.05 * i, 30 if i % 3 else 2000, i % 10, -1) for i in range(200)]
    _paper_tcl_cols(
        tmp_path,
        "flow_id,start_s,size_pkts,pair,session",
        rows,
        "queue=cbq",
        "cbq_allot=1.0,1.0",
        "cbq_limit=40,40",
        "cbq_prio=2,1",
        "mark=7",
        "syn=false",
        "duration=30",
        "pairs=10",
        f"trace={trace}",
    )
    chk = vs_ns2.prq_check(trace)
    assert chk["departures"][1] >= 7 * 190
    assert chk["max_short_seqno"] == 6
    assert chk["long_while_short_waited"] < 0.01 * chk["departures"][0], chk


def test_closed_loop_session_waits_its_think_time_and_reuses_agents(tmp_path):
    """A session's next flow starts gap_s after the one before was delivered; with
    agents=reuse a pair idle for the cooldown serves the next flow, which then runs as a
    fresh one would (same FCT on an idle dumbbell)."""
    rows = [(0, 0.5, 30, 0, 0, 3.0), (1, 0, 30, 0, 0, 0.0), (2, 0, 30, 0, 0, 0.0)]
    out = _paper_tcl_cols(
        tmp_path, "flow_id,start_s,size_pkts,pair,session,gap_s", rows, "duration=20", "pairs=1", "agents=reuse"
    )
    import json

    import pandas as pd

    r = pd.read_csv(out).set_index("flow_id")
    assert abs(r.loc[1, "start_s"] - (r.loc[0, "end_s"] + 3.0)) < 1e-6
    assert r.loc[2, "start_s"] > r.loc[1, "end_s"]
    assert abs(r.loc[1, "fct_s"] - r.loc[0, "fct_s"]) < 1e-6
    assert abs(r.loc[2, "fct_s"] - r.loc[0, "fct_s"]) < 1e-6
    assert json.loads(Path(str(out) + ".summary.json").read_text())["agent_pairs_created"] == 2


def test_ns2_column_refresh_reannotates_a_finished_claims_file(tmp_path):
    """ns2column.refresh recomputes ns-2's value, verdict and cause of a committed
    claims.json from the ns-2 results without touching Savanna's verdict or value; a
    declared cause (Matta & Guo's RED reading) still wins."""
    import json

    sys.path.insert(0, str(ROOT / "python"))
    from savanna.reproduce.ns2column import refresh, three_way_rows

    base = {"ns2": None, "ns2_verdict": None, "cause": None, "evidence": None, "unit": "s"}
    doc = {
        "claims": [
            {**base, "id": "f4-p999-short-iso", "verdict": "not reproduced", "paper": "22.0 s", "mean": 101.0},
            {**base, "id": "f4-p999-short-red", "verdict": "not reproduced", "paper": "45.0 s", "mean": 88.0},
        ]
    }
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(doc))
    ns2 = {
        "f4-p999-short-iso": {"ns2": 50.0, "ns2_samples": [50.0], "savanna_same_setup": 95.0},
        "f4-p999-short-red": {"ns2": 23.0, "ns2_samples": [23.0]},
    }
    out = {c["id"]: c for c in refresh(path, "matta_guo_2000", ns2)}
    assert out["f4-p999-short-iso"]["cause"] == "set-up" and out["f4-p999-short-iso"]["ns2"] == 50.0
    assert out["f4-p999-short-iso"]["verdict"] == "not reproduced" and out["f4-p999-short-iso"]["mean"] == 101.0
    assert out["f4-p999-short-red"]["cause"] == "paper ambiguity"
    assert json.loads(path.read_text()) == doc  # not written unless asked
    assert len(three_way_rows(list(out.values()))) == 2


def test_ns2_column_says_when_ns2_reproduces_a_claim_with_a_declared_cause():
    """A declared cause stays, but when ns-2 on the same set-up reproduces the paper the
    evidence says the declaration does not explain the miss alone."""
    sys.path.insert(0, str(ROOT / "python"))
    from savanna.report import ClaimSpec, judge
    from savanna.reproduce.ns2column import annotate

    spec = ClaimSpec("r", "x", 45.0, "s", rel_tol=0.25)
    claims = [judge(spec, [93.0])]
    ns2 = {"r": {"ns2": 49.5, "ns2_samples": [49.5], "savanna_same_setup": 93.3, "experiment": "e"}}
    (c,) = annotate(claims, [spec], {"r": ("paper ambiguity", "quoted")}, ns2)
    assert c.cause == "paper ambiguity"
    assert c.evidence.startswith("quoted") and "ns-2.35 on the same set-up reproduces it" in c.evidence


def test_ns2_precision_reduce_matches_savanna_fast_retransmit_cwnd_half(tmp_path):
    """ns-2.35 halves cwnd_ as a real number (`precisionReduce_`, TcpAgent::slowdown) and
    keeps it on leaving recovery; Savanna does the same with `fast_retransmit_cwnd = "half"`
    (as vs_ns2.py compares), and halves the integer window, as the ns-2 of 2001, with
    "ssthresh". A 20-packet flow losing data packet 3 (cwnd 5 at the fast retransmit): 2.5
    lets a packet out one round trip sooner than 2, so each Savanna setting finishes with the
    ns-2.35 setting it follows and a round trip away from the other. Also checks the gap
    script's loss mapping (each loss indexed on ns-2's own trace)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2_droptail_gap as gap

    ns = gap.V.ensure_ns()
    rows = {}
    for halving, pr in (("half", "true"), ("ssthresh", "false")):
        d = tmp_path / pr
        d.mkdir()
        gap.V.SAVANNA_TCP.update({"fast_retransmit_cwnd": halving})
        try:
            rows[pr] = gap.one_flow_losses(ns, d, 20, [3], [f"precision_reduce={pr}"])
        finally:
            gap.V.SAVANNA_TCP.clear()
    (sv_half, ns_real), (sv_int, ns_int) = rows["true"], rows["false"]
    assert {r["retransmits"] for r in (sv_half, ns_real, sv_int, ns_int)} == {1}
    assert abs(sv_half["fct_s"] - ns_real["fct_s"]) < 1e-4, (sv_half["fct_s"], ns_real["fct_s"])
    assert abs(sv_int["fct_s"] - ns_int["fct_s"]) < 1e-4, (sv_int["fct_s"], ns_int["fct_s"])
    assert ns_int["fct_s"] - ns_real["fct_s"] > 0.05, (ns_int["fct_s"], ns_real["fct_s"])


def one_flow_key_on_and_off(tmp_path, key: str, size: int, faults: list) -> tuple:
    """One flow of `size` packets with the packets `faults` names lost, in Savanna with the
    `[tcp]` key on and off, and in ns-2 beside each (the same ns-2 run twice): the rows of
    `vs_ns2_droptail_gap.one_flow_faults`, ((savanna, ns2) on, (savanna, ns2) off)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import vs_ns2_droptail_gap as gap

    ns = gap.V.ensure_ns()
    rows = {}
    for on in (True, False):
        d = tmp_path / str(on)
        d.mkdir()
        gap.V.SAVANNA_TCP.update({key: on})
        try:
            rows[on] = gap.one_flow_faults(ns, d, size, faults)
        finally:
            gap.V.SAVANNA_TCP.clear()
    return rows[True], rows[False]


def test_ns2_syn_timeout_slowdown_matches_savanna_syn_timeout_slowdown(tmp_path):
    """ns-2.35's TcpAgent::timeout calls slowdown for the SYN too: after a lost SYN,
    ssthresh_ is max(window / 2, 2) = 2 and a 30-packet flow grows by one packet per round
    trip from cwnd 2. Savanna does the same with `syn_timeout_slowdown` (as vs_ns2.py
    compares) and keeps slow-starting without it, finishing rounds sooner than ns-2. Also
    checks the gap script's SYN-loss mapping (the SYN's departure on ns-2's trace)."""
    (sv_on, ns_a), (sv_off, ns_b) = one_flow_key_on_and_off(tmp_path, "syn_timeout_slowdown", 30, [("syn", 0, 1)])
    assert abs(ns_a["fct_s"] - ns_b["fct_s"]) < 1e-9  # the same ns-2 run
    assert {int(r["timeouts"]) for r in (sv_on, ns_a, sv_off)} == {1}
    assert abs(sv_on["fct_s"] - ns_a["fct_s"]) < 5e-3, (sv_on["fct_s"], ns_a["fct_s"])
    assert ns_a["fct_s"] - sv_off["fct_s"] > 0.2, (ns_a["fct_s"], sv_off["fct_s"])


def test_ns2_syn_backoff_kept_matches_savanna_syn_backoff_kept(tmp_path):
    """ns-2's one-way TCP (every tcp.cc from 2000 to 2.35) resets t_backoff_ only with an RTT
    sample, and the SYN sent again is not timed: when the SYN and then data packet 0 are
    lost, the first data timer runs with the SYN's backoff, 2 x 3 s. Savanna does the same
    with `syn_backoff_kept` (as vs_ns2.py compares) and restarts from the 3 s ITO without it
    (RFC 6298 5.7), finishing 3 s sooner than ns-2 (docs/ns2.md, stops 32-33)."""
    (sv_on, ns_a), (sv_off, ns_b) = one_flow_key_on_and_off(
        tmp_path, "syn_backoff_kept", 5, [("syn", 0, 1), ("data", 0, 1)]
    )
    assert abs(ns_a["fct_s"] - ns_b["fct_s"]) < 1e-9  # the same ns-2 run
    assert abs(sv_on["fct_s"] - ns_a["fct_s"]) < 5e-3, (sv_on["fct_s"], ns_a["fct_s"])
    assert abs((ns_a["fct_s"] - sv_off["fct_s"]) - 3.0) < 5e-3, (ns_a["fct_s"], sv_off["fct_s"])
