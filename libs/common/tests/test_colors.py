"""WCAG contrast as the pages, the widget and the mails compute it (common.colors)."""

import pytest

from common.colors import contrast, long_hex, text_on


def test_the_contrast_ratio_runs_from_1_to_21():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#fff", "#ffffff") == pytest.approx(1)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize("background", ["#000000", "#ffffff", "#dc2626", "#2563eb", "#facc15", "#777777", "#808080", "#ff00ff", "#4f46e5"])
def test_black_or_white_text_reads_at_least_4_5_to_1_on_any_background(background):
    assert contrast(background, text_on(background)) >= 4.5


def test_the_short_form_is_the_long_one():
    assert long_hex("#abc") == "#aabbcc" and text_on("#fff") == "#000000" and text_on("#1e3a8a") == "#ffffff"
    assert text_on("#1e3a8a", dark="#111827") == "#ffffff" and text_on("#facc15", dark="#111827") == "#111827"
