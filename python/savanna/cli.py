"""The ``savanna`` command line: ``savanna run``, ``savanna validate``, ``savanna compare``,
``savanna sweep``, ``savanna query``, ``savanna --version``.

Error contract: bad input (an invalid scenario, a missing or unreadable scenario file, a
TOML/JSON syntax error, an unusable output path) prints one line
``savanna: error: <message>`` to stderr and exits with code 2, without a traceback. An
internal error of the simulator prints one line too and exits with code 1.

Start-up is kept fast (issue 21): each command imports what it needs when it runs. A plain
``savanna run`` or ``savanna --version`` command line is read by ``fast_args`` without
argparse (which, with ``re`` and ``enum``, costs more than the rest of the front end); any
other command line, and any it is not sure of, goes to the argparse parser, which gives the
same result or the error. ``reproduce``'s sub-parser (its package) is loaded only when the
command line may name it (see ``build_parser``). ``entry`` (the console script) ends a
``run`` or ``validate`` without the interpreter's teardown.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    from pathlib import Path
    from typing import Callable

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130

PROG = "savanna"


# ---------------------------------------------------------------------------------------
# Commands


def cmd_run(args: argparse.Namespace) -> int:
    from savanna import _core
    from savanna.runner import (
        call_core,
        check_budget,
        check_out,
        check_overrides,
        resolve_scenario,
        sweep_dead_partials,
    )

    sc = resolve_scenario(os.fspath(args.scenario), check=False)
    seed, duration_s = check_overrides(args.seed, args.duration)
    budget = check_budget(args.max_events, args.max_memory_gb)
    if args.out is not None:
        out_dir = check_out(args.out)
    else:
        out_dir = os.path.join("out", os.path.splitext(os.path.basename(args.scenario))[0])
    sweep_dead_partials(out_dir)
    # Ctrl-C: the core stops the run within a fraction of a second and removes its staging
    # directory; KeyboardInterrupt then exits 130 (see `main`).
    summary_json = call_core(sc, _core.run_to_dir, out_dir, seed, duration_s, *budget)
    if not args.quiet:
        import json  # the text the core returned is what it wrote to summary.json

        print(format_summary(json.loads(summary_json), out_dir, scenario=args.scenario, all_queues=args.verbose))
    return EXIT_OK


def cmd_emulate(args: argparse.Namespace) -> int:
    from savanna.emulate import main_args

    return main_args(args)


def cmd_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from savanna.analysis import compare_dirs

    for d in args.runs:
        if not (Path(d) / "summary.json").is_file() or not (Path(d) / "flows.parquet").is_file():
            from savanna import ScenarioError

            raise ScenarioError(f"{d}: not a finished run directory (no summary.json / flows.parquet)")
    text = compare_dirs([Path(d) for d in args.runs], warmup_s=args.warmup)
    print(text, end="")
    if args.markdown:
        out = Path(args.markdown)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from savanna import _core
    from savanna.runner import call_core, check_budget, check_overrides, resolve_scenario

    sc = resolve_scenario(os.fspath(args.scenario), check=False)
    seed, duration_s = check_overrides(args.seed, args.duration)
    budget = check_budget(args.max_events, args.max_memory_gb)
    _ctrl_c_kills()
    call_core(sc, _core.validate, seed, duration_s, *budget)
    if not args.quiet:
        print(f"{args.scenario}: ok")
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep file (docs/sweeps.md); exit 1 when a run failed, 2 on bad input."""
    from savanna import store
    from savanna.sweep import SweepError, load_sweep, prune, run_sweep

    try:
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers: must be a positive integer, got {args.workers}")
        sweep = load_sweep(args.sweep, out=args.out)
        ids = [j.run_id for j in sweep.jobs]
        out = sweep.out_dir
        existing = store.completed_runs(out)
        stale = sorted(set(existing) - set(ids))
        if args.dry_run:
            _print_plan(sweep, existing)
            return EXIT_OK
        if stale and not args.prune:
            raise SweepError(
                f"{out}: holds {len(stale)} completed run(s) that are not in this sweep (its "
                "base scenario or settings changed?); use another --out, or --prune to delete them"
            )
        if stale:
            prune(out, ids)
        quiet = args.quiet
        if not quiet:
            done_before = sum(1 for i in ids if i in existing)
            print(
                f"sweep {sweep.name}: {len(ids)} runs ({sweep.shape}), {done_before} already complete, into {out}",
                flush=True,
            )
        # Ctrl-C: with worker processes, this process waits in Python and gets a
        # KeyboardInterrupt (exit 130) while the workers end themselves. Running in this
        # process (--workers 1), the core would finish its run first, so Ctrl-C kills at
        # once instead. Either way runs appear complete or not at all.
        if args.dask is None and (args.workers or os.cpu_count() or 1) == 1:
            _ctrl_c_kills()
        report = run_sweep(sweep, workers=args.workers, dask=args.dask, progress=not quiet)
    except SweepError as e:
        _error(str(e))
        return EXIT_INPUT
    for rid, err in report.failed.items():
        params = ", ".join(f"{k}={v!r}" for k, v in report.params[rid].items())
        print(
            f"{PROG}: run {rid} ({params}) failed: {one_line(err)} [{out / store.FAILED_DIR / (rid + '.json')}]",
            file=sys.stderr,
        )
    if not quiet:
        print(
            f"sweep {sweep.name}: {len(report.done)} done, {len(report.skipped)} already "
            f"complete, {len(report.failed)} failed, in {report.wall_seconds:.1f} s; "
            f'results in {out} (savanna query {out} "SELECT ...")'
        )
    if report.failed:
        _error(
            f"{len(report.failed)} of {len(ids)} runs failed (their scenarios and errors are "
            f"in {out / store.FAILED_DIR}); run the sweep again to retry them"
        )
        return EXIT_INTERNAL
    return EXIT_OK


def _print_plan(sweep, existing) -> None:
    names = [a.name for a in sweep.axes] + ["seed"]
    rows = [
        [j.run_id, "complete" if j.run_id in existing else "to run"]
        + [repr(j.params[n]) if isinstance(j.params[n], str) else str(j.params[n]) for n in names]
        for j in sweep.jobs
    ]
    head = ["run_id", "state"] + names
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    for r in [head] + rows:
        print("  ".join(str(x).ljust(w) for x, w in zip(r, widths)).rstrip())
    print(f"{len(rows)} runs ({sweep.shape}) into {sweep.out_dir}")


def cmd_query(args: argparse.Namespace) -> int:
    """Run SQL over a sweep's dataset; print a table, CSV or JSON."""
    from savanna.store import StoreError, query

    try:
        df = query(args.dir, args.sql)
    except StoreError as e:
        _error(str(e))
        return EXIT_INPUT
    if args.csv:
        sys.stdout.write(df.to_csv(index=False))
    elif args.json:
        sys.stdout.write(df.to_json(orient="records", double_precision=15) + "\n")
    elif df.empty:
        print(("  ".join(map(str, df.columns)) + "\n" if len(df.columns) else "") + "(0 rows)")
    else:
        print(df.to_string(index=False))
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# Parser


# Commands defined in this file; `build_parser` adds the others (``reproduce``) only when
# the command line does not start with one of these.
_OWN_COMMANDS = frozenset({"run", "emulate", "validate", "compare", "sweep", "query"})


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The command-line parser. Given the arguments it will parse, it leaves out the
    sub-parsers of commands defined elsewhere (their packages take milliseconds to
    import) when the first argument is ``--version`` or a command of this file; help,
    errors and every other command line get the full parser."""
    import argparse

    from savanna import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Savanna: packet-level network simulator for size-aware queue management.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "run",
        help="run one scenario and write its records",
        description="Run one scenario; write DIR/flows.parquet, DIR/queues.parquet (when "
        "queue sampling is on) and DIR/summary.json, and print a short summary.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    p.add_argument("--out", "-o", metavar="DIR", help="output directory (default: out/<scenario name>)")
    _add_overrides(p)
    _add_budget(p)
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.add_argument("--verbose", "-v", action="store_true", help="list every queue in the summary")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "emulate",
        help="run a scenario on real Linux TCP through Savanna's disciplines (root)",
        description="Emulate a scenario: hosts in network namespaces, real kernel TCP, a userspace "
        "router running Savanna's queue disciplines; writes the same records as `run` (docs/emulate.md).",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    p.add_argument("--out", "-o", metavar="DIR", help="output directory (default: out/<scenario name>-emulated)")
    _add_overrides(p)
    p.add_argument("--cc", metavar="NAME", help="kernel congestion control (default: reno for variant newreno)")
    p.add_argument("--sack", action="store_true", help="turn SACK on even where the scenario's tcp.sack does not")
    p.add_argument("--approx", action="store_true", help="run settings Linux cannot honour with Linux's behaviour")
    p.add_argument(
        "--spin-us", type=int, default=0, metavar="U", help="router: poll without sleeping U us before each deadline"
    )
    p.add_argument("--rt", type=int, default=50, metavar="PRIO", help="router's SCHED_FIFO priority (0: normal)")
    p.add_argument("--capture", action="store_true", help="write every packet the router carries to packets.parquet")
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(func=cmd_emulate)

    p = sub.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Parse and validate a scenario; print '<file>: ok' or the first error.",
    )
    p.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    _add_overrides(p)
    _add_budget(p)
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing on success")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser(
        "compare",
        help="compare finished runs: flow-completion time by flow size, side by side",
        description="Print (and optionally write) a Markdown table of flow-completion time by "
        "flow-size bucket for each run directory, plus each run's bottleneck utilisation and drop rate.",
    )
    p.add_argument("runs", nargs="+", help="output directories of `savanna run`")
    p.add_argument("--warmup", type=float, default=0.0, help="ignore flows that started before this time, s")
    p.add_argument("--markdown", help="also write the report to this file")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser(
        "sweep",
        help="run a grid of scenarios into a Parquet dataset (resumable)",
        description="Run every point of a sweep file's grid (scenario fields x values x "
        "seeds) into a Parquet dataset partitioned by the parameters; a completed run is "
        "never run again, so an interrupted sweep resumes where it stopped. See docs/sweeps.md.",
    )
    p.add_argument("sweep", metavar="SWEEP", help="sweep file (.toml)")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        "-j",
        type=int,
        metavar="N",
        help="local worker processes (default: one per CPU)",
    )
    where.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on the Dask distributed scheduler at ADDRESS (tcp://host:port)",
    )
    p.add_argument(
        "--out", "-o", metavar="DIR", help="dataset directory (default: the sweep file's out, else out/<sweep name>)"
    )
    p.add_argument("--dry-run", action="store_true", help="check the sweep and list its runs without running them")
    p.add_argument("--prune", action="store_true", help="delete completed runs in DIR that are not part of this sweep")
    p.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bar or summary (failures are still reported)"
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "query",
        help="run SQL (DuckDB) over a sweep's dataset",
        description="Run a DuckDB SQL query over a sweep's dataset. Views: flows, queues, "
        "summaries, summary_queues, and classifiers/traces when the runs wrote them; each "
        "has run_id and one column per sweep parameter.",
    )
    p.add_argument("dir", metavar="DIR", help="the sweep's dataset directory")
    p.add_argument("sql", metavar="SQL", help='a query, e.g. "SELECT seed, avg(fct_s) FROM flows GROUP BY seed"')
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", action="store_true", help="print CSV")
    fmt.add_argument("--json", action="store_true", help="print JSON (an array of rows)")
    p.set_defaults(func=cmd_query)

    first = argv[0] if argv else None
    if first != "--version" and first not in _OWN_COMMANDS:
        from savanna.reproduce.command import add_parser as add_reproduce

        add_reproduce(sub)
    return parser


def _add_budget(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-events",
        type=float,
        metavar="N",
        help="refuse a run estimated to take more events (default 1e12; docs/scenario.md, Limits)",
    )
    p.add_argument(
        "--max-memory-gb",
        type=float,
        metavar="GB",
        help="refuse a run estimated to need more memory (default 16; docs/scenario.md, Limits)",
    )


def _add_overrides(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed")
    p.add_argument("--duration", type=float, metavar="S", help="override the scenario's duration (seconds)")


# ---------------------------------------------------------------------------------------
# Output


def format_summary(
    summary: dict,
    out_dir: Path | None = None,
    *,
    scenario: str = "",
    all_queues: bool = False,
) -> str:
    """A few human lines about a run, from its summary.json.

    Queues that dropped, marked or pushed out packets, or were at least 5% busy, get a line
    each (all of them with ``all_queues``); the rest (idle access links) share one line.
    """
    g = summary.get
    name = g("scenario") or scenario
    sim_s = float(g("sim_seconds") or 0.0)
    wall_s = float(g("wall_seconds") or 0.0)
    speed = f" ({sim_s / wall_s:,.1f}x real time)" if wall_s > 0 and sim_s > 0 else ""
    lines = [
        f"{name}  seed {g('seed', '?')}",
        f"  simulated {sim_s:g} s in {wall_s:.2f} s wall{speed}, {int(g('events') or 0):,} events",
        f"  flows: {int(g('flows_started') or 0):,} started, {int(g('flows_finished') or 0):,} finished",
    ]
    queues = list(g("queues") or [])
    shown = queues if all_queues or len(queues) <= 4 else [q for q in queues if _notable(q)]
    if not shown and queues:
        shown = [max(queues, key=lambda q: float(q.get("utilisation") or 0.0))]
    for q in shown:
        lines.extend(_queue_lines(q))
    rest = [q for q in queues if not any(q is s for s in shown)]
    if rest:
        top = max(100.0 * float(q.get("utilisation") or 0.0) for q in rest)
        lines.append(f"  {len(rest)} other queues: utilisation <= {top:.1f}%, no drops (--verbose lists them)")
    if out_dir is not None:
        from pathlib import Path

        out_dir = Path(out_dir)
        written = [f for f in ("flows.parquet", "queues.parquet", "summary.json") if (out_dir / f).is_file()]
        lines.append(f"  wrote {out_dir}/: {', '.join(written) if written else 'nothing'}")
    return "\n".join(lines)


def _notable(q: dict) -> bool:
    return bool(
        q.get("dropped") or q.get("marked") or q.get("pushed_out") or float(q.get("utilisation") or 0.0) >= 0.05
    )


def _queue_lines(q: dict) -> list[str]:
    arrivals = int(q.get("arrivals") or 0)
    dropped = int(q.get("dropped") or 0)
    rate = f" ({100.0 * dropped / arrivals:.2f}%)" if arrivals else ""
    extra = ""
    if q.get("marked"):
        extra += f", marked {int(q['marked']):,}"
    if q.get("pushed_out"):
        extra += f", pushed out {int(q['pushed_out']):,}"
    lines = [
        f"  queue {q.get('name', '?')} ({q.get('discipline', '?')}): "
        f"utilisation {100.0 * float(q.get('utilisation') or 0.0):.1f}%, "
        f"enqueued {int(q.get('enqueued') or 0):,}, dropped {dropped:,}{rate}{extra}"
    ]
    classes = {k: v for k, v in (q.get("by_class") or {}).items() if (v or {}).get("arrivals")}
    if len(classes) > 1 or (classes and "none" not in classes):
        parts = [
            f"{k}: enq {int(v.get('enqueued') or 0):,} drop {int(v.get('dropped') or 0):,}" for k, v in classes.items()
        ]
        lines.append("    by class: " + "; ".join(parts))
    return lines


def one_line(msg: str) -> str:
    """Collapse a possibly multi-line error (e.g. a TOML parser's caret diagram) to one line."""
    parts = []
    for line in str(msg).splitlines():
        s = line.strip()
        if not s or _is_gutter(s):  # gutter lines of a source excerpt
            continue
        parts.append(s)
    return ": ".join(parts) if parts else "unknown error"


def _is_gutter(s: str) -> bool:
    """A source excerpt's gutter line: digits, optional spaces, then ``|``."""
    head = s.lstrip("0123456789").lstrip()
    return head.startswith("|")


def _error(msg: str) -> None:
    print(f"{PROG}: error: {one_line(msg)}", file=sys.stderr)


def _ctrl_c_kills() -> None:
    # The core runs with the GIL released and never returns to Python until done, so a
    # Python-level KeyboardInterrupt would wait for the whole run. Let Ctrl-C kill the
    # process at once instead: the core writes its outputs atomically, so nothing that
    # looks complete is left behind.
    # (Not possible outside the main thread, e.g. main() called from a thread.)
    import contextlib
    import signal

    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_DFL)


# ---------------------------------------------------------------------------------------
# Entry point. The fast path: `savanna run` and `savanna --version` without argparse

# `savanna run`'s options: flags, and options taking a value with its conversion.
_RUN_FLAGS = {"--quiet": "quiet", "-q": "quiet", "--verbose": "verbose", "-v": "verbose"}
_RUN_VALUES = {
    "--out": ("out", str),
    "-o": ("out", str),
    "--seed": ("seed", int),
    "--duration": ("duration", float),
    "--max-events": ("max_events", float),
    "--max-memory-gb": ("max_memory_gb", float),
}


def fast_args(argv: list[str]):
    """The arguments of a plain ``run`` command line, as argparse would give them, or None
    when the line is anything else or anything argparse might read differently (help,
    abbreviations, combined or attached short options, values starting with ``-``, ``--``,
    a bad number, a missing or second scenario): those go to the full parser."""
    if not argv or argv[0] != "run":
        return None
    ns = {
        "command": "run",
        "scenario": None,
        "out": None,
        "seed": None,
        "duration": None,
        "max_events": None,
        "max_memory_gb": None,
        "quiet": False,
        "verbose": False,
        "func": cmd_run,
    }
    i = 1
    while i < len(argv):
        tok = argv[i]
        i += 1
        if not tok.startswith("-"):
            if ns["scenario"] is not None:
                return None
            ns["scenario"] = tok
            continue
        name, eq, value = tok.partition("=")
        if name in _RUN_FLAGS and not eq:
            ns[_RUN_FLAGS[name]] = True
            continue
        if name not in _RUN_VALUES or (eq and not name.startswith("--")):
            return None
        if not eq:
            if i == len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        dest, convert = _RUN_VALUES[name]
        try:
            ns[dest] = convert(value)
        except ValueError:
            return None
    if ns["scenario"] is None:
        return None
    import types

    return types.SimpleNamespace(**ns)


def main(argv: list[str] | None = None) -> int:
    try:
        from savanna import ScenarioError
    except ImportError as e:  # the extension module is missing or broken
        _error(f"cannot load the simulator core ({e}); reinstall savanna (make setup)")
        return EXIT_INTERNAL

    if argv is None:
        argv = sys.argv[1:]
    if argv == ["--version"]:
        from savanna import __version__

        print(f"{PROG} {__version__}")
        return EXIT_OK
    args = fast_args(argv)
    if args is None:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    try:
        return func(args)
    except ScenarioError as e:
        _error(str(e))
        return EXIT_INPUT
    except OSError as e:  # reading the scenario file
        if e.filename is not None and e.strerror:
            _error(f"{e.filename}: {e.strerror}")
        else:
            _error(str(e))
        return EXIT_INPUT
    except RuntimeError as e:
        _error(str(e))
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


# Commands after which nothing is left to flush, join or clean up but stdout and stderr.
_QUICK_EXIT = frozenset({"run", "validate", "--version"})


def entry() -> None:
    """The ``savanna`` console script (and ``python -m savanna``): `main`, then, after
    ``run``, ``validate`` and ``--version``, exit at once instead of tearing the interpreter
    down (the core has closed its files and joined its thread; nothing else is open)."""
    code = main()
    if sys.argv[1:2] and sys.argv[1] in _QUICK_EXIT:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # e.g. a closed pipe: let the normal exit report it
            sys.exit(code)
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
