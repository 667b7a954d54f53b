"""Triage settings: the workspace's tags (add, rename, recolour, remove), its typed custom fields
(add, remove) and its score formula, with a preview of the posts a formula would rank first
before it is saved (the posts service's ``POST /triage/preview``).

The API's settings are one document (``PUT /triage`` replaces them whole), so each form reads
the settings, changes its part and saves the whole; the form carries the ``version`` it was
shown, and a save over settings changed meanwhile (by a colleague) is refused with the page
as it is now, rather than overwriting their change. Refusals show beside the form they answer
(``errors[<section>]``), the values typed kept.
"""

from __future__ import annotations

import re

from common.errors import BadRequest, NotFound
from common.i18n import N_, _
from web.admin.section import Section, SectionResource
from web.api import ApiError
from web.resources import form, query
from web.service import Visitor

# The field types the posts service offers, in the order the form lists them, with their labels
# (translated where shown).
FIELD_TYPES = {"number": N_("Number"), "checkbox": N_("Checkbox"), "select": N_("Select (one option)"),
               "multiselect": N_("Multi-select (several options)"), "text": N_("Text"), "date": N_("Date")}
SCORED_TYPES = ("number", "checkbox")  # the types a formula may name
# A tag's slug or a field's key in a form's address (the API's pattern; another is not sent).
KEY = re.compile(r"[a-z][a-z0-9_]{0,39}")
# A tag's colour as the colour input sends it.
COLOR = re.compile(r"#[0-9a-fA-F]{6}")
DEFAULT_COLOR = "#2563eb"
# The API's answers to a save shown beside the form: SHOWN_REFUSALS and a spent budget of saves.
SPENT = 429


def key_of(name: str) -> str:
    """A slug or key made of a name ("Needs design" -> "needs_design"), in the API's pattern
    (empty for a name without a letter or digit: the API then names what is missing)."""
    key = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if key and not key[0].isalpha():
        key = "n_" + key
    return key[:40].rstrip("_")


def _number(text: str, refusal: str):
    """``text`` as a number (None when empty); else BadRequest with ``refusal``."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(refusal) from None
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


class Stale(Exception):
    """The settings changed since the form was shown."""


class TriageSection(Section):
    path = "/triage"

    def show(self, visitor: Visitor, params: dict, errors: dict | None = None, typed: dict | None = None,
             preview: dict | None = None, status: int = 200):
        if redirect := self.allowed(visitor):
            return redirect
        settings = self.call(visitor, "GET", "/triage")
        typed = typed or {}
        formula = typed["scoreFormula"] if "scoreFormula" in typed else (settings.get("scoreFormula") or "")
        names = ["votes", "revenue"] + [f["key"] for f in settings["fields"] if f["type"] in SCORED_TYPES]
        done = params.get("done") or ""
        return self.page(visitor, "triage.html", {
            "settings": settings, "errors": errors or {}, "typed": typed, "formula": formula, "names": names,
            "preview": preview, "types": FIELD_TYPES, "default_color": DEFAULT_COLOR,
            "done": _(DONE[done]) if done in DONE else ""}, status)

    # -- saving ---------------------------------------------------------------------------

    def _save(self, visitor: Visitor, form: dict, change) -> None:
        """Read the settings, apply ``change`` (settings -> None, raising BadRequest for what the
        page itself refuses) and save them whole; Stale when they moved since the form."""
        settings = self.call(visitor, "GET", "/triage")
        if str(settings.get("version", 0)) != (form.get("version") or ""):
            raise Stale()
        body = {"tags": settings["tags"], "fields": settings["fields"], "scoreFormula": settings.get("scoreFormula")}
        change(body)
        self.call(visitor, "PUT", "/triage", payload=body)

    def _answer(self, visitor: Visitor, form: dict, section: str, change, done: str, typed: dict | None = None):
        self.checked(visitor, form)
        try:
            self._save(visitor, form, change)
        except Stale:
            return self.show(visitor, {}, {section: _("The settings were changed meanwhile (by a colleague?): "
                                                      "here they are as they are now; make your change again.")}, typed, status=409)
        except BadRequest as ex:
            return self.show(visitor, {}, {section: ex.message}, typed, status=400)
        except ApiError as ex:
            if ex.status == SPENT:
                return self.show(visitor, {}, {section: ex.message}, typed, status=SPENT)
            return self.show(visitor, {}, {section: self.refusal(ex)}, typed, status=ex.status)
        return self.redirect(visitor, done=done)

    def add_tag(self, visitor: Visitor, form: dict):
        name = (form.get("name") or "").strip()
        slug = (form.get("slug") or "").strip() or key_of(name)
        color = form.get("color") or ""
        typed = {"tag": {"name": name, "slug": form.get("slug") or "", "color": color}}

        def change(body):
            if not name:
                raise BadRequest(_("A tag needs a name."))
            if not COLOR.fullmatch(color):
                raise BadRequest(_("A tag's colour is #rrggbb."))
            if any(t["slug"] == slug for t in body["tags"]):
                raise BadRequest(_("There is a tag “%(slug)s” already: choose another slug.", slug=slug))
            body["tags"].append({"slug": slug, "name": name, "color": color.lower()})

        return self._answer(visitor, form, "tags", change, "tag-added", typed)

    def tag(self, visitor: Visitor, tag_slug: str, form: dict):
        if not KEY.fullmatch(tag_slug):
            raise NotFound(_("There is no tag “%(slug)s”.", slug=tag_slug))
        action = form.get("action")
        if action not in ("save", "remove"):
            raise BadRequest("field 'action' must be save or remove")

        def change(body):
            tag = next((t for t in body["tags"] if t["slug"] == tag_slug), None)
            if tag is None:
                raise BadRequest(_("There is no tag “%(slug)s” (any more).", slug=tag_slug))
            if action == "remove":
                body["tags"].remove(tag)
                return
            name, color = (form.get("name") or "").strip(), form.get("color") or ""
            if not name:
                raise BadRequest(_("A tag needs a name."))
            if not COLOR.fullmatch(color):
                raise BadRequest(_("A tag's colour is #rrggbb."))
            tag.update(name=name, color=color.lower())

        return self._answer(visitor, form, "tags", change, "tag-removed" if action == "remove" else "tag-saved")

    def add_field(self, visitor: Visitor, form: dict):
        name = (form.get("name") or "").strip()
        key = (form.get("key") or "").strip() or key_of(name)
        kind = form.get("type") or ""
        typed = {"field": {k: form.get(k) or "" for k in ("key", "name", "type", "options", "min", "max", "public")}}

        def change(body):
            if kind not in FIELD_TYPES:
                raise BadRequest(_("Choose the field's type."))
            field = {"key": key, "name": name, "type": kind, "public": form.get("public") == "on"}
            if kind in ("select", "multiselect"):
                options = [o.strip() for o in re.split(r"[\n,]", form.get("options") or "") if o.strip()]
                field["options"] = list(dict.fromkeys(options))
            if kind == "number":
                refusals = {"min": _("The field's minimum must be a number."), "max": _("The field's maximum must be a number.")}
                for bound in ("min", "max"):
                    value = _number(form.get(bound), refusals[bound])
                    if value is not None:
                        field[bound] = value
            if any(f["key"] == key for f in body["fields"]):
                raise BadRequest(_("There is a field “%(key)s” already: choose another key.", key=key))
            body["fields"].append(field)

        return self._answer(visitor, form, "fields", change, "field-added", typed)

    def remove_field(self, visitor: Visitor, field_key: str, form: dict):
        if not KEY.fullmatch(field_key):
            raise NotFound(_("There is no field “%(key)s”.", key=field_key))

        def change(body):
            before = len(body["fields"])
            body["fields"] = [f for f in body["fields"] if f["key"] != field_key]
            if len(body["fields"]) == before:
                raise BadRequest(_("There is no field “%(key)s” (any more).", key=field_key))

        return self._answer(visitor, form, "fields", change, "field-removed")

    def formula(self, visitor: Visitor, form: dict):
        """``action=preview``: the page again with the posts the typed formula ranks first (nothing
        saved); ``action=save``: save it. Either way a formula the API cannot read is shown
        beside the field."""
        text = (form.get("scoreFormula") or "").strip()
        typed = {"scoreFormula": text}
        if form.get("action") != "preview":
            def change(body):
                body["scoreFormula"] = text or None

            return self._answer(visitor, form, "formula", change, "formula-saved", typed)
        self.checked(visitor, form)
        try:
            preview = self.call(visitor, "POST", "/triage/preview", payload={"scoreFormula": text or None})
        except ApiError as ex:
            message = ex.message if ex.status == SPENT else self.refusal(ex)
            return self.show(visitor, {}, {"formula": message}, typed, status=ex.status)
        return self.show(visitor, {}, None, typed, preview)


DONE = {"tag-added": N_("Tag added."), "tag-saved": N_("Tag saved."), "tag-removed": N_("Tag removed."),
        "field-added": N_("Field added."), "field-removed": N_("Field removed: posts no longer carry its values."),
        "formula-saved": N_("Score formula saved: every post is being rescored.")}


class TriageSettings(SectionResource):
    section = TriageSection

    def on_get(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.show, query(req))


class TriageTags(SectionResource):
    section = TriageSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.add_tag, form(req))


class TriageTag(SectionResource):
    section = TriageSection

    def on_post(self, req, resp, slug, tagSlug):
        self.respond(req, resp, slug, self.admin.tag, tagSlug, form(req))


class TriageFields(SectionResource):
    section = TriageSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.add_field, form(req))


class TriageFieldRemove(SectionResource):
    section = TriageSection

    def on_post(self, req, resp, slug, fieldKey):
        self.respond(req, resp, slug, self.admin.remove_field, fieldKey, form(req))


class TriageFormula(SectionResource):
    section = TriageSection

    def on_post(self, req, resp, slug):
        self.respond(req, resp, slug, self.admin.formula, form(req))
