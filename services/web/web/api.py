"""The public API as the site calls it: over HTTP through the gateway, as the visitor
(the kit's client of ``/v1``, ``common.public_api``)."""

from __future__ import annotations

from common.public_api import ApiClient, ApiError

__all__ = ["ApiClient", "ApiError"]
