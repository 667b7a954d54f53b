"""Running one import: copy the file from GridFS to local disk, count its items in a first
streaming pass (``progress.total``), then read it kind by kind in the order each refers to the
ones before (contract.IMPORT_KINDS) and send the items, a batch at a time, to the services that
own them (``POST /internal/<service>/import``). Three sources: Canny's export, a CSV, and our
own export's zip (or its posts.csv). Run by the worker under a claim, as exports are
(``jobs.Jobs``): each batch renews the lease, and a run whose claim was lost stops.

What it keeps in memory besides a batch: the maps from the source's ids to ours for boards,
statuses, tags, users, companies' members and posts (what later kinds refer to), a few dozen
bytes an item, never the file's contents."""

from __future__ import annotations

import logging
import re
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable, Iterable, Iterator

from common.directory import Owner
from common.errors import Unavailable
from common.internal import InternalClient
from common.ids import now

from portability import contract
from portability.config import PortabilityConfig
from portability.imports import ImportRepository
from portability.jobs import Jobs, LostClaim
from portability.sources import PERSON_PREFIX
from portability.readers import CannyFile, OurExport, UnreadableFile, csv_header, csv_rows

log = logging.getLogger(__name__)

# Canny's post statuses and ours (docs/import-export.md); another one is created, in grey.
CANNY_STATUSES = {"open": "open", "under review": "under-review", "planned": "planned", "in progress": "in-progress",
                  "complete": "complete", "closed": "closed"}
# Fider's (its CSV export) and ours.
FIDER_STATUSES = {"open": "open", "started": "in-progress", "planned": "planned", "completed": "complete",
                  "declined": "closed", "duplicate": "closed"}
CLOSED = ("complete", "closed")
MAX_CSV_VOTES = 10_000  # votes one CSV row may stand for (each an anonymous voter)
# Pauses before a batch is sent again to an owner that answered it was unavailable (about half a
# minute in all, well within a lease renewed after each).
RETRY_PAUSES = (1, 2, 4, 8, 16)


def slugify(text: str, most: int = 48) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-")[:most].strip("-")


def canny_eta(value) -> str | None:
    """Canny's ETA (a date, ``2027-03-01T00:00:00.000Z``, or ``03/2027``) as ``YYYY-MM``."""
    if not value:
        return None
    text = str(value)
    if re.match(r"^\d{4}-\d{2}", text):
        return text[:7]
    found = re.match(r"^(\d{1,2})/(\d{4})", text)
    return f"{found.group(2)}-{int(found.group(1)):02d}" if found else None


def batches(items: Iterable, size: int) -> Iterator[list]:
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class Run:
    """One run of one import: its counts, errors and progress, and the owners it writes to."""

    def __init__(self, importer: "Importer", job: dict, token: str):
        self.job, self.token, self.importer = job, token, importer
        self.workspace, self.source = job["workspace"], job["source"]
        self.counts = {kind: 0 for kind in contract.IMPORT_KINDS}
        self.errors: list[dict] = []
        self.error_count = 0
        self.done = 0
        self.total: int | None = None
        self.deferred: list[dict] = []  # comments whose parent was not in yet

    def skip(self, item: str, message: str) -> None:
        """An item that cannot be imported: named among the errors, and done (progress counts it)."""
        self.error(item, message)
        self.done += 1

    def error(self, item: str, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < contract.IMPORT_ERRORS_KEPT:
            self.errors.append({"item": item, "message": message[:500]})

    def renew(self) -> None:
        if not self.importer.repo.advance(self.job["_id"], self.token, now(), self.importer.config.lease_seconds, {
            "progress": {"done": self.done, "total": self.total}, "counts": self.counts, "errors": self.errors,
            "errorCount": self.error_count,
        }):
            raise LostClaim()

    def recount_posts(self, post_ids: Iterable[str]) -> None:
        """Each of these posts (our ids) counted once (votes, comments, revenue, score), a batch
        at a time, after everything that touches them was sent with ``recount=False``."""
        for batch in batches(post_ids, self.importer.config.import_batch):
            self.ask("posts", {"workspace": self.workspace, "source": self.source, "kind": "recount",
                               "items": [{"sourceId": pid, "postId": pid} for pid in batch]},
                     f"count the imported posts of '{self.workspace}'")
            self.renew()

    def ask(self, service: str, body: dict, what: str) -> dict:
        """``service``'s answer to one batch, asked again after a pause when it is unavailable
        (a 503 when its database is too busy to answer in time, a restart): a batch written
        twice is written once, by its keys. Still unavailable after RETRY_PAUSES: the job fails."""
        for pause in (*RETRY_PAUSES, None):
            try:
                return Owner(self.importer.client, service).ask("POST", f"/internal/{service}/import", body, what=what)
            except Unavailable:
                if pause is None:
                    raise
                log.warning("%s: unavailable, asked again in %s s", what, pause)
                time.sleep(pause)
                self.renew()
        raise AssertionError("unreachable")

    def keeping(self, items: Iterable, every: int = 20_000) -> Iterator:
        """``items``, the lease renewed every ``every`` of them (the first pass writes nothing else)."""
        for n, item in enumerate(items, 1):
            if n % every == 0:
                self.renew()
            yield item

    def send(self, service: str, kind: str, items: list[dict], names: Callable[[dict], str], count_as: str | None = None,
             progress: bool = True, recount: bool = True) -> dict[str, str]:
        """Write ``items`` (each with its ``sourceId``) through ``service``; our ids by theirs.
        Items refused are errors named by ``names(item)``. ``recount=False``: the posts service
        leaves the posts the batch touched to count at the end (``recount_posts``)."""
        if not items:
            return {}
        body = self.ask(service, {"workspace": self.workspace, "source": self.source, "kind": kind, "items": items,
                                  **({} if recount else {"recount": False})}, f"import the {kind} of '{self.workspace}'")
        by_source = {str(i["sourceId"]): i for i in items}
        for refused in body.get("errors", []):
            item = by_source.get(refused["item"])
            if refused["message"].startswith("parent-missing") and kind == "comments" and item:
                self.deferred.append(item)  # sent again once the rest of the thread is in (Canny lists newest first)
                continue
            self.error(names(item) if item else refused["item"], refused["message"])
        ids = body.get("ids", {})
        self.counts[count_as or kind] += len(ids)
        if progress:
            self.done += len(items)
        self.renew()
        return ids


class Importer(Jobs):
    what = "import"

    def __init__(self, repo: ImportRepository, client: InternalClient, config: PortabilityConfig, events):
        super().__init__(repo, config)
        self.client = client
        self.events = events  # ExportRepository: its outbox publishes import.finished

    def start(self, job: dict, token: str) -> "Run":
        return Run(self, job, token)

    def run(self, job: dict, token: str, run: "Run") -> None:
        with tempfile.TemporaryDirectory(prefix="import-") as folder:
            path = Path(folder) / "file"
            with open(path, "wb") as target:
                self.repo.download(job["fileId"], target)
            self._reader(job["source"], path)(run, path)
        self._end(job, token, run, contract.SUCCEEDED, run.errors)

    def fail(self, job: dict, token: str, run: "Run", error: dict) -> None:
        self._end(job, token, run, contract.FAILED, [*run.errors, error][-contract.IMPORT_ERRORS_KEPT:])

    def _end(self, job: dict, token: str, run: Run, status: str, errors: list[dict]) -> None:
        error_count = run.error_count + (1 if status == contract.FAILED else 0)
        fields = {"status": status, "finishedAt": now(), "counts": run.counts, "errors": errors, "errorCount": error_count}
        if status == contract.SUCCEEDED:
            fields["progress"] = {"done": run.done, "total": run.total if run.total is not None else run.done}
        if not self.repo.finish(job["_id"], token, fields):
            return
        if job.get("fileId"):
            self.repo.drop_file(job["_id"], job["fileId"])
        event = {"importId": str(job["_id"]), "source": job["source"], "status": status, "errorCount": error_count,
                 "actor": job.get("requestedBy")}
        self.events.unit_of_work(lambda tx: tx.add(tx.event(job["workspace"], contract.IMPORT_FINISHED, event)))

    def _reader(self, source: str, path: Path) -> Callable[["Run", Path], None]:
        """How the file of ``source`` is read: Canny's, a CSV, or ours (our export's zip, or its
        posts.csv: a file that is not a zip, whatever it was sent as)."""
        if source == "canny":
            return self._canny
        if source == "ours" and zipfile.is_zipfile(path):
            return self._ours
        return self._csv

    @staticmethod
    def _deferred_comments(run: Run, size: int) -> None:
        """Replies whose parent came later in the file, sent again until no more go in."""
        waiting, run.deferred = run.deferred, []
        while waiting:
            before = len(waiting)
            for batch in batches(waiting, size):
                run.send("posts", "comments", batch, lambda i: f"comments (id {i['sourceId']})", progress=False, recount=False)
            waiting, run.deferred = run.deferred, []
            if len(waiting) == before:
                for item in waiting:
                    run.error(f"comments (id {item['sourceId']})", "the comment it answers is not in the file")
                break

    # -- Canny -------------------------------------------------------------------------------------

    def _canny(self, run: Run, path: Path) -> None:
        canny = CannyFile(path, run.job["contentType"])
        size = self.config.import_batch
        # The first pass: how many items each list holds, and the statuses posts use.
        statuses: dict[str, None] = {}
        merges = 0
        total = 0
        for name in ("boards", "categories", "tags", "users", "companies", "votes", "comments", "entries"):
            total += sum(1 for _ in run.keeping(canny.items(name)))
        for post in run.keeping(canny.items("posts")):
            total += 1
            statuses.setdefault(str(post.get("status") or "open").strip().lower(), None)
            merges += len(_merged_of(post))
        run.total = total + len(statuses) + merges
        run.renew()

        boards = {}
        for batch in batches(canny.items("boards"), size):
            items = [{"sourceId": b.get("id"), "slug": b.get("urlName") or b.get("name"), "name": b.get("name"),
                      "createdAt": b.get("created")} for b in batch]
            boards.update(run.send("workspaces", "boards", items, lambda i: f"boards (id {i['sourceId']})"))
        status_items = [{"sourceId": s, "slug": CANNY_STATUSES.get(s) or slugify(s) or "imported", "name": s.capitalize(),
                         "closed": CANNY_STATUSES.get(s) in CLOSED} for s in statuses]
        status_ids = run.send("workspaces", "statuses", status_items, lambda i: f"status {i['sourceId']!r}")

        tags = {}
        for name, prefix in (("tags", ""), ("categories", "category:")):
            for batch in batches(canny.items(name), size):
                items = [{"sourceId": prefix + str(t.get("id")), "name": str(t.get("name") or "")} for t in batch if t.get("name")]
                tags.update(run.send("posts", "tags", items, lambda i: f"{name} (id {i['sourceId']})"))

        users: dict[str, tuple] = {}  # Canny user id -> (identity, name, avatar, admin)
        members: dict[str, list[str]] = {}  # Canny company id -> identities
        for position, batch in _numbered_batches(canny.items("users"), size):
            with_email = [{"sourceId": str(u.get("id")), "email": u.get("email"), "name": u.get("name"),
                           "avatarUrl": u.get("avatarURL")} for u in batch if u.get("email")]
            ids = run.send("people", "people", with_email, lambda i: f"users (id {i['sourceId']})")
            for index, user in zip(position, batch):
                uid = str(user.get("id"))
                identity = ids.get(uid)
                if identity is None:
                    if user.get("email"):
                        continue  # refused: an error names it
                    identity = f"{run.source}:{uid}"  # no address: known by the source's id alone
                    run.counts["people"] += 1
                    run.done += 1
                users[uid] = (identity, user.get("name"), user.get("avatarURL"), bool(user.get("isAdmin")))
                for company in user.get("companies") or []:
                    if isinstance(company, dict) and company.get("id"):
                        members.setdefault(str(company["id"]), []).append(identity)

        for batch in batches(canny.items("companies"), size):
            items = [{"sourceId": str(c.get("id")), "name": c.get("name"), "monthlySpend": c.get("monthlySpend") or 0,
                      "members": members.get(str(c.get("id")), [])} for c in batch]
            run.send("companies", "companies", items, lambda i: f"companies (id {i['sourceId']})")

        def person(user: dict | None) -> tuple:
            if not isinstance(user, dict) or not user.get("id"):
                return ("anonymous", None, None, False)
            known = users.get(str(user["id"]))
            return known or (f"{run.source}:{user['id']}", user.get("name"), user.get("avatarURL"), bool(user.get("isAdmin")))

        def author(user: dict | None) -> dict | None:
            identity, name, avatar, admin = person(user)
            return {"name": name, "avatarUrl": avatar, "team": admin} if name else None

        posts: dict[str, str] = {}
        # (merged post's id, the one it went into, what Canny kept of it, the board of the latter)
        merged: list[tuple[str, str, dict, str | None]] = []

        def post_item(p: dict, board: str | None = None, status: str | None = None) -> dict:
            owner = person(p.get("owner")) if p.get("owner") else None
            item_tags = [tags[str(t.get("id"))] for t in p.get("tags") or [] if isinstance(t, dict) and str(t.get("id")) in tags]
            if isinstance(p.get("category"), dict) and f"category:{p['category'].get('id')}" in tags:
                item_tags.append(tags[f"category:{p['category']['id']}"])
            return {"sourceId": str(p.get("id")), "boardId": board or boards.get(str((p.get("board") or {}).get("id"))),
                    "title": p.get("title"), "content": p.get("details") or "",
                    "status": status or status_ids.get(str(p.get("status") or "open").strip().lower(), "open"),
                    "authorId": person(p.get("author"))[0], "author": author(p.get("author")), "createdAt": p.get("created"),
                    "eta": canny_eta(p.get("eta")), "tags": item_tags,
                    "owner": {"id": owner[0], "name": owner[1] or ""} if owner and owner[0].startswith("person:") else None}

        def post_name(i: dict) -> str:
            return f"posts (id {i['sourceId']})"

        for position, batch in _numbered_batches(canny.items("posts"), size):
            items, labels = [], {}
            for index, p in zip(position, batch):
                label = labels[str(p.get("id"))] = f"posts[{index}] (id {p.get('id')})"
                item = post_item(p)
                for child in _merged_of(p):
                    merged.append((str(child.get("id")), str(p.get("id")), child, item["boardId"]))
                if not item["boardId"]:
                    run.skip(label, "its board is not in the file")
                    continue
                items.append(item)
            posts.update(run.send("posts", "posts", items, lambda i: labels[i["sourceId"]], recount=False))

        # Merges: a merged post Canny lists only inside the post it went into is imported first.
        for batch in batches(merged, size):
            missing = [post_item(child, board=boards.get(str((child.get("board") or {}).get("id"))) or board, status="closed")
                       for child_id, into, child, board in batch if child_id not in posts and into in posts and child.get("title")]
            posts.update(run.send("posts", "posts", [i for i in missing if i["boardId"]], post_name, progress=False, recount=False))
            items = []
            for child_id, into, _, _ in batch:
                if child_id in posts and into in posts:
                    items.append({"sourceId": child_id, "postId": posts[child_id], "intoId": posts[into]})
                else:
                    run.skip(f"merges (post {child_id} into {into})", "one of the two posts was not imported")
            run.send("posts", "merges", items, lambda i: f"merges (post {i['sourceId']})", recount=False)

        for position, batch in _numbered_batches(canny.items("votes"), size):
            items, labels = [], {}
            for index, v in zip(position, batch):
                label = labels[str(v.get("id"))] = f"votes[{index}] (id {v.get('id')})"
                post_id = posts.get(str((v.get("post") or {}).get("id")))
                if post_id is None:
                    run.skip(label, "its post is not in the file")
                    continue
                identity, name, _, _ = person(v.get("voter"))
                if identity == "anonymous":
                    run.skip(label, "it names no voter")
                    continue
                items.append({"sourceId": str(v.get("id")), "postId": post_id, "userId": identity, "name": name,
                              "createdAt": v.get("created")})
            run.send("posts", "votes", items, lambda i: labels[i["sourceId"]], recount=False)

        for position, batch in _numbered_batches(canny.items("comments"), size):
            items, labels = [], {}
            for index, c in zip(position, batch):
                label = labels[str(c.get("id"))] = f"comments[{index}] (id {c.get('id')})"
                post_id = posts.get(str((c.get("post") or {}).get("id")))
                if post_id is None:
                    run.skip(label, "its post is not in the file")
                    continue
                items.append({"sourceId": str(c.get("id")), "postId": post_id, "parentSourceId": c.get("parentID"),
                              "content": c.get("value") or "", "authorId": person(c.get("author"))[0],
                              "author": author(c.get("author")), "isPrivate": bool(c.get("internal") or c.get("private")),
                              "createdAt": c.get("created")})
            run.send("posts", "comments", items, lambda i: labels[i["sourceId"]], recount=False)
        self._deferred_comments(run, size)
        run.recount_posts(dict.fromkeys(posts.values()))

        for batch in batches(canny.items("entries"), size):
            items = [{"sourceId": str(e.get("id")), "title": e.get("title"),
                      "content": e.get("markdownDetails") or e.get("plaintextDetails") or "",
                      "publishedAt": e.get("publishedAt") if e.get("status", "published") == "published" else None,
                      "createdAt": e.get("created"),
                      "postIds": [posts[str(p.get("id"))] for p in e.get("posts") or [] if str(p.get("id")) in posts]}
                     for e in batch]
            run.send("workspaces", "changelogs", items, lambda i: f"entries (id {i['sourceId']})")

    # -- our own export ----------------------------------------------------------------------------

    def _ours(self, run: Run, path: Path) -> None:
        """Our export's zip, kind by kind in the order each refers to the ones before; every
        item keyed by its id in the exported workspace (``ours:<id>``), so the same zip imported
        again updates what it brought. People are the same person by address; what names a
        person of the exported workspace (an author, a voter, an owner, a company's member)
        names that person here."""
        ours = OurExport(path)
        size = self.config.import_batch
        kinds = ("boards", "statuses", "tags", "fields", "people", "companies", "posts", "votes", "comments", "changelogs")
        merges = 0
        total = 1  # the settings
        for kind in kinds:
            for item in run.keeping(ours.items(kind)):
                total += 1
                merges += kind == "posts" and bool(item.get("mergedInto"))
        run.total = total + merges
        run.renew()

        def named(kind: str) -> Callable[[dict], str]:
            return lambda i: f"{kind} (id {i['sourceId']})"

        boards: dict[str, str] = {}
        for batch in batches(ours.items("boards"), size):
            boards.update(run.send("workspaces", "boards", [
                {"sourceId": b.get("id"), "slug": b.get("slug"), "name": b.get("name"), "description": b.get("description"),
                 "createdAt": b.get("createdAt")} for b in batch], named("boards")))
        statuses: dict[str, str] = {}
        for batch in batches(ours.items("statuses"), size):
            statuses.update(run.send("workspaces", "statuses", [
                {"sourceId": s.get("slug"), "slug": s.get("slug"), "name": s.get("name"), "color": s.get("color"),
                 "roadmap": s.get("roadmap", True), "closed": s.get("closed", False), "replace": True} for s in batch], named("statuses")))
        tags: dict[str, str] = {}
        for batch in batches(ours.items("tags"), size):
            tags.update(run.send("posts", "tags", [{"sourceId": t.get("slug"), "slug": t.get("slug"), "name": t.get("name"),
                                                    "color": t.get("color")} for t in batch], named("tags")))
        for batch in batches(ours.items("fields"), size):
            run.send("posts", "fields", [{**f, "sourceId": f.get("key")} for f in batch], named("fields"))

        people: dict[str, str] = {}  # the exported workspace's person:<id> -> ours
        for batch in batches(ours.items("people"), size):
            people.update(run.send("people", "people", [{"sourceId": p.get("userId"), "email": p.get("email"), "name": p.get("name"),
                                                         "avatarUrl": p.get("avatarUrl")} for p in batch], named("people")))

        def person(user_id: str | None) -> str:
            """A person of the export as the one here; any other caller (an SSO user, a key,
            an anonymous visitor) as it was."""
            if not user_id:
                return "anonymous"
            if user_id.startswith(PERSON_PREFIX):
                return people.get(user_id, "anonymous")
            return user_id

        def author(given: dict | None) -> dict | None:
            if not given or not given.get("name"):
                return None
            return {"name": given["name"], "avatarUrl": given.get("avatarUrl"), "team": bool(given.get("isTeamMember"))}

        for batch in batches(ours.items("companies"), size):
            run.send("companies", "companies", [
                {"sourceId": c.get("id"), "companyId": c.get("id"), "name": c.get("name"), "monthlySpend": c.get("monthlySpend") or 0,
                 "members": [m for m in (person(u) for u in c.get("members") or []) if m != "anonymous"]} for c in batch],
                named("companies"))

        posts: dict[str, str] = {}
        merged: list[tuple[str, str]] = []  # (post, the one it was merged into), by the export's ids
        for batch in batches(ours.items("posts"), size):
            items = []
            for p in batch:
                label = f"posts (id {p.get('id')})"
                board = boards.get(str(p.get("boardId")))
                if board is None:
                    run.skip(label, "its board is not in the file")
                    continue
                owner = p.get("owner") if isinstance(p.get("owner"), dict) else None
                owner_id = person(owner.get("id")) if owner else "anonymous"
                items.append({"sourceId": p.get("id"), "boardId": board, "title": p.get("title"), "content": p.get("content") or "",
                              "status": statuses.get(str(p.get("status")), str(p.get("status") or "open")),
                              "moderationState": p.get("moderationState"), "authorId": person(p.get("authorId")),
                              "author": author(p.get("author")), "createdAt": p.get("createdAt"), "eta": p.get("eta"),
                              "tags": [tags[t] for t in p.get("tags") or [] if t in tags], "fields": p.get("fields") or {},
                              "owner": {"id": owner_id, "name": owner.get("name") or ""} if owner_id != "anonymous" else None})
                if p.get("mergedInto"):
                    merged.append((str(p["id"]), str(p["mergedInto"])))
            posts.update(run.send("posts", "posts", items, named("posts"), recount=False))
        for batch in batches(merged, size):
            items = []
            for child, into in batch:
                if child in posts and into in posts:
                    items.append({"sourceId": child, "postId": posts[child], "intoId": posts[into]})
                else:
                    run.skip(f"merges (post {child} into {into})", "one of the two posts was not imported")
            run.send("posts", "merges", items, lambda i: f"merges (post {i['sourceId']})", recount=False)

        for batch in batches(ours.items("votes"), size):
            items = []
            for v in batch:
                post_id = posts.get(str(v.get("postId")))
                voter = person(v.get("userId"))
                if post_id is None or voter == "anonymous":
                    run.skip(f"votes (id {v.get('id')})", "its post is not in the file" if post_id is None else "its voter is not in the file")
                    continue
                items.append({"sourceId": v.get("id"), "postId": post_id, "userId": voter, "name": v.get("name"),
                              "createdAt": v.get("createdAt")})
            run.send("posts", "votes", items, named("votes"), recount=False)

        for batch in batches(ours.items("comments"), size):
            items = []
            for c in batch:
                post_id = posts.get(str(c.get("postId")))
                if post_id is None:
                    run.skip(f"comments (id {c.get('id')})", "its post is not in the file")
                    continue
                items.append({"sourceId": c.get("id"), "postId": post_id, "parentSourceId": c.get("parentId"),
                              "content": c.get("content") or "", "authorId": person(c.get("authorId")),
                              "author": {**(author(c.get("author")) or {"name": None, "avatarUrl": None}),
                                         "team": bool(c.get("isTeamMember"))} if c.get("author") or c.get("isTeamMember") else None,
                              "isPrivate": bool(c.get("isPrivate")), "createdAt": c.get("createdAt")})
            run.send("posts", "comments", items, named("comments"), recount=False)
        self._deferred_comments(run, size)
        run.recount_posts(dict.fromkeys(posts.values()))

        for batch in batches(ours.items("changelogs"), size):
            run.send("workspaces", "changelogs", [
                {"sourceId": e.get("id"), "slug": e.get("slug"), "title": e.get("title"), "content": e.get("content") or "",
                 "publishedAt": e.get("publishedAt"), "createdAt": e.get("createdAt"),
                 "postIds": [posts[str(p)] for p in e.get("postIds") or [] if str(p) in posts]} for e in batch], named("changelogs"))

        run.send("workspaces", "settings", [{**ours.settings, "sourceId": "settings"}], lambda i: "settings.json")

    # -- CSV ---------------------------------------------------------------------------------------

    def _csv(self, run: Run, path: Path) -> None:
        columns = run.job["options"]["columns"]
        header = csv_header(path)
        if columns["title"] not in header:
            raise UnreadableFile(f"the CSV file has no column {columns['title']!r} for the title (its columns: {', '.join(header[:20])})")
        present = {field: column for field, column in columns.items() if column in header}
        statuses_of = FIDER_STATUSES if run.job["options"].get("preset") == "fider" else {}

        def value(row: dict, field: str) -> str:
            return (row.get(present[field]) or "").strip() if field in present else ""

        def status_of(row: dict) -> str:
            text = value(row, "status").lower() or "open"
            return statuses_of.get(text) or CANNY_STATUSES.get(text) or slugify(text) or "open"

        # The first pass: the rows, and the boards, statuses and tags they name.
        boards: dict[str, None] = {}
        statuses: dict[str, str] = {}
        tag_names: dict[str, None] = {}
        rows = 0
        for _, row in run.keeping(csv_rows(path)):
            rows += 1
            boards.setdefault(value(row, "board") or "Imported", None)
            statuses.setdefault(status_of(row), value(row, "status") or "Open")
            for tag in value(row, "tags").split(","):
                if tag.strip():
                    tag_names.setdefault(tag.strip(), None)
        run.total = rows + len(boards) + len(statuses) + len(tag_names)
        run.renew()
        board_ids = run.send("workspaces", "boards", [{"sourceId": name, "name": name} for name in boards],
                             lambda i: f"board {i['sourceId']!r}")
        run.send("workspaces", "statuses", [{"sourceId": slug, "slug": slug, "name": name.capitalize(), "closed": slug in CLOSED}
                                             for slug, name in statuses.items()], lambda i: f"status {i['sourceId']!r}")
        tag_slugs = {}
        for batch in batches(tag_names, self.config.import_batch):
            tag_slugs.update(run.send("posts", "tags", [{"sourceId": t, "name": t} for t in batch], lambda i: f"tag {i['sourceId']!r}"))

        for batch in batches(csv_rows(path), self.config.import_batch):
            emails = {}
            for line, row in batch:
                email = value(row, "authorEmail").lower()
                if email and "@" in email:
                    emails.setdefault(email, {"sourceId": email, "email": email, "name": value(row, "authorName") or None})
            people = run.send("people", "people", list(emails.values()), lambda i: f"author {i['sourceId']!r}", progress=False)
            items, votes, lines = [], [], {}
            for line, row in batch:
                title, source_id = value(row, "title"), value(row, "id") or f"line-{line}"
                where = f"row {line}" + (f" (id {value(row, 'id')})" if value(row, "id") else "")
                if not title:
                    run.skip(where, f"its title (column {columns['title']!r}) is empty")
                    continue
                created = value(row, "created") or None
                if created and not re.match(r"^\d{4}-\d{2}-\d{2}", created):
                    run.skip(where, f"its created date {created!r} is not a date (YYYY-MM-DD, or ISO 8601 with a time)")
                    continue
                votes_text = value(row, "votes") or "0"
                if not votes_text.isdigit():
                    run.skip(where, f"its votes {votes_text!r} is not a whole number")
                    continue
                email = value(row, "authorEmail").lower()
                identity = people.get(email, "anonymous")
                name = value(row, "authorName") or None
                lines[source_id] = where
                items.append({"sourceId": source_id, "boardId": board_ids.get(value(row, "board") or "Imported"),
                              "title": title, "content": value(row, "details"), "status": status_of(row),
                              "authorId": identity, "author": {"name": name, "avatarUrl": None, "team": False} if name else None,
                              "createdAt": created, "eta": value(row, "eta") or None,
                              "tags": [tag_slugs[t.strip()] for t in value(row, "tags").split(",") if t.strip() in tag_slugs]})
                votes.append((source_id, min(int(votes_text), MAX_CSV_VOTES)))
            ids = run.send("posts", "posts", items, lambda i: lines.get(i["sourceId"], i["sourceId"]))
            # A count of votes stands for that many voters the file does not name.
            vote_items = [{"sourceId": f"{source_id}:vote-{n}", "postId": ids[source_id], "userId": f"csv-voter:{source_id}:{n}",
                           "name": None, "createdAt": None}
                          for source_id, count in votes if source_id in ids for n in range(count)]
            for vote_batch in batches(vote_items, self.config.import_batch):
                run.send("posts", "votes", vote_batch, lambda i: i["sourceId"], progress=False)


def _merged_of(post: dict) -> list[dict]:
    """The posts merged into ``post``: Canny's ``mergeHistory`` ({created, post}) or ``mergedPosts``."""
    found = [m.get("post") for m in post.get("mergeHistory") or [] if isinstance(m, dict) and isinstance(m.get("post"), dict)]
    found += [m for m in post.get("mergedPosts") or [] if isinstance(m, dict) and m.get("id")]
    seen, unique = set(), []
    for child in found:
        if child.get("id") and str(child["id"]) not in seen:
            seen.add(str(child["id"]))
            unique.append(child)
    return unique


def _numbered_batches(items: Iterable[dict], size: int) -> Iterator[tuple[range, list[dict]]]:
    """Batches with each item's index in its list (errors name ``posts[12]``)."""
    start = 0
    for batch in batches(items, size):
        yield range(start, start + len(batch)), batch
        start += len(batch)

