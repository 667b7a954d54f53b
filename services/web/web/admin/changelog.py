"""Changelog: the workspace's entries (drafts and published), and an editor for one: title, slug
and markdown content, a preview rendered on the server (the site's sanitising ``markdown``
filter), saving as a draft, publishing (the workspaces service then announces it: the linked
posts' followers are mailed, docs/services/workspaces.md), and the posts it ships, picked by a
search whose matches show as checkboxes beside the posts already linked (kept checked).

Every button of the editor posts the one form (``action``: preview, search, save, publish), so
what was typed is kept whichever is pressed; only save and publish call the API to write. An
entry's slug is set when it is created (the API keeps it); a published entry stays published.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from common.errors import BadRequest, NotFound
from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import query
from web.service import Visitor

ACTIONS = ("preview", "search", "save", "publish")
ENTRY_ID = re.compile(r"[0-9a-f]{24}")
LIST_LIMIT = 100  # the entries listed (the API's most a page)
SEARCH_LIMIT = 20  # the posts a search of the picker shows
LINKED_MAX = 100  # the posts an entry links at most (the API's)
QUERY_MAX = 200
# What the page says after a save (``?done=``).
DONE = {"saved": N_("Draft saved."), "published": N_("Published: the followers of its posts are being told."),
        "updated": N_("Saved.")}


def done_of(params: dict) -> str:
    """What a redirect's ``?done=`` says, in the reader's language ("" for anything else)."""
    return _(DONE[params["done"]]) if params.get("done") in DONE else ""


def entry_form(req) -> dict:
    """The editor's fields, ``postIds`` as the list of every ticked box (a name the form repeats)."""
    body = req.context.get("body")
    if body is None:
        body = req.bounded_stream.read()
    pairs = parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
    fields = {k: v for k, v in pairs if k != "postIds"}
    # A post's id as the API makes them: another (typed into a crafted form) is not sent.
    fields["postIds"] = list(dict.fromkeys(v for k, v in pairs if k == "postIds" and ENTRY_ID.fullmatch(v)))
    return fields


class ChangelogSection(Section):
    path = "/changelog"

    def show(self, visitor: Visitor, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        entries = self.call(visitor, "GET", "/changelogs", query={"limit": LIST_LIMIT})["items"]
        return self.page(visitor, "changelog.html", {"entries": entries, "done": done_of(params)})

    # -- the editor -------------------------------------------------------------------------

    def editor(self, visitor: Visitor, entry_id: str | None, params: dict):
        if redirect := self.allowed(visitor):
            return redirect
        entry = self._entry(visitor, entry_id) if entry_id else None
        typed = {"title": entry["title"], "slug": entry["slug"], "content": entry["content"],
                 "postIds": entry["postIds"]} if entry else {"title": "", "slug": "", "content": "", "postIds": []}
        return self._editor(visitor, entry, typed, done=done_of(params))

    def act(self, visitor: Visitor, entry_id: str | None, form: dict):
        """A press of one of the editor's buttons (the matches of a search typed stay shown
        whatever is pressed, but for a save, which leads back to the saved entry)."""
        self.checked(visitor, form)
        entry = self._entry(visitor, entry_id) if entry_id else None
        action = form.get("action")
        if action not in ACTIONS:
            raise BadRequest(f"field 'action' must be one of {', '.join(ACTIONS)}")
        typed = {"title": (form.get("title") or "").strip(), "content": form.get("content") or "",
                 "slug": entry["slug"] if entry else (form.get("slug") or "").strip(),
                 "postIds": form.get("postIds", [])[:LINKED_MAX], "q": (form.get("q") or "").strip()[:QUERY_MAX]}
        if action == "preview":
            return self._editor(visitor, entry, typed, preview=True, search=True)
        if action == "search":
            return self._editor(visitor, entry, typed, search=True)
        payload = {"title": typed["title"], "content": typed["content"], "postIds": typed["postIds"]}
        if action == "publish":
            payload["publish"] = True
        try:
            if entry is None:
                saved = self.call(visitor, "POST", "/changelogs", payload={**payload, "slug": typed["slug"]})
            else:
                saved = self.call(visitor, "PATCH", f"/changelogs/{entry['id']}", payload=payload)
        except ApiError as ex:
            return self._editor(visitor, entry, typed, search=True, error=self.refusal(ex), status=ex.status)
        if entry and entry["publishedAt"]:
            done = "updated"
        else:
            done = "published" if action == "publish" else "saved"
        return self.redirect(visitor, f"/{saved['id']}", done=done)

    def _editor(self, visitor: Visitor, entry: dict | None, typed: dict, *, preview: bool = False, search: bool = False,
                error: str | None = None, done: str = "", status: int = 200):
        linked = [self._post(visitor, post_id) for post_id in typed["postIds"]]
        matches, searched = [], False
        if search and typed.get("q"):
            searched = True
            found = self.call(visitor, "GET", "/posts", query={"q": typed["q"], "limit": SEARCH_LIMIT, "sort": "top"})["items"]
            matches = [p for p in found if p["id"] not in typed["postIds"]]
        return self.page(visitor, "changelog_entry.html", {
            "entry": entry, "typed": typed, "linked": linked, "matches": matches, "searched": searched,
            "preview": preview, "error": error, "done": done}, status)

    def _entry(self, visitor: Visitor, entry_id: str) -> dict:
        if not ENTRY_ID.fullmatch(entry_id):
            raise NotFound(_("There is no changelog entry “%(id)s”.", id=entry_id))
        return self.call(visitor, "GET", f"/changelogs/{entry_id}")

    def _post(self, visitor: Visitor, post_id: str) -> dict:
        """A linked post as the picker shows it (one that is gone: by its id, still ticked, so
        saving keeps or drops it as the editor chooses)."""
        try:
            return self.call(visitor, "GET", f"/posts/{post_id}")
        except ApiError as ex:
            if ex.status not in (400, 404):
                raise
            return {"id": post_id, "title": _("Post %(id)s (not found)", id=post_id), "status": None, "voteCount": None}


class Changelog(SectionResource):
    section = ChangelogSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))


class ChangelogNew(SectionResource):
    section = ChangelogSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.editor, None, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.act, None, entry_form(req))


class ChangelogEntry(SectionResource):
    section = ChangelogSection

    def on_get(self, req, resp, slug, changelogId):
        self.respond(req, resp, slug, self.admin.editor, changelogId, query(req))

    def on_post(self, req, resp, slug, changelogId):
        self.respond(req, resp, slug, self.admin.act, changelogId, entry_form(req))
