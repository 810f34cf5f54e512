"""What ran, where and how: the provenance a matrix report records (see tank/matrix/report.py)."""

from __future__ import annotations

import shlex

import docker

import pufferlib
from pufferlib.provenance import git_revision, machine
from pufferlib.tank.matrix.plan import Plan


def provenance(plan: Plan) -> dict:
    """What ran, where and how, for the report: the exact command line, jobs and filters, the
    pufferlib version and git revision, this machine (host name, CPU, cores, load) and every engine."""
    engines = {}
    for host in plan.hosts:
        try:
            info, version = host.client.info(), host.client.version()
        except docker.errors.DockerException as exc:
            engines[host.url] = {"name": "?", "version": f"unknown ({exc})", "cpus": "?", "os": "?"}
            continue
        engines[host.url] = {
            "name": info.get("Name", ""),
            "version": version.get("Version", ""),
            "cpus": info.get("NCPU"),
            "memory_gb": round(int(info.get("MemTotal") or 0) / 2**30, 1),
            "os": info.get("OperatingSystem", ""),
        }
    return {
        "command": shlex.join(plan.command),
        "run": {
            "jobs": plan.jobs,
            "repeats": plan.repeats,
            "retries": plan.retries,
            "filters": list(plan.patterns),
            "plugins": [p.name for p in plan.plugins],
            "timeout": plan.timeout,
            "gpus": f"{plan.gpus} ({plan.gpu_request or 'none requested'})",
        },
        "pufferlib": {"version": pufferlib.__version__, "git_revision": git_revision()},
        "machine": machine(),
        "engines": engines,
    }
