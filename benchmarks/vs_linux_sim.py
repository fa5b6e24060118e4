"""The simulated side of ``vs_linux.py --stack reno`` alone, with extra ``[tcp]`` keys,
against the emulated runs stored in ``benchmarks/results/vs_linux.json`` (no root, no
emulation): to test a simulator rule against Linux without re-running Linux.

Per cell (load/discipline): the 101-1000 packet bucket's median FCT, simulated and
emulated, per seed and as the median of the per-seed medians (flows started after the
warm-up), and per seed the simulated long flows' drops per flow, retransmissions per drop
and share of flows with an RTO (the counters docs/emulate.md compares with Linux's).

Usage: python3 benchmarks/vs_linux_sim.py '{"nosack_recovery_rate": "prr"}'
[--cells 0.5/droptail8,0.8/red80] [--seeds 1,2,3,4] [--duration 120] [--warmup 10]

``--update`` instead re-runs the simulated side of every stored run (all cells and seeds,
with ``vs_linux.scenario``'s settings plus the given keys), replaces it in the ``.json``
and rewrites the report beside it (``vs_linux.md``); the emulated side is kept as stored.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import savanna  # noqa: E402
import vs_linux  # noqa: E402
from savanna.analysis import fct_by_size  # noqa: E402

BUCKET = (101, 1000)


def median_of(table, label: str) -> float:
    return float(table.set_index("bucket").loc[label, "median_fct_s"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tcp", help="[tcp] keys added to the reno stack's, as a JSON object")
    ap.add_argument("--cells", default="0.5/droptail8")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--stored", type=Path, default=ROOT / "benchmarks" / "results" / "vs_linux.json")
    ap.add_argument("--update", action="store_true", help="replace the stored simulated side and rewrite the report")
    args = ap.parse_args()
    extra = json.loads(args.tcp)
    stored = json.loads(args.stored.read_text())
    if args.update:
        update(stored, extra, args)
        return
    label = f"{BUCKET[0]}-{BUCKET[1]}"
    for cell in args.cells.split(","):
        load, queue = cell.split("/")
        sims, emus, lines = [], [], []
        for seed in map(int, args.seeds.split(",")):
            sc = vs_linux.scenario(float(load), queue, args.duration, seed, False)
            sc["tcp"].update(extra)
            with tempfile.TemporaryDirectory() as tmp:
                f = savanna.run(sc, out=Path(tmp)).flows
            sim = median_of(fct_by_size(f, warmup_s=args.warmup), label)
            emu = {r["bucket"]: r for r in stored[f"{cell}/{seed}"]["emu"]["table"]}[label]["median_fct_s"]
            long = f[f.size_pkts.between(*BUCKET) & (f.start_s >= args.warmup) & f.fct_s.notna()]
            drops = int(long.drops.sum())
            sims.append(sim)
            emus.append(emu)
            lines.append(
                f"  seed {seed}: sim {sim:.3f} s emu {emu:.3f} s gap {100 * (emu / sim - 1):+.0f}%, "
                f"{len(long)} long flows: drops/flow {drops / max(1, len(long)):.2f}, "
                f"retx/drop {long.retransmits.sum() / max(1, drops):.2f}, RTO share {(long.timeouts > 0).mean():.2f}"
            )
        s, e = statistics.median(sims), statistics.median(emus)
        print(f"{cell} {json.dumps(extra)}: {label} median sim {s:.3f} s emu {e:.3f} s gap {100 * (e / s - 1):+.1f}%")
        print("\n".join(lines), flush=True)


def update(stored: dict, extra: dict, args) -> None:
    """Re-run the simulated side of each stored run; rewrite the .json and the report."""
    for key, r in stored.items():
        load, queue, seed = key.split("/")
        sc = vs_linux.scenario(float(load), queue, r["duration_s"], int(seed), False)
        sc["tcp"].update(extra)
        with tempfile.TemporaryDirectory() as tmp:
            res = savanna.run(sc, out=Path(tmp))
        q = vs_linux.bottleneck(res.summary)
        r["sim"] = {
            "flows": len(res.flows),
            "finished": int(res.flows.fct_s.notna().sum()),
            "utilisation": q["utilisation"],
            "drop_rate": q["dropped"] / max(1, q["arrivals"]),
            "table": fct_by_size(res.flows, warmup_s=args.warmup).to_dict("records"),
        }
        print(f"{key}: simulated side re-run", file=sys.stderr, flush=True)
    args.stored.write_text(json.dumps(stored, indent=1))
    results: dict = {}
    vs_linux.load_raw(json.loads(args.stored.read_text()), results)
    ns = argparse.Namespace(stack="reno", delack=False, warmup=args.warmup)
    out = args.stored.with_suffix(".md")
    out.write_text(vs_linux.report(results, ns))
    print(f"wrote {args.stored} and {out}")


if __name__ == "__main__":
    main()
