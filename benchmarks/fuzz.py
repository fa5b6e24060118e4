"""The long run of our own fuzzer (issue 18): the shipped scenarios mutated field by field
(hostile numbers, NaN and infinities, wrong types, unknown keys, one to three fields at a
time), each through ``savanna.validate``, and a subset through ``savanna run`` and
``savanna.run()``, every case under a time limit in a child process.

Counts: exit 0 (valid / ran), exit 2 (refused), hangs (time limit), aborts (the process
died), tracebacks (any other exception, or a traceback on stderr), leftovers (files left
by a refused run, staging directories), bad records (NaN or negative times in flows),
and wrong-field rejections: the error names a field that neither exists in the mutated
scenario nor is a key documented in docs/scenario.md. Every failing case is written to
``--corpus`` (default tests/fuzz_corpus/found/) for tests/test_fuzz.py to replay.

    .venv/bin/python benchmarks/fuzz.py --cases 2000 --runs 150 --api-runs 60
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing as mp
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_common import (  # noqa: E402
    BASES,
    HOSTILE_NUMBERS,
    HOSTILE_OTHER,
    check_records,
    field_of,
    leaves,
    names_a_real_field,
    set_at,
    to_toml,
)

SCENARIO_DIR = ROOT / "scenarios"


def mutate(rng: random.Random) -> tuple[str, dict, list[str]]:
    """(base scenario name, mutated scenario, the mutated paths)."""
    name = rng.choice(sorted(BASES))
    d = copy.deepcopy(BASES[name])
    done = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        paths = [p for p, _ in leaves(d) if p]
        path = rng.choice(paths)
        if rng.random() < 0.1:
            at = path[:-1]
            parent = d
            for k in at:
                parent = parent[k]
            if isinstance(parent, dict):
                parent["typo_key"] = 1
                done.append(".".join(map(str, (*at, "typo_key"))))
                continue
        r = rng.random()
        if r < 0.55:
            value = rng.choice(HOSTILE_NUMBERS)
        elif r < 0.8:
            value = copy.deepcopy(rng.choice(HOSTILE_OTHER))
        else:
            value = rng.choice([rng.uniform(-1e6, 1e6), 10 ** rng.uniform(-320, 308), rng.randint(-(2**40), 2**40)])
        set_at(d, path, value)
        done.append(".".join(map(str, path)))
    return name, d, done


# ----------------------------------------------------------------- validation in a child


def _validator(conn) -> None:
    import savanna

    while True:
        text = conn.recv()
        if text is None:
            return
        try:
            savanna.validate(text, base_dir=SCENARIO_DIR)
            conn.send(("ok", ""))
        except savanna.ScenarioError as e:
            conn.send(("refused", str(e)))
        except BaseException as e:  # noqa: BLE001 - the fuzzer counts them
            conn.send(("traceback", f"{type(e).__name__}: {e}"))


class Validator:
    """savanna.validate in a child process, restarted after a hang or an abort."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.ctx = mp.get_context("fork")
        self._start()

    def _start(self):
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_validator, args=(child,), daemon=True)
        self.proc.start()

    def check(self, text: str) -> tuple[str, str]:
        self.conn.send(text)
        if self.conn.poll(self.timeout):
            try:
                return self.conn.recv()
            except EOFError:
                pass
        else:
            self.proc.kill()
            self.proc.join()
            self._start()
            return "hang", ""
        self.proc.join()
        code = self.proc.exitcode
        self._start()
        return "abort", f"exit {code}"

    def close(self):
        self.conn.send(None)
        self.proc.join(5)


# ----------------------------------------------------------------- runs


def cli_run(text: str, timeout: float) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="savanna-fuzz-") as tmp:
        src = Path(tmp) / "sc.toml"
        src.write_text(text)
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "savanna", "run", str(src), "--out", str(out), "--duration", "0.5", "-q"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=SCENARIO_DIR)
        except subprocess.TimeoutExpired:
            return "hang", ""
        if "Traceback" in p.stderr:
            return "traceback", p.stderr[-500:]
        if p.returncode == 2:
            lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
            if out.exists() and any(out.iterdir()):
                return "leftover", str(sorted(x.name for x in out.iterdir()))
            if len(lines) != 1 or not lines[0].startswith("savanna: error: "):
                return "traceback", p.stderr[-500:]
            return "refused", lines[0][len("savanna: error: ") :]
        if p.returncode != 0:
            return "abort", f"exit {p.returncode}: {p.stderr[-300:]}"
        left = [x.name for x in out.iterdir() if x.name.startswith(".partial")]
        if left:
            return "leftover", str(left)
        if not (out / "summary.json").is_file() or not (out / "flows.parquet").is_file():
            return "wrong", "summary.json or flows.parquet missing"
        bad = check_records(out)
        return ("wrong", bad) if bad else ("ok", "")


API_CODE = """
import sys, savanna
from pathlib import Path
sys.path.insert(0, {tests!r})
from fuzz_common import check_records
try:
    r = savanna.run(sys.stdin.read(), duration_s=0.5, base_dir={base!r}, out={out!r})
except savanna.ScenarioError as e:
    print("REFUSED", str(e).replace("\\n", " "))
    sys.exit(0)
bad = check_records(Path({out!r}))
print("WRONG " + bad if bad else "OK")
"""


def api_run(text: str, timeout: float) -> tuple[str, str]:
    with tempfile.TemporaryDirectory(prefix="savanna-fuzz-") as tmp:
        code = API_CODE.format(tests=str(ROOT / "tests"), base=str(SCENARIO_DIR), out=str(Path(tmp) / "out"))
        try:
            p = subprocess.run(
                [sys.executable, "-c", code], input=text, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return "hang", ""
        if "Traceback" in p.stderr:
            return "traceback", p.stderr[-500:]
        if p.returncode != 0:
            return "abort", f"exit {p.returncode}"
        out = p.stdout.strip()
        if out.startswith("REFUSED "):
            return "refused", out[len("REFUSED ") :]
        if out.startswith("WRONG"):
            return "wrong", out
        return "ok", ""


# ----------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000, help="generated cases through savanna.validate")
    ap.add_argument("--runs", type=int, default=150, help="of them, run through `savanna run`")
    ap.add_argument("--api-runs", type=int, default=60, help="of them, run through savanna.run()")
    ap.add_argument("--timeout", type=float, default=30.0, help="per-case time limit, s")
    ap.add_argument("--seed", type=int, default=18)
    ap.add_argument("--corpus", type=Path, default=ROOT / "tests" / "fuzz_corpus" / "found")
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)
    counts: dict[str, int] = {}
    failures: list[tuple[str, str, str, str]] = []  # (kind, where, detail, text)
    valid: list[tuple[str, str]] = []
    refused_texts: list[str] = []
    wrong_field = refusals = 0
    v = Validator(args.timeout)
    t0 = time.perf_counter()
    for i in range(args.cases):
        name, d, paths = mutate(rng)
        text = to_toml(d)
        kind, msg = v.check(text)
        counts[f"validate {kind}"] = counts.get(f"validate {kind}", 0) + 1
        where = f"case {i} {name} {','.join(paths)}"
        if kind == "refused":
            refusals += 1
            refused_texts.append(text)
            if "\n" in msg.strip() or not names_a_real_field(field_of(msg), d):
                wrong_field += 1
                failures.append(("wrong-field", where, msg, text))
        elif kind == "ok":
            valid.append((where, text))
        else:
            failures.append((kind, where, msg, text))
    v.close()
    t_val = time.perf_counter() - t0

    picks = valid[: args.runs] + [(f"refused {i}", t) for i, t in enumerate(refused_texts[: args.runs // 5])]
    for where, text in picks:
        kind, msg = cli_run(text, args.timeout)
        counts[f"savanna run {kind}"] = counts.get(f"savanna run {kind}", 0) + 1
        if kind not in ("ok", "refused"):
            failures.append((kind, "run " + where, msg, text))
    for where, text in valid[: args.api_runs]:
        kind, msg = api_run(text, args.timeout)
        counts[f"savanna.run() {kind}"] = counts.get(f"savanna.run() {kind}", 0) + 1
        if kind not in ("ok", "refused"):
            failures.append((kind, "api " + where, msg, text))

    args.corpus.mkdir(parents=True, exist_ok=True)
    for n, (kind, where, msg, text) in enumerate(failures):
        head = f"# fuzz failure: {kind}\n# {where}\n# {one_line(msg)}\n"
        (args.corpus / f"{kind}-{args.seed}-{n:04d}.toml").write_text(head + text)

    total = sum(v for k, v in counts.items())
    print(
        f"fuzz: {args.cases} cases (seed {args.seed}), validate {t_val:.0f} s, total {time.perf_counter() - t0:.0f} s"
    )
    for k in sorted(counts):
        print(f"  {k:28s} {counts[k]:6d}")
    kinds = ["hang", "abort", "traceback", "leftover", "wrong"]
    for k in kinds:
        print(f"  {k + 's (all stages)':28s} {sum(1 for f in failures if f[0] == k):6d}")
    pct = 100.0 * wrong_field / refusals if refusals else 0.0
    print(f"  {'wrong-field rejections':28s} {wrong_field:6d} of {refusals} refusals ({pct:.2f}%)")
    print(f"  cases checked in all: {total}; failures kept in {args.corpus}: {len(failures)}")
    bad = any(f[0] in kinds for f in failures) or pct > 1.0
    return 1 if bad else 0


def one_line(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()[:400]


if __name__ == "__main__":
    sys.exit(main())
