"""Rate limits at the edge: budgets per identity, per client address and per workspace, for
reads, writes and searches, and a lockout for failed authentications, with the RateLimit-Policy
and RateLimit fields of the IETF httpapi draft on every limited response and a 429 ``{error}``
with Retry-After past a budget.

Every budget is counted in a store that every gateway process and pod shares
(``RATE_LIMIT_STORAGE``: the platform's MongoDB by default; any storage URI of the ``limits``
library, e.g. ``redis://``), so a client gets one budget however its requests are spread.
Windows are aligned to the clock (``window * floor(now / window)``), so the counters' keys and
a budget's reset time are known without asking the store.

Which class a route's request spends is declared by its service, per method (``Route.limits``:
``{method: "write" | "search"}``); a method it does not name spends "read" for GET or HEAD and
"write" for any other. A route may declare a budget of its own too (``Route.budgets``: an
operation that costs far more than a request, per workspace, spent by its team), which the
gateway spends besides the class's, knowing nothing of what the route does.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from limits.storage import MongoDBStorage, Storage, storage_from_string
from pymongo import UpdateOne

from common import auth
from common.errors import TooManyRequests
from common.plugins import Budget
from gateway.config import GatewayConfig, Limit

READ, WRITE, SEARCH = "read", "write", "search"
STORE_RETRY_SECONDS = 5  # how long budgets fail open after the store did not answer

log = logging.getLogger(__name__)
COLLECTION_DATABASE = "gateway"  # <prefix>gateway: the gateway's only database, its budgets


def request_class(declared: str | None, method: str) -> str:
    """The budget a request spends: its route's declaration, else read for GET/HEAD, else write."""
    return declared or (READ if method in ("GET", "HEAD") else WRITE)


@dataclass
class Verdict:
    allowed: bool
    policy: str
    limit: Limit
    remaining: int
    reset: int  # seconds until the window ends (when the budget is whole again)

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Policy": f'"{self.policy}";q={self.limit.quota};w={_seconds(self.limit.window)}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset}',
        }


class CountersInMongo(MongoDBStorage):
    """The ``limits`` library's MongoDB storage, counting with upserts and reads by ``_id``.

    The library counts with findAndModify, and its sliding window with an update pipeline; the
    local MongoDB-protocol server scans the whole collection for every findAndModify and fails
    the pipeline (docs/benchmarks.md). Upserts and reads by ``_id`` are index lookups on real
    MongoDB and on the stand-in alike, and all of one request's counters take one bulk write
    and one read. The read may see other processes' hits of the same window too: never fewer
    than ours, so a budget is never exceeded."""

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return self.count({key: (expiry, amount)}, [])[key]

    def __del__(self) -> None:
        # The library's own closes ``self.storage``, a property that connects (and creates the
        # indexes) when no request ever did: a process exiting would wait for a server.
        if self._storage is not None:
            self._storage.close()

    def count(self, spend: dict[str, tuple[float, int]], read: list[str]) -> dict[str, int]:
        """Add to each key of ``spend`` its amount (the key expiring after its seconds), and
        return the counts of those keys and of ``read``'s."""
        now = datetime.now(timezone.utc)
        writes = [
            UpdateOne({"_id": key}, {"$inc": {"count": amount}, "$setOnInsert": {"expireAt": now + timedelta(seconds=seconds)}}, upsert=True)
            for key, (seconds, amount) in spend.items() if amount
        ]
        if writes:
            self.counters.bulk_write(writes, ordered=False)
        keys = [*spend, *read]
        found = {doc["_id"]: doc["count"] for doc in self.counters.find({"_id": {"$in": keys}, "expireAt": {"$gt": now}}, {"count": 1})}
        return {key: found.get(key, 0) for key in keys}


def open_storage(uri: str, database: str) -> Storage:
    if uri.startswith(("mongodb://", "mongodb+srv://")):
        # As the services' clients (common.db): a store that is down is known in 2 s, not 30.
        timeouts = {"serverSelectionTimeoutMS": 2000, "connectTimeoutMS": 2000, "socketTimeoutMS": 2000}
        return CountersInMongo(uri, database_name=database, **timeouts)
    return storage_from_string(uri)


# A budget of fewer requests than this a window is counted in the store on every request:
# exact across processes. A small budget is spent slowly, so the store's round trip costs little,
# and what another process has not synced yet would be a large share of it.
LOCAL_MIN_QUOTA = 20


class Budgets:
    """Sliding-window counters in a shared store (the ``limits`` library's sliding window
    counter: this window's count plus the previous window's, weighted by how much of it still
    lies within one window of now), so a budget spent just before a window ends is not whole
    again just after it.

    A request far from its budget's end waits for no store: this process counts it at once and
    sends its counts to the store in the background (every ``sync_seconds``: one bulk write and
    one read of everything spent since, and nothing at all while no request comes), reading back
    what every process spent. A request near the end (the last ``margin`` of the quota, at least
    one request), the first of a window this process has not seen, and every request of a small
    budget (under ``LOCAL_MIN_QUOTA``) count in the store before they are answered, as every request
    used to: the verdicts that refuse are exact. What other
    processes spent in the last ``sync_seconds`` may be unseen, so a budget can be overshot by
    what they spend in that time beyond the margin (docs/architecture.md, "Budgets")."""

    def __init__(self, storage: Storage, clock=time.time, monotonic=time.monotonic, sync_seconds: float = 0.0,
                 margin: float = 0.1):
        self.storage = storage
        self.clock = clock
        self.monotonic = monotonic
        self.sync_seconds = sync_seconds
        self.margin = margin
        self._down_until = 0.0
        self._lock = threading.Lock()
        self._stored: dict[str, int] = {}  # the store's count of each window key, as last read
        self._pending: dict[str, int] = {}  # this process's spending not sent yet
        self._lifetime: dict[str, float] = {}  # seconds each spent key is kept in the store
        self._forget_at: dict[str, float] = {}  # when a window key is of no more use (monotonic)
        self._sync = threading.Event()
        if sync_seconds > 0:
            threading.Thread(target=self._sync_forever, name="budgets-sync", daemon=True).start()

    def _store(self, work):
        """``work()``'s counts, or None while the store is unreachable: budgets then fail open
        (a rate limiter must not take the platform down with its store), and the store is not
        asked again for STORE_RETRY_SECONDS, so requests do not each wait for its time-out."""
        if self.monotonic() < self._down_until:
            return None
        try:
            return work()
        except Exception as ex:  # noqa: BLE001 - each storage (pymongo, redis, memcached) fails its own way
            self._down_until = self.monotonic() + STORE_RETRY_SECONDS
            log.warning("rate-limit store unavailable, budgets not counted for %s s: %s", STORE_RETRY_SECONDS, ex)
            return None

    def spend(self, checks: list[tuple[tuple, str, Limit]], amount: int = 1, exact: bool = False) -> list[Verdict]:
        """Spend ``amount`` of each ``(key, policy, limit)``; return a verdict per check (none
        while the store is unreachable). ``exact``: counted in the store now, whatever the
        budget's state, for what every process must see at once (a failed authentication)."""
        if not checks:
            return []
        now = self.clock()
        windows = []  # (current window's key, previous window's key, start) per check
        for key, _, limit in checks:
            start = math.floor(now / limit.window) * limit.window
            windows.append((_window_key(key, limit, start), _window_key(key, limit, start - limit.window), start))
        # Each window's counter is read until the end of the next one.
        lifetimes = {current: 2 * limit.window for (current, _, _), (_, _, limit) in zip(windows, checks)}
        counts = self._spend_here(checks, windows, lifetimes, amount, now) if self.sync_seconds > 0 and not exact else None
        if counts is None:
            counts = self._spend_in_store(lifetimes, [prev for _, prev, _ in windows], amount)
            if counts is None:
                return []
        return [
            _verdict(policy, limit, counts[prev], counts[current], start, now)
            for (_, policy, limit), (current, prev, start) in zip(checks, windows)
        ]

    def _spend_here(self, checks, windows, lifetimes: dict[str, float], amount: int, now: float) -> dict[str, int] | None:
        """Counted in this process, if every budget is known here, far from its end and not a
        small one; else None (nothing spent): the caller counts in the store."""
        with self._lock:
            counts = {}
            for (_, _, limit), (current, previous, start) in zip(checks, windows):
                if limit.quota < LOCAL_MIN_QUOTA:
                    return None
                if current not in self._stored or previous not in self._stored:
                    return None
                counts[current] = self._stored[current] + self._pending.get(current, 0) + amount
                counts[previous] = self._stored[previous] + self._pending.get(previous, 0)
                used = counts[previous] * (1 - (now - start) / limit.window) + counts[current]
                if used > limit.quota - max(1.0, self.margin * limit.quota):
                    return None
            for current, seconds in lifetimes.items():
                self._pending[current] = self._pending.get(current, 0) + amount
                self._lifetime[current] = seconds
            self._keep([key for current, previous, _ in windows for key in (current, previous)], lifetimes)
        self._sync.set()
        return counts

    def _spend_in_store(self, lifetimes: dict[str, float], previous: list[str], amount: int) -> dict[str, int] | None:
        """Counted in the store now, with what this process has not sent yet of the same keys."""
        with self._lock:
            owed = {key: self._pending.pop(key, 0) for key in lifetimes}
        spend = {key: (seconds, amount + owed[key]) for key, seconds in lifetimes.items()}
        counts = self._store(lambda: self._count(spend, previous))
        if counts is None:
            with self._lock:  # not sent: still owed
                for key, extra in owed.items():
                    if extra:
                        self._pending[key] = self._pending.get(key, 0) + extra
            return None
        if self.sync_seconds > 0:
            with self._lock:
                for key, value in counts.items():  # a window's count only grows: a slower answer is older
                    self._stored[key] = max(self._stored.get(key, 0), value)
                self._keep(list(counts), lifetimes)
        return counts

    def _keep(self, keys: list[str], lifetimes: dict[str, float]) -> None:
        """Remember ``keys`` here until their windows are over (called with the lock held)."""
        until = self.monotonic() + max(lifetimes.values(), default=60)
        for key in keys:
            self._forget_at[key] = max(self._forget_at.get(key, 0), until)

    def sync(self) -> None:
        """Send what this process spent and read back every process's counts of the budgets it
        spent since the last sync (one bulk write and one read)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            at = self.monotonic()
            for key in [k for k, until in self._forget_at.items() if until < at]:
                for table in (self._stored, self._forget_at, self._lifetime):
                    table.pop(key, None)
            touched = list(self._forget_at)
        if not pending:
            return
        spend = {key: (self._lifetime.get(key, 120), extra) for key, extra in pending.items()}
        counts = self._store(lambda: self._count(spend, [k for k in touched if k not in spend]))
        with self._lock:
            if counts is None:  # not sent: still owed, and verdicts go on from what is known
                for key, extra in pending.items():
                    self._pending[key] = self._pending.get(key, 0) + extra
                return
            for key, value in counts.items():
                if key in self._forget_at:
                    self._stored[key] = max(self._stored.get(key, 0), value)

    def _sync_forever(self) -> None:
        while True:
            self._sync.wait()
            self._sync.clear()
            time.sleep(self.sync_seconds)  # what comes meanwhile goes with this sync
            try:
                self.sync()
            except Exception:  # noqa: BLE001 - the thread must outlive one failed sync
                log.exception("budgets: a sync with the store failed")

    def peek(self, key: tuple, policy: str, limit: Limit) -> Verdict:
        """The verdict of one more request of ``key`` now, spending nothing."""
        now = self.clock()
        start = math.floor(now / limit.window) * limit.window
        current, previous = _window_key(key, limit, start), _window_key(key, limit, start - limit.window)
        counts = self._store(lambda: self._count({}, [current, previous]))
        if counts is None:
            return Verdict(True, policy, limit, limit.quota, 1)
        with self._lock:
            counts = {k: v + self._pending.get(k, 0) for k, v in counts.items()}
        return _verdict(policy, limit, counts[previous], counts[current], start, now, pending=1)

    def _count(self, spend: dict[str, tuple[float, int]], read: list[str]) -> dict[str, int]:
        """Add to each key of ``spend`` its amount (kept its seconds) and return the counts of
        those keys and of ``read``'s."""
        if isinstance(self.storage, CountersInMongo):
            return self.storage.count(spend, read)
        counts = {k: self.storage.incr(k, math.ceil(seconds), amount) for k, (seconds, amount) in spend.items()}
        counts.update({k: self.storage.get(k) for k in read})
        return counts


def _verdict(policy: str, limit: Limit, previous: int, current: int, start: float, now: float, pending: int = 0) -> Verdict:
    """The verdict of a budget whose windows counted ``previous`` and ``current`` (this window
    started at ``start``), with ``pending`` more requests to come (1 to ask before spending)."""
    used = previous * (1 - (now - start) / limit.window) + current
    allowed = used + pending <= limit.quota
    # While allowed: when this window ends; refused: when one more request fits.
    reset = math.ceil(start + limit.window - now) if allowed else _seconds_until_room(limit, previous, current, start, now)
    return Verdict(allowed, policy, limit, max(0, math.floor(limit.quota - used)), max(1, reset))


def _seconds_until_room(limit: Limit, previous: int, current: int, start: float, now: float) -> int:
    """Seconds until one more request fits (the previous window's weight falls linearly to 0
    at this window's end, when this window becomes the previous one)."""
    room = limit.quota - 1
    if current <= room:
        if previous == 0:
            return 1
        at = start + limit.window * (1 - (room - current) / previous)
    else:
        at = start + limit.window * (2 - room / current)
    return max(1, math.ceil(at - now))


class RateLimits:
    def __init__(self, config: GatewayConfig, storage: Storage):
        self.config = config
        self.budgets = Budgets(storage, sync_seconds=config.rate_limit_sync_seconds)

    def check(self, kind: str, caller: auth.Caller, address: str, workspace: str | None, own: Budget | None = None) -> dict[str, str]:
        """Spend one request of ``kind`` (read, write or search) for ``caller`` at ``address`` on
        ``workspace``, and of the route's ``own`` budget when it declares one; return the
        RateLimit header fields of the tightest budget, or raise 429."""
        c = self.config
        checks = []
        per_identity, per_address = {
            WRITE: (c.write_limit, c.write_limit_per_address),
            SEARCH: (c.search_limit, c.search_limit_per_address),
            READ: (c.read_limit, c.read_limit_per_address),
        }[kind]
        # User ids are the workspace's own (an SSO `id` is whatever that workspace's app says),
        # so a user's budget is counted in that workspace only.
        identity = (kind, "id", workspace or "", caller.user_id or caller.kind)
        if caller.kind in (auth.ADMIN, auth.MANAGER):
            checks.append((("key", caller.key_id or "operator"), "api-key", c.manager_limit))
        elif caller.key_id:
            # An agent's key: one identity, often many agents behind one server's address, so its
            # own budget applies and not the per-address one meant for visitors.
            checks.append((identity, kind, per_identity))
        else:
            checks += [(identity, kind, per_identity), ((kind, "ip", address_key(address)), f"{kind}-per-address", per_address)]
        if kind == READ and workspace and caller.kind != auth.ADMIN:
            checks.append(((READ, "workspace", workspace), "read-per-workspace", c.read_limit_per_workspace))
        if own is not None and workspace and caller.is_manager_of(workspace):
            # The workspace's team together; anyone else is refused by the route's service and
            # must not use the team's budget up.
            checks.append((("route", own.name, workspace), own.name, c.route_limit(own.name, own.quota, own.window)))
        checks = [check for check in checks if check[2].quota > 0]
        if not checks:
            return {}
        verdicts = self.budgets.spend(checks)
        if not verdicts:  # the store is unreachable: fail open
            return {}
        tightest = min(verdicts, key=lambda v: (v.allowed, v.remaining))
        if not tightest.allowed:
            if own is not None and tightest.policy == own.name:
                raise _too_many(tightest, f"this workspace's '{own.name}' budget is spent")
            raise _too_many(tightest, f"too many {kind} requests from this client")
        return tightest.headers()

    # -- failed authentications ------------------------------------------------------------
    # Counted per (address, credential): one client presenting a bad credential is locked out
    # with that credential, and nobody can spend another client's budget. A ceiling per
    # address on failures of any credential keeps one client from making the owner verify
    # endless new guesses; past it, only credentials this gateway already knows to be good pass.

    def refuse_if_failing(self, address: str, credential: str, known_good: bool) -> None:
        """429 before a credential is checked, for a client past its failed authentications."""
        if not known_good:
            for key, policy, limit in self._failure_budgets(address, credential):
                verdict = self.budgets.peek(key, policy, limit)
                if not verdict.allowed:
                    raise _too_many(verdict, "too many failed authentications from this client")

    def failed(self, address: str, credential: str) -> None:
        # In the store at once: a lockout holds across gateway processes from the failure that
        # reaches it (another process's next request peeks at the store), and failures are few.
        self.budgets.spend(self._failure_budgets(address, credential), exact=True)

    def _failure_budgets(self, address: str, credential: str) -> list:
        ip = address_key(address)
        digest = hashlib.sha256(credential.encode()).hexdigest()[:32]
        budgets = [
            (("auth-failure", ip, digest), "auth-failures", self.config.auth_failure_limit),
            (("auth-failure", ip), "auth-failures-per-address", self.config.auth_failure_limit_per_address),
        ]
        return [b for b in budgets if b[2].quota > 0]


def address_key(address: str) -> str:
    """What one client's address counts as: an IPv4 address, or the /64 of an IPv6 one (a
    single host is routinely given a whole /64)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))


def _window_key(key: tuple, limit: Limit, start: float) -> str:
    return "|".join((*map(str, key), f"{limit.quota}/{_seconds(limit.window)}", str(int(start))))


def _too_many(verdict: Verdict, message: str) -> TooManyRequests:
    return TooManyRequests(
        f"{message}: try again in {verdict.reset} s", headers={**verdict.headers(), "Retry-After": str(verdict.reset)}
    )


def _seconds(window: float) -> int | float:
    return int(window) if float(window).is_integer() else window
