"""A workspace's uploaded logo through the gateway: what is accepted (type, size, dimensions,
the bytes matching the declared type), SVG kept only as cleaned, who may upload and remove it, and how it
is served (public, cached with an ETag, 304, nosniff and a CSP)."""

from __future__ import annotations

import os
from io import BytesIO

import pytest
from PIL import Image

from testkit import assert_error

SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" onload="alert(1)">'
       b'<script>alert(2)</script><rect width="32" height="32" fill="red"/></svg>')


def image(kind: str = "PNG", size=(64, 64), colour=(200, 30, 30)) -> bytes:
    out = BytesIO()
    Image.new("RGB", size, colour).save(out, kind)
    return out.getvalue()


def upload(workspace, data: bytes, content_type: str = "image/png", key: str | None = None):
    return workspace.api.put(f"{workspace.path}/logo", key=key or workspace.key, data=data,
                             headers={"Content-Type": content_type})


@pytest.mark.parametrize("kind,content_type", [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_an_upload_becomes_the_workspace_logo_served_as_it_was_sent(workspace, kind, content_type):
    data = image(kind)
    r = upload(workspace, data, content_type)
    assert r.status_code == 200, r.text
    url = r.json()["logo"]
    assert url.endswith(f"/v1/workspaces/{workspace.slug}/logo?v=" + url.rsplit("=", 1)[1]) and url.startswith("http")
    assert workspace.api.get(f"{workspace.path}/settings", key=workspace.key).json()["logo"] == url
    assert workspace.api.get(f"{workspace.path}/branding").json()["workspace"]["logo"] == url

    served = workspace.api.get(f"{workspace.path}/logo")  # anonymous: it is public
    assert served.status_code == 200 and served.content == data
    assert served.headers["Content-Type"] == content_type
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert served.headers["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'"
    cache = served.headers["Cache-Control"]
    assert "public" in cache and "max-age=" in cache and "no-store" not in cache


def test_an_etag_names_the_content_and_a_current_copy_is_304(workspace):
    assert upload(workspace, image()).status_code == 200
    first = workspace.api.get(f"{workspace.path}/logo")
    tag = first.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')
    again = workspace.api.get(f"{workspace.path}/logo", headers={"If-None-Match": tag})
    assert again.status_code == 304 and again.content == b""
    assert workspace.api.get(f"{workspace.path}/logo", headers={"If-None-Match": '"other"'}).status_code == 200

    before = workspace.api.get(workspace.path).json()["logo"]
    assert upload(workspace, image(colour=(10, 120, 10))).status_code == 200
    after = workspace.api.get(workspace.path).json()["logo"]
    assert after != before, "a new logo has a new ?v= so browsers fetch it"
    changed = workspace.api.get(f"{workspace.path}/logo", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag


def test_an_svg_is_kept_only_as_cleaned(workspace):
    """Scripts, handlers, foreign objects, styles and links out of the file are dropped; what
    draws is kept; a document that is no SVG, or declares entities, is refused."""
    hostile = SVG.replace(b"</svg>", b'<foreignObject><p>x</p></foreignObject><a href="javascript:alert(3)"><circle r="2"/></a>'
                                     b'<path d="M0 0" fill="url(https://tracker.example/p)" style="x"/>'
                                     b'<use href="https://elsewhere.example/a.svg#b"/><use href="#own"/></svg>')
    r = upload(workspace, hostile, "image/svg+xml")
    assert r.status_code == 200, r.text
    served = workspace.api.get(f"{workspace.path}/logo")
    assert served.headers["Content-Type"] == "image/svg+xml"
    assert served.headers["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'"
    body = served.text
    for gone in ("onload", "script", "alert", "foreignObject", "javascript", "tracker.example", "elsewhere.example", "style="):
        assert gone not in body, (gone, body)
    assert '<rect width="32" height="32" fill="red" />' in body and 'href="#own"' in body
    for refused in (b"<html/>", b"not xml at all", b'<?xml version="1.0"?><!DOCTYPE s [<!ENTITY a "b">]>'
                    b'<svg xmlns="http://www.w3.org/2000/svg">&a;</svg>'):
        assert "image/svg+xml" in assert_error(upload(workspace, refused, "image/svg+xml"), 400)


def test_types_other_than_png_jpeg_webp_svg_are_refused(workspace):
    for content_type, data in (("image/gif", b"GIF89a" + b"\0" * 40), ("text/plain", b"hello"),
                               ("application/json", b"{}")):
        message = assert_error(upload(workspace, data, content_type), 415)
        assert "image/png" in message
    assert workspace.api.get(workspace.path).json()["logo"] is None
    assert_error(workspace.api.get(f"{workspace.path}/logo"), 404)


def test_bytes_must_be_an_image_of_the_declared_type(workspace):
    assert "not a readable image/jpeg" in assert_error(upload(workspace, image("PNG"), "image/jpeg"), 400)
    assert "not a readable image/png" in assert_error(upload(workspace, b"\x89PNG\r\n\x1a\nnot really", "image/png"), 400)
    assert "not a readable" in assert_error(upload(workspace, image()[:60], "image/png"), 400)  # truncated
    assert "empty" in assert_error(upload(workspace, b"", "image/png"), 400)


def test_dimensions_are_16_to_1024_pixels_a_side(workspace):
    for size in ((15, 64), (64, 15), (1025, 64), (64, 1025)):
        message = assert_error(upload(workspace, image(size=size)), 400)
        assert f"{size[0]}x{size[1]}" in message and "16 to 1024" in message
    for size in ((16, 16), (1024, 1024)):
        assert upload(workspace, image(size=size)).status_code == 200


def test_a_logo_past_its_size_is_413(workspace):
    # Random pixels do not compress: a PNG well past 512 KiB (and the gateway's body limit).
    big = BytesIO()
    Image.frombytes("RGB", (1000, 1000), os.urandom(3_000_000)).save(big, "PNG")
    assert len(big.getvalue()) > 512 * 1024
    assert_error(upload(workspace, big.getvalue()), 413)


def test_the_service_refuses_past_512_kib_whatever_the_gateway_lets_through():
    # The gateway's MAX_BODY_BYTES (256 KiB by default) refuses first; a deployment that raises
    # it still keeps logos to 512 KiB.
    from common.errors import PayloadTooLarge
    from workspaces import logos

    with pytest.raises(PayloadTooLarge, match="512 KiB"):
        logos.checked("image/png", b"\x89PNG" + b"\0" * (512 * 1024))
    assert logos.checked("image/png", image()) == ("image/png", image())


def test_only_the_team_uploads_or_removes_and_removing_forgets_it(workspace, other_workspace):
    data = image()
    assert_error(workspace.api.put(f"{workspace.path}/logo", data=data, headers={"Content-Type": "image/png"}), 401)
    user = {"user": workspace.user_token("end-user")}
    assert_error(workspace.api.put(f"{workspace.path}/logo", data=data, headers={"Content-Type": "image/png"}, **user), 403)
    assert_error(upload(workspace, data, key=other_workspace.key), 403)
    # The refusal comes before the body is looked at: an outsider learns nothing from it.
    assert_error(upload(workspace, b"junk", "text/plain", key=other_workspace.key), 403)

    assert upload(workspace, data).status_code == 200
    assert_error(workspace.api.delete(f"{workspace.path}/logo"), 401)
    assert_error(workspace.api.delete(f"{workspace.path}/logo", key=other_workspace.key), 403)
    assert workspace.api.get(f"{workspace.path}/logo").status_code == 200

    r = workspace.api.delete(f"{workspace.path}/logo", key=workspace.key)
    assert r.status_code == 200 and r.json()["logo"] is None
    assert_error(workspace.api.get(f"{workspace.path}/logo"), 404)
    assert workspace.api.delete(f"{workspace.path}/logo", key=workspace.key).status_code == 200  # again: nothing to do


def test_a_logo_url_set_elsewhere_replaces_the_uploaded_one(workspace):
    assert upload(workspace, image()).status_code == 200
    r = workspace.api.patch(workspace.path, key=workspace.key, json={"logo": "https://cdn.example/logo.png"})
    assert r.status_code == 200 and r.json()["logo"] == "https://cdn.example/logo.png"
    assert_error(workspace.api.get(f"{workspace.path}/logo"), 404)


def test_no_logo_of_an_unknown_workspace(api):
    assert_error(api.get("/workspaces/no-such-workspace-here/logo"), 404)
