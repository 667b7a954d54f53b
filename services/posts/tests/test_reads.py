"""The read engines (posts.reads) answer alike and as the database would: random sequences of
writes, and after each, every documented list shape and the roadmap from both engines and from
a straightforward full query of the stored posts: same ids, same order. Then the bounded cache:
its budget, its evictions, its background builds. In process, against the real local database."""

import gc
import random
import threading
import tracemalloc

import pytest
from prometheus_client import REGISTRY

from posts import contract
from posts.reads import Filters
from posts.reads.cache import IndexCache
from posts.reads.engines import MemoryReads, MongoReads
from posts.reads.index import WorkspaceIndex
from posts.repository import clock_ids
from posts.plugin import wire

from .helpers import BOARDS, STATUSES, WORDS, manager, new_workspace, shapes_of_lists, user

BUDGET = 64 * 2**20
TAGS = [{"slug": s, "name": s, "color": "#336699"} for s in ("bug", "ux", "api")]
FIELDS = [{"key": "platform", "name": "Platform", "type": "multiselect", "options": ["ios", "web"], "public": True},
          {"key": "blocker", "name": "Blocker", "type": "checkbox"},
          {"key": "impact", "name": "Impact", "type": "number", "min": 1, "max": 3}]
# The settings the equivalence test moves between: a RICE-like formula and others, a narrower field.
TRIAGE = [{"tags": TAGS, "fields": FIELDS, "scoreFormula": "(votes + revenue / 100) * impact + blocker * 5"},
          {"tags": TAGS, "fields": FIELDS, "scoreFormula": "votes / impact - blocker"},
          {"tags": TAGS[:2], "fields": FIELDS[:1] + [{**FIELDS[2], "max": 2}], "scoreFormula": None}]


def straightforward(context, slug: str, filters: Filters, sort: str, limit: int, offset: int,
                    docs: list[dict] | None = None) -> list[str]:
    """Every post of the workspace (``docs``, read once for many shapes, or read now), filtered
    and sorted here, in Python."""
    if docs is None:
        docs = list(context.store.db.posts.find({"workspace": slug}))
    kept = []
    for d in docs:
        if filters.manager:
            if d.get("mergedInto") or (filters.moderation and d["moderationState"] != filters.moderation):
                continue
        elif not d.get("listed"):
            continue
        if filters.board and d["boardId"] != filters.board or filters.status and d["statusSlug"] != filters.status:
            continue
        if not set(filters.words) <= set(d.get("terms", ())) or not set(filters.facets) <= set(d.get("facets", ())):
            continue
        kept.append(d)
    for key, direction in reversed(contract.SORTS[sort]):
        kept.sort(key=lambda d: d.get(key, 0), reverse=direction == -1)
    return [str(d["_id"]) for d in kept[offset:offset + limit]]


def roadmap_ids(columns: dict) -> dict:
    return {s: [str(d["_id"]) for d in docs] for s, docs in columns.items()}


def straightforward_roadmap(context, slug: str, board: str | None, limit: int, docs: list[dict] | None = None) -> dict:
    return {s: straightforward(context, slug, Filters(board=board, status=s), "top", limit, 0, docs) for s in STATUSES}


def straightforward_revenue(context, slug: str) -> dict[str, int]:
    """Each post's revenue from the votes that count for it, their voters' companies and those
    companies' spend, added up here."""
    db = context.store.db
    members = {m["userId"]: m.get("companies", []) for m in db.member_views.find({"workspace": slug})}
    spends = {c["companyId"]: c.get("spendCents", 0) for c in db.company_views.find({"workspace": slug})}
    behind: dict[str, set[str]] = {}
    for vote in db.votes.find({"workspace": slug}):
        behind.setdefault(vote["countsFor"], set()).update(members.get(vote["userId"], ()))
    return {str(p["_id"]): 0 if p.get("mergedInto") else sum(spends.get(c, 0) for c in behind.get(str(p["_id"]), ()))
            for p in db.posts.find({"workspace": slug})}


def straightforward_scores(context, slug: str) -> dict[str, float]:
    """Each post's score, from its stored values and the workspace's formula, computed here."""
    db = context.store.db
    settings = db.triage_settings.find_one({"_id": slug}) or {}
    formula = settings.get("scoreFormula") or "votes"
    fields = {f["key"]: f for f in settings.get("fields", [])}
    scores = {}
    for p in db.posts.find({"workspace": slug}):
        names = {"votes": p.get("voteCount", 0), "revenue": p.get("revenueCents", 0) / 100}
        for key, f in fields.items():
            value = p.get("fields", {}).get(key)
            names[key] = (1 if value else 0) if f["type"] == "checkbox" else value if value is not None else f.get("min", 0)
        scores[str(p["_id"])] = eval(formula, {"__builtins__": {}, "max": max, "min": min}, names)  # noqa: S307 - our own formulas
    return scores


def test_both_engines_answer_every_list_shape_as_a_full_query_after_each_write(context):
    slug = new_workspace(context, "eq")
    rng = random.Random(20)
    service = context.service
    engines = {"memory": MemoryReads(service.repo, BUDGET, background=False),
               "mongo": MongoReads(service.repo, BUDGET, background=False)}
    service.save_triage(manager(slug), slug, TRIAGE[0])
    voters = [user(slug) for _ in range(6)]
    ids: list[str] = []
    merged: list[str] = []
    moves = ["create", "vote", "unvote", "comment", "moderate", "merge", "unmerge", "status", "edit", "spend", "membership",
             "triage", "settings"]
    companies = ["c0", "c1", "c2"]
    done = {m: 0 for m in moves}
    for step in range(60):
        move = "create" if len(ids) < 4 else rng.choice(moves)
        pid = rng.choice(merged if move == "unmerge" and merged else ids) if ids else None
        try:
            if move == "create":
                title = " ".join(rng.sample(WORDS, 2)) + f" idea {step}"
                ids.append(service.create(manager(slug), slug, {"boardSlug": rng.choice(BOARDS)["slug"], "title": title, "content": "x"})["id"])
            elif move == "vote":
                context.votes.vote(rng.choice(voters), slug, pid)
            elif move == "unvote":
                context.votes.unvote(rng.choice(voters), slug, pid)
            elif move == "comment":
                service.comment(rng.choice(voters), slug, pid, {"content": "me too"})
            elif move == "moderate":
                service.update(manager(slug), slug, pid, {"moderationState": rng.choice(contract.MODERATION_STATES)})
            elif move == "merge":
                context.merges.merge(manager(slug), slug, pid, {"intoPostId": rng.choice(ids)})
                merged.append(pid)
            elif move == "unmerge":
                context.merges.unmerge(manager(slug), slug, pid)
                merged.remove(pid)
            elif move == "spend":  # as the consumer applies feedback.companies (posts.consumers)
                context.revenue.company_updated(slug, rng.choice(companies), rng.randrange(0, 100_000))
            elif move == "membership":
                context.revenue.membership_changed(slug, rng.choice(voters).user_id, rng.sample(companies, rng.randrange(0, 3)))
            elif move == "triage":
                service.update(manager(slug), slug, pid, {"tags": rng.sample(["bug", "ux", "api"], rng.randrange(0, 3)), "fields": {
                    "platform": rng.sample(["ios", "web"], rng.randrange(0, 3)) or None, "blocker": rng.choice([True, False, None]),
                    "impact": rng.choice([None, 1, 2, 3])}})
            elif move == "settings":  # then the rescore the consumer runs on triage.updated (posts.consumers)
                service.save_triage(manager(slug), slug, rng.choice(TRIAGE))
                context.scores.rescore(slug)
            elif move == "status":
                service.update(manager(slug), slug, pid, {"statusSlug": rng.choice(STATUSES)})
            else:
                service.update(manager(slug), slug, pid, {"title": " ".join(rng.sample(WORDS, 2)) + " edited"})
            done[move] += 1
        except Exception as ex:  # refused moves (merging a merged post, voting on one) are part of the game
            assert str(getattr(ex, "status", ""))[:1] == "4", ex
        stored = list(context.store.db.posts.find({"workspace": slug}))  # read once for every shape below
        revenue = {str(p["_id"]): p.get("revenueCents", 0) for p in stored}
        assert revenue == straightforward_revenue(context, slug), (step, move)
        scores = {str(p["_id"]): p.get("score") for p in stored}
        assert scores == pytest.approx(straightforward_scores(context, slug)), (step, move)
        # Half the shapes after each write, a different half each time (its own generator, so the
        # writes stay those of the seed): every shape is checked many times over the 60 writes.
        shapes = shapes_of_lists(rng)
        for filters, sort, limit, offset in random.Random(step).sample(shapes, len(shapes) // 2):
            expected = straightforward(context, slug, filters, sort, limit, offset, stored)
            for name, engine in engines.items():
                got = [str(d["_id"]) for d in engine.page(slug, filters, sort, limit, offset)]
                assert got == expected, (step, move, name, filters, sort, limit, offset)
        for board in (None, "b0"):
            expected = straightforward_roadmap(context, slug, board, 3, stored)
            for name, engine in engines.items():
                assert roadmap_ids(engine.roadmap(slug, STATUSES, board, 3)) == expected, (step, move, name, board)
    assert all(done.values()), done  # every kind of write happened at least once


def test_clocks_live_in_a_collection_of_their_own(context):
    slug = new_workspace(context, "clk")
    post = context.service.create(manager(slug), slug, {"boardSlug": "board-0", "title": "Clocked", "content": "x"})
    context.votes.vote(user(slug), slug, post["id"])
    assert context.store.db.posts.count_documents({"_id": {"$in": clock_ids(slug)}}) == 0
    assert context.store.db.post_clocks.count_documents({"_id": {"$in": clock_ids(slug)}}) > 0
    assert sum(context.service.repo.clocks(slug).values()) == 2  # the create and the vote


# -- the bounded cache -----------------------------------------------------------------------------


def seeded(context, prefix: str, posts: int) -> str:
    slug = new_workspace(context, prefix)
    for i in range(posts):
        context.service.create(manager(slug), slug, {"boardSlug": "board-0", "title": f"{WORDS[i % len(WORDS)]} post {i}", "content": "x"})
    return slug


def test_the_footprint_is_what_building_the_index_allocates(context):
    slug = seeded(context, "fp", 300)
    docs, _ = context.service.repo.index_source(slug)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = WorkspaceIndex(docs, {})
        del docs
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before  # what the built index keeps alive
    finally:
        tracemalloc.stop()
    # The walk leaves out what an index may share with others (interned terms): the two agree
    # within a margin, and the walk does not undercount by more than it.
    assert 0.7 * retained <= index.footprint() <= 1.3 * retained, (index.footprint(), retained)


def index_metrics() -> dict[str, float]:
    def value(name: str, **labels) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0  # None until first counted

    return {"hit": value("feedback_posts_index_reads_total", result="hit"),
            "miss": value("feedback_posts_index_reads_total", result="miss"),
            "builds": value("feedback_posts_index_builds_total"),
            "evictions": value("feedback_posts_index_evictions_total")}


def test_least_recently_used_workspaces_are_evicted_past_the_budget(context):
    slugs = [seeded(context, f"lru{i}", 20) for i in range(3)]
    probe = IndexCache(context.service.repo, BUDGET, ordered=True, background=False)
    one = probe.build(slugs[0]).footprint()
    # Room for two of the three indexes: reading the third evicts the least recently used.
    engine = MemoryReads(context.service.repo, int(2.5 * one), background=False)
    counted_before = index_metrics()
    for slug in slugs[:2]:
        engine.page(slug, Filters(), "newest", 5, 0)
    engine.page(slugs[0], Filters(), "top", 5, 0)  # slugs[0] is now the most recently used
    engine.page(slugs[2], Filters(), "newest", 5, 0)
    assert engine.cache.held() == [slugs[0], slugs[2]]
    assert engine.cache.used() <= engine.cache.budget
    assert engine.cache.evictions == 1
    # What an operator sizes the budget by, on /metrics (this process's registry).
    counted = {k: v - counted_before[k] for k, v in index_metrics().items()}
    assert counted == {"hit": 1, "miss": 3, "builds": 3, "evictions": 1}, counted
    assert REGISTRY.get_sample_value("feedback_posts_index_bytes") == engine.cache.used()
    for slug in slugs:  # an evicted workspace still answers, and right
        expected = straightforward(context, slug, Filters(), "oldest", 100, 0)
        assert [str(d["_id"]) for d in engine.page(slug, Filters(), "oldest", 100, 0)] == expected


def test_a_workspace_too_big_for_the_budget_is_read_from_the_database(context):
    slug = seeded(context, "big", 10)
    engine = MemoryReads(context.service.repo, 1024, background=False)
    expected = straightforward(context, slug, Filters(), "newest", 20, 0)
    assert [str(d["_id"]) for d in engine.page(slug, Filters(), "newest", 20, 0)] == expected
    assert engine.cache.held() == []


def test_a_cold_workspace_is_answered_while_its_index_builds_in_the_background(context):
    slug = seeded(context, "cold", 12)
    engine = MemoryReads(context.service.repo, BUDGET)
    building, release = threading.Event(), threading.Event()
    build = engine.cache.build

    def slow_build(s):  # a build that takes as long as the test wants
        building.set()
        assert release.wait(30)
        return build(s)

    engine.cache.build = slow_build
    expected = straightforward(context, slug, Filters(), "top", 20, 0)
    assert [str(d["_id"]) for d in engine.page(slug, Filters(), "top", 20, 0)] == expected  # not waiting
    assert building.wait(10) and engine.cache.held() == []
    # Search too answers meanwhile, from the posts sharing its terms.
    found = engine.search_candidates(slug, "export post", None, True, None, 200)
    assert found and all("export" in m.entry.title for m in found[:2])
    release.set()
    assert engine.cache.wait_idle(30)
    assert engine.cache.held() == [slug]
    assert [str(d["_id"]) for d in engine.page(slug, Filters(), "top", 20, 0)] == expected


def test_a_new_process_builds_the_indexes_slow_to_build_before_it_is_ready(context, monkeypatch):
    from posts.reads import cache

    slug = seeded(context, "warm", 12)
    monkeypatch.setattr(cache, "WARM_BEFORE_READY_SECONDS", 0.0)  # every build is "slow"
    MemoryReads(context.service.repo, BUDGET, background=False).page(slug, Filters(), "newest", 5, 0)
    record = context.store.db.post_warm_indexes.find_one({"_id": slug})
    assert record["posts"] == 12 and record["bytes"] > 0

    new_process = MemoryReads(context.service.repo, BUDGET)
    building, release = threading.Event(), threading.Event()
    build = new_process.cache.build

    def slow_build(s):
        if s == slug:
            building.set()
            assert release.wait(30)
        return build(s)

    new_process.cache.build = slow_build
    assert not new_process.ready()
    new_process.start()
    assert building.wait(10)
    assert not new_process.ready()  # /readyz answers 503 meanwhile (posts.plugin.Context.readiness)
    release.set()
    assert new_process.cache.warm.wait(30) and new_process.ready()
    assert slug in new_process.cache.held()


def test_a_running_process_adopts_what_another_recorded_as_slow_to_build(context, monkeypatch):
    from posts.reads import cache

    slug = seeded(context, "adopt", 12)
    other = MemoryReads(context.service.repo, BUDGET)  # running already, never asked for slug
    monkeypatch.setattr(cache, "WARM_BEFORE_READY_SECONDS", 0.0)
    MemoryReads(context.service.repo, BUDGET, background=False).page(slug, Filters(), "newest", 5, 0)
    assert slug not in other.cache.held()
    other.cache.adopt()
    assert other.cache.wait_idle(30) and slug in other.cache.held()
    # It adopts only into free room: a process whose budget is taken evicts nothing for it.
    filler = seeded(context, "filler", 12)
    size = context.store.db.post_warm_indexes.find_one({"_id": slug})["bytes"]
    full = MemoryReads(context.service.repo, int(1.5 * size), background=False)
    full.page(filler, Filters(), "newest", 5, 0)
    full.cache.background = True
    full.cache.adopt()
    assert full.cache.wait_idle(30)
    assert filler in full.cache.held() and slug not in full.cache.held()


def test_an_index_that_would_not_fit_is_not_warmed(context, monkeypatch):
    from posts.reads import cache

    slug = seeded(context, "warm-big", 12)
    monkeypatch.setattr(cache, "WARM_BEFORE_READY_SECONDS", 0.0)
    MemoryReads(context.service.repo, BUDGET, background=False).page(slug, Filters(), "newest", 5, 0)
    size = context.store.db.post_warm_indexes.find_one({"_id": slug})["bytes"]
    new_process = MemoryReads(context.service.repo, size - 1)
    new_process.start()
    assert new_process.cache.warm.wait(30)
    assert slug not in new_process.cache.held()


def test_an_engine_is_chosen_by_configuration(context):
    from dataclasses import replace

    for name, kind in (("memory", MemoryReads), ("mongo", MongoReads)):
        configured = replace(context.config, read_engine=name)
        assert type(wire(context.settings, context.service.repo, context.workspaces, configured).reads) is kind


@pytest.mark.parametrize("raw", ["sqlite", "0", "-5"])
def test_a_bad_engine_or_budget_stops_the_process_with_its_name(raw):
    from posts.config import load_config

    key = "POSTS_READ_ENGINE" if raw == "sqlite" else "POSTS_INDEX_MEMORY_MB"
    with pytest.raises(SystemExit, match=key):
        load_config({key: raw})
