"""A rehearsal of the cluster on one machine: every Job and Deployment the chart renders runs
as a local process with exactly its container's command, args and environment.

What differs from a cluster, and only that:
- Service DNS names (and the ports of their Services) in env values become 127.0.0.1 and a
  free local port per Deployment; a `--bind 0.0.0.0:<containerPort>` argument binds that
  local port on 127.0.0.1 instead (many pods share one machine here);
- the image's own environment is this virtualenv's PATH (where the console scripts are) and
  PYTHONUNBUFFERED/PYTHONDONTWRITEBYTECODE as the Dockerfile sets them;
- one process per Deployment whatever its replicas; hook Jobs run first, by hook weight.
MongoDB and Kafka are the local stand-ins (devstack), passed in as chart values.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import urllib3

from .chartkit import Rendered
from devstack import LocalStack, free_port

IMAGE_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def container(workload: dict) -> dict:
    (c,) = workload["spec"]["template"]["spec"]["containers"]
    return c


@dataclass
class LocalCluster:
    rendered: Rendered
    stack: LocalStack  # owns the MongoDB/Kafka stand-ins and every process started here
    namespace: str
    ports: dict[str, int] = field(default_factory=dict)  # Deployment name -> local port
    hosts: dict[str, str] = field(default_factory=dict)  # "<service dns>:<port>" -> "127.0.0.1:<local>"
    job_output: dict[str, str] = field(default_factory=dict)
    services: list[str] = field(default_factory=list)  # services discovered in this environment

    def plan(self) -> None:
        """Give each Deployment with a port a local one, and map its Services' names to it."""
        deployments = self.rendered.of_kind("Deployment")
        for deployment in deployments:
            if container(deployment).get("ports"):
                self.ports[deployment["metadata"]["name"]] = free_port()
        for service in self.rendered.of_kind("Service"):
            target = next(d for d in deployments
                          if service["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items())
            local = f"127.0.0.1:{self.ports[target['metadata']['name']]}"
            name = service["metadata"]["name"]
            for port in service["spec"]["ports"]:
                for host in (name, f"{name}.{self.namespace}", f"{name}.{self.namespace}.svc",
                             f"{name}.{self.namespace}.svc.cluster.local"):
                    self.hosts[f"{host}:{port['port']}"] = local
                    if port["port"] == 80:
                        self.hosts[host] = local  # http://<service> means port 80

    def localise(self, value: str) -> str:
        """Rewrite Service DNS names in a URL or host list to their local addresses."""
        for host in sorted(self.hosts, key=len, reverse=True):
            value = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w.:-])", self.hosts[host], value)
        return value

    def process(self, workload: dict) -> tuple[list[str], dict[str, str]]:
        """The argv and environment of a workload's container, localised."""
        c = container(workload)
        env = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **IMAGE_ENV}
        env.update({k: self.localise(v) for k, v in self.rendered.env_of(workload).items()})
        argv = [*c.get("command", []), *c.get("args", [])]
        port = self.ports.get(workload["metadata"]["name"])
        if port:
            container_port = c["ports"][0]["containerPort"]
            argv = [f"127.0.0.1:{port}" if a == f"0.0.0.0:{container_port}" else a for a in argv]
        argv[0] = shutil.which(argv[0], path=env["PATH"]) or argv[0]
        return argv, env

    def run_jobs(self, timeout: float = 180) -> None:
        jobs = sorted(self.rendered.of_kind("Job"), key=lambda j: int(j["metadata"]["annotations"].get("helm.sh/hook-weight", 0)))
        for job in jobs:
            argv, env = self.process(job)
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
            self.job_output[job["metadata"]["name"]] = done.stdout + done.stderr
            if done.returncode != 0:
                raise RuntimeError(f"Job {job['metadata']['name']} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")

    def start_deployments(self) -> None:
        for deployment in self.rendered.of_kind("Deployment"):
            argv, env = self.process(deployment)
            self.stack.spawn(deployment["metadata"]["name"], argv, env)

    def wait_ready(self, timeout: float = 90) -> None:
        """Wait until every Deployment's readiness probe answers 200 on its local port."""
        pending = {d["metadata"]["name"]: container(d)["readinessProbe"]["httpGet"]["path"]
                   for d in self.rendered.of_kind("Deployment") if "readinessProbe" in container(d)}
        deadline = time.monotonic() + timeout
        while pending:
            for name, path in list(pending.items()):
                if self.probe(name, path) == 200:
                    del pending[name]
            dead = self.dead()
            if dead:
                raise RuntimeError(f"exited before ready: {dead}\n{self.logs(dead)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"not ready after {timeout}s: {sorted(pending)}\n{self.logs(list(pending))}")
            time.sleep(0.2)

    def probe(self, deployment: str, path: str) -> int | None:
        try:
            return urllib3.request("GET", f"http://127.0.0.1:{self.ports[deployment]}{path}", timeout=2, retries=False).status
        except urllib3.exceptions.HTTPError:
            return None

    def url(self, deployment: str) -> str:
        return f"http://127.0.0.1:{self.ports[deployment]}"

    def dead(self) -> list[str]:
        names = {d["metadata"]["name"] for d in self.rendered.of_kind("Deployment")}
        return sorted(n for n, p in self.stack.processes.items() if n in names and not p.alive())

    def stop(self) -> None:
        """Stop every process as Kubernetes deletes pods: all signalled at once, then waited for."""
        for process in self.stack.processes.values():
            if process.alive():
                os.killpg(process.popen.pid, signal.SIGTERM)
        self.stack.stop()

    def logs(self, names: list[str], tail: int = 3000) -> str:
        out = []
        for name in names:
            process = self.stack.processes.get(name)
            if process and process.log_path and process.log_path.exists():
                out.append(f"==== {name}\n{process.log_path.read_text(errors='replace')[-tail:]}")
        return "\n".join(out)
