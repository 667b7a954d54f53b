"""The bounded cache of query indexes (``posts.reads.index``) of one API process.

- **Budget.** The indexes it holds together stay within ``budget`` bytes (``POSTS_INDEX_MEMORY_MB``).
  An index's size is measured when it is built (``WorkspaceIndex.footprint``: its structures
  walked) and scaled by its number of posts as it changes; when the sum passes the budget, the
  least recently used workspaces are evicted. A workspace whose index alone would pass the
  budget is not kept: its reads stay with the fallback.
- **No request waits for a build.** ``fresh(slug)`` returns a workspace's index, caught up with
  every change committed before the call, or None when it is not built yet; a miss queues its
  build on one background thread (one build at a time: a build is CPU work, and two would
  only share the process's cores with the requests), and the caller answers another way.
- **Warm before ready.** A build that takes longer than ``WARM_BEFORE_READY_SECONDS`` says that
  workspace's cold reads are slow too (the fallback reads as much, and on the local stand-in
  sorts it in Python): it is recorded (``post_warm_indexes``), and a new process builds the
  recorded indexes that fit its budget, most recently built first, before it reports ready
  (``warm_up``), so a restart or a new pod takes no request on them cold; a running process
  builds, every ``ADOPT_SECONDS``, those recorded since that fit its free budget (``adopt``), so
  a workspace one process met is not read cold by the others.
- **Fresh.** Each post write stamps ``changedAt`` and moves one of the workspace's change clocks
  (``posts.repository``: their own collection); ``fresh`` reads the clocks and, when one moved
  since the index last looked, applies the posts changed since (one catch-up at a time per index).
"""

from __future__ import annotations

import gc
import logging
import queue
import threading
import time
from collections import OrderedDict

from prometheus_client import Counter, Gauge

from posts.reads.index import WorkspaceIndex

log = logging.getLogger(__name__)

# What an operator sizes POSTS_INDEX_MEMORY_MB by (docs/services/posts.md, "Reads"): misses
# that keep coming with evictions say the budget is short of the workspaces read.
READS = Counter("feedback_posts_index_reads_total",
                "Reads that asked for a workspace's query index: answered by it (hit) or not (miss: not built yet, or too big)",
                ["result"])
BUILDS = Counter("feedback_posts_index_builds_total", "Query indexes built")
EVICTIONS = Counter("feedback_posts_index_evictions_total", "Query indexes evicted to keep within the budget")
HELD_BYTES = Gauge("feedback_posts_index_bytes", "Bytes the query indexes held, as measured")

# A build this slow marks its workspace as one a new process warms before it is ready.
WARM_BEFORE_READY_SECONDS = 0.5
# How often a running process looks for indexes recorded as slow to build by others.
ADOPT_SECONDS = 10.0


class IndexCache:
    def __init__(self, repo, budget: int, ordered: bool, background: bool = True):
        self.repo = repo
        self.budget = budget  # bytes
        self.ordered = ordered  # the memory engine pages from the orders; search needs none
        self.background = background  # False: a miss builds at once (tests that compare engines)
        self._indexes: OrderedDict[str, WorkspaceIndex] = OrderedDict()  # least recently used first
        self._per_post: dict[str, float] = {}  # bytes per post, measured at build
        self._too_big: dict[str, int] = {}  # slug -> posts it had when it did not fit the budget
        self._lock = threading.Lock()
        self._queued: set[str] = set()
        self._builds: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._builder: threading.Thread | None = None
        self.evictions = 0
        self.warm = threading.Event()  # set once warm_up is done: the process may report ready

    # -- reads --------------------------------------------------------------------------------

    def fresh(self, slug: str) -> WorkspaceIndex | None:
        """The workspace's index, caught up with the changes committed before this call; None
        while it is not built (its build is queued, unless it is too big for the budget)."""
        with self._lock:
            index = self._indexes.get(slug)
            if index is not None:
                self._indexes.move_to_end(slug)
        READS.labels("miss" if index is None else "hit").inc()
        if index is None:
            if not self.background:
                return self.build(slug)
            self._queue(slug)
            return None
        self.catch_up(slug, index, self.repo.clocks(slug))
        return index

    def catch_up(self, slug: str, index: WorkspaceIndex, clocks: dict[str, int]) -> bool:
        """Apply the posts changed since the index last looked, if a change clock moved. One
        catch-up at a time per index: requests that saw the same clocks move wait for it rather
        than each reading (and applying) the same changes."""
        def behind() -> bool:  # clocks only move forward
            return any(index.clocks.get(c, 0) < n for c, n in clocks.items())

        if not behind():
            return False
        with index.catching_up:
            if behind():
                before = index.size()
                for doc in self.repo.changed_since(slug, index.watermark):
                    index.apply(doc)
                for clock, n in clocks.items():
                    index.clocks[clock] = max(index.clocks.get(clock, 0), n)
                if index.size() != before:
                    self._fit(keep=slug)
        return True

    # -- building -----------------------------------------------------------------------------

    def build(self, slug: str) -> WorkspaceIndex | None:
        """Build the workspace's index now and keep it (evicting others) if it fits the budget."""
        if slug in self._too_big and self.repo.count_posts(slug) >= self._too_big[slug]:
            return None  # still too big: do not read it all again for nothing
        started = time.monotonic()
        docs, clocks = self.repo.index_source(slug)
        index = WorkspaceIndex(docs, clocks, ordered=self.ordered)
        seconds = time.monotonic() - started
        BUILDS.inc()
        per_post = index.footprint() / max(1, index.size())
        # An index is hundreds of thousands of long-lived objects: out of the garbage collector's
        # full passes, which would otherwise walk them all, often, under load. Collected first,
        # so no garbage of the requests is frozen with it; an evicted index is freed by its
        # reference count (it holds no cycle).
        gc.collect()
        gc.freeze()
        if per_post * index.size() > self.budget:
            log.warning("the query index of %s (%d posts, %.0f MB) does not fit POSTS_INDEX_MEMORY_MB; "
                        "its reads stay with the database", slug, index.size(), per_post * index.size() / 2**20)
            with self._lock:
                self._too_big[slug] = index.size()
            return None
        with self._lock:
            self._too_big.pop(slug, None)
            self._per_post[slug] = per_post
            self._indexes[slug] = index
            self._indexes.move_to_end(slug)
        self._fit(keep=slug)
        if seconds >= WARM_BEFORE_READY_SECONDS:
            self.repo.note_warm_index(slug, index.size(), int(per_post * index.size()))
        return index

    def recorded(self, room: int) -> list[str]:
        """The recorded slow-to-build workspaces this process lacks whose indexes fit ``room``
        bytes together, most recently built first."""
        chosen = []
        held = set(self.held())
        for record in self.repo.warm_index_records():
            if record["_id"] not in held and record["bytes"] <= room:
                chosen.append(record["_id"])
                room -= record["bytes"]
        return chosen

    def warm_up(self, time_limit: float) -> None:
        """Build the recorded slow-to-build indexes that fit the budget together, most recently
        built first, then set :attr:`warm` (also after ``time_limit`` seconds: a process that
        cannot warm up still serves, its cold reads slowly)."""
        try:
            for slug in reversed(self.recorded(self.budget)):  # the most recent last: the least likely evicted
                self._queue(slug)
            if not self.wait_idle(time_limit):
                log.warning("warming the query indexes took over %.0f s; ready with some still building", time_limit)
        except Exception:  # noqa: BLE001 - the database is down: ready follows its own check
            log.warning("could not warm the query indexes", exc_info=True)
        finally:
            self.warm.set()

    def adopt(self) -> None:
        """Queue the builds of the recorded slow-to-build indexes this process lacks that fit
        what is left of its budget: another process met those workspaces first, and this one
        would otherwise answer them cold (evicting nothing, so two processes never churn)."""
        for slug in self.recorded(self.budget - self.used()):
            self._queue(slug)

    def _queue(self, slug: str) -> None:
        with self._lock:
            if slug in self._queued:
                return
            self._queued.add(slug)
            if self._builder is None:
                self._builder = threading.Thread(target=self._build_forever, name="query-index-builds", daemon=True)
                self._builder.start()
        self._builds.put(slug)

    def _build_forever(self) -> None:
        while True:
            slug = self._builds.get()
            try:
                if slug not in self._indexes:
                    self.build(slug)
            except Exception:  # noqa: BLE001 - the next read of the workspace queues it again
                log.warning("could not build the query index of %s", slug, exc_info=True)
            finally:
                with self._lock:
                    self._queued.discard(slug)

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """True once no build is queued or running (tests and benchmarks)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._queued:
                    return True
            time.sleep(0.01)
        return False

    # -- the budget ---------------------------------------------------------------------------

    def used(self) -> int:
        """Bytes held, as measured (each index's bytes per post at build times its posts now)."""
        with self._lock:
            return int(sum(self._per_post[s] * i.size() for s, i in self._indexes.items()))

    def _fit(self, keep: str) -> None:
        """Evict least recently used indexes until the rest fit the budget (``keep`` last)."""
        with self._lock:
            used = sum(self._per_post[s] * i.size() for s, i in self._indexes.items())
            for slug in [s for s in self._indexes if s != keep] + [keep]:
                if used <= self.budget:
                    break
                index = self._indexes.pop(slug, None)
                if index is not None:
                    used -= self._per_post.pop(slug) * index.size()
                    self.evictions += 1
                    EVICTIONS.inc()
            HELD_BYTES.set(used)

    def held(self) -> list[str]:
        with self._lock:
            return list(self._indexes)

    def posts(self) -> int:
        with self._lock:
            return sum(i.size() for i in self._indexes.values())

