"""Reproduction reports: a paper's claims set against ours, with figures, as one
self-contained HTML page and a Markdown page.

Used by every paper under ``savanna.reproduce`` (Guo & Matta 2001, Anelli, Diana & Lochin
2013 "FavorQueue", Matta & Guo 2000, Tokuda, Hasegawa & Murata 2002). The model is small:

- ``Claim``: one quantitative statement of the paper (its number, as printed), our mean and
  95% confidence interval over replications, and a verdict with one sentence of note.
- ``ClaimSpec`` + ``judge``: the verdict rule (below), with the tolerance declared with the
  claim, before any result is seen.
- ``Figure``: a figure written as PNG and SVG (``save_figure`` writes both from matplotlib).
- ``Table``: a small table of numbers shown in the report.
- ``write_report``: writes ``report.md`` and ``report.html`` (images inlined as base64 PNG,
  CSS inline, nothing fetched from anywhere); ``write_index`` writes the top-level index of
  ``savanna reproduce all``.

The verdict rule (docs/reproduce.md):

1. *reproduced*: the paper gives a number and our mean is within the claim's declared
   tolerance of it, ``|mean - paper| <= max(rel_tol x |paper|, abs_tol)``. (A paper number
   inside our 95% CI does not suffice on its own: a CI wider than the tolerance, as few
   replications give, would contain almost anything; and a CI no wider than the tolerance
   that contains the number puts the mean within the tolerance anyway.) A claim with no
   number, only a direction ("FavorQueue's drop ratio is lower"), is reproduced when our
   whole 95% CI lies on the claimed side of the reference.
2. *same direction*: not reproduced, but our mean lies on the claimed side of the
   reference (the sign or order of the effect matches).
3. *not reproduced*: otherwise (including a claim without a direction whose number we miss).
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPRODUCED = "reproduced"
SAME_DIRECTION = "same direction"
NOT_REPRODUCED = "not reproduced"
VERDICTS = (REPRODUCED, SAME_DIRECTION, NOT_REPRODUCED)

_DIRECTIONS = (">", "<")


# ---------------------------------------------------------------------------------------
# Statistics


def mean_ci(samples: Iterable[float], level: float = 0.95) -> tuple[float, float, float, int]:
    """Mean and two-sided Student-t confidence interval of independent replications
    (``savanna.analysis.stats.mean_ci``), ignoring non-finite samples (a replication in
    which the quantity is undefined, e.g. no flow of that size). Returns
    ``(mean, low, high, n)``; with one sample the interval is that sample (no spread can
    be estimated), with none everything is NaN."""
    xs = [float(x) for x in samples if x is not None and math.isfinite(float(x))]
    if not xs:
        return math.nan, math.nan, math.nan, 0
    from savanna.analysis.stats import mean_ci as _mean_ci

    ci = _mean_ci(xs, confidence=level)
    if ci.n == 1:
        return ci.mean, ci.mean, ci.mean, 1
    return ci.mean, ci.low, ci.high, ci.n


# ---------------------------------------------------------------------------------------
# Claims and the verdict rule


@dataclass(frozen=True)
class ClaimSpec:
    """A claim as declared before the experiment: what the paper says and how we judge it.

    ``paper_value``: the paper's number in ``unit`` (None for a claim of direction only).
    ``paper_text``: how the paper states it (default: the number with its unit).
    ``direction`` (``">"`` or ``"<"``) and ``reference``: the qualitative content of the
    claim, "our value > reference" (e.g. a latency gain > 0). ``rel_tol``/``abs_tol``:
    how close to the paper's number counts as reproducing it. ``why_differs``: one
    sentence, known before the run, on why ours may differ (used when it does).
    """

    id: str
    text: str
    paper_value: float | None = None
    unit: str = ""
    paper_text: str | None = None
    direction: str | None = None
    reference: float = 0.0
    rel_tol: float = 0.25
    abs_tol: float = 0.0
    source: str = ""
    why_differs: str = ""

    def __post_init__(self) -> None:
        if self.direction is not None and self.direction not in _DIRECTIONS:
            raise ValueError(f"claim {self.id}: direction must be one of {_DIRECTIONS}, not {self.direction!r}")
        if self.paper_value is None and self.direction is None:
            raise ValueError(f"claim {self.id}: give a paper_value, a direction, or both")
        if self.rel_tol < 0 or self.abs_tol < 0:
            raise ValueError(f"claim {self.id}: tolerances must be >= 0")


@dataclass
class Claim:
    """One row of the report's claims table (see the module docstring for the verdict)."""

    id: str
    text: str
    paper: str
    paper_value: float | None
    mean: float
    ci_low: float
    ci_high: float
    n: int
    verdict: str
    note: str = ""
    unit: str = ""
    source: str = ""
    # ns-2.35 on the same set-up, and the cause of a miss (savanna.reproduce.ns2column)
    ns2: float | None = None
    ns2_verdict: str = ""
    cause: str = ""
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.id}: verdict must be one of {VERDICTS}, not {self.verdict!r}")


def judge(spec: ClaimSpec, samples: Iterable[float], note: str = "", why: str = "") -> Claim:
    """Apply the verdict rule to our per-replication ``samples`` of the claimed quantity.

    The note is an automatic sentence stating where our value sits against the paper's,
    followed, when the verdict is not *reproduced*, by ``why`` (an explanation written
    from the results, e.g. naming another measured quantity) or else
    ``spec.why_differs``. ``note`` replaces all of it.
    """
    m, lo, hi, n = mean_ci(samples)
    paper_text = spec.paper_text if spec.paper_text is not None else _num(spec.paper_value, spec.unit)
    if n == 0:
        return Claim(
            spec.id,
            spec.text,
            paper_text,
            spec.paper_value,
            m,
            lo,
            hi,
            0,
            NOT_REPRODUCED,
            note or "No replication produced this quantity (no qualifying flows or runs).",
            spec.unit,
            spec.source,
        )
    verdict, auto = _verdict(spec, m, lo, hi)
    if not note:
        note = auto
        reason = why or spec.why_differs
        if verdict != REPRODUCED and reason:
            note = f"{note} {reason}"
    return Claim(spec.id, spec.text, paper_text, spec.paper_value, m, lo, hi, n, verdict, note, spec.unit, spec.source)


def _verdict(spec: ClaimSpec, m: float, lo: float, hi: float):
    u = spec.unit
    side = None
    if spec.direction is not None:
        on_side = m > spec.reference if spec.direction == ">" else m < spec.reference
        ci_side = lo > spec.reference if spec.direction == ">" else hi < spec.reference
        side = (on_side, ci_side)
    if spec.paper_value is not None:
        p = spec.paper_value
        tol = max(spec.rel_tol * abs(p), spec.abs_tol)
        half = (hi - lo) / 2.0
        inside = lo <= p <= hi
        if abs(m - p) <= tol:
            where = "; it also lies inside our 95% CI" if inside else ""
            return (
                REPRODUCED,
                f"Ours is within the declared tolerance (±{_num(tol, u)}) of the paper's {_num(p, u)}{where}.",
            )
        if inside:  # the CI is then wider than the tolerance: it cannot confirm the number
            gap = (
                f"The paper's {_num(p, u)} lies inside our 95% CI, but that CI (±{_num(half, u)}) is wider than "
                f"the ±{_num(tol, u)} tolerance and our mean {_num(m, u)} is outside it"
            )
        else:
            gap = f"Ours is {_num(m, u)} against the paper's {_num(p, u)}, beyond the ±{_num(tol, u)} tolerance"
        if side is not None and side[0]:
            return SAME_DIRECTION, f"{gap}; it is on the claimed side of {_num(spec.reference, u)}."
        if side is not None:
            return NOT_REPRODUCED, f"{gap}; it is not on the claimed side of {_num(spec.reference, u)}."
        return NOT_REPRODUCED, f"{gap}."
    on_side, ci_side = side  # direction-only claim
    ref = _num(spec.reference, u)
    if ci_side:
        return REPRODUCED, f"Our whole 95% CI is {spec.direction} {ref}, as claimed."
    if on_side:
        return SAME_DIRECTION, f"Our mean is {spec.direction} {ref} as claimed, but the 95% CI reaches past it."
    return NOT_REPRODUCED, f"Our mean is not {spec.direction} {ref}."


def _num(x: float | None, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    a = abs(x)
    if a == 0:
        s = "0"
    elif a >= 100:
        s = f"{x:,.0f}"
    elif a >= 10:
        s = f"{x:.1f}"
    elif a >= 0.1:
        s = f"{x:.2f}"
    elif a >= 0.001:
        s = f"{x:.3f}"
    else:
        s = f"{x:.2e}"
    if unit == "%":
        return s + "%"
    return f"{s} {unit}" if unit else s


# ---------------------------------------------------------------------------------------
# Figures and tables


@dataclass
class Figure:
    """A figure of the report: ``png`` and ``svg`` are files (the same picture)."""

    id: str
    title: str
    caption: str
    png: Path
    svg: Path | None = None
    wide: bool = False  # spans the page width in the HTML report (multi-panel figures)


def save_figure(fig: Any, out_dir: str | Path, id: str, title: str, caption: str, dpi: int = 110) -> Figure:
    """Write a matplotlib figure as ``<out_dir>/figures/<id>.png`` and ``.svg``, close it,
    and return its ``Figure``. The SVG carries no timestamp, so reruns are byte-identical.
    A figure at least 8 inches wide is shown across the page in the HTML report.

    The layout (constrained layout, the reports' style) is computed once, for the PNG,
    and the SVG is drawn with it: a layout pass costs about as much as a drawing (every
    tick label measured, twice), and the SVG's own, with 72-dpi text metrics, would move
    the axes by a point or two and could pick other ticks than the PNG's."""
    import matplotlib.pyplot as plt

    d = Path(out_dir) / "figures"
    d.mkdir(parents=True, exist_ok=True)
    png, svg = d / f"{id}.png", d / f"{id}.svg"
    fig.savefig(png, dpi=dpi, metadata={"Software": None})
    fig.set_layout_engine("none")  # keep the PNG's layout: positions stay where it put them
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    wide = bool(fig.get_figwidth() >= 8.0)
    plt.close(fig)
    return Figure(id, title, caption, png, svg, wide)


@dataclass
class Table:
    """A small table: ``columns`` names, ``rows`` of cells (numbers are formatted)."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""

    @classmethod
    def from_frame(cls, title: str, df: Any, caption: str = "") -> Table:
        return cls(title, [str(c) for c in df.columns], df.values.tolist(), caption)


def _cell(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return "" if x is None else str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return _num(x)
    try:  # numpy scalars
        import numpy as np

        if isinstance(x, np.integer):
            return f"{int(x):,}"
        if isinstance(x, np.floating):
            return _num(float(x))
    except ImportError:  # pragma: no cover
        pass
    return str(x)


# ---------------------------------------------------------------------------------------
# Writing


def verdict_counts(claims: Sequence[Claim]) -> dict[str, int]:
    return {v: sum(1 for c in claims if c.verdict == v) for v in VERDICTS}


def write_report(
    out_dir: str | Path,
    title: str,
    intro: str,
    figures: Sequence[Figure],
    claims: Sequence[Claim],
    tables: Sequence[Table] = (),
    meta: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; return their paths.

    ``intro`` is plain text (paragraphs separated by blank lines). ``meta`` is shown as
    the run metadata (command, duration, seeds, savanna version, ...), and also saved in
    ``claims.json`` with every claim so that other tools can read the verdicts.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    md = _markdown(out, title, intro, figures, claims, tables, meta)
    page = _html(title, intro, figures, claims, tables, meta)
    paths = {"md": out / "report.md", "html": out / "report.html", "json": out / "claims.json"}
    paths["md"].write_text(md, encoding="utf-8")
    paths["html"].write_text(page, encoding="utf-8")
    paths["json"].write_text(
        json.dumps(
            {
                "title": title,
                "meta": meta,
                "verdicts": verdict_counts(claims),
                "claims": [_claim_json(c) for c in claims],
                "figures": [
                    {"id": f.id, "title": f.title, "png": _rel(f.png, out), "svg": _rel(f.svg, out)} for f in figures
                ],
            },
            indent=2,
            default=str,
        )
        + "\n",
        encoding="utf-8",
    )
    return paths


def _claim_json(c: Claim) -> dict[str, Any]:
    def f(x):
        return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x

    return {
        "id": c.id,
        "text": c.text,
        "paper": c.paper,
        "paper_value": f(c.paper_value),
        "mean": f(c.mean),
        "ci_low": f(c.ci_low),
        "ci_high": f(c.ci_high),
        "n": c.n,
        "verdict": c.verdict,
        "note": c.note,
        "unit": c.unit,
        "source": c.source,
        "ns2": f(c.ns2),
        "ns2_verdict": c.ns2_verdict or None,
        "cause": c.cause or None,
        "evidence": c.evidence or None,
    }


def _rel(p: Path | None, base: Path) -> str | None:
    if p is None:
        return None
    try:
        return Path(p).resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return Path(p).name


def _ours(c: Claim) -> str:
    if c.n == 0:
        return "n/a"
    if c.n == 1:
        return f"{_num(c.mean, c.unit)} (n = 1)"
    return f"{_num(c.mean, c.unit)} [{_num(c.ci_low, c.unit)}, {_num(c.ci_high, c.unit)}] (n = {c.n})"


def _ours_html(c: Claim) -> str:
    if c.n == 0:
        return "n/a"
    main = f'<span class="strong">{_e(_num(c.mean, c.unit))}</span>'
    if c.n == 1:
        return main + '<span class="ci">n = 1</span>'
    return (
        main
        + f'<span class="ci">95% CI {_e(_num(c.ci_low, c.unit))} to {_e(_num(c.ci_high, c.unit))} · n = {c.n}</span>'
    )


def _third_html(c: Claim) -> str:
    """ns-2's number and the cause of a miss (savanna.reproduce.ns2column), under the note."""
    out = ""
    if c.ns2 is not None:
        out += f'<span class="ci">ns-2.35: {_e(_num(c.ns2, c.unit))} ({_e(c.ns2_verdict)})</span>'
    if c.cause:
        out += f'<span class="ci">cause: {_e(c.cause)}. {_e(c.evidence)}</span>'
    return out


def _md_escape(s: str) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _markdown(out, title, intro, figures, claims, tables, meta) -> str:
    counts = verdict_counts(claims)
    lines = [f"# {title}", ""]
    if intro:
        lines += [intro.strip(), ""]
    lines += [
        "## Claims",
        "",
        f"{len(claims)} claims: {counts[REPRODUCED]} reproduced, {counts[SAME_DIRECTION]} same direction, "
        f"{counts[NOT_REPRODUCED]} not reproduced. Ours: mean [95% CI] over n replications.",
        "",
    ]
    third = any(c.ns2 is not None or c.cause for c in claims)
    if third:
        lines += [
            "| id | claim | where | paper | ours | ns-2.35 | verdict | cause | note |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
    else:
        lines += ["| id | claim | where | paper | ours | verdict | note |", "|---|---|---|---|---|---|---|"]
    for c in claims:
        cells = [c.id, c.text, c.source, c.paper, _ours(c)]
        if third:
            ns2 = "-" if c.ns2 is None else f"{_num(c.ns2, c.unit)} ({c.ns2_verdict})"
            cells += [ns2, f"**{c.verdict}**", f"{c.cause}: {c.evidence}" if c.cause else ""]
        else:
            cells.append(f"**{c.verdict}**")
        lines.append("| " + " | ".join(_md_escape(x) for x in cells + [c.note]) + " |")
    lines.append("")
    if figures:
        lines += ["## Figures", ""]
        for f in figures:
            lines += [f"### {f.title}", "", f"![{f.title}]({_rel(f.png, out)})", ""]
            if f.caption:
                lines += [f.caption.strip(), ""]
            if f.svg is not None:
                lines += [f"Vector version: [{_rel(f.svg, out)}]({_rel(f.svg, out)})", ""]
    for t in tables:
        lines += [f"## {t.title}", ""]
        if t.caption:
            lines += [t.caption.strip(), ""]
        lines.append("| " + " | ".join(_md_escape(c) for c in t.columns) + " |")
        lines.append("|" + "---|" * len(t.columns))
        for r in t.rows:
            lines.append("| " + " | ".join(_md_escape(_cell(x)) for x in r) + " |")
        lines.append("")
    if meta:
        lines += ["## Run", "", "| | |", "|---|---|"]
        for k, v in meta.items():
            lines.append(f"| {_md_escape(k)} | {_md_escape(_meta_value(v))} |")
        lines.append("")
    return "\n".join(lines)


def _meta_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.1f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):
        return ", ".join(f"{k}: {x}" for k, x in v.items())
    return str(v)


_CSS = """
:root { --ink:#1d2430; --muted:#5b6575; --line:#e3e7ee; --bg:#f6f7fa; --card:#fff;
  --ok:#1b7f3b; --okbg:#e3f4e8; --mid:#8a5a00; --midbg:#fdf0d2; --bad:#b42318; --badbg:#fde4e1; --acc:#2f5fb3; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 60px; }
header.top { background: linear-gradient(120deg, #20365f, #2f5fb3); color:#fff; padding: 26px 0 22px; }
header.top .in { max-width:1180px; margin:0 auto; padding:0 24px; }
header.top h1 { margin:0 0 6px; font-size: 26px; font-weight: 650; letter-spacing: .2px; }
header.top p { margin: 0; opacity:.88; }
h2 { font-size: 20px; margin: 34px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 0 0 8px; }
.intro p { margin: 0 0 10px; max-width: 75em; }
.chips { display:flex; gap:10px; flex-wrap:wrap; margin: 14px 0 4px; }
.chip { border-radius: 999px; padding: 5px 14px; font-weight: 600; font-size: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px;
  box-shadow: 0 1px 2px rgba(20,30,50,.04); }
table { border-collapse: collapse; width: 100%; font-size: 13.5px; }
th, td { text-align: left; vertical-align: top; padding: 7px 9px; border-bottom: 1px solid var(--line); }
th { background: #eef1f6; font-weight: 600; position: sticky; top: 0; }
tr:hover td { background: #fafbfd; }
td.num { white-space: nowrap; font-variant-numeric: tabular-nums; }
td.id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; color: var(--muted);
        white-space: nowrap; }
td.note { color: var(--muted); font-size: 12.5px; }
td.where { color: var(--muted); font-size: 12.5px; }
table.claims { table-layout: fixed; }
table.claims td { overflow-wrap: anywhere; }
table.claims td.id { white-space: normal; }
.ci { display: block; color: var(--muted); font-size: 11.5px; margin-top: 2px; }
.strong { font-weight: 600; }
.badge { display:inline-block; border-radius: 999px; padding: 2px 10px; font-size: 12.5px; font-weight: 650;
  white-space: nowrap; }
.v-ok { color: var(--ok); background: var(--okbg); }
.v-mid { color: var(--mid); background: var(--midbg); }
.v-bad { color: var(--bad); background: var(--badbg); }
.figs { display:grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 18px; }
figure { margin:0; }
figure.wide { grid-column: 1 / -1; }
figure.wide img { max-width: 1060px; margin: 0 auto; }
figure img { width: 100%; height: auto; display:block; border-radius: 6px; background:#fff; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 8px; }
figcaption code, .files { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; color:#7a8494; }
nav.toc { font-size: 13.5px; color: var(--muted); margin: 0 0 16px; }
nav.toc a { color: var(--acc); text-decoration: none; margin-right: 14px; }
table.meta td:first-child { width: 16em; color: var(--muted); }
.tablewrap { overflow-x: auto; }
footer { color: var(--muted); font-size: 12.5px; margin-top: 40px; }
"""

_BADGE = {REPRODUCED: "v-ok", SAME_DIRECTION: "v-mid", NOT_REPRODUCED: "v-bad"}


def _e(s: Any) -> str:
    return html.escape(str(s), quote=True)


def _paras(text: str) -> str:
    parts = [p.strip() for p in re.split(r"\n\s*\n", text or "") if p.strip()]
    return "".join(f"<p>{_e(' '.join(p.split()))}</p>" for p in parts)


def _img_data(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(Path(path).read_bytes()).decode("ascii")


def _html(title, intro, figures, claims, tables, meta) -> str:
    counts = verdict_counts(claims)
    h: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f'<header class="top"><div class="in"><h1>{_e(title)}</h1>',
    ]
    sub = []
    if meta.get("paper"):
        sub.append(str(meta["paper"]))
    if meta.get("mode"):
        sub.append(f"mode: {meta['mode']}")
    if sub:
        h.append(f"<p>{_e(' · '.join(sub))}</p>")
    h.append("</div></header><main>")
    toc = ['<a href="#claims">Claims</a>']
    if figures:
        toc.append('<a href="#figures">Figures</a>')
    if tables:
        toc.append('<a href="#tables">Tables</a>')
    if meta:
        toc.append('<a href="#run">Run</a>')
    h.append(f'<nav class="toc">{"".join(toc)}</nav>')
    if intro:
        h.append(f'<section class="intro">{_paras(intro)}</section>')

    h.append('<h2 id="claims">Claims and verdicts</h2>')
    h.append('<div class="chips">')
    for v in VERDICTS:
        h.append(f'<span class="chip {_BADGE[v]}">{counts[v]} {_e(v)}</span>')
    h.append(f'<span class="chip" style="background:#eef1f6">{len(claims)} claims</span></div>')
    h.append('<p class="files">Ours: mean [95% confidence interval] over n replications.</p>')
    h.append(
        '<div class="card tablewrap"><table class="claims"><colgroup><col style="width:13%">'
        '<col style="width:21%"><col style="width:8%"><col style="width:9%"><col style="width:13%">'
        '<col style="width:11%"><col style="width:25%"></colgroup><thead><tr><th>id</th><th>claim</th>'
        "<th>where</th><th>paper</th><th>ours</th><th>verdict</th><th>note</th></tr></thead><tbody>"
    )
    for c in claims:
        h.append(
            f'<tr id="claim-{_e(c.id)}"><td class="id">{_e(c.id)}</td><td>{_e(c.text)}</td>'
            f'<td class="where">{_e(c.source)}</td><td>{_e(c.paper)}</td>'
            f"<td>{_ours_html(c)}</td>"
            f'<td><span class="badge {_BADGE[c.verdict]}">{_e(c.verdict)}</span></td>'
            f'<td class="note">{_e(c.note)}{_third_html(c)}</td></tr>'
        )
    h.append("</tbody></table></div>")

    if figures:
        h.append('<h2 id="figures">Figures</h2><div class="figs">')
        for f in figures:
            files = _e(Path(f.png).name) + (f" · {_e(Path(f.svg).name)}" if f.svg is not None else "")
            h.append(
                f'<figure class="card{" wide" if f.wide else ""}" id="fig-{_e(f.id)}"><h3>{_e(f.title)}</h3>'
                f'<img alt="{_e(f.title)}" src="{_img_data(f.png)}">'
                f"<figcaption>{_e(f.caption)}<br><code>figures/{files}</code></figcaption></figure>"
            )
        h.append("</div>")

    if tables:
        h.append('<h2 id="tables">Tables</h2>')
        for t in tables:
            h.append(f'<div class="card tablewrap" style="margin-bottom:16px"><h3>{_e(t.title)}</h3>')
            if t.caption:
                h.append(f'<p class="files" style="font-family:inherit">{_e(t.caption)}</p>')
            h.append("<table><thead><tr>" + "".join(f"<th>{_e(c)}</th>" for c in t.columns) + "</tr></thead><tbody>")
            for r in t.rows:
                h.append("<tr>" + "".join(f'<td class="num">{_e(_cell(x))}</td>' for x in r) + "</tr>")
            h.append("</tbody></table></div>")

    if meta:
        h.append('<h2 id="run">Run</h2><div class="card"><table class="meta"><tbody>')
        for k, v in meta.items():
            h.append(f"<tr><td>{_e(k)}</td><td>{_e(_meta_value(v))}</td></tr>")
        h.append("</tbody></table></div>")
    h.append(
        "<footer>Written by savanna.report. Verdict rule: reproduced when our mean is within the tolerance "
        "declared with the claim of the paper's number (or, for a claim of direction only, when our whole 95% CI "
        "is on the claimed side); same direction when only the sign or order of the effect matches; otherwise "
        "not reproduced (docs/reproduce.md).</footer>"
    )
    h.append("</main></body></html>")
    return "\n".join(h) + "\n"


# ---------------------------------------------------------------------------------------
# Index of several reports


@dataclass
class IndexEntry:
    """One paper in the index: its directory (relative to the index), title, verdicts."""

    key: str
    title: str
    report_dir: str
    counts: dict[str, int] = field(default_factory=dict)
    wall_s: float | None = None


def write_index(
    out_dir: str | Path, title: str, entries: Sequence[IndexEntry], meta: dict[str, Any] | None = None
) -> dict[str, Path]:
    """Write ``index.html`` and ``index.md`` linking each paper's report with its verdict counts."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    meta = dict(meta or {})
    md = [
        f"# {title}",
        "",
        "| paper | claims | reproduced | same direction | not reproduced | wall time | report |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = []
    for e in entries:
        c = {v: int(e.counts.get(v, 0)) for v in VERDICTS}
        wall = f"{e.wall_s:.0f} s" if e.wall_s is not None else ""
        md.append(
            f"| {_md_escape(e.title)} | {sum(c.values())} | {c[REPRODUCED]} | {c[SAME_DIRECTION]} | "
            f"{c[NOT_REPRODUCED]} | {wall} | [{e.report_dir}/report.md]({e.report_dir}/report.md) |"
        )
        badges = "".join(
            f'<span class="badge {_BADGE[v]}" style="margin-right:6px">{c[v]} {_e(v)}</span>' for v in VERDICTS
        )
        rows.append(
            f'<tr><td><a href="{_e(e.report_dir)}/report.html">{_e(e.title)}</a>'
            f'<div class="files">{_e(e.key)}</div></td><td class="num">{sum(c.values())}</td>'
            f'<td>{badges}</td><td class="num">{_e(wall)}</td></tr>'
        )
    if meta:
        md += ["", "| | |", "|---|---|"] + [
            f"| {_md_escape(k)} | {_md_escape(_meta_value(v))} |" for k, v in meta.items()
        ]
    page = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f'<header class="top"><div class="in"><h1>{_e(title)}</h1><p>One report per paper.</p></div></header><main>',
        '<div class="card tablewrap"><table><thead><tr><th>paper</th><th>claims</th><th>verdicts</th>'
        "<th>wall time</th></tr></thead><tbody>",
        *rows,
        "</tbody></table></div>",
    ]
    if meta:
        page.append('<h2>Run</h2><div class="card"><table class="meta"><tbody>')
        page += [f"<tr><td>{_e(k)}</td><td>{_e(_meta_value(v))}</td></tr>" for k, v in meta.items()]
        page.append("</tbody></table></div>")
    page.append("</main></body></html>")
    paths = {"md": out / "index.md", "html": out / "index.html"}
    paths["md"].write_text("\n".join(md) + "\n", encoding="utf-8")
    paths["html"].write_text("\n".join(page) + "\n", encoding="utf-8")
    return paths
