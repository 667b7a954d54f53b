"""Triage settings and scores as pure logic (posts.triage): formulas are checked when saved,
computed without running code, and a post's facets and score follow its values."""

import math
import random

import pytest

from common.errors import BadRequest, NotFound
from posts import triage
from posts.reads.index import score_key

RICE = [
    {"key": "reach", "name": "Reach", "type": "number", "min": 0},
    {"key": "impact", "name": "Impact", "type": "number", "min": 0.25, "max": 3},
    {"key": "confidence", "name": "Confidence", "type": "number", "min": 0, "max": 1},
    {"key": "effort", "name": "Effort", "type": "number", "min": 0.5},
    {"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "android", "web"], "public": True},
    {"key": "segment", "name": "Segment", "type": "select", "options": ["smb", "enterprise"]},
    {"key": "blocker", "name": "Blocker", "type": "checkbox", "public": True},
    {"key": "notes", "name": "Notes", "type": "text"},
    {"key": "due", "name": "Due", "type": "date"},
]


def settings(formula: str | None, fields=RICE, tags=()) -> triage.Settings:
    stored = triage.check_settings({"tags": list(tags), "fields": fields, "scoreFormula": formula})
    return triage.Settings(version=1, tags=tuple(stored["tags"]), fields=tuple(stored["fields"]), formula_text=stored["scoreFormula"])


def refused(formula: str, fields=RICE) -> str:
    with pytest.raises(BadRequest) as raised:
        settings(formula, fields)
    return str(raised.value)


def test_a_rice_score_is_computed_from_votes_revenue_and_fields():
    s = settings("(votes + revenue / 100) * impact * confidence / effort + blocker * 10")
    doc = {"voteCount": 12, "revenueCents": 250_000, "fields": {"impact": 2, "confidence": 0.5, "effort": 4, "blocker": True}}
    assert s.formula.score(s.values(doc)) == (12 + 2500 / 100) * 2 * 0.5 / 4 + 10


def test_a_post_without_a_value_counts_as_the_fields_minimum_or_zero():
    s = settings("votes * impact / effort + reach")
    assert s.formula.score(s.values({"voteCount": 3})) == 3 * 0.25 / 0.5 + 0


def test_a_division_by_what_can_be_zero_is_refused_when_saved():
    assert "'confidence' can be 0" in refused("votes / confidence")
    assert "'votes - 1' can be 0" in refused("reach / (votes - 1)")
    assert "can be 0" in refused("votes / 0")
    assert "can be 0" in refused("votes / blocker")
    unbounded = [{"key": "weight", "name": "Weight", "type": "number"}]
    assert "'weight' can be 0" in refused("votes / weight", unbounded)
    # What cannot be zero is fine: a minimum above zero, max(..., 1), a constant.
    for ok in ("votes / effort", "votes / max(confidence, 0.1)", "votes / 2", "reach / (votes + 1)", "votes / (effort * impact)"):
        settings(ok)


def test_unknown_names_code_and_other_fields_are_refused():
    assert "unknown name 'rach'" in refused("rach * impact")
    assert "unknown name 'notes'" in refused("votes + notes")  # a text field is no number
    assert "unknown name 'segment'" in refused("votes * segment")
    for hostile in ("__import__('os').system('true')", "votes.real", "[votes]", "votes ** 2", "votes if 1 else 2",
                    "abs(votes)", "max(votes)", "lambda: 1", "votes; 1", "'a'", "True + votes", "9" * 400 + " + votes",
                    "(" * 300 + "votes" + ")" * 300, "votes\x00"):
        message = refused(hostile)
        assert message.startswith("field 'scoreFormula'"), (hostile, message)
    assert settings("-" * 490 + "votes").formula.score({"votes": 2.0}) == 2.0  # deep, but arithmetic


def test_settings_are_checked_beyond_their_schema():
    with pytest.raises(BadRequest, match="appears twice"):
        triage.check_settings({"tags": [{"slug": "a", "name": "A", "color": "#000000"}] * 2, "fields": []})
    with pytest.raises(BadRequest, match="needs its options"):
        triage.check_settings({"tags": [], "fields": [{"key": "s", "name": "S", "type": "select"}]})
    with pytest.raises(BadRequest, match="min 3 is above max 1"):
        triage.check_settings({"tags": [], "fields": [{"key": "n", "name": "N", "type": "number", "min": 3, "max": 1}]})
    with pytest.raises(BadRequest, match="the formula's own name"):
        triage.check_settings({"tags": [], "fields": [{"key": "votes", "name": "V", "type": "number"}]})


def test_values_must_fit_their_fields():
    s = settings(None)
    assert triage.check_values(s, {"impact": 3, "platform": ["ios", "web"], "due": "2027-02-28", "blocker": False}) == {
        "impact": 3, "platform": ["ios", "web"], "due": "2027-02-28", "blocker": False}
    for key, bad in [("impact", 4), ("impact", "3"), ("impact", math.inf), ("platform", ["ios", "ios"]), ("platform", "ios"),
                     ("segment", "mid"), ("due", "2027-02-30"), ("blocker", 1), ("notes", "")]:
        with pytest.raises(BadRequest, match=f"fields.{key}"):
            triage.check_values(s, {key: bad})
    with pytest.raises(NotFound, match="no custom field 'nope'"):  # named but not there, as an unknown status
        triage.check_values(s, {"nope": 1})


def test_facets_name_tags_owner_and_filterable_fields_and_settings_conform_posts():
    tags = [{"slug": "bug", "name": "Bug", "color": "#ff0000"}]
    s = settings(None, tags=tags)
    doc = {"tags": ["bug", "gone"], "owner": {"id": "person:7", "name": "Ann"},
           "fields": {"platform": ["ios", "web"], "segment": "smb", "blocker": True, "impact": 2, "notes": "x"}}
    assert s.facets(doc) == ["tag:bug", "owner:person:7", "field:platform=ios", "field:platform=web", "field:segment=smb",
                             "field:blocker=true"]
    narrower = settings(None, fields=[{"key": "segment", "name": "S", "type": "select", "options": ["enterprise"]},
                                      {"key": "impact", "name": "I", "type": "number", "max": 5}], tags=tags)
    assert narrower.conform(doc) == {"tags": ["bug"], "fields": {"impact": 2}}


def test_end_users_see_public_fields_and_tags_and_the_team_sees_all():
    s = settings("votes", tags=[{"slug": "bug", "name": "Bug", "color": "#ff0000"}])
    doc = {"voteCount": 2, "score": 2.0, "tags": ["bug"], "eta": "2027-03", "owner": {"id": "person:1", "name": "A"},
           "fields": {"blocker": True, "segment": "smb"}}
    public = s.shape(doc, team=False)
    assert public == {"tags": [{"slug": "bug", "name": "Bug", "color": "#ff0000"}], "eta": "2027-03", "fields": {"blocker": True}}
    team = s.shape(doc, team=True)
    assert team["fields"] == {"blocker": True, "segment": "smb"} and team["owner"]["id"] == "person:1" and team["score"] == 2.0
    assert [f["key"] for f in s.shown(team=False)["fields"]] == ["platform", "blocker"]
    assert "scoreFormula" not in s.shown(team=False)
    with pytest.raises(BadRequest, match="no custom field 'segment'"):
        triage.parse_filter(s, "segment", "smb", team=False)
    assert triage.parse_filter(s, "segment", "smb", team=True) == "field:segment=smb"


def test_score_keys_order_as_the_scores_do():
    rng = random.Random(7)
    scores = [0.0, -0.0, 1.5, -1.5, 1e15, -1e15, 3.0, 2.9999999, 1e-300, -1e-300] + [rng.uniform(-1e6, 1e6) for _ in range(200)]
    assert sorted(scores, key=score_key) == sorted(scores)
    assert score_key(None) < score_key(-1e15)
    assert score_key(0.0) == score_key(-0.0)
