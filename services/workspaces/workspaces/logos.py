"""Checking an uploaded logo: what it is (its bytes, not only its declared type), its size and
its dimensions, with Pillow (which reads a header without decoding the image first, so a huge
image is refused before it costs memory)."""

from __future__ import annotations

import hashlib
import warnings
from io import BytesIO

from PIL import Image

from common.errors import BadRequest, PayloadTooLarge, UnsupportedMediaType
from workspaces import contract

# The declared type and the format Pillow must find in the bytes.
FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
assert set(FORMATS) == set(contract.LOGO_TYPES)


def media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def checked(content_type: str | None, data: bytes) -> str:
    """The logo's media type once ``data`` is an image of that type within the rules; else 415
    (a type not taken), 413 (too large) or 400 (not such an image, or too small or large)."""
    declared = media_type(content_type)
    accepted = ", ".join(contract.LOGO_TYPES)
    if declared in contract.LOGO_REFUSED_TYPES:
        raise UnsupportedMediaType(f"SVG logos are not accepted; upload one of: {accepted}")
    if declared not in FORMATS:
        given = f"Content-Type {declared!r}" if declared else "no Content-Type"
        raise UnsupportedMediaType(f"a logo is one of: {accepted} (the image itself as the body); got {given}")
    if not data:
        raise BadRequest("the logo is empty: send the image itself as the body")
    if len(data) > contract.LOGO_MAX_BYTES:
        raise PayloadTooLarge(f"a logo may be at most {contract.LOGO_MAX_BYTES // 1024} KiB")
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
    return declared


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
