"""Mail written from templates: each kind of mail a service sends is a set of three, kept in
the service's package.

A kind named ``sign_in`` is ``<package>/templates/mail/sign_in.subject`` (one line),
``sign_in.txt`` and ``sign_in.html``, rendered with Jinja2 from the values the service gives.
The text and the HTML extend this package's layouts, ``common/mail/layout.txt`` (the kind's
block ``body``, then the signature) and ``common/mail/layout.html`` (the workspace's header,
the kind's block ``content``, a footer), so every mail wears its workspace's branding: each
template sees ``brand`` (``name``, ``accent``, ``ink``: the text colour that reads on the
accent, ``logo_url``), ``product`` and, in text and HTML, ``subject``.

The HTML is autoescaped; the subject and the text are plain text, not escaped (a subject is
kept to one line, here and again in its header). A value a template names and the service did
not give is an error when the mail is written, not a blank in a mail sent.
"""

from __future__ import annotations

from typing import Any, Mapping

from jinja2 import ChoiceLoader, Environment, PackageLoader, PrefixLoader, StrictUndefined, select_autoescape

from common import i18n
from common.colors import HEX, text_on
from common.mail import DEFAULT_ACCENT, PRODUCT, Branding, Message, one_line

# The ink of a mail's header: near-black on a light accent (or white on a dark one).
INK = "#111827"
FOLDER = "mail"  # where in a package's templates its kinds are


class Letters:
    """The kinds of mail the package ``package`` sends, from its ``templates/mail/``."""

    def __init__(self, package: str):
        self.env = Environment(
            # The service's own templates first; common's layouts under the "common/" prefix.
            loader=ChoiceLoader([PackageLoader(package, "templates"),
                                 PrefixLoader({"common": PackageLoader("common", "templates")})]),
            autoescape=select_autoescape(enabled_extensions=("html",), default_for_string=False, default=False),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
        )
        self.env.globals["product"] = PRODUCT
        i18n.install(self.env)

    def write(self, kind: str, *, to: str, branding: Branding, values: Mapping[str, Any],
              headers: Mapping[str, str] | None = None, workspace: str | None = None, locale: str | None = None) -> Message:
        """The message of ``kind`` to ``to``, in ``branding``, saying ``values`` in the language
        ``locale`` (the recipient's: docs/languages.md; English when None); ``headers`` and
        ``workspace`` as :class:`common.mail.Message` takes them."""
        with i18n.using(locale) as language:
            context = {**values, "brand": brand(branding), "lang": language.tag, "dir": language.direction}
            subject = one_line(self._render(kind, "subject", context))
            context["subject"] = subject
            # The language the mail is in, for the reader's client (RFC 3282): a screen reader's
            # voice, a translate button.
            return Message(to=to, subject=subject, text=self._render(kind, "txt", context),
                           html=self._render(kind, "html", context), branding=branding,
                           headers={**(headers or {}), "Content-Language": language.tag}, workspace=workspace)

    def _render(self, kind: str, part: str, context: Mapping[str, Any]) -> str:
        return self.env.get_template(f"{FOLDER}/{kind}.{part}").render(context)


def brand(branding: Branding) -> dict[str, str | None]:
    """What the layouts show of ``branding``: its name on one line, its accent when it is a hex
    colour (anything else could end the style attribute), the text colour that reads on it, and
    its logo only from an http(s) URL."""
    accent = branding.accent if HEX.fullmatch(branding.accent or "") else DEFAULT_ACCENT
    logo = branding.logo_url if branding.logo_url and branding.logo_url.lower().startswith(("https://", "http://")) else None
    return {"name": one_line(branding.name), "accent": accent, "ink": text_on(accent, dark=INK), "logo_url": logo}


