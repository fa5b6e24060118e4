#!/usr/bin/env python3
"""Per-flow traces of one ``vs_linux.py --stack reno`` cell, Linux against the simulator.

Runs the cell once emulated with the router's packet capture (``savanna.emulate(...,
capture=True)``: every packet read from a host, dropped or delivered, at the router's
ideal time) and once simulated with ``[trace]`` on the flows of 20 packets or more (the
sender's state after every ACK), the same flows on both sides, then compares the long
flows (101-1000 packets, started after the warm-up, finished on both sides) one by one:

- FCT, data segments sent, drops at the bottleneck, retransmissions, RTOs;
- loss episodes: fast-recovery entries and RTOs, with the flight (highest sequence sent
  minus highest acknowledged, packets) when each began; Linux's are inferred from the
  packets (a retransmission of the first unacknowledged segment after three duplicate
  ACKs outside recovery; one sent 190 ms or more after the last ACK: an RTO), the
  simulator's read from its trace;
- the burst structure: new segments sent per ACK, the largest flight of each flow.

Usage (root for the emulated side): python3 benchmarks/vs_linux_trace.py --cell
0.5/droptail8 --seed 1 [--duration 120] [--emu DIR (reuse a captured run)] [--tcp JSON
(extra simulator [tcp] keys)] [--out FILE.md]. ``--lone N``: one N-packet flow alone on
the cell's path instead (a reproducible case of one recovery).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import savanna  # noqa: E402
import vs_linux  # noqa: E402

MSS = 1460
BUCKET = (101, 1000)
RTO_GAP_S = 0.19  # below Linux's and the scenario's 200 ms minimum RTO
BURST = 8  # segments sent on one ACK: as many as the bottleneck's DropTail buffer holds


def linux_flow(p: pd.DataFrame, size_pkts: int) -> dict:
    """Metrics of one flow from its captured packets (bulk mode: data to side 1)."""
    total = size_pkts * MSS
    rec_acks = rec_idle = 0  # ACKs in recovery with unsent data left; those releasing no new segment
    judge = False
    rows = p.sort_values("rec").itertuples(index=False)
    sent = new = retx = drops = drops_retx = 0
    snd_max = 0  # highest data byte sent + 1
    una = 0  # highest cumulative ACK delivered to the sender
    dup = 0
    recover = -1
    last_ack_t = None
    per_ack: list[int] = []
    cur = None  # new segments since the last ACK delivered
    cur_all: list[tuple[int, float]] = []  # every segment (seq, time) since the last ACK
    bursts: list[list[tuple[int, float]]] = []  # runs of BURST or more segments after one ACK
    episodes: list[tuple[str, float, float, int]] = []  # kind, time, flight (packets), recover
    max_flight = 0.0
    seen: set[int] = set()
    drop_seqs: list[int] = []
    for r in rows:
        if r.kind == "data" and r.to_side == 1:
            if r.event == "in":
                cur_all.append((r.seq, r.t_s))
                sent += 1
                end = r.seq + r.payload_bytes
                if r.seq >= snd_max:
                    new += 1
                    snd_max = end
                    if cur is not None:
                        cur += 1
                else:
                    retx += 1
                    flight = (snd_max - una) / MSS
                    if last_ack_t is not None and r.t_s - last_ack_t >= RTO_GAP_S:
                        episodes.append(("rto", r.t_s, flight, snd_max))
                        recover = snd_max
                    elif r.seq == una and dup >= 3 and una > recover:
                        episodes.append(("fr", r.t_s, flight, snd_max))
                        recover = snd_max
                max_flight = max(max_flight, (snd_max - una) / MSS)
            elif r.event == "drop":
                drops += 1
                if r.seq in seen:
                    drops_retx += 1
                drop_seqs.append(r.seq)
            if r.event == "in":
                seen.add(r.seq)
        elif r.to_side == 0 and r.event == "out" and r.kind in ("ack", "data", "fin"):
            if r.ack > una and r.ack < 2**31:
                una = r.ack
                dup = 0
            elif r.ack == una and r.kind == "ack":
                dup += 1
            last_ack_t = r.t_s
            if judge:
                rec_acks += 1
                rec_idle += cur == 0
            judge = una < recover and snd_max < total
            if cur is not None:
                per_ack.append(cur)
            if len(cur_all) >= BURST:
                bursts.append(cur_all)
            cur = 0
            cur_all = []
    if len(cur_all) >= BURST:
        bursts.append(cur_all)
    # Drops of a burst's segments: the same sequence number dropped within 50 ms of the send.
    dr = p[(p.event == "drop") & (p.kind == "data") & (p.to_side == 1)]
    drop_at = list(zip(dr.seq, dr.t_s))
    burst_drops = sum(1 for b in bursts for q, t in b if any(dq == q and 0 <= dt - t < 0.05 for dq, dt in drop_at))
    first_recover = next((e[3] for e in episodes), None)
    return {
        "first_episode_drops": len({q for q in drop_seqs if first_recover is not None and q < first_recover}),
        "rec_acks": rec_acks,
        "rec_idle": rec_idle,
        "bursts": len(bursts),
        "burst_pkts": sum(len(b) for b in bursts),
        "burst_drops": burst_drops,
        "sent": sent,
        "retx": retx,
        "drops": drops,
        "drops_of_retx": drops_retx,
        "fr": sum(1 for e in episodes if e[0] == "fr"),
        "rto_inferred": sum(1 for e in episodes if e[0] == "rto"),
        "flight_at_fr": [e[2] for e in episodes if e[0] == "fr"],
        "flight_at_first_loss": episodes[0][2] if episodes else np.nan,
        "t_first_loss": episodes[0][1] if episodes else np.nan,
        "per_ack": per_ack,
        "max_flight": max_flight,
    }


def sim_flow(t: pd.DataFrame, size_pkts: int) -> dict:
    """Metrics of one flow from the simulator's trace of its sender (side 0)."""
    s = t[t.side == 0].sort_values("t_s", kind="stable")
    flight = (s.snd_max - s.snd_una).to_numpy(float)
    prev_flight = np.concatenate([[0.0], flight[:-1]])
    rec = s.in_recovery.to_numpy(bool)
    entered = rec & ~np.concatenate([[False], rec[:-1]])
    is_to = (s.event == "timeout").to_numpy()
    smax = s.snd_max.to_numpy(float)
    inc = np.diff(np.concatenate([[smax[0]], smax]))
    pk = (s.event == "packet").to_numpy()
    first = np.flatnonzero(entered | is_to)
    # ACKs that arrived in recovery (the state before them) with unsent data left, and
    # those of them after which snd_max did not move.
    was_rec = np.concatenate([[False], rec[:-1]])
    before = np.concatenate([[smax[0]], smax[:-1]])
    judged = pk & was_rec & (before < size_pkts)
    # The holes of the first recovery: the distinct snd_una values while in it (each
    # partial ACK moves snd_una to the next hole), when it ends without an RTO.
    holes = np.nan
    if len(first) and entered[first[0]]:
        end = first[0] + np.argmax(~rec[first[0] :]) if (~rec[first[0] :]).any() else len(rec)
        if not is_to[first[0] : end].any():
            holes = len(set(s.snd_una.to_numpy()[first[0] : end]))
    return {
        "first_episode_drops": holes,
        "fr": int(entered.sum()),
        "rto_trace": int(is_to.sum()),
        "flight_at_fr": list(prev_flight[entered]),
        "flight_at_first_loss": prev_flight[first[0]] if len(first) else np.nan,
        "t_first_loss": s.t_s.to_numpy()[first[0]] if len(first) else np.nan,
        "per_ack": list(np.maximum(inc[pk][1:], 0).astype(int)),
        "new_bursts": int((inc[pk][1:] >= BURST).sum()),
        "rec_acks": int(judged.sum()),
        "rec_idle": int((judged & (inc == 0)).sum()),
        "max_flight": float(flight.max()) if len(flight) else 0.0,
        "cwnd_at_fr": list(s.cwnd_pkts.to_numpy()[np.flatnonzero(entered) - 1]) if entered.any() else [],
    }


def hist(xs: list[int]) -> str:
    a = np.asarray(xs)
    if not len(a):
        return "-"
    return ", ".join(f"{k}: {np.mean(a == k):.2f}" for k in (0, 1, 2)) + f", 3+: {np.mean(a >= 3):.2f}"


def lone(args) -> int:
    """One flow of N packets alone on the cell's path (10 s): emulated with the capture and
    simulated with the reno stack's settings plus ``--tcp``; FCT, drops and the new
    segments each side sends per 100 ms after the flow's start (the shape of a recovery)."""
    load, queue = args.cell.split("/")
    sc = vs_linux.scenario(float(load), queue, 10.0, args.seed, False)
    sc["traffic"] = [
        {
            "type": "flows",
            "name": "lone",
            "flows": [{"start_s": 0.5, "size_pkts": args.lone, "src": "src0", "dst": "dst0"}],
        }
    ]
    emu_dir = args.emu or Path(tempfile.mkdtemp(prefix="vs-linux-lone-"))
    res = savanna.emulate(sc, emu_dir, progress=False, capture=True)
    e, a = res.flows.iloc[0], res.summary["accuracy"]
    p = pd.read_parquet(emu_dir / "packets.parquet")
    d = p[(p.kind == "data") & (p.event == "in")]
    new_e = d[d.seq >= d.seq.cummax().shift(fill_value=-1)].t_s.to_numpy() - e.start_s
    sc["tcp"].update(json.loads(args.tcp))
    sc["trace"] = {"flows": [0]}
    with tempfile.TemporaryDirectory() as tmp:
        sim = savanna.run(sc, out=Path(tmp))
        t = pd.read_parquet(Path(tmp) / "traces.parquet")
    s = sim.flows.iloc[0]
    t = t[t.side == 0]
    inc = np.diff(np.concatenate([[0], t.snd_max.to_numpy()]))
    new_s = np.repeat(t.t_s.to_numpy() - s.start_s, np.maximum(inc, 0))
    bins = np.arange(0.0, 6.01, 0.1)
    he, hs = np.histogram(new_e, bins)[0], np.histogram(new_s, bins)[0]
    lines = [
        f"## One {args.lone}-packet flow alone, {args.cell} path, simulator extra [tcp] {args.tcp}",
        "",
        f"Emulated: router rate {a['achieved_over_configured']:.4f} of configured, delivery lateness p99 "
        f"{a['delivery_lateness']['p99_us']} us.",
        "",
        "| | FCT (s) | drops | retransmissions | RTOs |",
        "|---|---|---|---|---|",
        f"| Linux | {e.fct_s:.3f} | {int(e.drops)} | {int(e.retransmits)} | {int(e.timeouts)} |",
        f"| simulator | {s.fct_s:.3f} | {int(s.drops)} | {int(s.retransmits)} | {int(s.timeouts)} |",
        "",
        "New segments sent per 100 ms from the flow's start:",
        "",
        f"- Linux: {' '.join(map(str, he[: int(np.ceil(e.fct_s * 10))]))}",
        f"- simulator: {' '.join(map(str, hs[: int(np.ceil(s.fct_s * 10))]))}",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with args.out.open("a") as fh:
            fh.write(text + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="0.5/droptail8")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--warmup", type=float, default=10.0)
    ap.add_argument("--emu", type=Path, default=None, help="captured emulated run to reuse (or where to keep it)")
    ap.add_argument("--tcp", default="{}", help="extra simulator [tcp] keys, JSON")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--lone", type=int, default=None, metavar="N", help="one N-packet flow alone (see lone())")
    args = ap.parse_args()
    if args.lone:
        return lone(args)
    load, queue = args.cell.split("/")
    sc = vs_linux.scenario(float(load), queue, args.duration, args.seed, False)
    sc["tcp"].update(json.loads(args.tcp))
    lines = [f"## {args.cell}, seed {args.seed}, {args.duration:g} s, simulator extra [tcp] {args.tcp}", ""]
    if args.emu is None or not (args.emu / "packets.parquet").exists():
        emu_dir = args.emu or Path(tempfile.mkdtemp(prefix="vs-linux-trace-"))
        base = vs_linux.scenario(float(load), queue, args.duration, args.seed, False)
        res = savanna.emulate(base, emu_dir, progress=False, capture=True)
        a = res.summary["accuracy"]
    else:
        emu_dir = args.emu
        a = json.loads((emu_dir / "summary.json").read_text())["accuracy"]
    lines.append(
        f"Emulated run ({emu_dir}): router rate {a['achieved_over_configured']:.4f} of configured, delivery "
        f"lateness p99 {a['delivery_lateness']['p99_us']} us, CPU {100 * a['cpu_fraction']:.0f}%."
    )
    ef = pd.read_parquet(emu_dir / "flows.parquet")
    pk = pd.read_parquet(emu_dir / "packets.parquet")
    pk["rec"] = np.arange(len(pk))
    sim0 = savanna.run(sc).flows
    sc["trace"] = {"flows": sim0[sim0.size_pkts >= 20].flow_id.tolist()}
    with tempfile.TemporaryDirectory() as tmp:
        sim = savanna.run(sc, out=Path(tmp))
        sf, tr = sim.flows, pd.read_parquet(Path(tmp) / "traces.parquet")
    sel = sf[sf.size_pkts.between(*BUCKET) & (sf.start_s >= args.warmup) & sf.fct_s.notna()].flow_id
    ids = [i for i in sel if i in set(ef[ef.fct_s.notna()].flow_id)]
    pk = pk[pk.flow_id.isin(ids)]
    by_pk = dict(tuple(pk.groupby("flow_id")))
    by_tr = dict(tuple(tr[tr.flow_id.isin(ids)].groupby("flow_id")))
    rows = []
    for fid in ids:
        e, s = ef.set_index("flow_id").loc[fid], sf.set_index("flow_id").loc[fid]
        le, ls = linux_flow(by_pk[fid], int(s.size_pkts)), sim_flow(by_tr[fid], int(s.size_pkts))
        rows.append({"flow": fid, "size": int(s.size_pkts), "emu": e, "sim": s, "le": le, "ls": ls})
    n = len(rows)

    def col(f):
        return np.array([f(r) for r in rows], dtype=float)

    fct_e, fct_s = col(lambda r: r["emu"].fct_s), col(lambda r: r["sim"].fct_s)
    lines += [
        "",
        f"{n} flows of {BUCKET[0]}-{BUCKET[1]} packets (started after {args.warmup:g} s, finished on both sides).",
        "",
        "| per flow (mean over the flows; median in brackets) | Linux | simulator |",
        "|---|---|---|",
    ]

    def row(label, e, s, fmt="{:.2f}"):
        lines.append(
            f"| {label} | {fmt.format(np.nanmean(e))} ({fmt.format(np.nanmedian(e))}) "
            f"| {fmt.format(np.nanmean(s))} ({fmt.format(np.nanmedian(s))}) |"
        )

    row("FCT (s)", fct_e, fct_s, "{:.3f}")
    row("data segments sent", col(lambda r: r["le"]["sent"]), col(lambda r: r["sim"].data_pkts_sent), "{:.1f}")
    row("drops at the bottleneck", col(lambda r: r["le"]["drops"]), col(lambda r: r["sim"].drops))
    row("retransmissions", col(lambda r: r["emu"].retransmits), col(lambda r: r["sim"].retransmits))
    row("RTOs (TCP_INFO / simulator)", col(lambda r: r["emu"].timeouts), col(lambda r: r["sim"].timeouts))
    row(
        "RTOs inferred from the packets / trace",
        col(lambda r: r["le"]["rto_inferred"]),
        col(lambda r: r["ls"]["rto_trace"]),
    )
    row("fast-recovery entries", col(lambda r: r["le"]["fr"]), col(lambda r: r["ls"]["fr"]))
    row(
        "flight at the first loss episode (pkts)",
        col(lambda r: r["le"]["flight_at_first_loss"]),
        col(lambda r: r["ls"]["flight_at_first_loss"]),
        "{:.1f}",
    )
    row(
        "time of the first loss episode after start (s)",
        col(lambda r: r["le"]["t_first_loss"] - r["emu"].start_s),
        col(lambda r: r["ls"]["t_first_loss"] - r["sim"].start_s),
        "{:.3f}",
    )
    row(
        "drops in the first loss episode (Linux: first sends below its recovery point; "
        "simulator: holes of its first recovery, if it ended without an RTO)",
        col(lambda r: r["le"]["first_episode_drops"]),
        col(lambda r: r["ls"]["first_episode_drops"]),
    )
    fe = [x for r in rows for x in r["le"]["flight_at_fr"]]
    fs = [x for r in rows for x in r["ls"]["flight_at_fr"]]
    lines.append(
        f"| flight at each fast-recovery entry (pkts; all entries) | {np.mean(fe):.1f} ({np.median(fe):.1f}), "
        f"{len(fe)} | {np.mean(fs):.1f} ({np.median(fs):.1f}), {len(fs)} |"
    )
    row("largest flight (pkts)", col(lambda r: r["le"]["max_flight"]), col(lambda r: r["ls"]["max_flight"]), "{:.1f}")
    pe = [x for r in rows for x in r["le"]["per_ack"]]
    ps = [x for r in rows for x in r["ls"]["per_ack"]]
    lines.append(f"| new segments sent per ACK (share of ACKs) | {hist(pe)} | {hist(ps)} |")
    lines.append(f"| ACKs reaching the sender | {len(pe)} | {len(ps)} |")
    nb, bp, bd = (int(col(lambda r, k=k: r["le"][k]).sum()) for k in ("bursts", "burst_pkts", "burst_drops"))
    td = int(col(lambda r: r["le"]["drops"]).sum())
    lines.append(
        f"| ACKs followed by {BURST}+ segments (any, retransmissions included) | {nb} ({bp} segments, {bd} of them "
        f"dropped: {100 * bd / max(1, td):.0f}% of the flows' {td} drops) | - (not in the trace) |"
    )
    lines.append(
        f"| ACKs followed by {BURST}+ new segments | "
        f"{sum(1 for r in rows for x in r['le']['per_ack'] if x >= BURST)} "
        f"| {int(col(lambda r: r['ls']['new_bursts']).sum())} |"
    )
    ra_e, ri_e = (int(col(lambda r, k=k: r["le"][k]).sum()) for k in ("rec_acks", "rec_idle"))
    ra_s, ri_s = (int(col(lambda r, k=k: r["ls"][k]).sum()) for k in ("rec_acks", "rec_idle"))
    lines.append(
        f"| ACKs in recovery with unsent data left: releasing no new segment | {ri_e} of {ra_e} "
        f"({100 * ri_e / max(1, ra_e):.0f}%) | {ri_s} of {ra_s} ({100 * ri_s / max(1, ra_s):.0f}%) |"
    )
    nd_e = np.mean([r["emu"].drops == 0 for r in rows])
    nd_s = np.mean([r["sim"].drops == 0 for r in rows])
    lines.append(f"| flows without a drop | {nd_e:.2f} | {nd_s:.2f} |")
    lines.append(f"| per-flow FCT ratio Linux / simulator: median | {np.median(fct_e / fct_s):.3f} | |")
    lines += ["", "Per flow (Linux / simulator):", ""]
    lines.append("| flow | pkts | FCT (s) | sent | drops | retx | RTOs | FR entries | first-loss flight |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        e, s, le, ls = r["emu"], r["sim"], r["le"], r["ls"]
        lines.append(
            f"| {r['flow']} | {r['size']} | {e.fct_s:.2f} / {s.fct_s:.2f} | {le['sent']} / {int(s.data_pkts_sent)} "
            f"| {le['drops']} / {int(s.drops)} | {int(e.retransmits)} / {int(s.retransmits)} "
            f"| {int(e.timeouts)} / {int(s.timeouts)} | {le['fr']} / {ls['fr']} "
            f"| {le['flight_at_first_loss']:.0f} / {ls['flight_at_first_loss']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
