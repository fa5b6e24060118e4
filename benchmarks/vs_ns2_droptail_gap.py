#!/usr/bin/env python3
"""The drop-tail gap of docs/ns2.md ("Savanna loses more at a full drop-tail queue than
ns-2") per TCP setting, the figures behind that section's last two tables.

``perflow [LOADS] [SEED]``: the reference DropTail dumbbell (``vs_ns2.scenario``, 500 s),
flows of 101-1000 packets started after 50 s: median FCT, retransmissions and timeouts per
flow, share of flows with a timeout; Savanna with RFC 6582's recovery and RFC 5681's
ssthresh (``flight``), with ns-2's (``cwnd``), with ns-2's and IW 1 after a lost SYN
(``cwnd+iw1``), and as vs_ns2.py runs it (``as compared``: also ns-2.35's real halving and
recovery exit), and ns-2.35 (reused agents) on the same flows.

``mg``: Savanna alone on Matta & Guo's shared drop-tail (seed 1, 500 s), with
``ssthresh_base`` flight / cwnd and ``tick_s`` 0 / 0.5: bottleneck drops, timeouts, the
short flows' 99.9th percentile and the long share (vs_ns2.iso_stats); ns-2's figures for
the same sessions are in docs/ns2.md.

``patterns [N] [SEED] [KEY=VALUE ...]``: N random loss patterns of one flow (2-8 first transmissions lost
among the first 10-100 packets of a 20-300-packet flow, an otherwise lossless path), in
Savanna (``[[faults]]``) and ns-2.35 with ``precisionReduce_`` true (its default) and false
(the integer halving Savanna and the ns-2 of 2001 use). ns-2's list error model counts
packets leaving the queue, so each lost packet's index is read off ns-2's own trace of a
run with the earlier losses applied. Prints each pattern whose FCT (to 5 ms), retransmissions
or timeouts differ. Savanna runs as vs_ns2.py compares it (ns-2.35's NewReno: real halving,
its recovery exit); KEY=VALUE: Savanna [tcp] keys (as vs_ns2.py's --savanna-tcp), e.g.
``recovery_exit_cwnd= recovery_exit_increase= fast_retransmit_cwnd=`` for RFC 6582's.

``ab LOAD SEEDS DURATION``: the bottleneck drop rate of the reference DropTail dumbbell,
pooled over seeds, for Savanna as compared (``base``), with ns-2's tick rounding
(``tick_s = 0.001``) and with a 0.1 us longer minimum RTO (a perturbation that changes no
rule: the size of the run-to-run noise), and ns-2.35 with ``precisionReduce_`` true and
false, all on the same flows.

``retx [N] [SEED]``: N random loss patterns of the kinds ``patterns`` never makes, one flow
alone as there: a retransmission lost too (the first transmission and the next one or two
of a packet: timeouts, backoff, go-back-N), a second loss in the window after that
timeout, the flow's last packet (a tail loss), its first packet, its SYN (once or twice).
Compared with ns-2.35 as compared (``precisionReduce_`` true); prints each pattern that
differs (FCT to 5 ms, retransmissions, timeouts) and the count.

``kinds LOAD SEED DURATION``: where the extra drops go. The reference DropTail dumbbell,
one seed, Savanna as compared and ns-2.35 (its packet trace) on the same flows: the
bottleneck's arrivals and drops split by packet kind (SYN, data packet's first
transmission, retransmission), and per flow-size bucket the flows' retransmissions,
timeouts and needless retransmissions (retransmissions less data packets lost) per flow.
ns-2's kinds are read off its trace: a data packet is a retransmission when its sequence
number already crossed the queue since the agent's last SYN (agents are reused).
Savanna's come from flows.parquet (``syn_sent``, ``syn_drops``, ``drops``,
``retransmits``): its lost retransmissions are not counted apart, so only ns-2's split
of data drops into first transmissions and retransmissions is printed.

``synkeys QUEUE LOAD SEEDS``: what ``syn_timeout_slowdown`` and ``syn_backoff_kept`` do
to the bottleneck's drops (docs/ns2.md, stop 33). The reference dumbbell (``droptail`` or
``red``), seeds 1..SEEDS of 500 s, Savanna as compared (keys on), with both keys off, and
with an ITO 0.1 ms longer (a perturbation that changes no rule and touches only the flows
whose first timer fires: the size of the runs' parting), and ns-2.35, on the same flows:
drops per seed, and the flows that lost a SYN and their data drops in each Savanna run.

``faqsyn [LOADS] [SEEDS]``: the same two keys in FavorQueue 2013's load sweep (Savanna
alone, ``favorqueue-2013-fig03-10mbps.toml`` with its DropTail, 300 s, flows started after
50 s; loads 0.55,0.95 and seeds 1-2 by default), off and on: flows finished, mean and median
FCT, and the flows that lost a SYN with their mean FCT (docs/ns2.md, stop 33).

Usage: python3 benchmarks/vs_ns2_droptail_gap.py perflow 0.8,0.95 1 | mg | patterns 60 1
    | ab 0.95 10 500 | kinds 0.8 1 500 | synkeys red 0.5 10 | faqsyn 0.55,0.95 2
"""

from __future__ import annotations

import copy
import random
import statistics
import sys
import tempfile
from pathlib import Path

import vs_ns2 as V

# RFC 6582's recovery (vs_ns2.py's scenario sets ns-2.35's exit and halving; None removes
# a key, giving the default).
RFC_EXIT = {"fast_retransmit_cwnd": None, "recovery_exit_cwnd": None, "recovery_exit_increase": None}
SV = {
    "flight": {"ssthresh_base": "flight", "iw_after_syn_loss": None, **RFC_EXIT},
    "cwnd": {"ssthresh_base": "cwnd", "iw_after_syn_loss": None, **RFC_EXIT},
    "cwnd+iw1": {"ssthresh_base": "cwnd", "iw_after_syn_loss": 1, **RFC_EXIT},
    "as compared": {},
}


def bucket(df) -> str:
    d = df[(df["start_s"] >= 50.0) & df["size_pkts"].between(101, 1000) & df["fct_s"].notna()]
    to = d["timeouts"]
    return (
        f"{len(d)} flows, median {d['fct_s'].median():.3f} s, {d['retransmits'].mean():.1f} retransmissions, "
        f"{to.mean():.2f} timeouts per flow, {100 * (to > 0).mean():.1f}% with a timeout"
    )


def savanna_variants(sc: dict, variants: dict, tmp: Path, tag: str):
    """Savanna on `sc` under each set of `[tcp]` overrides in `variants` (name -> keys), in
    order, into `tmp/sv-TAG-I`: yields (name, summary, flows); no override is left set after."""
    try:
        for i, (name, over) in enumerate(variants.items()):
            V.SAVANNA_TCP.clear()
            V.SAVANNA_TCP.update(over)
            _, _, summ, fl = V.run_savanna(sc, tmp / f"sv-{tag}-{i}")
            yield name, summ, fl
    finally:
        V.SAVANNA_TCP.clear()


def perflow(tmp: Path, loads: list[float], seed: int) -> None:
    ns = V.ensure_ns()
    for load in loads:
        sc = V.scenario("dumbbell-droptail.toml", load, seed, 500.0, True)
        first = None
        for name, _, fl in savanna_variants(sc, SV, tmp, str(load)):
            first = fl if first is None else first
            print(f"load {load} Savanna {name}: {bucket(fl)}", flush=True)
        _, _, _, res = V.run_ns2(ns, sc, first, tmp / f"ns-{load}.csv", "reuse", True, False)
        print(f"load {load} ns-2: {bucket(res)}", flush=True)


def mg(tmp: Path) -> None:
    from savanna.reproduce import matta_guo_2000 as m

    for base in ("flight", "cwnd"):
        for tick in (0.0, 0.5):
            sc = m.iso_scenario("droptail", 1, 500.0)
            sc.pop("sampling", None)
            sc.pop("trace", None)
            sc["tcp"].update({"ssthresh_base": base, "tick_s": tick})
            _, _, summ, fl = V.run_savanna(sc, tmp / f"mg-{base}-{tick}")
            q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
            st = V.iso_stats(fl.rename(columns={"delivered_pkts": "delivered"}), 20.0, 250.0)
            print(
                f"ssthresh_base {base}, tick_s {tick}: {q['dropped']} drops, {int(fl['timeouts'].sum())} timeouts, "
                f"short p99.9 {st['short_p999']:.1f} s, long share {st['long_share']:.1f}%",
                flush=True,
            )


def one_flow_losses(ns: str, tmp: Path, size: int, lost: list[int], ns_extra=()):
    """One flow of `size` packets alone on the dumbbell (a 1000-packet buffer), the first
    transmissions of data packets `lost` (from 0) lost at the bottleneck in both
    simulators; returns Savanna's and ns-2's flow rows. ns-2's ErrorModel/List counts
    packets leaving the bottleneck queue: each loss's index is the position of that data
    packet's first departure (sequence number k + 1, after the SYN) in ns-2's trace of the
    run with the earlier losses applied."""
    sc = V.scenario("dumbbell-droptail.toml", 0.5, 1, 60.0, True)
    sc["traffic"] = [
        {"type": "flows", "name": "one", "flows": [{"start_s": 1.0, "size_pkts": size, "src": "src0", "dst": "dst0"}]}
    ]
    sc["faults"] = [{"link": "bottleneck", "flow": 0, "kind": "data", "seq": k} for k in lost]
    sc["topology"]["bottleneck_queue"] = {"type": "droptail", "limit_pkts": 1000}
    _, _, _, fl = V.run_savanna(sc, tmp / "sv")
    trace = tmp / "ns.tr"
    index: list[int] = []
    for k in [*lost, None]:
        extra = [f"drops={','.join(map(str, index))}", f"trace={trace}", *ns_extra]
        _, _, _, res = V.run_ns2(ns, sc, fl.assign(src="src0"), tmp / "ns.csv", "reuse", True, False, extra=extra)
        if k is None:
            break
        departures = [int(f[10]) for f in map(str.split, trace.open()) if f[0] == "-" and f[2:4] == ["0", "1"]]
        index.append(departures.index(k + 1))
    return fl.iloc[0], res.iloc[0]


def patterns(tmp: Path, n: int, seed: int) -> None:
    ns = V.ensure_ns()
    rng = random.Random(seed)
    differ = {"true": 0, "false": 0}
    for i in range(n):
        size = rng.choice([20, 30, 50, 80, 120, 200, 300])
        span = min(size, rng.choice([10, 20, 40, 60, 100]))
        lost = sorted(rng.sample(range(span), rng.randint(2, min(8, span))))
        for pr in differ:
            d = tmp / f"p{i}-{pr}"
            d.mkdir()
            a, b = one_flow_losses(ns, d, size, lost, [f"precision_reduce={pr}"])
            if abs(a["fct_s"] - b["fct_s"]) > 5e-3 or (a["retransmits"], a["timeouts"]) != (
                b["retransmits"],
                b["timeouts"],
            ):
                differ[pr] += 1
                print(
                    f"precisionReduce_ {pr}: {size} packets, lost {lost}: Savanna {a['fct_s']:.4f} s, "
                    f"{a['retransmits']} retransmissions, {a['timeouts']} timeouts; ns-2 {b['fct_s']:.4f} s, "
                    f"{int(b['retransmits'])}, {int(b['timeouts'])}",
                    flush=True,
                )
    print(f"{n} patterns: differ with precisionReduce_ true {differ['true']}, false {differ['false']}")


def one_flow_faults(ns: str, tmp: Path, size: int, lost: list[tuple[str, int, int]]):
    """One flow of `size` packets alone on the dumbbell (a 1000-packet buffer), losing at
    the bottleneck the `occ`-th transmission of each (kind, seq, occ) of `lost`: kind
    "data" (seq from 0) or "syn". ns-2's list error model counts departures from the
    bottleneck queue, so each loss's index is read off ns-2's trace of a run with the
    losses found so far applied, taking the earliest departure not yet lost."""
    sc = V.scenario("dumbbell-droptail.toml", 0.5, 1, 60.0, True)
    sc["traffic"] = [
        {"type": "flows", "name": "one", "flows": [{"start_s": 1.0, "size_pkts": size, "src": "src0", "dst": "dst0"}]}
    ]
    sc["faults"] = [{"link": "bottleneck", "flow": 0, "kind": k, "seq": q, "occurrence": o} for k, q, o in lost]
    sc["topology"]["bottleneck_queue"] = {"type": "droptail", "limit_pkts": 1000}
    _, _, _, fl = V.run_savanna(sc, tmp / "sv")
    trace = tmp / "ns.tr"
    index: list[int] = []
    left = list(lost)
    while True:
        extra = [f"drops={','.join(map(str, sorted(index)))}", f"trace={trace}"]
        _, _, _, res = V.run_ns2(ns, sc, fl.assign(src="src0"), tmp / "ns.csv", "reuse", True, False, extra=extra)
        if not left:
            break
        deps = [int(f[10]) for f in map(str.split, trace.open()) if f[0] == "-" and f[2:4] == ["0", "1"]]
        found = []
        for k, q, o in left:
            seq = 0 if k == "syn" else q + 1  # with syn_, data packet k is ns-2's seqno k + 1
            at = [i for i, d in enumerate(deps) if d == seq]
            if len(at) >= o:
                found.append((at[o - 1], (k, q, o)))
        if not found:
            raise SystemExit(f"ns-2 never sends the losses {left} (size {size}, lost {lost})")
        i, loss = min(found)
        index.append(i)
        left.remove(loss)
    return fl.iloc[0], res.iloc[0]


def retx_pattern(rng: random.Random) -> tuple[int, list[tuple[str, int, int]]]:
    size = rng.choice([5, 10, 20, 30, 50, 100, 200])
    kind = rng.choice(["retx", "retx2", "retx+window", "tail", "first", "syn", "syn2", "mixed"])
    k = rng.randrange(min(size, 40))
    if kind == "retx":
        return size, [("data", k, 1), ("data", k, 2)]
    if kind == "retx2":
        return size, [("data", k, 1), ("data", k, 2), ("data", k, 3)]
    if kind == "retx+window":
        j = rng.randrange(k + 1, k + 2 + min(size - k - 1, 10)) if k + 1 < size else k
        more = [("data", j, 1)] if j != k else []
        return size, [("data", k, 1), ("data", k, 2), *more]
    if kind == "tail":
        return size, [("data", size - 1, 1), *([("data", size - 1, 2)] if rng.random() < 0.3 else [])]
    if kind == "first":
        return size, [("data", 0, 1), *([("data", 1, 1)] if rng.random() < 0.5 else [])]
    if kind == "syn":
        return size, [("syn", 0, 1), *([("data", k, 1)] if rng.random() < 0.5 else [])]
    if kind == "syn2":
        return size, [("syn", 0, 1), ("syn", 0, 2)]
    # mixed: 2-4 first transmissions lost, one of them twice
    ks = sorted(rng.sample(range(min(size, 40)), min(size, rng.randint(2, 4))))
    return size, [*(("data", x, 1) for x in ks), ("data", rng.choice(ks), 2)]


def retx(tmp: Path, n: int, seed: int) -> None:
    ns = V.ensure_ns()
    rng = random.Random(seed)
    differ = 0
    for i in range(n):
        size, lost = retx_pattern(rng)
        d = tmp / f"r{i}"
        d.mkdir()
        a, b = one_flow_faults(ns, d, size, lost)
        same = abs(a["fct_s"] - b["fct_s"]) <= 5e-3 and (a["retransmits"], a["timeouts"]) == (
            b["retransmits"] - sum(1 for x in lost if x[0] == "syn"),  # ns-2 counts SYNs sent again
            b["timeouts"],
        )
        differ += not same
        print(
            f"{'DIFFER ' if not same else ''}{size} packets, lost {lost}: Savanna {a['fct_s']:.4f} s, "
            f"{a['retransmits']} retransmissions, {a['timeouts']} timeouts; ns-2 {b['fct_s']:.4f} s, "
            f"{int(b['retransmits'])}, {int(b['timeouts'])}",
            flush=True,
        )
    print(f"{n} patterns: {differ} differ")


SV_AB = {"base": {}, "tick_s 0.001": {"tick_s": 0.001}, "min RTO + 0.1 us": {"min_rto_s": 0.2000001}}
NS_AB = {"precisionReduce_ true": [], "precisionReduce_ false": ["precision_reduce=false"]}


def ab(tmp: Path, load: float, nseeds: int, dur: float) -> None:
    ns = V.ensure_ns()
    tot: dict[str, list[int]] = {}
    for seed in range(1, nseeds + 1):
        sc = V.scenario("dumbbell-droptail.toml", load, seed, dur, True)
        first = None
        for name, over in SV_AB.items():
            s2 = copy.deepcopy(sc)
            s2["tcp"].update(over)
            _, _, summ, fl = V.run_savanna(s2, tmp / f"sv-{len(tot)}-{seed}")
            first = fl if first is None else first
            q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
            t = tot.setdefault(f"Savanna {name}", [0, 0])
            t[0], t[1] = t[0] + q["arrivals"], t[1] + q["dropped"]
        for name, extra in NS_AB.items():
            _, _, s, _ = V.run_ns2(
                ns, sc, first, tmp / f"ns-{seed}-{len(extra)}.csv", "reuse", True, False, extra=extra
            )
            t = tot.setdefault(f"ns-2 {name}", [0, 0])
            t[0], t[1] = t[0] + s["bottleneck"]["arrivals"], t[1] + s["bottleneck"]["dropped"]
        print(f"seed {seed} done", flush=True)
    ref = tot["ns-2 precisionReduce_ true"]
    for k, (arr, drop) in tot.items():
        print(
            f"load {load}, {nseeds} seeds of {dur:g} s, {k}: drop rate {drop / arr:.5f} "
            f"({(drop / arr) / (ref[1] / ref[0]) - 1:+.1%} against ns-2 as compared)"
        )


def ns2_kinds(trace: Path) -> dict[str, list[int]]:
    """Arrivals and drops at ns-2's forward bottleneck queue (node 0 to 1) by kind. The
    trace lists each arrival (`+`) before its drop (`d`), so a drop takes its arrival's kind."""
    seen: dict[str, set[int]] = {}
    last: dict[tuple[str, int], str] = {}
    out = {k: [0, 0] for k in ("SYN", "first transmission", "retransmission")}
    with trace.open() as f:
        for line in f:
            x = line.split()
            if x[0] not in ("+", "d") or x[2:4] != ["0", "1"]:
                continue
            key = (x[8], int(x[10]))
            if x[0] == "+":
                if x[5] == "40":  # with syn_ the only 40-byte packet forward is the SYN
                    kind = "SYN"
                    seen[x[8]] = set()
                else:
                    s = seen.setdefault(x[8], set())
                    kind = "retransmission" if key[1] in s else "first transmission"
                    s.add(key[1])
                last[key] = kind
                out[kind][0] += 1
            else:
                out[last[key]][1] += 1
    return out


def ns2_queue_at(trace: Path, times) -> list[int]:
    """Packets waiting in ns-2's forward bottleneck queue at each instant of `times`
    (sorted): arrivals less drops less departures to the link, events before the instant."""
    out, n, i = [], 0, 0
    with trace.open() as f:
        for line in f:
            x = line.split()
            if x[2:4] != ["0", "1"] or x[0] not in ("+", "-", "d"):
                continue
            t = float(x[1])
            while i < len(times) and times[i] <= t:
                out.append(n)
                i += 1
            n += 1 if x[0] == "+" else -1
    out.extend([n] * (len(times) - i))
    return out


def kinds(tmp: Path, load: float, seed: int, dur: float) -> None:
    ns = V.ensure_ns()
    sc = V.scenario("dumbbell-droptail.toml", load, seed, dur, True)
    # Queue samples every millisecond (sampling changes no packet's fate).
    sc["sampling"] = {"interval_s": 0.001, "queues": ["bottleneck"], "goodput_interval_s": 0}
    _, _, summ, fl = V.run_savanna(sc, tmp / "sv")
    trace = tmp / "ns.tr"
    _, _, s, res = V.run_ns2(ns, sc, fl, tmp / "ns.csv", "reuse", True, False, extra=[f"trace={trace}"])
    q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
    k = ns2_kinds(trace)
    syn_sv = (int(fl["syn_sent"].sum()), int(fl["syn_drops"].sum()))
    first_sv = int(fl["data_pkts_sent"].sum() - fl["retransmits"].sum())
    print(f"load {load}, seed {seed}, {dur:g} s, forward bottleneck: arrivals, drops, drop rate")
    print(f"  Savanna: {q['arrivals']} arrivals, {q['dropped']} drops ({q['dropped'] / q['arrivals']:.5f})")
    b = s["bottleneck"]
    print(f"  ns-2.35: {b['arrivals']} arrivals, {b['dropped']} drops ({b['dropped'] / b['arrivals']:.5f})")
    print(f"  SYN: Savanna {syn_sv[0]} sent, {syn_sv[1]} lost; ns-2 {k['SYN'][0]} sent, {k['SYN'][1]} lost")
    print(
        f"  data, first transmissions: Savanna {first_sv} sent; ns-2 {k['first transmission'][0]} sent, "
        f"{k['first transmission'][1]} lost"
    )
    print(
        f"  data, retransmissions: Savanna {int(fl['retransmits'].sum())} sent; ns-2 "
        f"{k['retransmission'][0]} sent, {k['retransmission'][1]} lost"
    )
    print(
        f"  data lost (all): Savanna {int(fl['drops'].sum())}; "
        f"ns-2 {k['first transmission'][1] + k['retransmission'][1]}"
    )
    import pandas as pd

    qs = pd.read_parquet(tmp / "sv" / "queues.parquet")
    qs = qs[(qs["queue"] == "left->right") & (qs["t_s"] < dur)]
    nq = pd.Series(ns2_queue_at(trace, list(qs["t_s"])))
    lim = sc["topology"]["bottleneck_queue"]["limit_pkts"]
    for who, ln in (("Savanna", qs["len_pkts"].reset_index(drop=True)), ("ns-2", nq)):
        print(
            f"  {who}: queue sampled every 1 ms: mean {ln.mean():.3f} packets waiting, full ({lim}) "
            f"{(ln >= lim).mean():.4f}, {lim - 1}+ {(ln >= lim - 1).mean():.4f}, empty {(ln == 0).mean():.4f}"
        )
    done_sv = fl[fl["fct_s"].notna()]
    print("  finished flows by size: flows; retransmissions, timeouts, share with a timeout per flow (Sv / ns-2)")
    for lo, hi in V.BUCKETS:
        a = done_sv[done_sv["size_pkts"].between(lo, hi)]
        r = res[res["size_pkts"].between(lo, hi)]
        if len(a) == 0 or len(r) == 0:
            continue
        print(
            f"    {V.bucket_name(lo, hi)}: {len(a)} / {len(r)}; {a['retransmits'].mean():.3f} / "
            f"{r['retransmits'].mean():.3f}, {a['timeouts'].mean():.3f} / {r['timeouts'].mean():.3f}, "
            f"{(a['timeouts'] > 0).mean():.3f} / {(r['timeouts'] > 0).mean():.3f}; "
            f"needless (Sv) {(a['retransmits'] - a['drops']).mean():.3f}"
        )


SV_SYNKEYS = {
    "on": {},
    "off": {"syn_timeout_slowdown": None, "syn_backoff_kept": None},
    "on, ITO + 0.1 ms": {"ito_s": 3.0001},
}


def synkeys(tmp: Path, queue: str, load: float, nseeds: int) -> None:
    ns = V.ensure_ns()
    drops: dict[str, list[int]] = {}
    arrivals: dict[str, int] = {}
    syn: dict[str, list[int]] = {}
    for seed in range(1, nseeds + 1):
        sc = V.scenario(f"dumbbell-{queue}.toml", load, seed, 500.0, True)
        first = None
        for name, summ, fl in savanna_variants(sc, SV_SYNKEYS, tmp, str(seed)):
            first = fl if first is None else first
            q = [q for q in summ["queues"] if q["name"] == "left->right"][0]
            drops.setdefault(name, []).append(q["dropped"])
            arrivals[name] = arrivals.get(name, 0) + q["arrivals"]
            lost = fl[fl["syn_drops"] > 0]
            t = syn.setdefault(name, [0, 0])
            t[0], t[1] = t[0] + len(lost), t[1] + int(lost["drops"].sum())
        _, _, s, _ = V.run_ns2(ns, sc, first, tmp / f"ns-{seed}.csv", "reuse", True, False)
        drops.setdefault("ns-2", []).append(s["bottleneck"]["dropped"])
        arrivals["ns-2"] = arrivals.get("ns-2", 0) + s["bottleneck"]["arrivals"]
        print(f"seed {seed}: " + ", ".join(f"{k} {v[-1]}" for k, v in drops.items()), flush=True)
    on = drops["on"]
    for name, d in drops.items():
        line = f"{queue} {load}, {nseeds} seeds: {name}: {sum(d)} drops, drop rate {sum(d) / arrivals[name]:.5f}"
        if name != "on":
            per = [b / a - 1 for a, b in zip(on, d)]
            line += f"; per seed against 'on' {min(per):+.1%} to {max(per):+.1%} (SD {statistics.stdev(per):.1%})"
        if name in syn:
            line += f"; {syn[name][0]} flows lost a SYN, {syn[name][1]} data drops in them"
        print(line)
    per = [a / b - 1 for a, b in zip(on, drops["ns-2"])]
    print(f"'on' against ns-2 per seed: {min(per):+.1%} to {max(per):+.1%} (SD {statistics.stdev(per):.1%})")


def faqsyn(loads: list[float], nseeds: int) -> None:
    import savanna

    scdir = V.ROOT / "scenarios"
    base = V.tomllib.loads((scdir / "favorqueue-2013-fig03-10mbps.toml").read_text())
    for load in loads:
        for seed in range(1, nseeds + 1):
            out = []
            for on in (False, True):
                sc = copy.deepcopy(base)
                sc.update(seed=seed, duration_s=300.0)
                sc.pop("sampling", None)
                for t in sc["traffic"]:
                    t["size"]["file"] = str(scdir / t["size"]["file"])
                    if t["name"] == "forward":
                        t["load"] = load
                if on:
                    sc["tcp"].update(syn_timeout_slowdown=True, syn_backoff_kept=True)
                f = savanna.run(sc).flows
                out.append(f[(f["start_s"] >= 50.0) & f["fct_s"].notna()])
            a, b = out
            sa, sb = a[a["syn_drops"] > 0], b[b["syn_drops"] > 0]
            ma, mb = a["fct_s"].mean(), b["fct_s"].mean()
            print(
                f"load {load} seed {seed}, keys off / on: {len(a)} / {len(b)} flows, mean FCT "
                f"{ma:.4f} / {mb:.4f} s ({mb / ma - 1:+.2%}), "
                f"median {a['fct_s'].median():.4f} / {b['fct_s'].median():.4f} s; flows that lost a SYN "
                f"{len(sa)} / {len(sb)}, their mean FCT {sa['fct_s'].mean():.3f} / {sb['fct_s'].mean():.3f} s",
                flush=True,
            )


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in (
        "perflow",
        "mg",
        "patterns",
        "ab",
        "kinds",
        "retx",
        "synkeys",
        "faqsyn",
    ):
        raise SystemExit(__doc__)
    tmp = Path(tempfile.mkdtemp(prefix="savanna-droptail-gap-"))
    a = sys.argv[2:]
    if sys.argv[1] == "perflow":
        loads = [float(x) for x in (a[0] if a else "0.8,0.95").split(",")]
        perflow(tmp, loads, int(a[1]) if len(a) > 1 else 1)
    elif sys.argv[1] == "patterns":
        V.SAVANNA_TCP.update(V.parse_tcp_override(x) for x in a[2:])
        patterns(tmp, int(a[0]) if a else 60, int(a[1]) if len(a) > 1 else 1)
    elif sys.argv[1] == "ab":
        ab(tmp, float(a[0]) if a else 0.95, int(a[1]) if len(a) > 1 else 10, float(a[2]) if len(a) > 2 else 500.0)
    elif sys.argv[1] == "retx":
        retx(tmp, int(a[0]) if a else 40, int(a[1]) if len(a) > 1 else 1)
    elif sys.argv[1] == "synkeys":
        synkeys(tmp, a[0] if a else "red", float(a[1]) if len(a) > 1 else 0.5, int(a[2]) if len(a) > 2 else 10)
    elif sys.argv[1] == "faqsyn":
        faqsyn([float(x) for x in (a[0] if a else "0.55,0.95").split(",")], int(a[1]) if len(a) > 1 else 2)
    elif sys.argv[1] == "kinds":
        kinds(tmp, float(a[0]) if a else 0.8, int(a[1]) if len(a) > 1 else 1, float(a[2]) if len(a) > 2 else 500.0)
    else:
        mg(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
