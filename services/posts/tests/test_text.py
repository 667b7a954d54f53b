"""Pure logic of the search features (no stack needed)."""

from posts import text


def candidates(*titles):
    out = []
    for i, title in enumerate(titles):
        terms, title_terms = text.index_terms(title, "")
        out.append({"_id": i, "title": title, "terms": terms, "titleTerms": title_terms})
    return out


def test_stemming_meets_variants():
    assert {text.stem(w) for w in ("export", "exports", "exporting", "exported")} == {"export"}
    assert text.stem("sharing") == text.stem("share")
    assert text.stem("boxes") == "box" and text.stem("categories") == "category"


def test_features_are_significant_word_stems():
    assert text.features("Dark mode please") == {"w:dark", "w:mod"}
    assert text.features("Exporting the boards!") == {"w:export", "w:board"}


def test_concepts_stored_by_an_older_version_do_not_score():
    new = candidates("Dark mode please")[0]
    old = {**new, "terms": [*new["terms"], "c:darkmode"], "titleTerms": [*new["titleTerms"], "c:darkmode"]}
    scorer = text.Scorer("Dark mode please", [new, old])
    assert scorer.score(old) == scorer.score(new)


def test_scores_are_in_unit_range_and_rank_duplicates_first():
    docs = candidates("Add a dark theme", "Export to CSV", "Mode selector for the editor", "Dark mode please")
    scorer = text.Scorer("Dark mode please", docs)
    scores = [scorer.score(d) for d in docs]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[3] > scores[0] > scores[2] > scores[1] == 0.0
    assert abs(scores[3] - 1.0) < 1e-9


def test_typos_still_find_candidates():
    terms, _ = text.index_terms("Email notifications", "")
    assert set(text.query_terms("notifcations")) & set(terms)


def _cosine_by_vectors(q: str, docs: list[dict], doc: dict) -> float:
    """The score as its definition reads: build both weighted vectors, take their cosine."""
    import math

    scorer = text.Scorer(q, docs)
    q_vec = {f: scorer.idf[f] for f in scorer.query}
    q_vec.update({g: text.GRAM for g in text.trigrams(scorer.query)})
    title = set(doc["titleTerms"])
    d_vec = {f: scorer.idf.get(f, text.DEFAULT_IDF) for f in title}
    d_vec.update({f: scorer.idf[f] * text.CONTENT_ONLY for f in (set(doc["terms"]) & scorer.query) - title})
    d_vec.update({g: text.GRAM for g in text.trigrams(title)})
    dot = sum(w * d_vec.get(f, 0.0) for f, w in q_vec.items())
    norm = math.sqrt(sum(w * w for w in q_vec.values())) * math.sqrt(sum(w * w for w in d_vec.values()))
    return max(0.0, min(1.0, dot / norm))


def test_scores_equal_the_cosine_of_the_weighted_vectors():
    docs = candidates(
        "Add a dark theme", "Dark mode for the mobile app", "Export reports to CSV", "Night mode is too bright",
        "Keyboard shortcuts in the editor", "Dark", "Slack notifications when a post is merged",
    )
    for i, (title, content) in enumerate([("Reports", "Please let us export them as CSV"), ("Eyes hurt", "the app is too bright at night")]):
        terms, title_terms = text.index_terms(title, content)
        docs.append({"_id": 100 + i, "title": title, "terms": terms, "titleTerms": title_terms})  # query words in content only
    for q in ("Dark mode please", "night theme too brigth", "export csv", "shortcuts", "notify on slack"):
        scorer = text.Scorer(q, docs)
        for doc in docs:
            assert abs(scorer.score(doc) - _cosine_by_vectors(q, docs, doc)) < 1e-9, (q, doc["titleTerms"])
