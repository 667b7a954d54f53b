"""Scores kept current (posts.scores), in process against the real local database: writes racing
a save of the settings leave no post on an old formula, and a rescore conforms posts to
narrower settings."""

import threading

from posts.triage import Settings
from testkit import wait_for

from .helpers import manager, user

FIELDS = [{"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3},
          {"key": "area", "name": "Area", "type": "select", "options": ["api", "ui"]}]


def settings_body(formula: str, fields=FIELDS, tags=("bug", "ux")) -> dict:
    return {"tags": [{"slug": t, "name": t, "color": "#123456"} for t in tags], "fields": fields, "scoreFormula": formula}


def stored(context, slug: str) -> list[dict]:
    return list(context.store.db.posts.find({"workspace": slug}))


def test_posts_created_and_voted_on_while_the_formula_changes_end_on_the_new_one(context, slug):
    service = context.service
    service.save_triage(manager(slug), slug, settings_body("votes * impact"))
    context.scores.rescore(slug)
    seed = [service.create(manager(slug), slug, {"boardSlug": "features", "title": f"Seed {i}", "content": ""})["id"] for i in range(5)]
    errors: list[Exception] = []
    stop = threading.Event()
    rounds = [0]  # the writers' finished rounds (create, vote on it, vote on a seed)
    lock = threading.Lock()

    def writer(n: int) -> None:
        try:
            i = 0
            while not stop.is_set():
                i += 1
                created = service.create(manager(slug), slug, {"boardSlug": "features", "title": f"Race {n}-{i}", "content": ""})
                context.votes.vote(user(slug), slug, created["id"])
                context.votes.vote(user(slug), slug, seed[i % len(seed)])
                with lock:
                    rounds[0] += 1
        except Exception as ex:  # noqa: BLE001 - reported below
            errors.append(ex)

    def writes_go_on() -> None:  # each save lands among writes, however slow the machine
        start = rounds[0]
        wait_for(lambda: rounds[0] >= start + 3 or errors, timeout=60, what="three more rounds of writes")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for formula in ("votes * impact + 100", "votes - impact", "impact * 7 + votes * 2"):
        writes_go_on()
        service.save_triage(manager(slug), slug, settings_body(formula))
        context.scores.rescore(slug)  # as the consumer does on triage.updated
    writes_go_on()
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    final = context.scores.settings(slug)
    assert final.formula.text == "impact * 7 + votes * 2"
    posts = stored(context, slug)
    assert len(posts) >= 5 + 12
    for doc in posts:  # no further rescore: every write after the last save computed with it
        assert doc["scoreVersion"] == final.version, doc["title"]
        assert doc["score"] == final.formula.score(final.values(doc)), doc["title"]


def test_a_rescore_drops_what_narrower_settings_no_longer_allow(context, slug):
    service = context.service
    service.save_triage(manager(slug), slug, settings_body("votes * impact"))
    post = service.create(manager(slug), slug, {"boardSlug": "features", "title": "Conform me", "content": ""})
    service.update(manager(slug), slug, post["id"], {"tags": ["bug", "ux"], "fields": {"impact": 3, "area": "ui"}})
    narrower = [{**FIELDS[0], "max": 2}, {**FIELDS[1], "options": ["api"]}]
    service.save_triage(manager(slug), slug, settings_body("votes + impact", narrower, tags=("ux",)))
    assert context.scores.rescore(slug) == 1
    doc = stored(context, slug)[0]
    assert doc["tags"] == ["ux"] and doc["fields"] == {} and doc["facets"] == ["tag:ux"]
    assert doc["score"] == 1.0  # no votes, impact back to its minimum
    assert context.scores.rescore(slug) == 0  # nothing left to change
    assert Settings.from_doc(context.store.db.triage_settings.find_one({"_id": slug})).version == 2
