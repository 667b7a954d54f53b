"""The in-memory query index of one workspace (the ``memory`` read engine's cache entries, and
the search candidates of both engines): what lists, the roadmap and search need of every post,
so their cost does not grow with the board (docs/services/posts.md, "Reads").

A workspace's index holds each post's filters (board, status, moderation state, whether it is
listed or merged, its facets: tags, owner, fields), sort keys (created, votes, comments, revenue, score), title and search features, and keeps
one sorted order per sort for each population (``listed``: what everyone sees; ``open``: every
post not merged into another, for managers). A page is read off its sorted order; a filter is
applied while walking it, and a filter that matches too few posts for the walk to fill the page
soon, or whose smallest set is small against the order, is answered from its sets instead (so
a rare filter costs what it matches, a common one what the page needs). The page's documents are then fetched by ``_id``.

The index is built from the posts collection in the background the first time a workspace is
asked for, and kept current by its cache (``posts.reads.cache``): each post write stamps the
post's ``changedAt`` and moves one of the workspace's change clocks, and each read checks the
clocks first, catching up on the posts changed since when one moved. Without its sorted
orders (``ordered=False``) it holds what search needs only: the ``mongo`` engine's cache.
"""

from __future__ import annotations

import heapq
import math
import struct
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from sortedcontainers import SortedList

from posts import embeddings

LISTED, OPEN = "listed", "open"  # the populations: what everyone sees; what managers see
# Each sort's key as one integer (the sort value above the 96 bits of the ObjectId, which breaks
# ties as MongoDB's ``_id`` does), so an order holds ints rather than tuples.
OID_BITS = 96
OID_MASK = (1 << OID_BITS) - 1
SORTS: dict[str, Callable[["Entry"], int]] = {
    "newest": lambda e: -((e.created << OID_BITS) | e.oid),
    "oldest": lambda e: (e.created << OID_BITS) | e.oid,
    "top": lambda e: -((e.votes << OID_BITS) | e.oid),
    "discussed": lambda e: -((e.comments << OID_BITS) | e.oid),
    "revenue": lambda e: -((e.revenue << OID_BITS) | e.oid),
    "score": lambda e: -((score_key(e.score) << OID_BITS) | e.oid),
}
# A filtered page walks its sorted order at most this many entries (or WALK_PER_ITEM per item
# wanted, if more) before it answers from the filter's sets: a filter matching fewer than one
# post in WALK_PER_ITEM is cheaper to read that way.
WALK_MIN, WALK_PER_ITEM = 2000, 50
# The vector matrix grows by this factor when full, by MIN_ROWS rows at least (its rows are
# reused as posts go).
GROWTH, MIN_ROWS = 1.5, 16


@dataclass(slots=True)
class Entry:
    oid: int  # the post's ObjectId as an integer (orders as the ObjectId does)
    board: str
    status: str
    moderation: str
    listed: bool
    merged: bool
    deleted: bool  # soft-deleted (posts.service): in no population, so in no list, search or roadmap
    created: int  # milliseconds since the epoch
    votes: int
    comments: int  # public comments
    revenue: int  # cents (posts.revenue)
    score: float | None  # posts.scores
    facets: tuple[str, ...]  # posts.triage: tags, owner, filterable fields
    title: str
    terms: tuple[str, ...]  # its search terms (posts.text.index_terms), each also in the postings
    title_terms: tuple[str, ...]  # what search scores
    changed: int  # changedAt (ns) of the document this entry was made from
    eta: str | None = None  # posts.triage: the month it should ship, shown on the roadmap

    @classmethod
    def from_doc(cls, doc: dict) -> "Entry":
        return cls(
            oid=int(str(doc["_id"]), 16),
            board=doc["boardId"],
            status=doc["statusSlug"],
            moderation=doc["moderationState"],
            listed=bool(doc.get("listed")),
            merged=bool(doc.get("mergedInto")),
            deleted=doc.get("deletedAt") is not None,
            created=round(doc["createdAt"].timestamp() * 1000),
            votes=doc.get("voteCount", 0),
            comments=doc.get("commentCount", 0),
            revenue=doc.get("revenueCents", 0),
            score=doc.get("score"),
            facets=tuple(sys.intern(f) for f in doc.get("facets") or ()),
            title=doc["title"],
            terms=tuple(sys.intern(t) for t in doc.get("terms", ())),
            title_terms=tuple(sys.intern(t) for t in doc.get("titleTerms", ())),
            changed=doc.get("changedAt", 0),
            eta=doc.get("eta"),
        )

    def populations(self) -> tuple[str, ...]:
        if self.deleted:
            return ()
        return ((LISTED,) if self.listed else ()) + ((OPEN,) if not self.merged else ())


def score_key(score: float | None) -> int:
    """A non-negative integer ordered as the score is (the IEEE 754 bits, negatives flipped);
    no score orders first, as MongoDB's null does."""
    if score is None:
        return 0
    bits = struct.unpack(">Q", struct.pack(">d", float(score) + 0.0))[0]  # + 0.0: -0.0 is 0.0
    return bits ^ 0xFFFF_FFFF_FFFF_FFFF if bits >> 63 else bits | 1 << 63


def oid_hex(oid: int) -> str:
    return f"{oid:024x}"


class Vectors:
    """The title vectors of a workspace's posts (posts.embeddings), as the rows of one float32
    matrix, so one matrix product gives the cosine of a query with every post. Not locked:
    the :class:`WorkspaceIndex` that owns it is."""

    def __init__(self, vectors: dict[int, np.ndarray] | None = None):
        """``vectors``: each post's, as built. The matrix starts at their number of rows: most
        workspaces are small, and a growth step's empty rows would cost more than their posts
        (a 100-post workspace held 1.5 MB in a 1,024-row first step: docs/benchmarks.md)."""
        vectors = vectors or {}
        self.matrix = np.array(list(vectors.values()), dtype=np.float32).reshape(len(vectors), embeddings.DIMENSION)
        self.oid_at: list[int | None] = list(vectors)  # row -> post (None: a free row, all zeros)
        self.row_of: dict[int, int] = {oid: row for row, oid in enumerate(self.oid_at)}
        self.free: list[int] = []

    def put(self, oid: int, vector: np.ndarray | None) -> None:
        if vector is None:
            return self.drop(oid)
        row = self.row_of.get(oid)
        if row is None:
            row = self.free.pop() if self.free else self._new_row()
            self.row_of[oid] = row
            self.oid_at[row] = oid
        self.matrix[row] = vector

    def drop(self, oid: int) -> None:
        row = self.row_of.pop(oid, None)
        if row is not None:
            self.matrix[row] = 0.0
            self.oid_at[row] = None
            self.free.append(row)

    def _new_row(self) -> int:
        row = len(self.oid_at)
        if row == len(self.matrix):
            grown = np.zeros((max(MIN_ROWS, int(row * GROWTH)), embeddings.DIMENSION), dtype=np.float32)
            grown[:row] = self.matrix
            self.matrix = grown
        self.oid_at.append(None)
        return row

    def nearest(self, query: np.ndarray, eligible: Callable[[int], bool], most: int) -> list[tuple[float, int]]:
        """The ``most`` eligible posts of highest cosine with ``query``, best first."""
        used = len(self.oid_at)
        if not used or most <= 0:
            return []
        cosines = self.matrix[:used] @ query
        # Partition off a few times more rows than wanted (filters drop some), and only rank
        # every row when the filters leave too few of those.
        k = min(used, max(4 * most, 256))
        while True:
            rows = np.argpartition(-cosines, k - 1)[:k] if k < used else np.arange(used)
            rows = rows[np.argsort(-cosines[rows], kind="stable")]
            found = []
            for row in rows.tolist():
                oid = self.oid_at[row]
                if oid is not None and eligible(oid):
                    found.append((float(cosines[row]), oid))
                    if len(found) == most:
                        return found
            if k == used:
                return found
            k = used

    def cosines(self, query: np.ndarray, oids: list[int]) -> list[float | None]:
        """Each post's cosine with ``query`` (None for one without a vector), in one product."""
        rows = [self.row_of.get(oid) for oid in oids]
        found = [row for row in rows if row is not None]
        values = iter((self.matrix[found] @ query).tolist() if found else ())
        return [None if row is None else next(values) for row in rows]

    def __len__(self) -> int:
        return len(self.row_of)


class WorkspaceIndex:
    """One workspace's posts. Safe across threads: one lock guards every change and read."""

    def __init__(self, docs: Iterable[dict], clocks: dict[str, int], ordered: bool = True):
        self.lock = threading.RLock()
        self.catching_up = threading.Lock()  # one catch-up at a time; the others wait for it
        self.entries: dict[int, Entry] = {}
        # Only the memory engine pages from the index; search needs no order.
        self.orders = {(pop, sort): SortedList() for pop in (LISTED, OPEN) for sort in SORTS} if ordered else {}
        self.members: dict[str, set[int]] = {LISTED: set(), OPEN: set()}
        self.by_board: dict[str, set[int]] = {}
        self.by_status: dict[str, set[int]] = {}
        self.by_moderation: dict[str, set[int]] = {}
        self.by_facet: dict[str, set[int]] = {}
        self.postings: dict[str, set[int]] = {}
        self.clocks = dict(clocks)  # change clock -> the count this index has caught up with
        self.watermark = 0  # the newest changedAt applied
        vectors = {}
        for doc in docs:  # the orders and the vector matrix are made once at the end
            entry = Entry.from_doc(doc)
            if entry.oid not in self.entries:
                self._add(entry, ordered=False)
                vector = embeddings.from_stored(doc.get("embedding"))
                if vector is not None:
                    vectors[entry.oid] = vector
                self.watermark = max(self.watermark, entry.changed)
        self.vectors = Vectors(vectors)
        for (pop, sort), order in self.orders.items():
            order.update(SORTS[sort](self.entries[oid]) for oid in self.members[pop])

    # -- changes ------------------------------------------------------------------------------

    def apply(self, doc: dict) -> None:
        """Make the index agree with ``doc`` (a post as stored), unless it already reflects a
        later change of that post."""
        entry = Entry.from_doc(doc)
        with self.lock:
            old = self.entries.get(entry.oid)
            if old is not None and old.changed >= entry.changed:
                return  # this write (or a later one) is in already: catch-ups overlap
            if old is not None:
                self._remove(old)
            self._add(entry)
            self.vectors.put(entry.oid, embeddings.from_stored(doc.get("embedding")))
            self.watermark = max(self.watermark, entry.changed)

    def _add(self, e: Entry, ordered: bool = True) -> None:
        self.entries[e.oid] = e
        for pop in e.populations():
            self.members[pop].add(e.oid)
            if ordered and self.orders:
                for sort, key in SORTS.items():
                    self.orders[(pop, sort)].add(key(e))
        self.by_board.setdefault(e.board, set()).add(e.oid)
        self.by_status.setdefault(e.status, set()).add(e.oid)
        self.by_moderation.setdefault(e.moderation, set()).add(e.oid)
        for term in e.terms:
            self.postings.setdefault(term, set()).add(e.oid)
        for facet in e.facets:
            self.by_facet.setdefault(facet, set()).add(e.oid)

    def _remove(self, e: Entry) -> None:
        del self.entries[e.oid]
        for pop in e.populations():
            self.members[pop].discard(e.oid)
            if self.orders:
                for sort, key in SORTS.items():
                    self.orders[(pop, sort)].remove(key(e))
        self.by_board[e.board].discard(e.oid)
        self.by_status[e.status].discard(e.oid)
        self.by_moderation[e.moderation].discard(e.oid)
        for term in e.terms:
            self.postings[term].discard(e.oid)
        for facet in e.facets:
            self.by_facet[facet].discard(e.oid)

    # -- reads ----------------------------------------------------------------------------------

    def page(
        self,
        sort: str,
        manager: bool,
        offset: int,
        limit: int,
        board: str | None = None,
        status: str | None = None,
        moderation: str | None = None,
        words: list[str] = (),
        facets: list[str] = (),
        only: set[int] | None = None,
    ) -> list[Entry]:
        """A page of posts in ``sort`` order: listed ones, or for a manager every post not
        merged (``moderation`` narrows it), filtered by board, status, words and facets (all
        of them)."""
        pop = OPEN if manager else LISTED
        with self.lock:
            filters = [
                s
                for s in (
                    self.by_board.get(board, set()) if board is not None else None,
                    self.by_status.get(status, set()) if status is not None else None,
                    self.by_moderation.get(moderation, set()) if moderation is not None else None,
                    *(self.postings.get(w, set()) for w in words),
                    *(self.by_facet.get(f, set()) for f in facets),
                    only,
                )
                if s is not None
            ]
            order = self.orders[(pop, sort)]
            if not filters:
                return [self.entries[abs(k) & OID_MASK] for k in order.islice(offset, offset + limit)]
            wanted = offset + limit
            smallest = min(filters, key=len)
            if len(smallest) * WALK_PER_ITEM < len(order):  # sparse: fewer matches than walking would cost
                return self._from_sets(filters, pop, sort, offset, wanted)
            found: list[int] = []
            budget = max(WALK_MIN, WALK_PER_ITEM * wanted)
            for steps, key in enumerate(order):
                oid = abs(key) & OID_MASK
                if all(oid in s for s in filters):
                    found.append(oid)
                    if len(found) == wanted:
                        break
                if steps >= budget:  # denser sets, but this page is still deep in the order
                    return self._from_sets(filters, pop, sort, offset, wanted)
            return [self.entries[o] for o in found[offset:]]

    def _from_sets(self, filters: list[set[int]], pop: str, sort: str, offset: int, wanted: int) -> list[Entry]:
        matches = set.intersection(*sorted(filters, key=len)) & self.members[pop]
        return heapq.nsmallest(wanted, (self.entries[o] for o in matches), key=SORTS[sort])[offset:]

    def roadmap(self, statuses: list[str], board: str | None, limit: int) -> dict[str, list[Entry]]:
        """Each status's listed posts with the most votes."""
        return {s: self.page("top", False, 0, limit, board=board, status=s) for s in statuses}

    def candidates(self, terms: list[str], manager: bool, board: str | None, most: int) -> list[Entry]:
        """Posts sharing a term with a search, those sharing the rarest terms first (at most
        ``most``): not merged, listed unless the caller is a manager, on ``board`` if given."""
        with self.lock:
            shared: dict[int, float] = {}
            total = len(self.entries) or 1
            # Rarest terms first. Once there are enough candidates, a common term (a long
            # posting) only adds its little weight to them: posts sharing nothing rarer are not
            # read, so the cost stays with the candidates, not with the board.
            for posting in sorted((self.postings.get(t, ()) for t in terms), key=len):
                if not posting:
                    continue
                weight = math.log(1 + total / len(posting))
                if len(shared) < most:
                    for oid in posting:
                        shared[oid] = shared.get(oid, 0.0) + weight
                else:
                    for oid in shared:
                        if oid in posting:
                            shared[oid] += weight
            pop = self.members[OPEN if manager else LISTED]
            on_board = self.by_board.get(board, set()) if board is not None else None
            eligible = [o for o in shared if o in pop and (on_board is None or o in on_board)]
            if len(eligible) > most:
                eligible = heapq.nlargest(most, eligible, key=lambda o: (shared[o], o))
            return [self.entries[o] for o in eligible]

    def nearest(self, query: np.ndarray, manager: bool, board: str | None, most: int) -> list[tuple[float, Entry]]:
        """The posts whose title vector is nearest ``query`` (cosine, best first), among the
        same posts as :meth:`candidates`."""
        with self.lock:
            pop = self.members[OPEN if manager else LISTED]
            on_board = self.by_board.get(board, set()) if board is not None else None
            found = self.vectors.nearest(query, lambda o: o in pop and (on_board is None or o in on_board), most)
            return [(cosine, self.entries[oid]) for cosine, oid in found]

    def cosines(self, query: np.ndarray, entries: list[Entry]) -> list[float | None]:
        """Each entry's cosine with ``query`` (None for a post that has no vector)."""
        with self.lock:
            return self.vectors.cosines(query, [e.oid for e in entries])

    def size(self) -> int:
        return len(self.entries)

    def footprint(self) -> int:
        """The bytes this index holds, measured by walking its structures (the objects shared
        with others, interned terms and small ints, are not counted). Walking costs about a
        microsecond per post: the cache measures an index once when built, then scales by its
        number of posts."""
        size = sys.getsizeof
        with self.lock:
            total = size(self.entries) + sum(size(m) for m in self.members.values())
            for e in self.entries.values():
                total += size(e) + size(e.oid) + size(e.title) + size(e.terms) + size(e.title_terms) + size(e.facets)
            for order in self.orders.values():
                # A SortedList keeps its keys in sublists, plus a "maxes" list and an index.
                total += sum(size(part) for part in order._lists) + size(order._maxes) + size(order._index)
                total += sum(size(k) for part in order._lists for k in part)
            for sets in (self.by_board, self.by_status, self.by_moderation, self.by_facet, self.postings):
                total += size(sets) + sum(size(s) for s in sets.values())
            v = self.vectors
            total += v.matrix.nbytes + size(v.row_of) + size(v.oid_at) + size(v.free)
            return total
