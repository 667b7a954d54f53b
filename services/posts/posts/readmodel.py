"""What the posts service knows of each workspace: boards, statuses, anonymous flags, and
whether a new post's author votes for it (``authorVotes``).

Fed by ``workspace.created``/``workspace.updated`` snapshots on ``feedback.workspaces``
(the consumer keeps the highest ``version``). Each API process mirrors the read model in
memory: a background thread, started with the app, looks for snapshots stored since its last
look (``syncedAt``, an indexed server time) whenever a change stream of the read model (kept
open) reports a change, and at least every ``WAIT_PERIODS`` × ``read_model_poll`` seconds
(every ``read_model_poll`` seconds where the database has no change streams), so a request
costs no database round trip for it. Should looking fail for twenty periods, requests read
the database again until it recovers.

A post created right after its board was added must work although the event may not
have arrived yet: on a miss (workspace unknown, board or status unknown, or an anonymous
flag that says no) the service asks the owner over signed internal HTTP
(``GET /internal/workspaces/{slug}/snapshot``, read-your-writes) and stores the answer.
Asks are single-flight per workspace and process (concurrent misses wait for one ask that
began after they arrived), so misses that stay misses (unknown slugs, boards that do not
exist) keep at most one call per workspace in flight, and the memory of past asks is
bounded. An anonymous write is checked against the owner's word of at most
``permission_max_age`` seconds ago, so a flag turned off is enforced within that bound even
while Kafka, and so the read model, lags.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

from cachetools import LRUCache

from common.errors import NotFound
from common import directory
from common.internal import InternalClient
from posts.config import PostsConfig
from posts.repository import PostRepository

log = logging.getLogger(__name__)

FLAGS = ("anonSubmit", "anonVote", "anonComment")
# A snapshot stored before the workspaces service sent ``authorVotes`` has the setting's default.
AUTHOR_VOTES_DEFAULT = True
UNKNOWN_STATUS_COLOR = "#64748b"
WAIT_PERIODS = 5  # read_model_poll periods an idle poller waits on its change stream
POLL_OVERLAP = timedelta(seconds=5)  # re-read a little of the past: clocks and commits are not instant
ASKED_MAX = 10_000  # workspaces whose last ask of the owner is remembered (unknown slugs included)
ASK_LOCK_STRIPES = 64  # asks of one workspace queue on one of these locks (picked by the slug's hash)


@dataclass(frozen=True)
class Snapshot:
    slug: str
    version: int
    boards: tuple[dict, ...] = ()
    statuses: tuple[dict, ...] = ()  # in display order, each {slug, name, color, order, roadmap}
    default_status: str | None = None
    flags: dict = field(default_factory=dict)
    author_votes: bool = AUTHOR_VOTES_DEFAULT  # a new post's author, if a person, votes for it
    hide_customer_names: bool = False  # end users see no other end user's name or avatar (posts.shapes.Reader)
    delete_erased: bool = False  # an erased person's posts and comments are deleted, not kept (posts.erasure)

    @classmethod
    def from_doc(cls, doc: dict) -> "Snapshot":
        return cls(
            slug=doc.get("slug") or doc["_id"],
            version=doc.get("version", 0),
            boards=tuple(doc.get("boards", [])),
            statuses=tuple(doc.get("statuses", [])),
            default_status=doc.get("defaultStatus"),
            flags={f: bool(doc.get(f, False)) for f in FLAGS},
            author_votes=bool(doc.get("authorVotes", AUTHOR_VOTES_DEFAULT)),
            hide_customer_names=bool(doc.get("hideCustomerNames", False)),
            delete_erased=doc.get("erasedUserContent") == "delete",
        )

    def board_by_slug(self, slug: str) -> dict | None:
        return next((b for b in self.boards if b["slug"] == slug), None)

    def board_by_id(self, board_id: str) -> dict | None:
        return next((b for b in self.boards if b["id"] == board_id), None)

    def status(self, slug: str) -> dict | None:
        return next((s for s in self.statuses if s["slug"] == slug), None)

    def status_shape(self, slug: str) -> dict:
        """The Status object of a post; a status the workspace no longer has shows its slug."""
        s = self.status(slug)
        if s is None:
            return {"slug": slug, "name": slug, "color": UNKNOWN_STATUS_COLOR}
        return {"slug": s["slug"], "name": s["name"], "color": s["color"]}


class Workspaces:
    def __init__(self, repo: PostRepository, client: InternalClient, config: PostsConfig, clock: Callable[[], float] = time.monotonic):
        self.repo = repo
        self.owner = directory.Workspaces(client)
        self.config = config
        self.clock = clock
        # Every workspace of the read model, as the database holds it (the poller loads them
        # all): a mirror, not a cache, so nothing is evicted; unknown slugs never enter it.
        self._mirror: dict[str, Snapshot] = {}
        # slug -> (when the last ask of the owner started, its answer), unknown slugs included:
        # bounded, the least recently used going first.
        self._asked: LRUCache[str, tuple[float, Snapshot | None]] = LRUCache(maxsize=ASKED_MAX)
        self._lock = threading.Lock()  # guards both (a read of an LRUCache reorders it)
        self._ask_locks = tuple(threading.Lock() for _ in range(ASK_LOCK_STRIPES))
        self._poller: threading.Thread | None = None
        self._polled_at = float("-inf")  # last successful poll (monotonic)
        self._since = None  # syncedAt of the newest snapshot seen

    # -- reading ------------------------------------------------------------------------

    def get(self, slug: str) -> Snapshot:
        """The workspace's snapshot; 404 when neither the read model nor the owner knows it."""
        hit = self._mirror.get(slug)
        if hit is not None and self._polling_healthy():
            return hit
        doc = self.repo.workspace_view(slug)
        if doc is not None:
            return self._remember(Snapshot.from_doc(doc))
        fresh = self.refresh(slug)
        if fresh is None:
            raise NotFound(f"workspace '{slug}' not found")
        return fresh

    def ensure(self, slug: str, satisfied: Callable[[Snapshot], bool]) -> Snapshot:
        """The snapshot, asked of the owner if ``satisfied`` says it may be stale (a board or
        status created a moment ago, a flag just turned on)."""
        snapshot = self.get(slug)
        if satisfied(snapshot):
            return snapshot
        return self.refresh(slug) or snapshot

    def board(self, slug: str, board_slug: str) -> tuple[Snapshot, dict | None]:
        """The workspace and its board ``board_slug`` (asking the owner once if it is new to us)."""
        ws = self.ensure(slug, lambda s: s.board_by_slug(board_slug) is not None)
        return ws, ws.board_by_slug(board_slug)

    def board_with_id(self, slug: str, board_id: str) -> tuple[Snapshot, dict | None]:
        """The workspace and its board whose id is ``board_id`` (asking the owner once if it is new to us)."""
        ws = self.ensure(slug, lambda s: s.board_by_id(board_id) is not None)
        return ws, ws.board_by_id(board_id)

    def confirmed(self, slug: str, max_age: float) -> Snapshot:
        """The snapshot as the owner stated it at most ``max_age`` seconds ago: what a
        permission that may have been revoked is checked against, whether or not its event
        has arrived (Kafka may be down)."""
        fresh = self.refresh(slug, not_before=self.clock() - max_age)
        if fresh is None:
            raise NotFound(f"workspace '{slug}' not found")
        return fresh

    def refresh(self, slug: str, not_before: float | None = None) -> Snapshot | None:
        """The owner's current snapshot (stored, and remembered in memory); None if unknown.

        Single flight: concurrent callers share one ask, as long as it started after
        ``not_before`` (by default, the caller's arrival), so what the owner said before a
        caller's own change never answers that caller. One ask per workspace is in flight
        per process at most, whatever the number of callers."""
        arrived = self.clock() if not_before is None else not_before
        with self._ask_locks[hash(slug) % ASK_LOCK_STRIPES]:
            with self._lock:
                last = self._asked.get(slug)
            if last is not None and last[0] >= arrived:
                return last[1]
            started = self.clock()
            snapshot = self._ask(slug)
            with self._lock:
                self._asked[slug] = (started, snapshot)
            return snapshot

    def _ask(self, slug: str) -> Snapshot | None:
        if not self.owner.here():
            doc = self.repo.workspace_view(slug)  # no owner to ask (in-process tests): the read model is all
            return self._remember(Snapshot.from_doc(doc)) if doc is not None else None
        # Read-your-writes: the owner answers with the same data as its events.
        try:
            body = self.owner.snapshot(slug)
        except NotFound:
            return None
        self.apply(body)
        return self._remember(Snapshot.from_doc(body))

    def known(self) -> list[str]:
        """Every workspace in the read model (read from the database)."""
        return [doc["_id"] for doc in self.repo.workspace_views_since(None)]

    # -- the in-memory mirror --------------------------------------------------------------

    def _polling_healthy(self) -> bool:
        return self.clock() - self._polled_at < 20 * self.config.read_model_poll

    def start_polling(self) -> None:
        """Mirror the read model in this process (the API app calls it once per worker, after fork)."""
        if self._poller is None:
            with self._lock:
                if self._poller is None:
                    self._poller = threading.Thread(target=self._poll_forever, name="read-model-poller", daemon=True)
                    self._poller.start()

    def _poll_forever(self) -> None:
        changed = self.repo.workspace_view_changes(WAIT_PERIODS * self.config.read_model_poll)
        never = threading.Event()
        while True:
            try:
                changed.arm()  # before the look, so no change stored after it is missed
                self.poll()
                changed.wait(never, pause=self.config.read_model_poll)
            except Exception:  # noqa: BLE001 - keep polling; requests fall back to the database
                log.warning("read model poll failed", exc_info=True)
                changed.close()
                time.sleep(self.config.read_model_poll)

    def poll(self) -> int:
        """Load the snapshots stored since the last poll into memory; return how many."""
        seen = 0
        for doc in self.repo.workspace_views_since(None if self._since is None else self._since - POLL_OVERLAP):
            seen += 1
            self._remember(Snapshot.from_doc(doc))
            if doc.get("syncedAt") is not None and (self._since is None or doc["syncedAt"] > self._since):
                self._since = doc["syncedAt"]
        self._polled_at = self.clock()
        return seen

    def _remember(self, snapshot: Snapshot) -> Snapshot:
        with self._lock:
            current = self._mirror.get(snapshot.slug)
            if current is not None and current.version > snapshot.version:
                snapshot = current
            self._mirror[snapshot.slug] = snapshot
        return snapshot

    # -- writing (consumer and fallback) --------------------------------------------------

    def apply(self, data: dict) -> None:
        """Store a snapshot unless a newer (or the same) version is already stored."""
        slug, version = data["slug"], int(data.get("version", 0))
        fields = {
            "name": data.get("name"),
            # an archived board takes no new posts (snapshots from before archiving have none)
            "boards": [{**{k: b[k] for k in ("id", "name", "slug")}, "archived": bool(b.get("archived", False))}
                       for b in data.get("boards", [])],
            "statuses": [
                {"slug": s["slug"], "name": s["name"], "color": s["color"], "order": s.get("order", i), "roadmap": s.get("roadmap", True)}
                for i, s in enumerate(data.get("statuses", []))
            ],
            "defaultStatus": data.get("defaultStatus"),
            **{f: bool(data.get(f, False)) for f in FLAGS},
            "authorVotes": bool(data.get("authorVotes", AUTHOR_VOTES_DEFAULT)),
            "hideCustomerNames": bool(data.get("hideCustomerNames", False)),
            "erasedUserContent": data.get("erasedUserContent", "keep"),
        }
        self.repo.store_workspace_view(slug, version, fields)
