"""The tournament's emulated column (issue 22): the Pareto workload at 10 Mb/s run by
``savanna emulate`` with real Linux senders (CUBIC with SACK, RACK-TLP, F-RTO and Linux's
delayed ACKs and pacing: the ``linux`` column's scenario as ``benchmarks/vs_linux.py --stack
cubic-sack`` maps it), beside the simulated ``linux`` column on the same flows.

Optional: it runs only when asked for (``SAVANNA_TOURNAMENT_EMULATE=1``) and as root
(namespaces and TUN devices); otherwise ``status`` says why and the report says so. CI never
sets the variable. Emulation is wall-clock time, so the column is small (``EmuPlan``): loads
0.5 and 0.9 (the simulated columns' claim loads), 60 s per run, one seed, two emulations at
once (each in its own process: ``savanna emulate`` names its namespaces after its pid). Every
run's router accuracy is kept; a run that missed the router's targets is flagged degraded
(``degraded``, the rule of vs_linux.py) and the claims say how many were.

The simulated twin of each emulated run is the same scenario (same seed, 60 s) through
``savanna run``: the same flows on both sides, so the gains over DropTail are paired.

Claims (``CLAIMS``) are declared here before any emulated run, judged by the rule of
docs/reproduce.md (section Tournament).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from savanna.reproduce import tournament as T
from savanna.reproduce.common import Context, Report, scenario_digest, scenarios_dir, seeds

ENV = "SAVANNA_TOURNAMENT_EMULATE"  # "1": run the emulated column (root only)
ENV_PARALLEL = "SAVANNA_TOURNAMENT_EMULATE_PARALLEL"  # emulations at once (default 2)
WORKLOAD = "pareto"
EMU = "emulated"  # the column's name in the metrics' ``tcp`` column
SIM = "linux"  # its simulated twin (the linux profile, same scenario)
EMU_NAME = "emulated: Linux cubic + SACK (savanna emulate)"
SIM_NAME = "simulated: linux profile, same flows (60 s)"

# Disciplines the emulated column cannot run, and why (docs/emulate.md; the kernel's
# congestion controls are /proc/sys/net/ipv4/tcp_available_congestion_control).
_NO_SIZE_WHY = (
    "its tagger is the remaining-size classifier, which emulate refuses: the router sees packets, not each "
    "flow's size (the first run of this column, before emulate refused it, served their data in arrival order)"
)
REFUSED = {
    "drr": "its edge classifier is Matta & Guo's size oracle, which emulate refuses (the router cannot see a "
    "flow's true size)",
    "pfabric": _NO_SIZE_WHY,
    "sppifo": _NO_SIZE_WHY,
    "aifo": _NO_SIZE_WHY,
    "step": "runs only in the DCTCP column: the kernel here offers reno, cubic and bbr, no dctcp module",
}
COLUMNS_NOT_RUN = (
    "Not emulated: the papers' column (ns-2 NewReno with a 3 s initial timeout: Linux's is fixed at 1 s, "
    "and Linux has no NewReno without PRR), the DCTCP column (no dctcp module on this kernel; DualPI2's ECT(1) "
    "senders: the kernel's mark ECT(0), emulate refuses ect1), the web mix "
    "(emulate has no web sessions) and web search (10 Gb/s and 10 us RTTs are beyond one router thread, "
    "docs/emulate.md: about half a core at 100 Mb/s)."
)
DISCS = [d for d in T.DISCS if d not in REFUSED and "linux" in T.tcps_for(d, WORKLOAD)]


@dataclass(frozen=True)
class EmuPlan:
    loads: tuple[float, ...] = (0.5, T.HI_PARETO)
    duration_s: float = 60.0
    warmup_s: float = 10.0
    reps: int = 1
    parallel: int = 2


def plan(env: Mapping[str, str] | None = None) -> EmuPlan:
    env = os.environ if env is None else env
    return EmuPlan(parallel=max(1, int(env.get(ENV_PARALLEL, "2"))))


def status(env: Mapping[str, str] | None = None, euid: int | None = None) -> tuple[bool, str]:
    """Whether the emulated column runs, and if not, why (one sentence for the report)."""
    env = os.environ if env is None else env
    euid = os.geteuid() if euid is None else euid
    if env.get(ENV, "").strip().lower() not in ("1", "yes", "true"):
        return False, f"not asked for: it runs only with {ENV}=1, as root (savanna emulate, wall-clock time)"
    if euid != 0:
        return False, f"{ENV}=1 was set but the run is not root: savanna emulate needs root (namespaces, TUN devices)"
    from savanna._core import ScenarioError
    from savanna.emulate import check_host

    try:
        check_host()
    except ScenarioError as e:
        return False, f"{ENV}=1 was set but this host cannot emulate: {e}"
    return True, ""


def degraded(acc: Mapping) -> bool:
    """benchmarks/vs_linux.py's rule: the router missed its own targets (achieved over
    configured rate below 0.99, or p99 delivery lateness above 200 us), so the run's drops
    and FCTs are not Linux's alone."""
    ratio = acc.get("achieved_over_configured")
    p99 = (acc.get("delivery_lateness") or {}).get("p99_us")
    return (ratio is not None and ratio < 0.99) or (p99 is not None and p99 > 200)


def scenario(disc: str, load: float, seed: int, duration_s: float) -> dict:
    """The emulated run's scenario: the tournament's linux-column Pareto run, unchanged."""
    if disc not in DISCS:
        raise ValueError(f"discipline {disc!r} is not in the emulated column ({REFUSED.get(disc, 'unknown')})")
    return T.scenario(WORKLOAD, disc, load, SIM, seed, duration_s)


# ---------------------------------------------------------------------------------------
# Claims: declared before the first emulated run (stop 26, this session).


def _claims():
    from savanna.report import ClaimSpec as C

    ours = "declared before the emulated runs"
    hp = f"Pareto load {T.HI_PARETO:g}, emulated (Linux cubic + SACK)"
    sd = "short-flow mean slowdown"
    src = "Table emulated column"

    def c(id, text, unit="%", reference=0.0, direction=">"):
        return C(id, text, None, unit, ours, direction=direction, reference=reference, source=src)

    signed = (
        "gain over DropTail ({what}, reduction %) times the sign of the simulated linux column's gain on the same "
        "flows: positive when emulation and simulation agree on the sign"
    )
    return [
        c("emu-favorqueue", f"{hp}: FavorQueue's {sd} below DropTail's (reduction, %)"),
        c("emu-favorqueue-sign", f"{hp}: FavorQueue's " + signed.format(what=sd)),
        c("emu-las-sign", f"{hp}: LAS's " + signed.format(what="short-flow p99 slowdown")),
        c("emu-rio-sign", f"{hp}: RIO-PS's " + signed.format(what=sd)),
        c(
            "emu-signs",
            f"{hp}: of the emulated disciplines other than DropTail, the share whose gain over DropTail ({sd}) has "
            "the sign the simulated linux column gives on the same flows is above 70%",
            reference=70.0,
        ),
        c(
            "emu-rank",
            f"{hp}: the disciplines' {sd}, emulated against simulated (same flows), rank alike: Spearman's rank "
            "correlation above 0.5",
            unit="rho",
            reference=0.5,
        ),
    ]


CLAIMS = _claims()


# ---------------------------------------------------------------------------------------
# Runs


def _emulate_one(sc: dict, out: str, base_dir: str) -> dict:
    """One emulation in this (worker) process; returns its summary."""
    import savanna

    t0, before = time.monotonic(), os.getloadavg()[0]
    res = savanna.emulate(sc, out, base_dir=base_dir, progress=False)
    return {"summary": res.summary, "wall_s": time.monotonic() - t0, "load_avg": os.getloadavg()[0]} | {
        "load_avg_before": before
    }


@dataclass
class EmuRun:
    params: dict
    out: Path
    accuracy: dict = field(default_factory=dict)
    wall_s: float = math.nan
    load_avg_before: float = math.nan
    load_avg_after: float = math.nan


def run_emulations(ctx: Context, p: EmuPlan) -> list[EmuRun]:
    """Emulate every (discipline, load, seed) of the column, ``p.parallel`` at once, into
    OUT/runs/emulated/<id>/; a run whose directory holds the same scenario's finished
    outputs is reused (so an interrupted column resumes)."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    root = ctx.out_dir / "runs" / EMU
    root.mkdir(parents=True, exist_ok=True)
    base = scenarios_dir()
    todo, runs = [], []
    for load in p.loads:
        for d in DISCS:
            for seed in seeds(p.reps):
                sc = scenario(d, load, seed, p.duration_s)
                dig = scenario_digest(sc, base)
                params = {"disc": d, "load": float(load), "tcp": EMU, "seed": seed}
                out = root / f"{d}-load{load:g}-seed{seed}-{dig}"
                r = EmuRun(params, out)
                runs.append(r)
                meta = out / "tournament_emu.json"
                if meta.is_file() and (out / "flows.parquet").is_file():
                    m = json.loads(meta.read_text())
                    r.accuracy, r.wall_s = m["accuracy"], m["wall_s"]
                    r.load_avg_before, r.load_avg_after = m["load_avg_before"], m["load_avg_after"]
                else:
                    todo.append((r, sc))
    ctx.log(f"{EMU}: {len(runs)} runs, {len(runs) - len(todo)} reused, {p.parallel} at once")
    t0 = time.monotonic()
    with ProcessPoolExecutor(max_workers=p.parallel, mp_context=get_context("spawn")) as ex:
        futs = {}
        for r, sc in todo:
            futs[ex.submit(_emulate_one, sc, str(r.out), str(base))] = r
        for i, f in enumerate(as_completed(futs), 1):
            r = futs[f]
            res = f.result()
            r.accuracy, r.wall_s, r.load_avg_after = res["summary"]["accuracy"], res["wall_s"], res["load_avg"]
            r.load_avg_before = res["load_avg_before"]
            meta = {**r.params, "accuracy": r.accuracy, "wall_s": r.wall_s}
            meta |= {"load_avg_before": r.load_avg_before, "load_avg_after": r.load_avg_after}
            (r.out / "tournament_emu.json").write_text(json.dumps(meta, indent=1, default=str))
            ctx.log(
                f"{EMU}: {i}/{len(todo)} {r.params['disc']} load {r.params['load']:g} done "
                f"(rate {r.accuracy.get('achieved_over_configured')}, p99 "
                f"{(r.accuracy.get('delivery_lateness') or {}).get('p99_us')} us"
                f"{', DEGRADED' if degraded(r.accuracy) else ''}; {time.monotonic() - t0:.0f} s)"
            )
    return runs


class DirBatch:
    """A ``Batch`` over run directories (emulate's outputs) for tournament.run_metrics and
    bucket_metrics: each run's parquet files with its parameters as columns, in DuckDB."""

    def __init__(self, runs: Sequence[tuple[Mapping, Path]]):
        self.runs = list(runs)

    def query(self, sql_select: str, table: str = "flows", where: str = "", group_by: str = "") -> pd.DataFrame:
        import duckdb

        parts = []
        for prm, d in self.runs:
            f = str(Path(d) / f"{table}.parquet").replace("'", "''")
            parts.append(
                f"SELECT *, '{prm['disc']}' AS disc, {float(prm['load'])!r} AS load, '{prm['tcp']}' AS tcp, "
                f"{int(prm['seed'])} AS seed FROM read_parquet('{f}')"
            )
        src = " UNION ALL BY NAME ".join(parts)
        cond = f" WHERE {where}" if where else ""
        group = f" GROUP BY {group_by} ORDER BY {group_by}" if group_by else ""
        con = duckdb.connect()
        try:
            con.execute("SET threads TO 1")
            return con.execute(f"SELECT {sql_select} FROM ({src}){cond}{group}").df()
        finally:
            con.close()


@dataclass
class Emulated:
    """The column's per-run metrics (``tcp`` = EMU, and SIM for the simulated twins), per
    bucket slowdowns, and per emulated run its accuracy."""

    plan: EmuPlan
    metrics: pd.DataFrame
    buckets: pd.DataFrame
    accuracy: pd.DataFrame


def run(ctx: Context, p: EmuPlan | None = None) -> Emulated:
    """Emulate the column, simulate its twins, and measure both."""
    p = p or plan()
    runs = run_emulations(ctx, p)
    sc0 = T.base_scenario(WORKLOAD)
    jobs = [
        ctx.job(
            f"{EMU}_sim",
            scenario(r.params["disc"], r.params["load"], r.params["seed"], p.duration_s),
            {**r.params, "tcp": SIM},
        )
        for r in runs
    ]
    sim = ctx.run(f"{EMU}_sim", jobs)
    emu = DirBatch([(r.params, r.out) for r in runs])
    m = pd.concat([T.run_metrics(b, WORKLOAD, p.duration_s, p.warmup_s, sc0) for b in (sim, emu)], ignore_index=True)
    b = pd.concat([T.bucket_metrics(x, WORKLOAD, p.duration_s, p.warmup_s, sc0) for x in (sim, emu)], ignore_index=True)
    acc = pd.DataFrame([accuracy_row(r) for r in runs])
    return Emulated(p, m, b, acc)


def accuracy_row(r: EmuRun) -> dict:
    a = r.accuracy or {}
    d = a.get("delivery_lateness") or {}
    g = a.get("generator_lag") or {}
    return {
        **{k: r.params[k] for k in ("disc", "load", "seed")},
        "achieved_over_configured": a.get("achieved_over_configured"),
        "lateness_p99_us": d.get("p99_us"),
        "lateness_max_us": d.get("max_us"),
        "router_cpu": a.get("cpu_fraction"),
        "write_lag_p99_us": g.get("write_p99_us"),
        "read_lag_p99_us": g.get("read_p99_us"),
        "wall_s": r.wall_s,
        "load_avg_before": r.load_avg_before,
        "load_avg_after": r.load_avg_after,
        "degraded": degraded(a),
    }


# ---------------------------------------------------------------------------------------
# Claims from the per-run metrics (tcp = EMU and SIM rows)


def _signed(m: pd.DataFrame, disc: str, col: str, load: float) -> list[float]:
    e = T.gain(m, WORKLOAD, load, disc, EMU, col=col)
    s = T.gain(m, WORKLOAD, load, disc, SIM, col=col)
    return [a * math.copysign(1.0, b) if math.isfinite(b) and b != 0 else math.nan for a, b in zip(e, s)]


def sign_agreement(m: pd.DataFrame, load: float, col: str = "short_slow_mean") -> list[float]:
    """Per seed, the share (%) of the disciplines but DropTail run in both columns whose
    gain over DropTail has the same sign emulated as simulated."""
    w = m[(m["workload"] == WORKLOAD) & np.isclose(m["load"], load)]
    discs = sorted(set(w[w["tcp"] == EMU]["disc"]) & set(w[w["tcp"] == SIM]["disc"]) - {"droptail"})
    out = []
    for seed in sorted(set(w[w["tcp"] == EMU]["seed"])):
        same = n = 0
        for d in discs:
            e = [x for x in T.gain(w[w["seed"] == seed], WORKLOAD, load, d, EMU, col=col) if math.isfinite(x)]
            s = [x for x in T.gain(w[w["seed"] == seed], WORKLOAD, load, d, SIM, col=col) if math.isfinite(x)]
            if e and s:
                n += 1
                same += (e[0] > 0) == (s[0] > 0)
        if n:
            out.append(100.0 * same / n)
    return out


def rank_correlation(m: pd.DataFrame, load: float, col: str = "short_slow_mean") -> list[float]:
    """Per seed, Spearman's rank correlation over the disciplines of ``col``, emulated
    against simulated."""
    w = m[(m["workload"] == WORKLOAD) & np.isclose(m["load"], load)]
    out = []
    for seed in sorted(set(w[w["tcp"] == EMU]["seed"])):
        g = w[w["seed"] == seed].pivot_table(index="disc", columns="tcp", values=col)
        if EMU not in g or SIM not in g:
            continue
        g = g[[EMU, SIM]].dropna()
        if len(g) >= 3:
            out.append(float(g[EMU].rank().corr(g[SIM].rank())))
    return out


def claim_samples(m: pd.DataFrame) -> dict[str, list[float]]:
    hp = T.HI_PARETO
    return {
        "emu-favorqueue": T.gain(m, WORKLOAD, hp, "favorqueue", EMU),
        "emu-favorqueue-sign": _signed(m, "favorqueue", "short_slow_mean", hp),
        "emu-las-sign": _signed(m, "las", "short_slow_p99", hp),
        "emu-rio-sign": _signed(m, "rio", "short_slow_mean", hp),
        "emu-signs": sign_agreement(m, hp),
        "emu-rank": rank_correlation(m, hp),
    }


def degraded_note(acc: pd.DataFrame) -> str:
    n = int(acc["degraded"].sum()) if len(acc) else 0
    if not n:
        return ""
    return f"{n} of the {len(acc)} emulated runs were degraded (router behind its targets; Table emulated column)."


# ---------------------------------------------------------------------------------------
# Report: table, figure, text


def _f(x, fmt="{:.2f}") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else fmt.format(x)


def table(report: Report, e: Emulated) -> None:
    m, acc = e.metrics, e.accuracy.set_index(["disc", "load", "seed"])
    rows = []
    for load in e.plan.loads:
        for d in DISCS:

            def one(tcp, col, d=d, load=load):
                x = T._per_seed(m, WORKLOAD, load, d, tcp, col)
                return float(x.mean()) if len(x) else math.nan

            def g(tcp, col="short_slow_mean", d=d, load=load):
                x = [v for v in T.gain(m, WORKLOAD, load, d, tcp, col=col) if math.isfinite(v)]
                return float(np.mean(x)) if x and d != "droptail" else math.nan

            gs, ge = g(SIM), g(EMU)
            same = "-" if not (math.isfinite(gs) and math.isfinite(ge)) else ("yes" if (gs > 0) == (ge > 0) else "no")
            a = acc.loc[[k for k in acc.index if k[0] == d and math.isclose(k[1], load)]]
            deg = "degraded" if a["degraded"].any() else "ok"
            rows.append(
                [
                    NAME(d),
                    f"{load:g}",
                    _f(one(SIM, "short_slow_mean")),
                    _f(one(EMU, "short_slow_mean")),
                    _f(gs, "{:+.0f}%"),
                    _f(ge, "{:+.0f}%"),
                    same,
                    _f(one(SIM, "short_slow_p99"), "{:.1f}"),
                    _f(one(EMU, "short_slow_p99"), "{:.1f}"),
                    _f(one(SIM, "utilisation"), "{:.3f}"),
                    _f(one(EMU, "utilisation"), "{:.3f}"),
                    _f(one(SIM, "qdelay_mean_ms"), "{:.1f}"),
                    _f(one(EMU, "qdelay_mean_ms"), "{:.1f}"),
                    _f(float(a["achieved_over_configured"].astype(float).min()) if len(a) else math.nan, "{:.4f}"),
                    _f(float(a["lateness_p99_us"].astype(float).max()) if len(a) else math.nan, "{:.0f}"),
                    deg,
                ]
            )
    report.table(
        "Emulated column: Pareto at 10 Mb/s, Linux cubic + SACK against the simulated linux profile",
        [
            "discipline",
            "load",
            "short slowdown sim",
            "short slowdown emu",
            "gain vs DropTail sim",
            "gain vs DropTail emu",
            "same sign",
            "short p99 slowdown sim",
            "short p99 slowdown emu",
            "utilisation sim",
            "utilisation emu",
            "mean queue delay sim (ms)",
            "mean queue delay emu (ms)",
            "router rate ratio",
            "router p99 lateness (us)",
            "router",
        ],
        rows,
        f"The emulated column (savanna emulate: real Linux cubic with SACK, RACK-TLP, F-RTO, delayed ACKs and "
        f"pacing, the linux column's scenario) beside its simulated twin (savanna run, linux profile, the same "
        f"scenario and seed, hence the same flows), {e.plan.duration_s:g} s per run, flows after "
        f"{e.plan.warmup_s:g} s, {e.plan.reps} seed(s). Gains: reduction of the short-flow mean slowdown against "
        "DropTail in the same column. Router: its achieved over configured bottleneck rate and p99 delivery "
        "lateness; 'degraded' when it missed its targets (rate 0.99, p99 200 us; vs_linux.py's rule): such a "
        "run's drops and FCTs are not Linux's alone. Not run here: "
        + "; ".join(f"{NAME(d)} ({why})" for d, why in REFUSED.items())
        + ".",
    )
    path = report.out_dir / "emulated.csv"
    m.merge(e.accuracy.assign(tcp=EMU), on=["disc", "load", "seed", "tcp"], how="left").to_csv(path, index=False)


def NAME(d: str) -> str:  # noqa: N802
    return T.NAMES.get(d, d)


def bucket_figure(report: Report, e: Emulated, load: float) -> None:
    """Mean slowdown per flow-size bucket, one panel per emulated discipline: the simulated
    twin and the emulated run (mean over seeds), DropTail emulated in grey dotted."""
    from savanna.reproduce.tournament_figures import TCP_STYLE, _grid_legend, _limits, _log_axis, bucket_labels

    plt = report.plt
    edges = T.WORKLOADS[WORKLOAD]["buckets"]
    labels = bucket_labels(edges)
    b = e.buckets
    g = b[np.isclose(b["load"], load) & (b["n"] > 0)]
    agg = g.groupby(["disc", "tcp", "bucket"])["slow_mean"].agg(["mean", "min", "max"]).reset_index()
    ncols = 4
    nrows = math.ceil((len(DISCS) + 1) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(11.0, 2.15 * nrows + 0.6), sharex=True, sharey=True)
    flat = np.atleast_2d(axes).ravel()
    ymin, ymax = _limits(agg["mean"], True)
    styles = {SIM: (TCP_STYLE["linux"], SIM_NAME), EMU: (dict(color="#111111", ls="-", marker="x"), EMU_NAME)}
    ref = agg[(agg["disc"] == "droptail") & (agg["tcp"] == EMU)].sort_values("bucket")
    for ax, d in zip(flat, DISCS):
        if d != "droptail" and len(ref):
            ax.plot(ref["bucket"], ref["mean"], color="#8a8a8a", lw=1.1, ls=":", label="DropTail, emulated")
        for tcp, (st, lab) in styles.items():
            t = agg[(agg["disc"] == d) & (agg["tcp"] == tcp)].sort_values("bucket")
            if len(t):
                ax.plot(t["bucket"], t["mean"], label=lab, ms=3.0, **st)
        ax.set_title(NAME(d), fontsize=9.0)
        _log_axis(ax)
        ax.set_ylim(ymin, ymax)
    _grid_legend(flat, len(DISCS), title=None)
    x = np.arange(len(labels))
    bottom = [max(i for i in range(len(DISCS)) if i % ncols == c) for c in range(min(ncols, len(DISCS)))]
    for ax in (flat[i] for i in bottom):  # the lowest panel of each column that shows data
        ax.set_xticks(x, labels, rotation=60, fontsize=7)
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("flow size (packets)")
    for ax in np.atleast_2d(axes)[:, 0]:
        ax.set_ylabel("mean slowdown", fontsize=8.5)
    report.figure(
        fig,
        f"tournament-emulated-buckets-{load:g}",
        f"Emulated column: slowdown by flow size, Pareto load {load:g} (10 Mb/s)",
        "Mean slowdown per flow-size bucket: real Linux cubic with SACK through savanna emulate (black) against "
        "the simulated linux profile on the same flows (red dashed); grey dotted: DropTail emulated. "
        f"{e.plan.duration_s:g} s per run, {e.plan.reps} seed(s).",
    )
    plt.close(fig)


def figures(report: Report, e: Emulated) -> None:
    for load in e.plan.loads:
        bucket_figure(report, e, load)


def intro(ran: bool, why: str, e: Emulated | None) -> str:
    """The report's paragraph on the emulated column: what ran, or why not."""
    skipped = "; ".join(f"{NAME(d)} ({r})" for d, r in REFUSED.items())
    if not ran or e is None:
        return (
            f"Emulated column (Pareto at 10 Mb/s, real Linux senders through savanna emulate): not run, {why}. "
            f"Its claims ({', '.join(c.id for c in CLAIMS)}) are declared in tournament_emu.py and judged only "
            f"when it runs. It would leave out {skipped}. {COLUMNS_NOT_RUN}"
        )
    acc = e.accuracy
    nd = int(acc["degraded"].sum())
    la = acc[["load_avg_before", "load_avg_after"]].astype(float).to_numpy()
    la = la[np.isfinite(la)]
    load_txt = f"load average {la.min():.1f} to {la.max():.1f}" if len(la) else "load average not recorded"
    return (
        f"Emulated column: the Pareto workload at 10 Mb/s (loads {', '.join(f'{x:g}' for x in e.plan.loads)}) run "
        f"by savanna emulate with real Linux senders (cubic with SACK, RACK-TLP, F-RTO, delayed ACKs, pacing) "
        f"through the core's own disciplines, {len(DISCS)} disciplines, {e.plan.duration_s:g} s per run, "
        f"{e.plan.reps} seed(s), {e.plan.parallel} emulations at once ({load_txt}); beside each, the simulated "
        f"linux profile on the same scenario and seed. Router accuracy: rate ratio "
        f"{_f(float(acc['achieved_over_configured'].astype(float).min()), '{:.4f}')} at worst, p99 delivery "
        f"lateness {_f(float(acc['lateness_p99_us'].astype(float).max()), '{:.0f}')} us at worst; {nd} of "
        f"{len(acc)} runs degraded. Left out: {skipped}. {COLUMNS_NOT_RUN}"
    )
