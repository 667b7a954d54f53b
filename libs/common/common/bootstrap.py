"""Create what the services need before they start: Kafka topics and MongoDB indexes."""

from __future__ import annotations

from typing import Iterator, Mapping

from common.config import Settings
from common.kafka import create_topics, dlq
from common.plugins import ServiceSpec


def initialise(settings: Settings, services: Mapping[str, ServiceSpec]) -> Iterator[str]:
    topics: list[str] = []
    for name, spec in services.items():
        context = spec.create_context(settings)
        context.store.ensure_indexes(spec.models)
        yield f"mongodb indexes ensured for {name}: {', '.join(m.__name__ for m in spec.models) or 'none'}"
        # Consumed topics too: a consumer may start before the topic's owner ever published.
        consumed = list(spec.consumers(context)) if spec.consumers else []
        topics += [*spec.publishes, *consumed]
    topics += [dlq(t) for t in topics]
    created = create_topics(settings, topics)
    yield f"kafka topics created: {', '.join(created) or 'none (all existed)'}"
