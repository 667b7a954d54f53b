"""Similar posts (posts.similarity, posts.embeddings, the title-vector backfill), in process
against the real local database and the real sentence model."""

import threading

import numpy as np
import pytest

from posts import backfill, embeddings, similarity
from posts.reads.index import Vectors
from posts.plugin import wire

from .helpers import manager

DARK = "Add a dark theme"
DARK_PARAPHRASE = "Please support a darker colour scheme"  # not one search term in common
OTHERS = ["Export all posts to a CSV file", "Slack notifications show up twice", "Login with Google accounts",
          "Invoices should include our VAT number", "Keyboard shortcuts for the editor"]


def create(service, slug, title):
    return service.create(manager(slug), slug, {"boardSlug": "features", "title": title, "content": ""})


def titles(result):
    return [item["title"] for item in result["items"]]


# -- the model -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", "   ", "🌙🖤", "👩‍👩‍👧‍👦", "データをCSVにエクスポート", "تصدير البيانات", "a\x00b\x1b[31m", "\u202eevil",
     "lone \ud800 surrogate", "Z̷̢a̸l̶g̵o̷", "x" * 10_000, "word " * 2_000],
)
def test_any_unicode_gets_a_unit_vector_or_none(text):
    [vector] = embeddings.LazyEmbedder().titles([text])
    if vector is not None:
        assert vector.shape == (embeddings.DIMENSION,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-3


def test_titles_without_a_known_word_piece_get_no_vector():
    # Every such title maps to one vector: they would all look like duplicates of each other.
    assert embeddings.LazyEmbedder().titles(["🌙🖤", "📊➡️📄", ""]) == [None, None, None]


def test_a_paraphrase_is_nearer_than_other_requests():
    dark, paraphrase, *others = embeddings.LazyEmbedder().titles([DARK, DARK_PARAPHRASE, *OTHERS])
    assert float(dark @ paraphrase) > max(float(dark @ o) for o in others)


def test_stored_vectors_keep_their_cosines():
    a, b = embeddings.LazyEmbedder().titles([DARK, DARK_PARAPHRASE])
    stored = embeddings.to_stored(a)
    assert len(stored) == 2 * embeddings.DIMENSION
    assert abs(float(embeddings.from_stored(stored) @ b) - float(a @ b)) < 2e-3
    assert embeddings.to_stored(None) is None and embeddings.from_stored(None) is None


# -- fusion and the vector matrix ------------------------------------------------------------------


def test_similarity_is_a_probability_either_signal_can_raise():
    assert 0.0 < similarity.fused(0.0, 0.3) < similarity.fused(0.0, 0.8) < 1.0
    assert similarity.fused(0.1, 0.1) < similarity.fused(0.9, 0.1) < 1.0  # a misspelling: the model sees nothing
    assert similarity.fused(0.9, None) == similarity.fused(0.9, -1.0)  # no vector: lexical alone
    assert similarity.fused(0.0, None) == 0.0  # no vector and no word in common: no evidence
    assert 0.0 < similarity.fused(0.3, None) < similarity.fused(0.9, None) < 1.0


def test_vectors_reuse_rows_and_rank_by_cosine():
    vectors = Vectors()
    basis = np.eye(embeddings.DIMENSION, dtype=np.float32)
    for oid in range(1, 2001):
        vectors.put(oid, basis[oid % 3])
    vectors.drop(5)
    vectors.put(5000, basis[2])
    assert len(vectors) == 2000 and len(vectors.oid_at) == 2000  # the dropped row was reused
    near = vectors.nearest(basis[2], lambda oid: oid % 2 == 0, 3)
    assert [round(c, 3) for c, _ in near] == [1.0, 1.0, 1.0]
    assert all(oid % 3 == 2 or oid == 5000 for _, oid in near) and all(oid % 2 == 0 for _, oid in near)
    # Filters that leave fewer than were partitioned off still find every eligible row.
    assert [oid for _, oid in vectors.nearest(basis[0], lambda oid: oid in (3, 4), 5)] == [3, 4]
    assert vectors.cosines(basis[1], [4, 5, 7]) == [1.0, None, 1.0]


def test_built_vectors_hold_their_posts_rows_and_grow_from_there():
    basis = np.eye(embeddings.DIMENSION, dtype=np.float32)
    vectors = Vectors({oid: basis[oid] for oid in range(1, 101)})
    assert vectors.matrix.shape == (100, embeddings.DIMENSION)  # no growth step's empty rows
    assert vectors.cosines(basis[7], [7, 8, 500]) == [1.0, 0.0, None]
    vectors.put(500, basis[200])
    assert len(vectors) == 101 and len(vectors.matrix) == 150
    assert [oid for _, oid in vectors.nearest(basis[200], lambda oid: True, 1)] == [500]
    assert len(Vectors().matrix) == 0 and Vectors().nearest(basis[0], lambda oid: True, 3) == []


# -- the service -----------------------------------------------------------------------------------


def test_search_finds_a_paraphrase_that_shares_no_word(context, slug):
    for title in [DARK, *OTHERS]:
        create(context.service, slug, title)
    found = context.board.search(manager(slug), slug, DARK_PARAPHRASE, None, 5)
    assert titles(found)[0] == DARK
    assert all(0.0 <= item["similarity"] <= 1.0 for item in found["items"])


def test_with_the_model_off_search_is_lexical(context, slug):
    lexical = wire(context.settings, context.service.repo, context.workspaces, context.config, embedder=None)
    for title in [DARK, *OTHERS]:
        create(lexical.service, slug, title)
    assert DARK not in titles(lexical.board.search(manager(slug), slug, DARK_PARAPHRASE, None, 5))
    assert titles(lexical.board.search(manager(slug), slug, "dark theme please", None, 5))[0] == DARK
    # Posts written with the model off have no vector; the backfill gives them one.
    assert backfill.Backfill(context.service.repo, context.service.embedder).remaining() >= len(OTHERS) + 1


def test_a_title_edit_moves_its_vector(context, slug):
    post = create(context.service, slug, "Export all posts to a CSV file")
    create(context.service, slug, "Keyboard shortcuts for the editor")
    context.service.update(manager(slug), slug, post["id"], {"title": DARK})
    assert titles(context.board.search(manager(slug), slug, DARK_PARAPHRASE, None, 1)) == [DARK]


def test_the_backfill_embeds_every_post_and_resumes_where_it_was_stopped(context, slug):
    lexical = wire(context.settings, context.service.repo, context.workspaces, context.config, embedder=None)
    for title in [DARK, *OTHERS] * 3:
        create(lexical.service, slug, title)
    service = context.service
    worker = backfill.Backfill(service.repo, service.embedder)
    stop = threading.Event()
    first_batch = worker.batch

    def stop_after_one_batch(after, limit):
        stop.set()  # as if the worker were stopped while embedding this batch
        return first_batch(after, limit)

    worker.batch = stop_after_one_batch
    try:
        assert backfill.backfill(worker, worker.remaining(), 4, stop) == 4
    finally:
        del worker.batch
    left = worker.remaining()
    assert left > 0
    assert backfill.backfill(worker, left, 4, threading.Event()) == left
    assert worker.remaining() == 0
    assert titles(context.board.search(manager(slug), slug, DARK_PARAPHRASE, None, 1)) == [DARK]


def test_the_backfill_keeps_the_vector_of_a_title_edited_meanwhile(context, slug):
    lexical = wire(context.settings, context.service.repo, context.workspaces, context.config, embedder=None)
    post = create(lexical.service, slug, "Export all posts to a CSV file")
    repo = context.service.repo
    [stale] = [p for p in repo.without_vector(embeddings.MODEL, backfill.FIRST, 10_000) if str(p["_id"]) == post["id"]]
    context.service.update(manager(slug), slug, post["id"], {"title": DARK})  # embeds the new title
    repo.store_vectors(embeddings.MODEL, [(stale, embeddings.to_stored(embeddings.LazyEmbedder().titles([stale["title"]])[0]))])
    stored = repo.posts.find_one({"_id": stale["_id"]})
    [dark] = embeddings.LazyEmbedder().titles([DARK])
    assert float(embeddings.from_stored(stored["embedding"]) @ dark) > 0.99
