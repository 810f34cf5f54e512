"""run_matrix() without a Docker engine: fake containers that print a smoke run's JSON lines, crash, hang
or never start. Each binding's cells land in the report in binding and check order; a check the
container never reported becomes a failed cell (error=True) naming why, with the last output; one the
engine never ran is retried, then an engine-error cell; the run's containers are looked up for removal at
the end. (The real thing: tests/integration/test_matrix_*.py.)"""

from __future__ import annotations

import contextlib
import json
import time
from types import SimpleNamespace

import requests

from pufferlib.matrix_protocol import CHECKS, Result
from pufferlib.tank import containers
from pufferlib.tank.errors import TankError
from pufferlib.tank.matrix import LABEL, Host, Plan, binding, commands, run_matrix


class FakeContainer:
    def __init__(self, lines: list[str], status: int | None) -> None:
        self.lines, self.status, self.killed = lines, status, False
        self.attrs: dict = {"State": {"OOMKilled": False, "Error": ""}}  # what inspect says once it exited
        self.client = SimpleNamespace(ping=lambda: True)  # the engine still answers

    def reload(self) -> None:
        pass

    def start(self) -> None:
        pass

    def logs(self, **_):
        yield ("\n".join(self.lines) + "\n").encode()

    def wait(self, timeout: float):
        if self.status is None:  # still running: the SDK's read timeout
            time.sleep(min(timeout, 0.05))
            raise requests.exceptions.ReadTimeout()
        return {"StatusCode": self.status}

    def kill(self) -> None:
        self.killed = True


class FakeClient:
    def __init__(self) -> None:
        self.images = SimpleNamespace(get=lambda ref: SimpleNamespace(id="sha256:feed"))
        self.listed: list[dict] = []
        self.containers = SimpleNamespace(list=self._list)

    def _list(self, all: bool, filters: dict) -> list:
        self.listed.append(filters)
        return []

    def info(self) -> dict:
        return {"Name": "fake", "NCPU": 2}

    def version(self) -> dict:
        return {"Version": "0"}


def line(env: str, check: str, status: str = "pass") -> str:
    return Result(env, check, status, 0.1, f"{check} ok").to_line()


SCRIPTS = {  # binding -> (printed lines, exit status; None: never exits)
    "test/ok": ([line("test/ok", c) for c in CHECKS], 0),
    "test/crash": (["warming up", line("test/crash", "import"), "Segmentation fault"], 139),
    "test/hangs": ([line("test/hangs", "import"), line("other/env", "make")], None),
}


def test_cells_failures_and_cleanup(monkeypatch):
    started: dict[str, FakeContainer] = {}

    @contextlib.contextmanager
    def tracked(client, spec, fix=""):
        name = spec.command[3]
        if name == "test/no-engine":
            raise TankError("cannot create a container")
        started[name] = FakeContainer(*SCRIPTS[name])
        yield started[name]

    def run_captured(client, spec, fix=""):
        assert spec.command == ["python", "-m", "pufferlib.smoke", "--versions"]
        return containers.Result(0, json.dumps({"python": "3.11"}) + "\n", "", False, 0.1)

    monkeypatch.setattr(binding, "tracked", tracked)
    monkeypatch.setattr(commands, "run_captured", run_captured)
    client = FakeClient()
    names = ["test/ok", "test/crash", "test/hangs", "test/no-engine"]
    plan = Plan("puffertank/lib:cpu", "cpu", [Host("local", client)], [{"name": n} for n in names], jobs=2)
    plan.timeout, plan.backoff = 0.3, 0.0
    report = run_matrix(plan)

    assert [(r.env, r.check) for r in report.rows] == [(n, c) for n in names for c in CHECKS]
    cells = {(r.env, r.check): r for r in report.rows}
    assert all(cells["test/ok", c].status == "pass" and not cells["test/ok", c].error for c in CHECKS)
    assert cells["test/crash", "import"].status == "pass"
    crashed = cells["test/crash", "make"]
    assert crashed.status == "fail" and crashed.error and crashed.host == "local"
    assert crashed.detail.startswith("container exited with code 139 (crashed?)\n--- last output ---\n")
    assert "Segmentation fault" in crashed.detail
    assert started["test/hangs"].killed and cells["test/hangs", "import"].status == "pass"
    assert cells["test/hangs", "make"].detail.startswith("timed out after 0s (binding hung?)")
    assert not any(r.env == "other/env" for r in report.rows)  # another binding's line is not this one's
    lost = [cells["test/no-engine", c] for c in CHECKS]
    why = "the Docker engine on local failed: TankError: cannot create a container"
    assert all(c.status == "engine-error" and c.error and c.detail == why for c in lost)
    tries = [(a["env"], a["attempt"], a["outcome"]) for a in report.attempts]
    assert tries == [("test/no-engine", 1, "engine-error"), ("test/no-engine", 2, "engine-error")]  # 1 retry
    assert report.failed and report.engine_failed
    assert report.versions == {"python": "3.11"} and report.digest == "sha256:feed"
    assert set(report.env_seconds) == set(names)
    assert client.listed == [{"label": f"{LABEL}={plan.run_id}"}]  # cleanup looked for the run's containers
