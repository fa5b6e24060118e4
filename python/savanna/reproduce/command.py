"""The ``savanna reproduce PAPER [--quick] [--out DIR] [--workers N]`` subcommand (issue 6,
part 3): argument parsing and the error contract of ``savanna.cli`` (one
``savanna: error: ...`` line, exit 2 for bad input such as an unknown paper, 1 when a
simulation failed). The work itself is ``savanna.reproduce.run``.
"""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``reproduce`` to the subparsers of ``savanna.cli.build_parser``. Nothing heavy is
    imported here, so the other commands start as fast as before."""
    p = sub.add_parser(
        "reproduce",
        help="rerun a paper's experiments: figures and an HTML/Markdown report",
        description="Run a paper's experiments and write its figures (PNG, SVG), report.html and "
        "report.md, setting each of the paper's claims beside ours with a verdict. PAPER is a "
        "registered paper (guo-matta-2001, favorqueue-2013, matta-guo-2000, tokuda-2002, as "
        "implemented), 'tournament' (every discipline on common workloads; not part of 'all') or 'all'. "
        "Completed simulations under DIR are reused by a re-run.",
    )
    p.add_argument("paper", metavar="PAPER", help="paper to reproduce, or 'all'")
    p.add_argument(
        "--quick", action="store_true", help="shorter runs and fewer replications (about a minute per paper)"
    )
    p.add_argument(
        "--out", "-o", metavar="DIR", help="output directory (default: out/reproduce/PAPER, or out/reproduce for 'all')"
    )
    p.add_argument("--workers", "-j", type=int, metavar="N", help="simulations in parallel (default: one per CPU)")
    p.add_argument("--quiet", "-q", action="store_true", help="print only the report paths")
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from savanna import cli
    from savanna.reproduce import run
    from savanna.reproduce.common import ReproduceError, RunFailed

    cmd = "savanna reproduce " + args.paper + (" --quick" if args.quick else "")
    if args.out:
        cmd += f" --out {args.out}"
    if args.workers:
        cmd += f" --workers {args.workers}"
    try:
        if args.workers is not None and args.workers < 1:
            raise ReproduceError(f"--workers: must be a positive integer, got {args.workers}")
        written = run(
            args.paper, quick=args.quick, out=args.out, workers=args.workers, progress=not args.quiet, command=cmd
        )
    except RunFailed as e:
        cli._error(str(e))
        return cli.EXIT_INTERNAL
    except ReproduceError as e:
        cli._error(str(e))
        return cli.EXIT_INPUT
    for name, path in written.items():
        print(f"{name}: {path}")
    return cli.EXIT_OK
