"""Tests of savanna.report (the reproduction reports): the verdict rule, the confidence
interval, report.md / report.html / claims.json written from synthetic figures, claims and
tables, self-containment of the HTML, and a render of it in headless Chromium."""

from __future__ import annotations

import base64
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from savanna.report import (
    NOT_REPRODUCED,
    REPRODUCED,
    SAME_DIRECTION,
    Claim,
    ClaimSpec,
    IndexEntry,
    Table,
    judge,
    mean_ci,
    save_figure,
    write_index,
    write_report,
)

# ---- the confidence interval ---------------------------------------------------------------


def test_mean_ci_student_t():
    # mean 2, sample sd 1, n 3: half-width t_{0.975, 2} / sqrt(3), t_{0.975, 2} = 4.302653
    m, lo, hi, n = mean_ci([1.0, 2.0, 3.0])
    assert n == 3 and m == pytest.approx(2.0)
    assert hi - m == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert m - lo == pytest.approx(hi - m)


def test_mean_ci_ignores_undefined_replications_and_handles_one_or_none():
    assert mean_ci([1.0, float("nan"), 3.0, None])[3] == 2
    assert mean_ci([5.0]) == (5.0, 5.0, 5.0, 1)
    m, lo, hi, n = mean_ci([])
    assert n == 0 and math.isnan(m) and math.isnan(lo) and math.isnan(hi)


# ---- the verdict rule --------------------------------------------------------------------


def test_mean_within_tolerance_is_reproduced_and_says_if_the_ci_holds_the_number():
    c = judge(ClaimSpec("a", "x", paper_value=10.0, rel_tol=0.1), [9.0, 10.5, 11.0])
    assert c.verdict == REPRODUCED and "also lies inside our 95% CI" in c.note
    assert c.n == 3 and c.ci_low < 10.0 < c.ci_high


def test_a_ci_wider_than_the_tolerance_does_not_confirm_a_number():
    # mean 12, CI about +-25 contains 10, but the tolerance is 2.5 and 12 is outside it
    spec = ClaimSpec("a", "x", paper_value=10.0, rel_tol=0.1)
    c = judge(spec, [0.0, 12.0, 24.0])
    assert c.ci_low < 10.0 < c.ci_high
    assert c.verdict == NOT_REPRODUCED and "wider than" in c.note
    c = judge(ClaimSpec("a", "x", paper_value=10.0, rel_tol=0.1, direction=">"), [0.0, 12.0, 24.0])
    assert c.verdict == SAME_DIRECTION


def test_within_declared_tolerance_is_reproduced():
    # CI is about [10.9, 11.1]: excludes 10, but 11 is within 25% of 10
    c = judge(ClaimSpec("a", "x", paper_value=10.0, rel_tol=0.25), [10.99, 11.0, 11.01])
    assert c.verdict == REPRODUCED and "tolerance" in c.note
    c = judge(ClaimSpec("a", "x", paper_value=10.0, rel_tol=0.05), [10.99, 11.0, 11.01])
    assert c.verdict == NOT_REPRODUCED
    c = judge(ClaimSpec("a", "x", paper_value=0.0, abs_tol=2.0), [1.5, 1.6, 1.7])
    assert c.verdict == REPRODUCED


def test_number_missed_but_direction_kept_is_same_direction():
    spec = ClaimSpec("a", "gain", paper_value=30.0, unit="%", direction=">", rel_tol=0.25, why_differs="Because of X.")
    c = judge(spec, [10.0, 11.0, 12.0])
    assert c.verdict == SAME_DIRECTION
    assert c.note.endswith("Because of X.")
    c = judge(spec, [-10.0, -11.0, -12.0])
    assert c.verdict == NOT_REPRODUCED
    c = judge(spec, [29.0, 30.5, 31.0])
    assert c.verdict == REPRODUCED and "Because of X." not in c.note
    # exact numbers with no tolerance: only an exact mean reproduces them
    exact = ClaimSpec("e", "every class", paper_value=100.0, direction=">", reference=50.0, rel_tol=0.0)
    assert judge(exact, [100.0, 100.0, 100.0]).verdict == REPRODUCED
    assert judge(exact, [100.0, 66.7, 100.0]).verdict == SAME_DIRECTION


def test_result_specific_reason_replaces_the_declared_one():
    spec = ClaimSpec("a", "x", paper_value=30.0, direction=">", why_differs="Declared.")
    c = judge(spec, [10.0, 11.0], why="Measured: loss up 5 points.")
    assert c.note.endswith("Measured: loss up 5 points.") and "Declared." not in c.note
    assert judge(spec, [10.0, 11.0], note="Whole note.").note == "Whole note."


def test_direction_only_claims():
    spec = ClaimSpec("d", "FaQ lower", direction="<", reference=0.0)
    assert judge(spec, [-3.0, -2.0, -2.5]).verdict == REPRODUCED
    assert judge(spec, [-3.0, 1.0, -2.5]).verdict == SAME_DIRECTION  # mean < 0, CI crosses 0
    assert judge(spec, [3.0, 2.0, 2.5]).verdict == NOT_REPRODUCED
    spec = ClaimSpec("e", "more than half", direction=">", reference=50.0)
    assert judge(spec, [60.0, 70.0, 65.0]).verdict == REPRODUCED


def test_no_samples_is_not_reproduced():
    c = judge(ClaimSpec("a", "x", paper_value=1.0), [float("nan")])
    assert c.verdict == NOT_REPRODUCED and c.n == 0


def test_bad_specs_and_verdicts_are_refused():
    with pytest.raises(ValueError, match="paper_value, a direction"):
        ClaimSpec("a", "x")
    with pytest.raises(ValueError, match="direction"):
        ClaimSpec("a", "x", direction="=")
    with pytest.raises(ValueError, match="tolerances"):
        ClaimSpec("a", "x", paper_value=1.0, rel_tol=-1.0)
    with pytest.raises(ValueError, match="verdict"):
        Claim("a", "x", "1", 1.0, 1.0, 1.0, 1.0, 1, "maybe")


# ---- writing a report ----------------------------------------------------------------------


def _synthetic(out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    for i, (fid, title) in enumerate([("fig01-lines", "Figure one: lines"), ("fig02-bars", "Figure two: bars")]):
        fg, ax = plt.subplots(figsize=(4, 3))
        if i == 0:
            ax.plot([0, 1, 2], [1, 3, 2], color="#d6008f", linewidth=4)
        else:
            ax.bar(["a", "b"], [2, 5], color="#e07b00")
        figs.append(save_figure(fg, out, fid, title, f"Caption of {title} with a < b & c."))
    claims = [
        judge(
            ClaimSpec("c-num", "A number: 1 < 2 & so on", paper_value=5.0, unit="%", source="Fig. 1"), [4.8, 5.1, 5.3]
        ),
        judge(ClaimSpec("c-dir", "A direction", direction=">", source="§2"), [1.0, -1.0, 1.5]),
        judge(ClaimSpec("c-miss", "A miss", paper_value=100.0, unit="ms", source="Table 1"), [10.0, 11.0]),
    ]
    tables = [Table("A table", ["load", "latency (s)"], [[0.5, 1.25], [0.95, 2.5]], "Means.")]
    meta = {"command": "savanna reproduce test --quick", "wall time": "1.0 s", "seeds": "1-3", "savanna version": "0"}
    return figs, claims, tables, meta


@pytest.fixture
def report(tmp_path):
    figs, claims, tables, meta = _synthetic(tmp_path)
    paths = write_report(
        tmp_path, "Synthetic <report>", "First paragraph.\n\nSecond paragraph.", figs, claims, tables, meta
    )
    return tmp_path, paths, figs, claims


def _laid_out_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fg, ax = plt.subplots(figsize=(6.4, 3.9), layout="constrained")
    ax.semilogx([1, 10, 100, 1000], [0.5, 1.25, 2.0, 1.5], marker="o", label="a curve")
    ax.set_xlabel("object size (packets)")
    ax.set_ylabel("mean response time (s)")
    ax.set_title("A title")
    ax.legend()
    return fg, ax


def test_svg_is_drawn_with_the_png_layout_and_the_png_is_unchanged(tmp_path):
    import io

    # The reference: the same figure saved as a PNG alone, laid out for the PNG.
    ref, ref_ax = _laid_out_figure()
    buf = io.BytesIO()
    ref.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    want = ref_ax.get_position()
    fg, _ = _laid_out_figure()
    f = save_figure(fg, tmp_path, "fig01", "Figure one", "Caption.")
    assert f.png.read_bytes() == buf.getvalue()
    # The axes' background rectangle in the SVG (points, y down) is where the PNG's layout
    # put the axes; an SVG laid out again (72-dpi text metrics) moves it by a point or two.
    svg = f.svg.read_text()
    path = re.search(r'<g id="patch_2">\s*<path d="([^"]*)"', svg).group(1)
    xy = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path)]
    xs, ys = xy[0::2], xy[1::2]
    w, h = 6.4 * 72, 3.9 * 72
    got = (min(xs) / w, 1 - max(ys) / h, max(xs) / w, 1 - min(ys) / h)
    assert got == pytest.approx((want.x0, want.y0, want.x1, want.y1), abs=1e-5)


def test_report_files_hold_every_figure_and_claim(report):
    out, paths, figs, claims = report
    md = paths["md"].read_text()
    html = paths["html"].read_text()
    for f in figs:
        assert f.png.is_file() and f.svg.is_file()
        assert f"![{f.title}](figures/{f.png.name})" in md
        assert f'id="fig-{f.id}"' in html
        assert f.title in html
    for c in claims:
        assert f"| {c.id} |" in md
        assert f'id="claim-{c.id}"' in html
        assert c.verdict in html
    assert "A table" in md and "A table" in html
    assert "savanna reproduce test --quick" in md and "savanna reproduce test --quick" in html
    # text is escaped, not interpreted as markup
    assert "1 &lt; 2 &amp; so on" in html and "Synthetic &lt;report&gt;" in html
    data = json.loads(paths["json"].read_text())
    assert [c["id"] for c in data["claims"]] == ["c-num", "c-dir", "c-miss"]
    assert data["verdicts"] == {REPRODUCED: 1, SAME_DIRECTION: 1, NOT_REPRODUCED: 1}


def test_html_is_self_contained(report):
    out, paths, figs, _ = report
    html = paths["html"].read_text()
    for bad in ("http://", "https://", "file:", "<link", "<script", "url("):
        assert bad not in html, bad
    srcs = re.findall(r'src="([^"]*)"', html)
    assert len(srcs) == len(figs)
    for s, f in zip(srcs, figs):
        assert s.startswith("data:image/png;base64,")
        assert base64.b64decode(s.split(",", 1)[1]) == f.png.read_bytes()
    # every href is an anchor inside the page
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', html))


def test_index_links_each_report(tmp_path):
    entries = [
        IndexEntry("paper-a", "Paper A", "paper-a", {REPRODUCED: 2, NOT_REPRODUCED: 1}, 3.0),
        IndexEntry("paper-b", "Paper B", "paper-b", {SAME_DIRECTION: 4}, None),
    ]
    p = write_index(tmp_path, "Index", entries, meta={"mode": "quick"})
    html, md = p["html"].read_text(), p["md"].read_text()
    assert 'href="paper-a/report.html"' in html and 'href="paper-b/report.html"' in html
    assert "| Paper A | 3 | 2 | 0 | 1 | 3 s | [paper-a/report.md](paper-a/report.md) |" in md
    assert "| Paper B | 4 | 0 | 4 | 0 |" in md


# ---- rendering in a browser -----------------------------------------------------------------


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium (make setup installs Debian's chromium)")
def test_report_renders_in_headless_chromium(report, tmp_path):
    out, paths, _, _ = report
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={shot}",
            "--window-size=1200,2000",
            paths["html"].resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.is_file() and shot.stat().st_size > 0, proc.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)[:, :, :3]
    assert img.shape[:2] == (2000, 1200)
    assert float(img.std()) > 0.05  # not a blank page
    # the header band is drawn with the page's CSS (dark blue, #20365f at its left edge)
    r, g, b = img[20, 5] * 255
    assert abs(r - 0x20) < 25 and abs(g - 0x36) < 25 and abs(b - 0x5F) < 25, (r, g, b)
    # the figures were decoded and drawn: the first figure's magenta line (#d6008f, a colour
    # the page itself never uses) is on the page
    px = img * 255
    magenta = (np.abs(px[:, :, 0] - 0xD6) < 30) & (px[:, :, 1] < 40) & (np.abs(px[:, :, 2] - 0x8F) < 30)
    assert magenta.sum() > 100
