"""User content as HTML: markdown rendered, then sanitised (no page server needed)."""

from web.render import environment, markdown


def test_markdown_is_rendered_and_script_is_inert():
    html = str(markdown("# Title\n\n**bold** <script>alert(1)</script> [x](javascript:alert(1)) [y](https://a.example)"))
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html and 'href="https://a.example"' in html and "noopener" in html


def test_templates_autoescape():
    out = environment().from_string("{{ x }}").render(x="<b onclick=1>")
    assert out == "&lt;b onclick=1&gt;"
