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


def test_features_drop_stopwords_and_find_concepts():
    fs = text.features("Dark mode please")
    assert "w:please" not in fs and "c:darkmode" in fs
    assert "c:darkmode" in text.features("Add a dark theme")
    assert "c:login" in text.features("I can't log in")
    assert "c:theme" not in text.features("Let me tag tasks to group them")  # "them" is not a theme


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
