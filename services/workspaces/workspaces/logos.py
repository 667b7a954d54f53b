"""Checking an uploaded logo: what it is (its bytes, not only its declared type), its size and
its dimensions, with Pillow (which reads a header without decoding the image first, so a huge
image is refused before it costs memory); an SVG is parsed with defusedxml (no entities, no
external references) and written again with only the drawing elements and attributes of
``SVG_ELEMENTS``: no script, no event handler, no foreignObject, no link out of the file. It is
served with a CSP that allows no script either (``contract.LOGO_CSP``)."""

from __future__ import annotations

import hashlib
import re
import warnings
from io import BytesIO

import defusedxml.ElementTree as SafeTree
from defusedxml import DefusedXmlException
from PIL import Image
from xml.etree.ElementTree import Element, ParseError, register_namespace, tostring

from common.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from workspaces import contract

# The declared type and the format Pillow must find in the bytes; SVG is XML, read apart.
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
SVG = "image/svg+xml"
assert set(FORMATS) | {SVG} == set(contract.LOGO_TYPES)
SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
register_namespace("", SVG_NS)
register_namespace("xlink", XLINK_NS)
# What a logo draws with. Anything else (script, foreignObject, image, a, use of another file,
# animation that could set an href, style sheets that could fetch) is dropped with its content.
SVG_ELEMENTS = {
    "svg", "g", "defs", "title", "desc", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
    "text", "tspan", "linearGradient", "radialGradient", "stop", "clipPath", "mask", "symbol", "use",
}
SVG_ATTRIBUTES = {
    "id", "class", "viewBox", "width", "height", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
    "d", "points", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width", "stroke-opacity", "stroke-linecap",
    "stroke-linejoin", "stroke-dasharray", "stroke-miterlimit", "opacity", "transform", "offset", "stop-color",
    "stop-opacity", "gradientUnits", "gradientTransform", "spreadMethod", "fx", "fy", "clip-path", "clip-rule",
    "mask", "preserveAspectRatio", "font-family", "font-size", "font-weight", "text-anchor", "dominant-baseline",
    "letter-spacing", "dx", "dy", "version", "clipPathUnits", "maskUnits",
}
# A paint or clip may name a part of this file (url(#id)); nothing may name another.
EXTERNAL = re.compile(r"url\(\s*['\"]?\s*[^#'\"\s)]", re.I)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def checked(content_type: str | None, data: bytes) -> tuple[str, bytes]:
    """The logo's media type and the bytes to keep once ``data`` is an image of that type within
    the rules (an SVG: written again, clean); else 415 (a type not taken), 413 (too large) or 400
    (not such an image, or too small or large)."""
    declared = media_type(content_type)
    accepted = ", ".join(contract.LOGO_TYPES)
    if declared not in contract.LOGO_TYPES:
        given = f"Content-Type {declared!r}" if declared else "no Content-Type"
        raise UnsupportedMediaType(f"a logo is one of: {accepted} (the image itself as the body); got {given}")
    if not data:
        raise BadRequest("the logo is empty: send the image itself as the body")
    if len(data) > contract.LOGO_MAX_BYTES:
        raise PayloadTooLarge(f"a logo may be at most {contract.LOGO_MAX_BYTES // 1024} KiB")
    if declared == SVG:
        return declared, clean_svg(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(BytesIO(data), formats=[FORMATS[declared]])
            width, height = image.size
            low, high = contract.LOGO_MIN_PIXELS, contract.LOGO_MAX_PIXELS
            if not (low <= width <= high and low <= height <= high):
                raise BadRequest(f"a logo is {low} to {high} pixels on each side; this one is {width}x{height}")
            image.load()  # the whole image decodes: no truncated or corrupt file is kept
    except BadRequest:
        raise
    except Exception:  # Pillow's refusals are of many kinds (UnidentifiedImageError, OSError, SyntaxError...)
        raise BadRequest(f"the body is not a readable {declared} image") from None
    return declared, data


def clean_svg(data: bytes) -> bytes:
    """``data``, an SVG document, with only what draws: 400 when it is not one."""
    try:
        root = SafeTree.fromstring(data, forbid_dtd=True)
    except (ParseError, DefusedXmlException, ValueError):
        raise BadRequest("the body is not a readable image/svg+xml image (well-formed XML, no DTD or entities)") from None
    if root.tag != f"{{{SVG_NS}}}svg":
        raise BadRequest("the body is not a readable image/svg+xml image (its root is not an <svg> element)")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + tostring(_kept(root), encoding="unicode").encode()


def _kept(element: Element) -> Element:
    """A copy of ``element`` (an SVG element) with its allowed attributes and children."""
    kept = Element(element.tag)
    for name, value in element.attrib.items():
        if name in SVG_ATTRIBUTES and not EXTERNAL.search(value):
            kept.set(name, value)
        elif name in ("href", f"{{{XLINK_NS}}}href") and element.tag == f"{{{SVG_NS}}}use" and value.startswith("#"):
            kept.set(name, value)  # a <use> of a part of this file
    kept.text = element.text if element.tag in (f"{{{SVG_NS}}}{t}" for t in ("text", "tspan", "title", "desc")) else None
    for child in element:
        if child.tag.startswith(f"{{{SVG_NS}}}") and child.tag.split("}", 1)[1] in SVG_ELEMENTS:
            copy = _kept(child)
            copy.tail = child.tail if element.tag in (f"{{{SVG_NS}}}text", f"{{{SVG_NS}}}tspan") else None
            kept.append(copy)
    return kept


def etag(data: bytes) -> str:
    """The logo's ETag: its content's hash, quoted."""
    return '"' + digest(data) + '"'


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def fresh(if_none_match: str | None, tag: str) -> bool:
    """Whether the browser's copy (``If-None-Match``) is this one."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return tag in tags or "*" in tags
