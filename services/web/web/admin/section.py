"""What every admin page shares: who may open it, the navigation, and calls of the API.

A page method of a section returns a ``shapes.Page`` of ``admin/<concern>.html``; a form's
method checks the form's CSRF token, calls the API, and redirects to the page with what was
done in the query (``?done=...``), or renders the page again with the API's refusal beside the
form (400, 403, 404, 409, 422 answers), the values typed kept.
"""

from __future__ import annotations

from urllib.parse import urlencode

from common.errors import Forbidden
from web.admin import NAVIGATION
from web.api import ApiError
from web.resources import PageResource
from web.service import Site, Visitor
from web.shapes import Page, Redirect

# The API's answers a form shows beside itself rather than as an error page.
SHOWN_REFUSALS = (400, 403, 404, 409, 413, 415, 422)


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
            raise Forbidden("only an owner of the workspace can do this")
        return None

    def checked(self, visitor: Visitor, form: dict) -> None:
        """A form's checks: its CSRF token, and the visitor on the team (an owner where asked)."""
        self.site.check_csrf(visitor, form)
        if not visitor.is_manager:
            raise Forbidden("only a signed-in team member can do this")
        if self.owner_only and not visitor.is_owner:
            raise Forbidden("only an owner of the workspace can do this")

    def call(self, visitor: Visitor, method: str, path: str, query=None, payload=None):
        """A call of the workspace's API (``path`` under ``/v1/workspaces/{slug}``) as the visitor."""
        return self.site._call(visitor, method, path, query, payload)

    def page(self, visitor: Visitor, template: str, context: dict, status: int = 200) -> Page:
        """``admin/<template>`` with what every admin page shows: branding, the navigation (the
        owners' entries to owners only) and which entry is this page."""
        common = self.site._common(visitor)
        navigation = [e for e in NAVIGATION if visitor.is_owner or not e.owner_only]
        return Page("admin/" + template, {**common, "navigation": navigation, "current": self.path, **context}, status)

    @staticmethod
    def refusal(ex: ApiError) -> str:
        """The API's refusal as the page shows it; anything else goes on to the error page."""
        if ex.status in SHOWN_REFUSALS:
            return ex.message
        raise ex


class SectionResource(PageResource):
    """A resource of an admin page: ``section`` is the :class:`Section` subclass it serves."""

    section: type[Section] = Section

    def __init__(self, context):
        super().__init__(context)
        self.admin = self.section(context.site)
