"""Issue 17 item 4 for FavorQueue 2013: every claim of the committed full-mode run that is
not reproduced (or only in direction) carries a cause and the evidence behind it, and the
committed file agrees with the module's declared causes and ns-2's results as they stand."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "results" / "full" / "favorqueue-2013" / "claims.json"
MISSED = ("not reproduced", "same direction")


def _committed() -> list[dict]:
    return json.loads(CLAIMS.read_text())["claims"]


def test_every_missed_claim_has_a_cause_and_evidence():
    from savanna.reproduce.ns2column import CAUSES

    missed = [c for c in _committed() if c["verdict"] in MISSED]
    assert missed, "the committed run has claims not reproduced: the check must see them"
    bad = [c["id"] for c in missed if c.get("cause") not in CAUSES or not (c.get("evidence") or "").strip()]
    assert not bad, f"claims without a cause from {CAUSES} and evidence: {bad}"


def test_declared_causes_name_real_claims_and_allowed_causes():
    from savanna.reproduce import favorqueue_2013 as fq
    from savanna.reproduce.ns2column import CAUSES

    ids = {c.id for c in fq.CLAIMS}
    for cid, (cause, evidence) in fq.NS2_CAUSES.items():
        assert cid in ids, f"NS2_CAUSES names {cid!r}, which is no claim"
        assert cause in CAUSES, f"{cid}: cause {cause!r} not in {CAUSES}"
        assert len(evidence) > 80, f"{cid}: the evidence is a label, not a finding"


def test_committed_causes_are_what_refresh_gives_now():
    """The committed claims.json was refreshed after the last change to NS2_CAUSES or
    ns2_papers.json: recomputing changes no cause, evidence or ns-2 value."""
    from savanna.reproduce.ns2column import refresh

    if not (ROOT / "benchmarks" / "results" / "ns2_papers.json").is_file():
        pytest.skip("no ns-2 results in this checkout")
    now = {c["id"]: c for c in refresh(CLAIMS, "favorqueue_2013")}
    for c in _committed():
        for k in ("cause", "evidence", "ns2", "ns2_verdict"):
            assert now[c["id"]][k] == c.get(k), f"{c['id']}.{k} is stale: run ns2column.refresh(..., write=True)"
