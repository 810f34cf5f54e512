"""One binding in one fresh container: its cells as the smoke run prints them, and a failed cell, with
the reason and the last output, for every check it never reported (crash, hang, interrupt). When the
Docker engine could not run the container (an API error creating or starting it, the daemon gone, the
container OOM-killed by the engine or killed from outside) it raises EngineFault instead: that says
nothing about the env, and the caller (run.py) retries it."""

from __future__ import annotations

import codecs
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict

import docker
import requests

from pufferlib.matrix_protocol import BUDGET_ENV, CHECKS, ENGINE, Result, smoke_command
from pufferlib.tank.containers import tracked
from pufferlib.tank.errors import TankError
from pufferlib.tank.matrix.commands import spec, tail
from pufferlib.tank.matrix.hosts import Host
from pufferlib.tank.matrix.plan import Plan
from pufferlib.tank.matrix.report import Cell


class EngineFault(Exception):
    """The engine could not run a binding's container: `why` (with the last output), after `seconds`, and
    the checks the container had reported before (`seen`: they keep their cells)."""

    def __init__(self, why: str, seconds: float, seen: Iterable[str] = ()) -> None:
        super().__init__(why)
        self.why, self.seconds, self.seen = why, seconds, set(seen)


ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, TankError)


def run_binding(
    host: Host, plan: Plan, binding: dict, on_cell: Callable[[Cell], None], stop: threading.Event
) -> float:
    """Run the smoke checks of one binding in a fresh container; report each cell as it lands. Raises
    EngineFault when the engine, not the env, ended the attempt."""
    name = binding["name"]
    budget = plan.timeout or float(binding.get("smoke", {}).get("seconds", 120))
    start = time.monotonic()
    output: Output | None = None
    try:
        container_spec = spec(plan, host, smoke_command(name), gpu=True)
        container_spec.env[BUDGET_ENV] = f"{budget:g}"  # the learn check's hang guard ends inside it
        with tracked(host.client, container_spec, fix=f"puffertank build (on {host.url})") as container:
            container.start()
            output = Output(container, name, host.url, on_cell)
            output.start()
            exit_code = wait(container, budget - (time.monotonic() - start), stop)
            if exit_code is None:
                container.kill()
            output.join(timeout=5)
            fault = engine_fault(container, exit_code)
    except ENGINE_ERRORS as exc:
        seen = output.seen if output else ()
        lines = f"\n--- last output ---\n{tail(output.lines)}" if output and output.lines else ""
        why = f"the Docker engine on {host.url} failed: {type(exc).__name__}: {exc}{lines}"
        raise EngineFault(why, time.monotonic() - start, seen) from exc
    elapsed = time.monotonic() - start
    if fault:
        raise EngineFault(f"{fault}\n--- last output ---\n{tail(output.lines)}", elapsed, output.seen)
    detail = f"{why_unreported(exit_code, stop, budget)}\n--- last output ---\n{tail(output.lines)}"
    for cell in failed_cells(name, output.seen, detail, host.url):
        on_cell(cell)
    return elapsed


def engine_fault(container, exit_code: int | None) -> str:
    """Why the engine, not the env, ended a container that exited (`exit_code`; None: we killed it), or
    "": the engine's OOM killer, an error the engine recorded, or a SIGKILL/SIGTERM from outside (the
    smoke run sends neither to itself; `docker kill`/`docker stop`, a daemon restart and the kernel's
    OOM killer do)."""
    if exit_code is None:
        return ""
    container.reload()
    state = container.attrs.get("State", {})
    if state.get("OOMKilled"):
        return f"the engine's OOM killer ended the container (exit {exit_code}): out of memory"
    if state.get("Error"):
        return f"the engine reported an error running the container: {state['Error']}"
    if exit_code in (128 + 9, 128 + 15):
        signal = "SIGKILL" if exit_code == 128 + 9 else "SIGTERM"
        return (
            f"the container was killed from outside the env (exit {exit_code}, {signal}: docker kill or "
            "stop, a daemon restart, the kernel's OOM killer)"
        )
    return ""


class Output:
    """A container's output, read on a thread: every line kept (for the tail), and each cell of binding
    `name` passed to `on_cell` the first time it is printed."""

    def __init__(self, container, name: str, host: str, on_cell: Callable[[Cell], None]) -> None:
        self.container = container
        self.name = name
        self.host = host
        self.on_cell = on_cell
        self.lines: list[str] = []
        self.seen: set[str] = set()
        self.thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def join(self, timeout: float) -> None:
        self.thread.join(timeout=timeout)

    def _read(self) -> None:
        # Chunks are not lines: Docker's log driver splits a line past 16 KB (a render result with its
        # thumbnails) and a chunk may end mid-character, so bytes are decoded incrementally and a line
        # is handled once its newline arrives.
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        try:
            for raw in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
                *lines, pending = (pending + decoder.decode(raw)).split("\n")
                for line in lines:
                    self._line(line)
        except ENGINE_ERRORS:  # the engine went mid-stream: run_binding finds out and says so
            pass
        pending += decoder.decode(b"", final=True)
        if pending:  # the last line, without its newline
            self._line(pending)

    def _line(self, line: str) -> None:
        line = line.rstrip("\r")
        self.lines.append(line)
        cell = parse(line, self.host)
        if cell is not None and cell.env == self.name and cell.check not in self.seen:
            self.seen.add(cell.check)
            self.on_cell(cell)


def wait(container, budget: float, stop: threading.Event) -> int | None:
    """The container's exit status, or None when `budget` seconds pass or `stop` is set first. The
    engine gone (not a read timeout, the SDK's way of saying "still running") raises."""
    deadline = time.monotonic() + budget
    exit_code = None
    while exit_code is None and not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            exit_code = container.wait(timeout=min(2.0, left)).get("StatusCode")
        except requests.exceptions.RequestException:
            container.client.ping()  # still answering: it was the read timeout; else the engine is gone
    return exit_code


def why_unreported(exit_code: int | None, stop: threading.Event, budget: float) -> str:
    """Why a check the container never reported is missing, from how the container ended."""
    if exit_code is None:
        return "interrupted" if stop.is_set() else f"timed out after {budget:.0f}s (binding hung?)"
    if exit_code not in (0, 1):
        return f"container exited with code {exit_code} (crashed?)"
    return "not reported by the smoke run"


def failed_cells(
    name: str, reported: Iterable[str], detail: str, host: str, status: str = "fail"
) -> list[Cell]:
    """A cell of `status` (error=True: the check never reported) for every check of `name` not `reported`;
    status ENGINE where the engine failed."""
    reported = set(reported)
    return [
        Cell(name, check, status, 0.0, detail, None, host, error=True)
        for check in CHECKS
        if check not in reported
    ]


def engine_cells(name: str, fault: EngineFault, host: str) -> list[Cell]:
    """The engine-error cells of a binding whose last attempt the engine ended."""
    return failed_cells(name, fault.seen, fault.why, host, ENGINE)


def parse(line: str, host: str) -> Cell | None:
    """The cell a line of the smoke run's output carries (matrix_protocol.Result), on `host`."""
    result = Result.from_line(line)
    return None if result is None else Cell(**asdict(result), host=host)
