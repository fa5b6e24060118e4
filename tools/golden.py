#!/usr/bin/env python3
"""Byte-identity check for refactorings: run every scenario file under `scenarios/` (at its
own duration) and a set of variants that reach every queue discipline, classifier, TCP
option and traffic type, and record a SHA-256 of every output file.

    python3 tools/golden.py record  out/golden.json    # before the change
    python3 tools/golden.py check   out/golden.json    # after it: lists every file that differs

`summary.json`'s `wall_seconds` (the only field that is not a function of scenario and seed)
is removed before hashing. Outputs are kept under `--keep DIR` for a diff when asked.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SCEN = ROOT / "scenarios"

# Parameters that make each discipline valid on the 10 Mb/s dumbbell.
QUEUES: dict[str, dict[str, Any]] = {
    "red": {"type": "red", "limit_pkts": 80, "min_th": 12.0, "max_th": 40.0},
    "red-ecn": {"type": "red", "limit_pkts": 80, "min_th": 12.0, "max_th": 40.0, "ecn": True},
    "red-bytes": {"type": "red", "limit_pkts": 80, "min_th": 12.0, "max_th": 40.0, "mode": "bytes", "gentle": False},
    "rio": {
        "type": "rio",
        "limit_pkts": 60,
        "min_th_short": 9.0,
        "max_th_short": 21.0,
        "min_th_long": 9.0,
        "max_th_long": 30.0,
    },
    "favorqueue": {"type": "favorqueue", "limit_pkts": 8},
    "drr": {"type": "drr", "limit_short_pkts": 20, "limit_long_pkts": 40},
    "codel": {"type": "codel", "limit_pkts": 100},
    "codel-ecn": {"type": "codel", "limit_pkts": 100, "ecn": True},
    "fq_codel": {"type": "fq_codel", "limit_pkts": 200, "flows": 64},
    "fq_pie": {"type": "fq_pie", "limit_pkts": 200, "flows": 64},
    "cobalt": {"type": "cobalt", "limit_pkts": 100, "ecn": False},
    "cobalt-ecn": {"type": "cobalt", "limit_pkts": 100},
    "pie": {"type": "pie", "limit_pkts": 100},
    "pie-ecn": {"type": "pie", "limit_pkts": 100, "ecn": True},
    "pi": {"type": "pi", "limit_pkts": 100, "q_ref_pkts": 20},
    "choke": {"type": "choke", "limit_pkts": 30},
    "las": {"type": "las", "limit_pkts": 8},
    "las-forget": {"type": "las", "limit_pkts": 8, "forget_after_s": 1.0},
    "run2c": {"type": "run2c", "limit_pkts": 8},
    "prq": {"type": "prq", "limit_pkts": 60},
    "reddiff": {"type": "reddiff", "limit_pkts": 60, "min_th": 9.0, "max_th": 30.0},
    "droptail-bytes": {"type": "droptail", "limit_pkts": 100, "limit_bytes": 12000},
    "red-markp": {"type": "red", "limit_pkts": 80, "min_th": 12.0, "max_th": 40.0, "ecn": True, "mark_p": 1.0},
    "pfabric": {"type": "pfabric", "limit_pkts": 8},
    "pias": {"type": "pias", "limit_pkts": 30, "queues": 4, "ecn_k_pkts": 6},
    "sppifo": {"type": "sppifo", "limit_pkts": 30},
    "sppifo-attained": {"type": "sppifo", "limit_pkts": 30, "rank": "attained"},
    "aifo": {"type": "aifo", "limit_pkts": 30},
    "step-ecn": {"type": "step", "limit_pkts": 60, "k_pkts": 10},
}

# Queues that read class marks get a classifier in front of them; those that read
# priority tags, the tagger they are paired with.
CLASSIFIED = {"rio", "drr", "prq", "reddiff"}
TAGGED = {"pfabric": "remaining", "pias": "pias", "sppifo": "remaining", "aifo": "remaining"}
CLASSIFIERS: dict[str, dict[str, Any]] = {
    "threshold": {"type": "threshold", "node": "left"},
    "threshold-static": {"type": "threshold", "node": "left", "adaptive": False, "initial_threshold": 10},
    "oracle": {"type": "oracle", "node": "left", "threshold": 20},
    "marking": {"type": "marking", "node": "left"},
    "sampling": {"type": "sampling", "node": "left"},
    "sampling-random": {"type": "sampling", "node": "left", "random_sampling": True},
    "hashing": {"type": "hashing", "node": "left", "table_size": 64},
}

TCP: dict[str, dict[str, Any]] = {
    "reno": {"variant": "reno"},
    "tahoe": {"variant": "tahoe"},
    "delack": {"delayed_ack": True},
    "oneway": {"handshake": False, "init_cwnd": 1},
    "teardown": {"teardown": True},
    "once-per-rtt": {"rtt_sampling": "once_per_rtt", "granularity_s": 0.1},
    "keep-rto": {"restart_rto_on_fast_retransmit": False},
    "iw10-ito1": {"init_cwnd": 10, "ito_s": 1.0, "min_rto_s": 1.0},
    "ssthresh": {"init_ssthresh": 16.0, "max_window": 20, "dupack_threshold": 2},
    "limited-transmit": {"limited_transmit": True},
    "sack-prr": {"sack": True, "dsack": True},
    "sack-rfc6675": {"sack": True, "recovery_rate": "rfc6675", "sack_blocks": 3},
    "tick": {"tick_s": 0.1},
    "cubic": {"cc": "cubic"},
    "cubic-no-hystart": {"cc": "cubic", "hystart": False},
    "ssthresh-cwnd": {"ssthresh_base": "cwnd"},
    "iw-after-syn-loss": {"iw_after_syn_loss": 1},
    "profile-ns2-2001": {"profile": "ns2-2001"},
    "profile-rfc": {"profile": "rfc"},
    "profile-linux": {"profile": "linux"},
}


def load(name: str) -> dict[str, Any]:
    with open(SCEN / name, "rb") as fh:
        return tomllib.load(fh)


def variants() -> list[tuple[str, dict[str, Any]]]:
    """(name, scenario dict) for every case, scenario files first."""
    out = [(p.stem, load(p.name)) for p in sorted(SCEN.glob("*.toml"))]
    base = load("dumbbell-droptail.toml")
    base["duration_s"] = 150.0
    base["topology"]["reverse_queue"] = {"type": "droptail", "limit_pkts": 8}
    for name, q in QUEUES.items():
        sc = copy.deepcopy(base)
        sc["topology"]["bottleneck_queue"] = q
        if name.endswith("-ecn"):
            sc["tcp"]["ecn"] = True
        if q["type"] in CLASSIFIED:
            sc["classifiers"] = [dict(CLASSIFIERS["threshold"])]
        if q["type"] in TAGGED and q.get("rank", "remaining") == "remaining":
            sc["classifiers"] = [{"type": TAGGED[q["type"]], "node": "left"}]
        out.append((f"queue-{name}", sc))
    rio = QUEUES["rio"]
    for name, c in CLASSIFIERS.items():
        sc = copy.deepcopy(base)
        sc["topology"]["bottleneck_queue"] = rio
        sc["classifiers"] = [c]
        out.append((f"classifier-{name}", sc))
    for name, t in TCP.items():
        sc = copy.deepcopy(base)
        if "profile" in t:  # the profile's own settings, not the scenario's
            sc["tcp"] = {k: v for k, v in sc["tcp"].items() if k == "max_window"}
        if "cc" in t:
            sc["tcp"].pop("variant", None)
        sc["tcp"].update(t)
        out.append((f"tcp-{name}", sc))
    # Request/response with delayed ACKs and ECN through RED, traced flows and faults.
    sc = copy.deepcopy(base)
    sc["traffic"][0]["mode"] = "request_response"
    sc["tcp"].update({"delayed_ack": True, "ecn": True})
    sc["topology"]["bottleneck_queue"] = QUEUES["red-ecn"]
    sc["trace"] = {"flows": [0, 1, 2, 5, 40]}
    sc["faults"] = [
        {"link": "left->right", "flow": 3, "kind": "data", "seq": 2},
        {"link": "right->left", "flow": 4, "kind": "syn"},
        {"link": "right->left", "flow": 6, "kind": "ack", "seq": 3},
    ]
    out.append(("reqresp-trace-faults", sc))
    # DCTCP through a step-marking queue.
    sc = copy.deepcopy(base)
    sc["tcp"].pop("variant", None)
    sc["tcp"]["cc"] = "dctcp"
    sc["topology"]["bottleneck_queue"] = QUEUES["step-ecn"]
    out.append(("tcp-dctcp-step", sc))
    sc = copy.deepcopy(base)
    sc["topology"]["bottleneck_loss"] = 0.01
    sc["topology"]["reverse_loss"] = 0.005
    sc["sampling"]["goodput_interval_s"] = 1.0
    sc["traffic"].append(
        {
            "type": "persistent",
            "name": "bulk",
            "count": 2,
            "start_s": 10.0,
            "stagger_s": 5.0,
            "tcp": {"variant": "reno"},
        }
    )
    sc["traffic"].append(
        {
            "type": "udp",
            "name": "cbr",
            "rate_kbps": 500.0,
            "packet_bytes": 500,
            "initial": 1,
            "start_s": 20.0,
            "stop_s": 100.0,
        }
    )
    sc["traffic"].append(
        {
            "type": "periodic",
            "name": "probe",
            "count": 2,
            "period_s": 7.0,
            "size": {"dist": "fixed", "value": 12},
            "direction": "reverse",
        }
    )
    out.append(("lossy-mixed", sc))
    sc = copy.deepcopy(base)
    sc["traffic"] = [
        {
            "type": "udp",
            "name": "poisson-udp",
            "pattern": "poisson",
            "rate_kbps": 800.0,
            "interarrival_s": {"dist": "exponential", "mean": 2.0},
            "lifetime_s": {"dist": "exponential", "mean": 5.0},
        },
        {
            "type": "closed_loop",
            "name": "sessions",
            "sessions": 6,
            "size": {"dist": "exponential", "mean": 20.0},
            "think_s": {"dist": "exponential", "mean": 1.0},
        },
        {
            "type": "web",
            "name": "web",
            "sessions": 4,
            "pages_per_session": 3,
            "from": "receivers",
            "to": "senders",
            "inter_page_s": {"dist": "exponential", "mean": 3.0},
            "objects_per_page": {"min": 1, "max": 4},
            "inter_object_s": {"dist": "exponential", "mean": 0.1},
            "object_size": {"dist": "bounded_pareto", "shape": 1.2, "min": 2, "max": 500},
        },
    ]
    out.append(("udp-sessions-web", sc))
    # L4S: DCTCP on ECT(1) beside classic NewReno through DualPI2, with each scheduler.
    for name, extra in {"dualpi2": {}, "dualpi2-tsfifo": {"scheduler": "tsfifo", "l_range_us": 0.0}}.items():
        sc = copy.deepcopy(base)
        sc["topology"]["bottleneck_queue"] = {"type": "dualpi2", "limit_pkts": 100, **extra}
        sc["tcp"].pop("variant", None)
        sc["tcp"]["cc"] = "newreno"
        sc["traffic"].append({"type": "persistent", "name": "l4s", "count": 2, "tcp": {"cc": "dctcp", "ect1": True}})
        out.append((f"l4s-{name}", sc))
    return out


def digest(d: Path) -> dict[str, str]:
    h = {}
    for f in sorted(d.iterdir()):
        data = f.read_bytes()
        if f.name == "summary.json":
            s = json.loads(data)
            s.pop("wall_seconds", None)
            data = json.dumps(s, sort_keys=True).encode()
        h[f.name] = hashlib.sha256(data).hexdigest()
    return h


def run_all(keep: Path | None, only: str | None) -> dict[str, dict[str, str]]:
    sys.path.insert(0, str(ROOT / "python"))
    import savanna

    result = {}
    tmp = Path(tempfile.mkdtemp(prefix="golden-")) if keep is None else keep
    for name, sc in variants():
        if only and only not in name:
            continue
        t0 = time.time()
        out = tmp / name
        savanna.run(sc, out=str(out), base_dir=str(SCEN))
        result[name] = digest(out)
        print(f"{name:40s} {time.time() - t0:6.2f} s", flush=True)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("manifest", type=Path)
    ap.add_argument("--keep", type=Path, help="keep the outputs under this directory")
    ap.add_argument("--only", help="run only the cases whose name contains this")
    a = ap.parse_args()
    got = run_all(a.keep, a.only)
    if a.mode == "record":
        a.manifest.parent.mkdir(parents=True, exist_ok=True)
        a.manifest.write_text(json.dumps(got, indent=1, sort_keys=True))
        print(f"recorded {len(got)} cases, {sum(len(v) for v in got.values())} files")
        return 0
    want = json.loads(a.manifest.read_text())
    bad = []
    for name, files in got.items():
        if name not in want:
            bad.append(f"{name}: not in the manifest")
            continue
        for f in sorted(set(files) | set(want[name])):
            if files.get(f) != want[name].get(f):
                bad.append(f"{name}/{f}: differs")
    for line in bad:
        print(line)
    n = sum(len(v) for v in got.values())
    print(f"{len(got)} cases, {n} files: {'all byte-identical' if not bad else f'{len(bad)} differ'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
