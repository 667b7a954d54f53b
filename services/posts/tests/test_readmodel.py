"""What the posts service knows of each workspace (posts.readmodel): the in-memory mirror of the
stored snapshots and its polling, asking the owner (the real workspaces service, over signed
internal HTTP) on a miss, one ask at a time, and permissions checked against the owner's word
of at most a given age. In process against the real local database, with a clock of the
test's own; each test builds a read model of its own, as a new API process would."""

import threading
import uuid

import pytest

from common.config import load_settings
from devstack import free_port
from common.errors import NotFound, Unavailable
from common.internal import InternalClient
from posts import readmodel
from posts.readmodel import Workspaces
from testkit import wait_for


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Owner:
    """The workspaces service, asked through a real signed client, counting the asks; an ask
    waits while ``gate`` is clear."""

    def __init__(self, stack):
        self.client = InternalClient(load_settings({"INTERNAL_SECRET": stack.internal_secret,
                                                    "SERVICE_URL_WORKSPACES": stack.service_url("workspaces")}), timeout=5)
        self.settings = self.client.settings
        self.asks = 0
        self.gate = threading.Event()
        self.gate.set()
        self._lock = threading.Lock()

    def json(self, *args, **kwargs):
        with self._lock:
            self.asks += 1
        assert self.gate.wait(30), "the test never opened the gate"
        return self.client.json(*args, **kwargs)


def no_owner() -> InternalClient:
    """A client with no workspaces service configured: the stored read model is all there is."""
    return InternalClient(load_settings({}))


def snapshot(slug: str, version: int, **fields) -> dict:
    """A workspace.created/updated event's data."""
    return {"slug": slug, "name": f"v{version}", "version": version,
            "boards": [{"id": "b1", "name": "Features", "slug": "features"}],
            "statuses": [{"slug": "open", "name": "Open", "color": "#64748b", "order": 0, "roadmap": True}],
            "defaultStatus": "open", "anonSubmit": False, "anonVote": False, "anonComment": False, **fields}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def new_slug() -> str:
    return f"rm-{uuid.uuid4().hex[:10]}"


# -- the in-memory mirror ---------------------------------------------------------------------------


def test_the_mirror_answers_from_memory_until_its_next_poll(context, clock, new_slug):
    consumer = context.workspaces  # what stores the events (another process, in production)
    consumer.apply(snapshot(new_slug, 1))
    mirror = Workspaces(context.service.repo, no_owner(), context.config, clock)
    assert mirror.poll() >= 1
    assert mirror.get(new_slug).version == 1

    consumer.apply(snapshot(new_slug, 2, anonVote=True))
    assert mirror.get(new_slug).version == 1, "read from memory: no database round trip"
    assert mirror.poll() >= 1  # what was stored since the last poll (and a little before)
    seen = mirror.get(new_slug)
    assert (seen.version, seen.flags["anonVote"], seen.board_by_slug("features")["id"]) == (2, True, "b1")
    assert new_slug in mirror.known()
    with pytest.raises(NotFound):
        mirror.get(f"nowhere-{uuid.uuid4().hex[:8]}")  # neither the read model nor an owner knows it


def test_while_polling_fails_requests_read_the_database(context, clock, new_slug):
    context.workspaces.apply(snapshot(new_slug, 1))
    mirror = Workspaces(context.service.repo, no_owner(), context.config, clock)
    mirror.poll()
    context.workspaces.apply(snapshot(new_slug, 2))
    period = context.config.read_model_poll

    clock.now += 19 * period  # polls have failed for 19 periods: memory still answers
    assert mirror.get(new_slug).version == 1
    clock.now += 2 * period  # 21: memory is no longer trusted
    assert mirror.get(new_slug).version == 2
    mirror.poll()  # polling recovers
    assert mirror.get(new_slug).version == 2


def test_an_older_snapshot_never_replaces_a_newer_one(context, clock, new_slug):
    consumer = context.workspaces
    consumer.apply(snapshot(new_slug, 3))
    consumer.apply(snapshot(new_slug, 2))  # delivered late
    consumer.apply(snapshot(new_slug, 3, name="the same version again"))  # delivered twice
    stored = context.service.repo.workspace_view(new_slug)
    assert (stored["version"], stored["name"]) == (3, "v3")
    mirror = Workspaces(context.service.repo, no_owner(), context.config, clock)
    mirror.poll()
    assert mirror.get(new_slug).version == 3


def test_a_status_the_workspace_no_longer_has_shows_its_slug(context, clock, new_slug):
    context.workspaces.apply(snapshot(new_slug, 1))
    ws = Workspaces(context.service.repo, no_owner(), context.config, clock).get(new_slug)
    assert ws.status_shape("open") == {"slug": "open", "name": "Open", "color": "#64748b"}
    assert ws.status_shape("gone") == {"slug": "gone", "name": "gone", "color": readmodel.UNKNOWN_STATUS_COLOR}


# -- asking the owner -------------------------------------------------------------------------------


def test_a_workspace_not_heard_of_yet_is_asked_of_its_owner_and_kept(stack, workspace, context, clock):
    owner = Owner(stack)
    mirror = Workspaces(context.service.repo, owner, context.config, clock)
    assert context.service.repo.workspace_view(workspace.slug) is None, "no event has reached this read model"

    assert mirror.get(workspace.slug).slug == workspace.slug
    assert owner.asks == 1
    assert context.service.repo.workspace_view(workspace.slug) is not None, "the owner's answer is stored"
    mirror.get(workspace.slug)
    assert owner.asks == 1

    # A board created a moment ago: not in the read model yet, so the owner is asked again.
    workspace.board("just-made", "Just made")
    clock.now += 1
    ws = mirror.ensure(workspace.slug, lambda s: s.board_by_slug("just-made") is not None)
    assert ws.board_by_slug("just-made") is not None and owner.asks == 2
    mirror.ensure(workspace.slug, lambda s: s.board_by_slug("just-made") is not None)
    assert owner.asks == 2, "satisfied: nothing to ask"

    with pytest.raises(NotFound):
        mirror.get(f"nowhere-{uuid.uuid4().hex[:8]}")


def test_concurrent_misses_share_one_ask(stack, workspace, context, clock):
    owner = Owner(stack)
    mirror = Workspaces(context.service.repo, owner, context.config, clock)
    owner.gate.clear()
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(mirror.refresh(workspace.slug))) for _ in range(8)]
    for thread in threads:
        thread.start()
    wait_for(lambda: owner.asks >= 1, what="the first ask")
    owner.gate.set()
    for thread in threads:
        thread.join()
    assert owner.asks == 1 and len(answers) == 8 and {a.slug for a in answers} == {workspace.slug}

    clock.now += 1  # a caller arriving after that ask began is not answered by it
    mirror.refresh(workspace.slug)
    assert owner.asks == 2


def test_a_permission_follows_the_owners_word_of_at_most_max_age(stack, workspace, context, clock):
    owner = Owner(stack)
    mirror = Workspaces(context.service.repo, owner, context.config, clock)
    workspace.settings(anonSubmit=True)
    assert mirror.confirmed(workspace.slug, 5.0).flags["anonSubmit"] is True
    workspace.settings(anonSubmit=False)  # its event may be late: Kafka may be down

    clock.now += 3  # the owner's word of 3 s ago is recent enough
    assert mirror.confirmed(workspace.slug, 5.0).flags["anonSubmit"] is True
    assert owner.asks == 1
    clock.now += 3  # 6 s: too old, asked again
    assert mirror.confirmed(workspace.slug, 5.0).flags["anonSubmit"] is False
    assert owner.asks == 2
    assert context.service.repo.workspace_view(workspace.slug)["anonSubmit"] is False, "and stored"


def test_the_memory_of_past_asks_is_bounded(stack, context, clock, monkeypatch):
    monkeypatch.setattr(readmodel, "ASKED_MAX", 50)
    owner = Owner(stack)
    mirror = Workspaces(context.service.repo, owner, context.config, clock)
    first = f"nowhere-{uuid.uuid4().hex[:8]}"
    assert mirror.refresh(first) is None
    assert mirror.refresh(first, not_before=clock.now) is None and owner.asks == 1, "remembered"
    for i in range(60):  # unknown slugs, as a scan would send
        mirror.refresh(f"nowhere-{uuid.uuid4().hex[:8]}-{i}")
    assert owner.asks == 61
    mirror.refresh(first, not_before=clock.now)
    assert owner.asks == 62, "the oldest asks are forgotten past the bound"


def test_past_the_bound_an_answer_in_use_outlives_those_never_used_again(stack, context, clock, monkeypatch):
    """The least recently used answer goes first, not the first asked (which an OrderedDict in
    order of asking let go while callers still shared it)."""
    monkeypatch.setattr(readmodel, "ASKED_MAX", 3)
    owner = Owner(stack)
    mirror = Workspaces(context.service.repo, owner, context.config, clock)
    first, second, third, fourth = (f"nowhere-{uuid.uuid4().hex[:8]}-{i}" for i in range(4))
    asked_at = clock.now
    for slug in (first, second, third):
        mirror.refresh(slug)
    mirror.refresh(first, not_before=asked_at)  # shares the ask made above: a use
    mirror.refresh(fourth)  # one past the bound
    assert owner.asks == 4
    mirror.refresh(first, not_before=asked_at)
    assert owner.asks == 4, "the answer in use is remembered"
    mirror.refresh(second, not_before=asked_at)
    assert owner.asks == 5, "the least recently used answer went"


def test_an_owner_that_cannot_answer_is_unavailable_not_a_missing_workspace(context, clock):
    down = InternalClient(load_settings({"SERVICE_URL_WORKSPACES": f"http://127.0.0.1:{free_port()}"}), timeout=1)
    mirror = Workspaces(context.service.repo, down, context.config, clock)
    with pytest.raises(Unavailable):
        mirror.get(f"nowhere-{uuid.uuid4().hex[:8]}")
