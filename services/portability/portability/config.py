"""The portability service's settings, read once from the environment (docs/services/portability.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from common.config import load, from_env


@dataclass(frozen=True)
class PortabilityConfig:
    keep: int = from_env("PORTABILITY_KEEP", 10, int)  # finished exports kept per workspace (older ones deleted)
    page_size: int = from_env("PORTABILITY_PAGE_SIZE", 500, int)  # items asked of an owning service at once
    poll_seconds: float = from_env("PORTABILITY_POLL_SECONDS", 5.0, float)  # how often an idle worker looks for work
    import_batch: int = from_env("PORTABILITY_IMPORT_BATCH", 500, int)  # items an import sends an owning service at once
    lease_seconds: float = from_env("PORTABILITY_LEASE_SECONDS", 60.0, float)  # a dead worker's export is claimed again after it


def load_config(environ: Mapping[str, str] | None = None) -> PortabilityConfig:
    return load(PortabilityConfig, environ)
