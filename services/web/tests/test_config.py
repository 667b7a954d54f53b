"""The site's settings from crafted environments: the cookie key is the site's own."""

from __future__ import annotations

import pytest

from common.config import Settings
from web.config import load_config


def test_cookie_secret_is_the_sites_own():
    production = Settings(internal_secret="i" * 40, admin_token="a" * 40)
    with pytest.raises(SystemExit, match="WEB_COOKIE_SECRET is unset"):
        load_config(production, {})
    with pytest.raises(SystemExit, match="shorter than 32"):
        load_config(production, {"WEB_COOKIE_SECRET": "s" * 31})
    with pytest.raises(SystemExit, match="equals INTERNAL_SECRET"):
        load_config(production, {"WEB_COOKIE_SECRET": "i" * 40})
    assert load_config(production, {"WEB_COOKIE_SECRET": "s" * 32}).cookie_secret == "s" * 32
    development = Settings(dev_mode=True)
    assert load_config(development, {}).cookie_secret not in ("", development.internal_secret)
    assert load_config(development, {"WEB_COOKIE_SECRET": "short"}).cookie_secret == "short"

