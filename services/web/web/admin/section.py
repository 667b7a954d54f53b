"""What every admin page shares: who may open it, the navigation, and calls of the API.

A page method of a section returns a ``shapes.Page`` of ``admin/<concern>.html``; a form's
method checks the form's CSRF token, calls the API, and redirects to the page with what was
done in the query (``?done=...``), or renders the page again with the API's refusal beside the
form (400, 403, 404, 409, 422 answers), the values typed kept.

Every word a page shows is the reader's language (docs/languages.md): templates say ``_()``,
tables of labels are marked ``N_`` where they are defined and translated where shown. The API's
refusals are English (its words for machines and logs): a reader of another language reads
first what the refusal's ``code`` means in theirs, the API's words after it.
"""

from __future__ import annotations

from urllib.parse import urlencode

from markupsafe import Markup

from common import i18n
from common.errors import Forbidden
from common.i18n import N_, _
from web.admin import NAVIGATION
from web.api import ApiError
from web.resources import PageResource
from web.service import Site, Visitor
from web.shapes import API_REFUSALS, Page, Redirect

# The API's answers a form shows beside itself rather than as an error page.
SHOWN_REFUSALS = (400, 403, 404, 409, 413, 415, 422)
# What a refusal means, by its code (common.errors), where an admin form can say more than the
# site's error page (web.shapes.API_REFUSALS, which answers the other codes).
REFUSALS = {
    "locale_not_enabled": N_("The default language must be one of the languages checked."),
}


def status_name(name: str | None) -> str:
    """A status's name as the reader reads it: a default status's (``Open``, ``Planned``...,
    marked in workspaces.contract) in their language, a team's own as written. A plain string, so
    a template escapes it (a template's ``_()`` would take it for markup)."""
    return _(name) if name else ""


class Section:
    """One concern of the admin area. ``path``: its page under ``/b/{slug}/admin``."""

    path = ""
    owner_only = False

    def __init__(self, site: Site):
        self.site = site

    def url(self, visitor: Visitor, suffix: str = "", **query) -> str:
        url = f"/b/{visitor.slug}/admin{self.path}{suffix}"
        return url + ("?" + urlencode(query) if query else "")

    def redirect(self, visitor: Visitor, suffix: str = "", **query) -> Redirect:
        """After a form: this page again (or ``suffix`` under it), with what was done in the query."""
        return Redirect(self.url(visitor, suffix, **query))

    def allowed(self, visitor: Visitor) -> Redirect | None:
        """A redirect to sign in for a visitor not on the team; a refusal for a manager on an
        owners' page; None for whoever may see it."""
        if not visitor.is_manager:
            return Redirect(self.site._sign_in_path(visitor, self.url(visitor)))
        if self.owner_only and not visitor.is_owner:
            raise Forbidden(_("Only an owner of the workspace can do this."))
        return None

    def checked(self, visitor: Visitor, form: dict) -> None:
        """A form's checks: its CSRF token, and the visitor on the team (an owner where asked)."""
        self.site.check_csrf(visitor, form)
        if not visitor.is_manager:
            raise Forbidden(_("Only a signed-in team member can do this."))
        if self.owner_only and not visitor.is_owner:
            raise Forbidden(_("Only an owner of the workspace can do this."))

    def call(self, visitor: Visitor, method: str, path: str, query=None, payload=None):
        """A call of the workspace's API (``path`` under ``/v1/workspaces/{slug}``) as the visitor."""
        return self.site._call(visitor, method, path, query, payload)

    def page(self, visitor: Visitor, template: str, context: dict, status: int = 200) -> Page:
        """``admin/<template>`` with what every admin page shows: branding, the navigation (the
        owners' entries to owners only) and which entry is this page."""
        common = self.site._common(visitor)
        navigation = [e for e in NAVIGATION if visitor.is_owner or not e.owner_only]
        return Page("admin/" + template, {**common, "navigation": navigation, "current": self.path,
                                          "status_name": status_name, **context}, status)

    @staticmethod
    def refusal(ex: ApiError) -> str:
        """The API's refusal as the page shows it: its message, which is English; to a reader of
        another language, what its code means in theirs first, the API's words after it (marked
        English). Anything else goes on to the error page."""
        if ex.status not in SHOWN_REFUSALS:
            raise ex
        explained = REFUSALS.get(ex.code) or API_REFUSALS.get(ex.code)
        if explained is None or i18n.current().tag == i18n.DEFAULT:
            return ex.message
        return Markup('{} <span lang="en">({})</span>').format(_(explained), ex.message)


class SectionResource(PageResource):
    """A resource of an admin page: ``section`` is the :class:`Section` subclass it serves."""

    section: type[Section] = Section

    def __init__(self, context):
        super().__init__(context)
        self.admin = self.section(context.site)
