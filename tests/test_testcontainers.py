"""The same platform against real MongoDB and Kafka images, where a Docker engine answers.

No Docker engine runs on the development and CI machines of this project, so these skip
there; on a machine with Docker they prove the code is not tied to the local stand-ins.
"""

import pytest

from devstack import LocalStack
from testkit import Api, create_workspace


def docker_answers() -> bool:
    try:
        import docker

        return bool(docker.from_env(timeout=3).ping())
    except Exception:  # noqa: BLE001 - any failure means "no engine here"
        return False


pytestmark = [pytest.mark.docker, pytest.mark.skipif(not docker_answers(), reason="no Docker engine answers here")]


def test_platform_on_real_mongodb_and_kafka(tmp_path):
    from testcontainers.kafka import KafkaContainer
    from testcontainers.mongodb import MongoDbContainer

    # A single-node replica set: transactions (the outbox) need one.
    with MongoDbContainer("mongo:7.0").with_command("--replSet rs0 --bind_ip_all") as mongo, KafkaContainer() as kafka:
        mongo.exec(["mongosh", "--quiet", "--eval", "rs.initiate()"])
        uri = mongo.get_connection_url().rstrip("/") + "/?directConnection=true"
        with LocalStack(mongodb_uri=uri, kafka_bootstrap=kafka.get_bootstrap_server(), log_dir=tmp_path) as platform:
            api = Api(platform.url)
            ws = create_workspace(api, platform.admin_token)
            assert ws.settings(theme="dark")["theme"] == "dark"
            assert api.get(f"{ws.path}/branding").json()["theme"] == "dark"
