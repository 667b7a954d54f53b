"""Create what the services need before they start: Kafka topics and MongoDB indexes.

Read from each service's spec alone: no service context is built, no API or worker code runs.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from common.config import Settings
from common.db import Store
from common.kafka import create_topics, dlq
from common.plugins import ServiceSpec


def initialise(settings: Settings, services: Mapping[str, ServiceSpec]) -> Iterator[str]:
    topics: list[str] = []
    for name, spec in services.items():
        models = spec.model_classes()
        if models:
            store = Store(settings, name)
            try:
                store.ensure_indexes(models)
            finally:
                store.close()
        yield f"mongodb indexes ensured for {name}: {', '.join(m.__name__ for m in models) or 'none'}"
        # Consumed topics too: a consumer may start before the topic's owner ever published.
        topics += [*spec.publishes, *spec.consumes]
    topics = list(dict.fromkeys(topics))
    topics += [dlq(t) for t in topics]
    created = create_topics(settings, topics)
    yield f"kafka topics created: {', '.join(created) or 'none (all existed)'}"
