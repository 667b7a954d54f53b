"""Colours as the platform's pages, widget and mails read them: WCAG 2's relative luminance and
contrast ratio (https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio), and the text colour that
reads on a background."""

from __future__ import annotations

import re

HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
WHITE, BLACK = "#ffffff", "#000000"


def long_hex(color: str) -> str:
    """``#rgb`` as ``#rrggbb``; another colour as it is."""
    return "#" + "".join(c * 2 for c in color[1:]) if len(color) == 4 else color


def luminance(color: str) -> float:
    """The relative luminance of ``#rgb`` or ``#rrggbb``."""
    digits = long_hex(color)[1:]

    def channel(hex2: str) -> float:
        c = int(hex2, 16) / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(digits[i:i + 2]) for i in (0, 2, 4))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """The contrast ratio of two colours, from 1 (the same) to 21 (black on white)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_on(background: str, dark: str = BLACK, light: str = WHITE) -> str:
    """``dark`` or ``light`` text, whichever has the larger contrast with ``background``: with
    black and white, at least 4.5:1 for every background."""
    return dark if contrast(background, dark) >= contrast(background, light) else light
