"""Keeping each post's score and facets (posts.triage) current: on every change of what they
follow, and across the workspace after its triage settings change (docs/services/posts.md,
"Triage and scores").

Every write that changes a post's votes, revenue, tags, fields or owner sets its ``score`` in
the same update, with the settings of the version the post names (``scoreVersion``): a
version's formula never changes, so this process keeps it once read, and a vote costs no
read of the settings. A save of the settings commits a new version and a ``triage.updated``
event; this service's consumer then runs :meth:`Scores.rescore`, which moves every post of
the workspace to that version in batches: each post is read, then written in a short
transaction only while it is as read (a post written meanwhile is read again). A write that
read a post before the batch rewrote it conflicts with the batch's transaction and one of them
runs again; one after it reads the new version. A new post reads the settings in its own
transaction, and a save moves every change clock of the workspace, as a new post's
transaction moves one: a post created on the old version conflicts with the save and runs
again, or committed before it (and the rescore that follows the save finds it). No post keeps
a score of an old formula.
"""

from __future__ import annotations

import logging

from bson import ObjectId
from cachetools import LRUCache

from posts.repository import PostRepository
from posts.triage import Settings

log = logging.getLogger(__name__)
RESCORE_BATCH = 500  # posts per transaction of a rescore
FIRST = ObjectId("0" * 24)


class Scores:
    def __init__(self, repo: PostRepository):
        self.repo = repo
        self._versions: LRUCache = LRUCache(maxsize=10_000)  # (slug, version) -> Settings: a version never changes

    def settings(self, slug: str, tx: PostRepository | None = None) -> Settings:
        """The workspace's settings now (a read: the fields' visibility must be current), read
        in the unit of work ``tx`` if given."""
        return self.compiled(slug, (tx or self.repo).triage_settings(slug))

    def compiled(self, slug: str, doc: dict | None) -> Settings:
        """The settings of a stored document (compiled once per version)."""
        version = (doc or {}).get("version", 0)
        cached = self._versions.get((slug, version))
        if cached is None:
            cached = self._versions[(slug, version)] = Settings.from_doc(doc)
        return cached

    def _of_version(self, tx: PostRepository, slug: str, version: int) -> Settings:
        cached = self._versions.get((slug, version))
        if cached is not None:
            return cached
        if version == 0:  # no settings saved: the score is the vote count
            return self.compiled(slug, None)
        # Not seen here yet: the current settings are this version or a later one, which
        # the post may follow as well (a rescore moves it there anyway).
        return self.settings(slug, tx)

    def of(self, tx: PostRepository, slug: str, doc: dict) -> dict:
        """The score fields to store with a change of a post's votes or revenue (``doc``: the
        post as it is after the change), in the unit of work ``tx``."""
        settings = self._of_version(tx, slug, doc.get("scoreVersion", 0))
        return {"score": settings.formula.score(settings.values(doc)), "scoreVersion": settings.version}

    def rescore(self, slug: str) -> int:
        """Move every post of the workspace to its current settings (score, facets, and tags
        and values those settings no longer allow); how many posts changed."""
        changed, after = 0, FIRST
        while True:
            batch = self.repo.scored_after(slug, after, RESCORE_BATCH)
            changed += self._conform(slug, batch)
            if len(batch) < RESCORE_BATCH:
                break
            after = batch[-1]["_id"]
        log.info("rescored %s: %d posts changed", slug, changed)
        return changed

    def _conform(self, slug: str, docs: list[dict]) -> int:
        """Write each post's conformed values, in one short transaction per round: each update
        applies only while the post is as read (its ``changedAt``); the posts written since are
        read again for the next round. The transaction opens with its read of the settings, so
        a write racing it conflicts with it and one of the two runs again."""
        changed = 0
        while docs:
            def work(tx: PostRepository) -> tuple[int, list[ObjectId]]:
                settings = self.settings(slug, tx)
                planned = []
                for doc in docs:
                    conformed = settings.conform(doc)
                    values = {**conformed, **settings.derived({**doc, **conformed})}
                    if any(doc.get(k) != v for k, v in values.items()):
                        planned.append((doc["_id"], values, doc.get("changedAt")))
                tx.add(*tx.conform_posts(slug, planned))
                matched = tx.flush()[:len(planned)]
                missed = [oid for (oid, _, _), found in zip(planned, matched) if not found]
                return len(planned) - len(missed), missed

            done, missed = self.repo.unit_of_work(work)
            changed += done
            docs = list(self.repo.posts_in(slug, [str(oid) for oid in missed]).values()) if missed else []
        return changed
