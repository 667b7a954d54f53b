"""Mail written from templates (``common.letters``): a kind's subject, text and HTML from a
package's templates, in the workspace's layout, escaped where it is HTML and only there."""

from __future__ import annotations

import textwrap

import pytest
from jinja2 import UndefinedError

from common.letters import Letters
from common.mail import Branding

KIND = {
    "note.subject": "Hello from {{ brand.name }}: {{ topic }}\n",
    "note.txt": """\
        {% extends "common/mail/layout.txt" %}
        {% block body %}
        {{ topic }} is ready:
        {{ link }}
        {% endblock %}
        """,
    "note.html": """\
        {% extends "common/mail/layout.html" %}
        {% block content %}
        <p>{{ topic }} is ready: <a href="{{ link }}">open it</a></p>
        {% endblock %}
        """,
}


@pytest.fixture
def letters(tmp_path, monkeypatch) -> Letters:
    """The letters of a package of this test's own, ``sample_mail``, whose one kind is "note"."""
    package = tmp_path / "sample_mail"
    (package / "templates" / "mail").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    for name, text in KIND.items():
        (package / "templates" / "mail" / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    return Letters("sample_mail")


def write(letters: Letters, branding: Branding = Branding(name="Acme"), **values):
    values = {"topic": "Tom & Jerry <3", "link": "https://example.com/n?a=1&b=2", **values}
    return letters.write("note", to="ann@example.com", branding=branding, values=values,
                         headers={"List-Id": "notes"}, workspace="acme")


def test_a_kind_is_its_subject_its_text_signed_and_its_html_in_the_layout(letters):
    message = write(letters)
    assert (message.to, message.workspace, dict(message.headers)) == ("ann@example.com", "acme",
                                                                      {"List-Id": "notes", "Content-Language": "en"})
    assert message.subject == "Hello from Acme: Tom & Jerry <3", "plain text, on one line"
    assert message.text == "Tom & Jerry <3 is ready:\nhttps://example.com/n?a=1&b=2\n\n-- \nAcme via Feedback\n"
    assert message.html.startswith("<!DOCTYPE html>") and message.html.endswith("</html>\n")
    assert "<title>Hello from Acme: Tom &amp; Jerry &lt;3</title>" in message.html
    assert '<p>Tom &amp; Jerry &lt;3 is ready: <a href="https://example.com/n?a=1&amp;b=2">open it</a></p>' in message.html
    assert "Acme via Feedback</td>" in message.html, "the footer"


def test_the_workspace_name_is_escaped_in_the_html_and_one_line_everywhere(letters):
    message = write(letters, Branding(name='Acme <script>alert("x")</script>\r\nBcc: eve@example.com'))
    assert "<script>" not in message.html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; Bcc: eve@example.com" in message.html
    assert message.subject.startswith('Hello from Acme <script>alert("x")</script> Bcc: eve@example.com:')
    assert message.text.endswith('\n-- \nAcme <script>alert("x")</script> Bcc: eve@example.com via Feedback\n')


def test_the_accent_colours_the_header_only_when_it_is_a_hex_colour_and_the_text_stays_readable(letters):
    def header_style(accent: str) -> str:
        body = write(letters, Branding(name="Acme", accent=accent)).html
        return body.split('<tr><td align="left" style="', 1)[1].split('"', 1)[0]

    assert "background:#0a7;color:#111827" in header_style("#0a7"), "dark text on a light accent"
    assert "background:#1e293b;color:#ffffff" in header_style("#1e293b"), "white text on a dark accent"
    for refused in ("red", "#12345", "#4f46e5;background:url(https://evil.example/x)", ""):
        assert "background:#4f46e5;" in header_style(refused), refused


def test_a_mail_in_a_language_written_right_to_left_reads_from_the_right(letters):
    message = letters.write("note", to="ann@example.com", branding=Branding(name="Acme", logo_url="https://cdn.example.com/l.png"),
                            values={"topic": "T", "link": "https://example.com"}, locale="ar")
    assert message.headers["Content-Language"] == "ar" and '<html lang="ar" dir="rtl">' in message.html
    assert "text-align:right" in message.html and "text-align:left" not in message.html
    assert "margin-left:10px" in message.html, "the logo's space is on its left, before the name that follows it"


def test_a_logo_is_shown_only_from_an_http_url(letters):
    shown = write(letters, Branding(name="Acme", logo_url='https://cdn.example.com/l.png?a=1&b="2"')).html
    assert '<img src="https://cdn.example.com/l.png?a=1&amp;b=&#34;2&#34;"' in shown
    hidden = write(letters, Branding(name="Acme", logo_url="javascript:alert(1)")).html
    assert "<img" not in hidden and "javascript" not in hidden


def test_a_value_a_template_names_and_nobody_gave_is_an_error_not_a_blank(letters):
    with pytest.raises(UndefinedError):
        letters.write("note", to="ann@example.com", branding=Branding(name="Acme"), values={"topic": "T"})
