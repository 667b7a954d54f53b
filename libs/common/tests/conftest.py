import pytest

from common.config import Settings
from devstack import LocalStack


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """MongoDB and Kafka stand-ins only (the consumer runner's and the relay's tests): no
    service of the platform is needed."""
    local = LocalStack(log_dir=tmp_path_factory.mktemp("servers-logs"))
    local.start_mongo()
    local.start_kafka()
    yield Settings(mongodb_uri=local.mongodb_uri, kafka_bootstrap_servers=local.kafka_bootstrap)
    local.stop()
