"""The posts service's posts: creating one, reading and editing it (a manager's triage too),
its comments, and the workspace's triage settings.

The service's other concepts are modules of their own, beside this one: ``access`` (the
caller's view of a post; every check happens there or here before the body is validated),
``votes``, ``merges`` (and suggested duplicates), ``board`` (lists, search, roadmap,
statistics) and ``revenue``. Each method returns the response shape. Database commands are the
repository's; a change others should hear of commits in one unit of work with its outbox event.
"""

from __future__ import annotations

import heapq

from bson import ObjectId
from bson.errors import InvalidId

from common import auth
from common.errors import BadRequest, Conflict, Forbidden, NotFound, Unauthorized
from common.ids import now, object_id
from common.directory import People
from common.validation import check
from posts import access, contract, embeddings, schemas, shapes, text, triage
from posts.access import Access
from posts.config import PostsConfig
from posts.readmodel import Snapshot, Workspaces
from posts.repository import PostRepository
from posts.scores import Scores
from posts.votes import Votes

# What a post's author may change of it (the rest is the team's triage).
AUTHOR_FIELDS = {"title", "content"}
# What a post written before triage holds in place of each triage field (no change: not changed).
_ABSENT = {"tags": [], "fields": {}, "owner": None, "eta": None}


class PostService:
    def __init__(self, repo: PostRepository, access: Access, workspaces: Workspaces, scores: Scores, votes: Votes,
                 config: PostsConfig, embedder: embeddings.LazyEmbedder | None = None, people: People | None = None):
        self.repo = repo
        self.access = access
        self.workspaces = workspaces
        self.scores = scores
        self.votes = votes  # a new post's author votes for it (the workspace's authorVotes)
        self.config = config
        self.embedder = embedder  # None: new posts get no title vector (POSTS_SEMANTIC_SEARCH)
        self.people = people  # the team is the people service's: a post's owner is one of them

    def create(self, caller: auth.Caller, slug: str, body) -> dict:
        """A new post, and, where the workspace's ``authorVotes`` is on, its author's (a person's)
        vote for it in the same unit of work (posts.votes.Votes.by_author)."""
        self.access.participant(caller, slug, "anonSubmit")
        fields = check(body, schemas.CREATE_POST)
        ws, board = self._board(slug, fields)
        if board.get("archived"):
            raise Conflict(f"board '{board['slug']}' is archived: it takes no new posts (its posts stay readable)")
        title = _title(fields["title"])
        if ws.default_status is None:
            raise BadRequest(f"workspace '{slug}' has no statuses to give a new post")
        new = new_post(slug, board["id"], title, fields["content"], ws.default_status, caller, **self._vector(title))
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> tuple[dict, bool]:
            # The new post's score and facets follow the settings as this unit of work reads
            # them (posts.scores). That read opens the transaction, so the writes go in one
            # client bulkWrite after it (a bulkWrite that opens a transaction carries the
            # transaction's readConcern, which the local stand-in refuses).
            doc = {**new, **self.scores.compiled(slug, tx.triage_settings(slug)).derived(new)}
            # The author's vote counts as any vote (its revenue and score too): its writes follow
            # the insert in the same ordered bulkWrite, post.created shows the post with it, and
            # its vote.created comes after post.created.
            voted, vote, event = self.votes.by_author(tx, caller, slug, ws, doc)
            tx.add(*tx.insert_post(doc), tx.event(slug, contract.POST_CREATED, {"post": shapes.post_event(voted, ws), "actor": actor}),
                   *vote)
            if event is not None:
                tx.add(tx.event(slug, contract.VOTE_CREATED, event))
            return voted, event is not None

        doc, voted = self.repo.unit_of_work(work)
        # Nobody but its author has voted on a post that did not exist a moment ago: no votes query.
        return shapes.post(doc, ws, voted=voted, manager=access.is_manager(caller, slug), reader=self.access.reader(caller, slug, ws))

    def _board(self, slug: str, fields: dict) -> tuple[Snapshot, dict]:
        """The workspace and the board a new post's body names, by ``boardSlug`` or ``boardId``
        (exactly one: the schema says so); 404 when the workspace has no such board."""
        if "boardId" in fields:
            ws, board = self.workspaces.board_with_id(slug, fields["boardId"])
            if board is None:
                raise NotFound(f"field 'boardId': workspace '{slug}' has no board with id '{fields['boardId']}'")
            return ws, board
        ws, board = self.workspaces.board(slug, fields["boardSlug"])
        if board is None:
            raise NotFound(f"field 'boardSlug': workspace '{slug}' has no board '{fields['boardSlug']}'")
        return ws, board

    def get(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        ws = self.workspaces.get(slug)
        return self.access.shape(caller, slug, ws, [self.access.visible(caller, slug, post_id)])[0]

    def warm_up(self) -> None:
        """Load the sentence model (an API process does it at start, in the background), so the
        first search does not wait for it."""
        if self.embedder is not None:
            self.embedder.get()

    def update(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        """A manager's edit and triage of any post; its author's edit of its ``title`` and
        ``content`` within the author's window (posts.access.Access.may_change)."""
        manager = access.is_manager(caller, slug)
        if not manager:
            if caller.kind == auth.ANONYMOUS:
                raise Unauthorized("sign in to edit a post")
        fields = check(body, schemas.UPDATE_POST)
        if not manager:
            team_only = sorted(set(fields) - AUTHOR_FIELDS)
            if team_only:
                raise Forbidden(f"only the team may change {', '.join(team_only)}; a post's author may change its title and content")
            self.access.may_change(caller, slug, self.access.visible(caller, slug, post_id), "post", team=False)
        ws = self.workspaces.get(slug)
        oid = object_id(post_id, "post")
        change: dict = {}
        if "title" in fields:
            change["title"] = _title(fields["title"])
        if "content" in fields:
            change["content"] = fields["content"]
        if "statusSlug" in fields:
            wanted = fields["statusSlug"]
            ws = self.workspaces.ensure(slug, lambda s: s.status(wanted) is not None)
            if ws.status(wanted) is None:
                raise NotFound(f"field 'statusSlug': workspace '{slug}' has no status '{wanted}'")
            change["statusSlug"] = wanted
        if "moderationState" in fields:
            change["moderationState"] = fields["moderationState"]
        if "eta" in fields:
            change["eta"] = fields["eta"]
        if "owner" in fields:
            change["owner"] = self._owner(slug, fields["owner"])
        vector = self._vector(change["title"]) if "title" in change else {}  # not inside the unit of work
        actor = auth.actor(caller)
        triaged = {"tags", "fields", "owner"} & set(fields)  # what the score and the facets follow

        def work(tx: PostRepository) -> dict:
            before = tx.find_post(slug, oid)
            if before is None:
                raise NotFound(f"post '{post_id}' not found")
            settings = self.scores.settings(slug, tx) if triaged else None
            if "tags" in fields:
                change["tags"] = triage.check_tags(settings, fields["tags"])
            if "fields" in fields:
                given = {**(before.get("fields") or {}), **triage.check_values(settings, fields["fields"])}
                change["fields"] = {k: v for k, v in given.items() if v is not None}
            changed = {k: v for k, v in change.items() if before.get(k, _ABSENT.get(k)) != v}
            if not changed:
                return before
            update = dict(changed, updatedAt=now())
            if "title" in changed or "content" in changed:
                update["editedAt"] = update["updatedAt"]
                title, content = changed.get("title", before["title"]), changed.get("content", before.get("content", ""))
                update["terms"], update["titleTerms"] = text.index_terms(title, content)
            if "title" in changed:
                update.update(vector)
            if "moderationState" in changed:
                update["listed"] = changed["moderationState"] == contract.APPROVED and not before.get("mergedInto")
            if "statusSlug" in changed:
                update["statusChangedBy"], update["statusChangedAt"] = actor, update["updatedAt"]
            if settings is not None and triaged & set(changed):
                update.update(settings.derived({**before, **update}))
            after = {**before, **update}
            if {"title", "moderationState"} & set(changed):
                tx.add(*tx.relink(after))
            shape = shapes.post_event(after, ws, settings or self.access.triage_of(slug, [after], tx))
            happened = None
            if "statusSlug" in changed:
                happened = shapes.happened(contract.STATUS_CHANGE, update["updatedAt"], actor,
                                           was=before["statusSlug"], status=changed["statusSlug"])
            tx.add(*tx.edit_post(before, update, happened))
            others = sorted(set(changed) - {"statusSlug"})
            if others:
                tx.add(tx.event(slug, contract.POST_UPDATED, {"post": shape, "changed": others, "actor": actor}))
            if "statusSlug" in changed:
                old = ws.status_shape(before["statusSlug"])
                data = {"post": shape, "oldStatus": old, "newStatus": shape["status"], "actor": actor,
                        "notify": fields.get("notify", True)}
                tx.add(tx.event(slug, contract.POST_STATUS_CHANGED, data))
            return after

        doc = self.repo.unit_of_work(work)
        return self.access.shape(caller, slug, ws, [doc])[0]

    def delete(self, caller: auth.Caller, slug: str, post_id: str) -> None:
        """Delete a post (softly: posts.repository.PostRepository.delete_post): its author within
        the window, the team any time. A post merged into another, or with posts merged into
        it, is unmerged first (409): its votes count elsewhere."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("sign in to delete a post")
        self.workspaces.get(slug)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> None:
            post = self.access.visible(caller, slug, post_id, tx)
            as_team = self.access.may_change(caller, slug, post, "post", team=True)
            if post.get("mergedInto") or post.get("mergedPosts"):
                raise Conflict(f"post '{post_id}' is merged {'into another' if post.get('mergedInto') else 'with others'}: unmerge it first")
            at = now()
            event = {"post": {"id": post_id, "title": post["title"], "boardId": post["boardId"]}, "actor": actor, "byAuthor": not as_team}
            tx.add(*tx.delete_post(post, actor, at), tx.close_suggestions_of(slug, post_id, actor), tx.event(slug, contract.POST_DELETED, event))

        self.repo.unit_of_work(work, hot_key=post_id)

    def _owner(self, slug: str, user: str | None) -> dict | None:
        """A post's owner: a member of the workspace's team, as ``{id, name}``."""
        if user is None:
            return None
        if self.people is None:
            raise BadRequest("this deployment has no people service: posts have no owners")
        member = next((m for m in self.people.team(slug) if m["id"] == user), None)
        if member is None:
            raise NotFound(f"field 'owner': '{user}' is not a member of this workspace's team")
        return {"id": user, "name": member.get("name") or member.get("email")}

    def _vector(self, title: str) -> dict:
        """The title vector fields of a post with ``title`` (none when semantic search is off:
        the backfill gives it one when it is turned on)."""
        if self.embedder is None:
            return {"embedding": None, "embeddingModel": None}
        vector = self.embedder.titles([title])[0]
        return {"embedding": embeddings.to_stored(vector), "embeddingModel": embeddings.MODEL}

    # -- comments -----------------------------------------------------------------------------

    def comment(self, caller: auth.Caller, slug: str, post_id: str, body) -> dict:
        """Add a comment. A private one is the team's: non-managers never see it, and its
        ``comment.created`` event says ``isPrivate: true``."""
        self.access.participant(caller, slug, "anonComment")
        fields = check(body, schemas.CREATE_COMMENT)
        manager = access.is_manager(caller, slug)
        private = bool(fields.get("isPrivate", False))
        if private and not manager:
            raise Forbidden("only managers can write private comments")
        oid = object_id(post_id, "post")
        parent = self._parent(caller, slug, oid, fields.get("parentId"))
        if parent is not None and parent.get("isPrivate"):
            private = True  # a reply in a private thread stays private
        comment_id = ObjectId()
        doc = self.repo.new_comment(
            id=comment_id,
            workspace=slug,
            postId=oid,
            parentId=str(parent["_id"]) if parent else None,
            path=f"{parent['path']}/{comment_id}" if parent else str(comment_id),
            depth=parent["depth"] + 1 if parent else 0,
            content=fields["content"],
            authorId=access.identity(caller),
            isTeamMember=manager,
            authorName=access.team_name(caller, slug),
            author=access.author(caller, slug),
            isPrivate=private,
            createdAt=now(),
        )

        def work(tx: PostRepository) -> None:
            post = self.access.visible(caller, slug, post_id, tx)
            event = {"comment": shapes.comment(doc), "post": {"id": post_id, "title": post["title"]}, "actor": auth.actor(caller)}
            # Who spoke last in public (board statistics' stalled posts). A retried unit of work
            # may commit after a later comment did: that one stays the last.
            last = not private and (post.get("lastCommentAt") is None or post["lastCommentAt"] <= doc["createdAt"])
            tx.add(tx.insert_comment(doc), *tx.count_comment(post, doc, last), tx.event(slug, contract.COMMENT_CREATED, event))

        self.repo.unit_of_work(work, hot_key=post_id)
        return shapes.comment_seen(doc, self.access.reader(caller, slug))

    def history(self, caller: auth.Caller, slug: str, post_id: str) -> dict:
        """What happened to a post the caller can see: status changes and merges, newest first."""
        ws = self.workspaces.get(slug)
        return shapes.history(self.access.visible(caller, slug, post_id), ws, access.is_manager(caller, slug))

    def comments(self, caller: auth.Caller, slug: str, post_id: str, limit: int, offset: int) -> dict:
        ws = self.workspaces.get(slug)
        post = self.access.visible(caller, slug, post_id)
        docs = self.repo.comment_page(post["_id"], access.is_manager(caller, slug), offset, limit)
        reader = self.access.reader(caller, slug, ws)
        return {"items": [shapes.comment_seen(d, reader) for d in docs]}

    def _own_comment(self, caller: auth.Caller, slug: str, post_id: str, comment_id: str,
                     tx: PostRepository) -> tuple[dict, dict]:
        """The post and the comment, as the caller sees them (404 otherwise: a private comment
        is the team's)."""
        post = self.access.visible(caller, slug, post_id, tx)
        found = tx.find_comment(slug, object_id(comment_id, "comment"))
        if found is None or found["postId"] != post["_id"] or (found.get("isPrivate") and not access.is_manager(caller, slug)):
            raise NotFound(f"comment '{comment_id}' not found on post '{post_id}'")
        return post, found

    def edit_comment(self, caller: auth.Caller, slug: str, post_id: str, comment_id: str, body) -> dict:
        """Rewrite a comment: its author only, within the window (the team deletes others'
        comments, never rewrites them)."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("sign in to edit a comment")
        fields = check(body, schemas.EDIT_COMMENT)
        self.workspaces.get(slug)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> dict:
            post, found = self._own_comment(caller, slug, post_id, comment_id, tx)
            self.access.may_change(caller, slug, found, "comment", team=False)
            if found["content"] == fields["content"]:
                return found
            after = {**found, "content": fields["content"], "editedAt": now()}
            event = {"comment": shapes.comment(after), "post": {"id": post_id, "title": post["title"]}, "actor": actor}
            tx.add(tx.edit_comment(found, after["content"], after["editedAt"]), tx.event(slug, contract.COMMENT_EDITED, event))
            return after

        doc = self.repo.unit_of_work(work, hot_key=post_id)
        return shapes.comment_seen(doc, self.access.reader(caller, slug))

    def delete_comment(self, caller: auth.Caller, slug: str, post_id: str, comment_id: str) -> None:
        """Delete a comment (softly): its author within the window, the team any time. Its
        replies stay, under a comment shown as deleted; the post counts one comment less."""
        if caller.kind == auth.ANONYMOUS:
            raise Unauthorized("sign in to delete a comment")
        self.workspaces.get(slug)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> None:
            post, found = self._own_comment(caller, slug, post_id, comment_id, tx)
            as_team = self.access.may_change(caller, slug, found, "comment", team=True)
            last = None if found.get("isPrivate") else tx.last_public_comment(post["_id"], found["_id"])
            gone = {"id": comment_id, "postId": post_id, "parentId": found.get("parentId"), "isPrivate": bool(found.get("isPrivate"))}
            event = {"comment": gone, "post": {"id": post_id, "title": post["title"]}, "actor": actor, "byAuthor": not as_team}
            tx.add(tx.delete_comment(found, actor, now()), *tx.uncount_comment(post, found, last),
                   tx.event(slug, contract.COMMENT_DELETED, event))

        self.repo.unit_of_work(work, hot_key=post_id)

    def _parent(self, caller: auth.Caller, slug: str, post_oid: ObjectId, parent_id: str | None) -> dict | None:
        if parent_id is None:
            return None
        try:
            parent_oid = ObjectId(parent_id)
        except (InvalidId, TypeError):
            raise NotFound(f"field 'parentId': no comment '{parent_id}' on this post") from None
        parent = self.repo.find_comment(slug, parent_oid)
        if parent is None or (parent.get("isPrivate") and not access.is_manager(caller, slug)):
            raise NotFound(f"field 'parentId': no comment '{parent_id}' on this post")
        if parent["postId"] != post_oid:
            raise NotFound(f"field 'parentId': comment '{parent_id}' belongs to another post")
        if parent.get("depth", 0) + 1 > contract.MAX_COMMENT_DEPTH:
            # The reply is well formed; the thread it joins is too deep: a conflict with what exists.
            raise Conflict(f"field 'parentId': threads nest at most {contract.MAX_COMMENT_DEPTH} levels deep")
        return parent

    # -- triage settings ----------------------------------------------------------------------

    def triage_settings(self, caller: auth.Caller, slug: str) -> dict:
        """The workspace's tags and public fields (everyone: the board shows them); its internal
        fields and score formula (the team)."""
        self.workspaces.get(slug)
        return self.scores.settings(slug).shown(access.is_manager(caller, slug))

    def save_triage(self, caller: auth.Caller, slug: str, body) -> dict:
        """Replace the workspace's triage settings; its posts are rescored after (posts.scores)."""
        auth.require_manager(caller, slug)
        stored = triage.check_settings(check(body, schemas.TRIAGE))
        self.workspaces.get(slug)
        actor = auth.actor(caller)

        def work(tx: PostRepository) -> triage.Settings:
            current = tx.triage_settings(slug)
            settings = triage.Settings(version=(current or {}).get("version", 0) + 1, tags=tuple(stored["tags"]),
                                       fields=tuple(stored["fields"]), formula_text=stored["scoreFormula"])
            tx.add(*tx.save_triage(slug, settings.version, stored),
                   tx.event(slug, contract.TRIAGE_UPDATED, {"settings": settings.shown(True), "actor": actor}))
            return settings

        return self.repo.unit_of_work(work, hot_key=f"triage {slug}").shown(True)

    def preview_triage(self, caller: auth.Caller, slug: str, body) -> dict:
        """The posts a score formula would rank first, before it is saved: the formula (the saved
        one when the body names none) over the saved fields, checked as a save checks it (400
        naming ``scoreFormula``), computed for every post of the workspace that is not merged
        (as the team's list sorted by score shows them); nothing is written."""
        auth.require_manager(caller, slug)
        fields = check(body, schemas.TRIAGE_PREVIEW)
        self.workspaces.get(slug)
        saved = self.scores.settings(slug)
        text_ = fields["scoreFormula"] if "scoreFormula" in fields else saved.formula_text
        settings = triage.Settings(version=saved.version, tags=saved.tags, fields=saved.fields,
                                   formula_text=(text_ or "").strip() or None)
        limit = int(fields.get("limit", contract.PREVIEW_LIMIT[0]))  # JSON Schema's integer: 38.0 too
        ranked = heapq.nlargest(limit, ((settings.formula.score(settings.values(d)), d["_id"], d)
                                        for d in self.repo.scoring_candidates(slug)), key=lambda t: (t[0], t[1]))
        return {"scoreFormula": settings.formula_text,
                "items": [shapes.preview_item(doc, score) for score, _, doc in ranked]}


def new_post(slug: str, board_id: str, title: str, content: str, status: str, caller: auth.Caller, **vector) -> dict:
    """A new post's document (the benchmark seeds with it too); ``vector``: its title vector
    fields (``embedding``, ``embeddingModel``), none for a post the backfill is to embed."""
    terms, title_terms = text.index_terms(title, content)
    created = now()
    return PostRepository.new_post(
        workspace=slug,
        boardId=board_id,
        title=title,
        content=content,
        statusSlug=status,
        verified=access.verified(caller),
        moderationState=contract.APPROVED,
        authorId=access.identity(caller),
        author=access.author(caller, slug),
        mergedInto=None,
        terms=terms,
        titleTerms=title_terms,
        createdAt=created,
        updatedAt=created,
        **vector,
    )


def _title(title: str) -> str:
    title = title.strip()
    if not title:
        raise BadRequest("field 'title' must not be blank")
    return title
