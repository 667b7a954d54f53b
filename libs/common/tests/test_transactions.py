"""Store.transaction against the stack's MongoDB-protocol server: writers on one hot key queue
inside a process, so their transactions do not conflict; other keys do not wait."""

import threading

import pytest

from common.config import load_settings
from common.db import HOT_LOCK_STRIPES, Store


@pytest.fixture(scope="module")
def store(stack):
    store = Store(load_settings({**stack.env(), "MONGODB_DB_PREFIX": "test_txn_"}), "transactions")
    yield store
    store.close()


def test_writers_on_one_hot_key_queue_and_count_exactly(store):
    counters = store.db["counters"]
    counters.delete_many({})
    counters.insert_one({"_id": "hot", "n": 0})
    attempts, inside, overlaps = [], [0], []
    lock = threading.Lock()

    def bump():
        def work(session):
            with lock:
                attempts.append(1)
                inside[0] += 1
                overlaps.append(inside[0])
            try:
                counters.update_one({"_id": "hot"}, {"$inc": {"n": 1}}, session=session)
            finally:
                with lock:
                    inside[0] -= 1

        store.transaction(work, hot_key="hot")

    threads = [threading.Thread(target=bump) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert counters.find_one({"_id": "hot"})["n"] == 12
    assert max(overlaps) == 1, "two transactions on one hot key ran at once in this process"
    assert len(attempts) == 12, "queued writers never conflict, so none is retried"


def test_other_keys_do_not_wait(store):
    first_inside, release = threading.Event(), threading.Event()

    def slow(session):
        first_inside.set()
        release.wait(10)

    holder = threading.Thread(target=lambda: store.transaction(slow, hot_key="post-a"))
    holder.start()
    assert first_inside.wait(10)
    done = threading.Event()
    # Another key (chosen so it does not share post-a's lock stripe) runs while post-a is held.
    other = next(k for k in (f"post-{i}" for i in range(1000)) if hash(k) % HOT_LOCK_STRIPES != hash("post-a") % HOT_LOCK_STRIPES)
    threading.Thread(target=lambda: (store.transaction(lambda s: None, hot_key=other), done.set())).start()
    assert done.wait(10), "a transaction on another key waited for post-a's"
    release.set()
    holder.join(10)


def test_a_read_then_update_conflicts_with_a_change_committed_since(store):
    """What the posts service's counters rely on (PostStore.bump): a transaction that read a
    document and then updates it fails with a transient error if another transaction changed
    it after the read, so Store.transaction runs it again with the new value."""
    from pymongo.errors import PyMongoError
    from pymongo.read_concern import ReadConcern
    from pymongo.write_concern import WriteConcern

    counters = store.db["counters"]
    counters.delete_many({})
    counters.insert_one({"_id": "read-then-write", "n": 0})
    with store.client.start_session() as first:
        first.start_transaction(read_concern=ReadConcern("snapshot"), write_concern=WriteConcern("majority"))
        seen = counters.find_one({"_id": "read-then-write"}, session=first)["n"]
        store.transaction(lambda s: counters.update_one({"_id": "read-then-write"}, {"$inc": {"n": 1}}, session=s))
        with pytest.raises(PyMongoError) as refused:
            counters.update_one({"_id": "read-then-write"}, {"$set": {"n": seen + 1}}, session=first)
            first.commit_transaction()
        assert refused.value.has_error_label("TransientTransactionError")
    assert counters.find_one({"_id": "read-then-write"})["n"] == 1
