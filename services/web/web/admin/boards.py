"""Boards: the team's boards, created (the slug made from the name), renamed and described,
moved up and down, archived and opened again, and deleted while they hold no post (the API
refuses one with posts: archive it). Every change is one call of the workspaces API; who may
is its rule (the team's managers and owners). The statuses page (``statuses.py``) shares the
helpers below."""

from __future__ import annotations

from common.i18n import N_, _
from common.validation import check
from web import shapes
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

BOARD_ACTIONS = ("save", "up", "down", "archive", "unarchive", "delete")
BOARD_ACTION = {"type": "object", "properties": {"action": {"enum": list(BOARD_ACTIONS)}}, "required": ["action"]}
# What a change's notice says (``?done=<key>&name=<board or status>``), translated where shown.
BOARD_DONE = {"created": N_("Board “%(name)s” created."), "saved": N_("Board “%(name)s” saved."),
              "moved": N_("Board “%(name)s” moved."),
              "archived": N_("Board “%(name)s” archived: visitors no longer see it, and it takes no new posts."),
              "unarchived": N_("Board “%(name)s” is open again."), "deleted": N_("Board “%(name)s” deleted.")}


def notice(done: dict, params: dict) -> str | None:
    template = done.get(params.get("done") or "")
    return _(template, name=(params.get("name") or "")[:100]) if template else None


def slug_from(form: dict) -> str:
    """The slug typed, else one made from the name (as the page's script shows it while typing)."""
    return (form.get("slug") or "").strip() or shapes.slug_of((form.get("name") or "").strip())


def position_after(form: dict, action: str) -> int:
    """Where ``up`` or ``down`` moves an item shown at ``position`` (the form's)."""
    try:
        at = int(form.get("position") or 0)
    except ValueError:
        at = 0
    return max(0, at - 1) if action == "up" else at + 1


class BoardsSection(Section):
    path = "/boards"

    def show(self, visitor: Visitor, params: dict, error: str | None = None, status: int = 200, typed: dict | None = None):
        if redirect := self.allowed(visitor):
            return redirect
        boards = self.call(visitor, "GET", "/boards", query={"archived": "true"})["items"]
        for board in boards:
            # What the board holds, as the team's lists count it (every post but merged ones): one
            # statistics call a board, which the gateway budgets like a search. Past the budget
            # (429) the count is unknown and Delete is offered: the API refuses a board with posts.
            try:
                board["posts"] = self.call(visitor, "GET", "/posts/stats", query={"board": board["slug"], "top": 1})["postsCounted"]
            except ApiError as ex:
                if ex.status != 429:
                    raise
                board["posts"] = None
        return self.page(visitor, "boards.html", {
            "boards": boards, "open_boards": sum(1 for b in boards if not b["archived"]), "error": error,
            "done": None if error else notice(BOARD_DONE, params), "typed": typed or {},
        }, status)

    def create(self, visitor: Visitor, form: dict):
        self.checked(visitor, form)
        name = (form.get("name") or "").strip()
        typed = {"name": name, "slug": (form.get("slug") or "").strip(), "description": (form.get("description") or "").strip()}
        slug = slug_from(form)
        if not slug:
            refusal = _("Give the board a name.") if not name else \
                _("Give the board a slug: its name has no letter or digit (a to z, 0 to 9) to make one from.")
            return self.show(visitor, {}, refusal, 400, typed)
        payload = {"name": name, "slug": slug, **({"description": typed["description"]} if typed["description"] else {})}
        try:
            board = self.call(visitor, "POST", "/boards", payload=payload)
        except ApiError as ex:
            return self.show(visitor, {}, self.refusal(ex), ex.status, typed)
        return self.redirect(visitor, done="created", name=board["name"])

    def change(self, visitor: Visitor, board_id: str, form: dict):
        self.checked(visitor, form)
        action = check(form, BOARD_ACTION)["action"]
        item = f"/boards/{board_id}"
        try:
            if action == "delete":
                board = self.call(visitor, "DELETE", item)
                return self.redirect(visitor, done="deleted", name=board["name"])
            if action == "save":
                payload = {"name": (form.get("name") or "").strip(), "description": (form.get("description") or "").strip()}
                done = "saved"
            elif action in ("up", "down"):
                payload, done = {"position": position_after(form, action)}, "moved"
            else:
                payload, done = {"archived": action == "archive"}, action + "d"
            board = self.call(visitor, "PATCH", item, payload=payload)
        except ApiError as ex:  # gone meanwhile (404), a board with posts (409): the list as it is, and why
            return self.show(visitor, {}, self.refusal(ex), ex.status)
        return self.redirect(visitor, done=done, name=board["name"])


class Boards(SectionResource):
    section = BoardsSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.create, form(req))


class BoardChange(SectionResource):
    section = BoardsSection

    def on_post(self, req, resp, slug, boardId):
        self.respond(req, resp, slug, self.admin.change, boardId, form(req))
