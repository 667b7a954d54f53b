"""User content as HTML: markdown rendered, then sanitised (no page server needed)."""

from common import i18n
from web.render import environment, markdown


def test_markdown_is_rendered_and_script_is_inert():
    html = str(markdown("# Title\n\n**bold** <script>alert(1)</script> [x](javascript:alert(1)) [y](https://a.example)"))
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html and 'href="https://a.example"' in html and "noopener" in html


def test_templates_autoescape():
    out = environment().from_string("{{ x }}").render(x="<b onclick=1>")
    assert out == "&lt;b onclick=1&gt;"


def test_images_only_from_absolute_https_urls():
    # A same-site image is a request every viewer makes with their cookies (the author's choice
    # of GET); relative, protocol-relative and scheme-relative sources all resolve to this site.
    for text in ("![](/b/x/sso?token=abc.def.ghi)", "![](//host/x)", "![](sso?token=1)", "![](https:/b/x/sso)",
                 "![](https:b/x)", "![](http://a.example/x.png)", "![x][r]\n\n[r]: /b/x/sso?token=1"):
        html = str(markdown(text))
        assert "<img" not in html and "sso" not in html, (text, html)
    kept = str(markdown("![a *cat* <b>](/cat.png) and text"))
    assert kept == "<p>a cat &lt;b&gt; and text</p>\n"
    html = str(markdown('![logo](https://cdn.example/logo.png "Logo")'))
    assert '<img src="https://cdn.example/logo.png" alt="logo" title="Logo">' in html


def test_a_teams_status_name_is_escaped_and_a_default_one_translated():
    env = environment()
    macros = env.get_template("macros.html").module
    hostile = str(macros.status_name('<img src=x onerror=alert(1)> 100%'))
    assert hostile == "&lt;img src=x onerror=alert(1)&gt; 100%"
    with i18n.using("de"):
        assert str(macros.status_name("Planned")) == i18n.gettext("Planned") != "<"
