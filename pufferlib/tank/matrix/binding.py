"""One binding in one fresh container: its cells as the smoke run prints them, and a failed cell, with
the reason and the last output, for every check it never reported (crash, hang, interrupt)."""

from __future__ import annotations

import codecs
import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict

import requests

from pufferlib.matrix_protocol import CHECKS, Result, smoke_command
from pufferlib.tank.containers import tracked
from pufferlib.tank.matrix.commands import spec, tail
from pufferlib.tank.matrix.hosts import Host
from pufferlib.tank.matrix.plan import Plan
from pufferlib.tank.matrix.report import Cell


def run_binding(
    host: Host, plan: Plan, binding: dict, on_cell: Callable[[Cell], None], stop: threading.Event
) -> float:
    """Run the smoke checks of one binding in a fresh container; report each cell as it lands."""
    name = binding["name"]
    budget = plan.timeout or float(binding.get("smoke", {}).get("seconds", 120))
    start = time.monotonic()
    container_spec = spec(plan, host, smoke_command(name), gpu=True)
    with tracked(host.client, container_spec, fix=f"puffertank build (on {host.url})") as container:
        container.start()
        output = Output(container, name, host.url, on_cell)
        output.start()
        exit_code = wait(container, budget - (time.monotonic() - start), stop)
        if exit_code is None:
            container.kill()
        output.join(timeout=5)
        elapsed = time.monotonic() - start
        detail = f"{why_unreported(exit_code, stop, budget)}\n--- last output ---\n{tail(output.lines)}"
        for cell in failed_cells(name, output.seen, detail, host.url):
            on_cell(cell)
        return elapsed


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
        for raw in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
            *lines, pending = (pending + decoder.decode(raw)).split("\n")
            for line in lines:
                self._line(line)
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
    """The container's exit status, or None when `budget` seconds pass or `stop` is set first."""
    deadline = time.monotonic() + budget
    exit_code = None
    while exit_code is None and not stop.is_set():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        # A timeout is the SDK's way of saying "still running".
        with contextlib.suppress(requests.exceptions.RequestException):
            exit_code = container.wait(timeout=min(2.0, left)).get("StatusCode")
    return exit_code


def why_unreported(exit_code: int | None, stop: threading.Event, budget: float) -> str:
    """Why a check the container never reported is missing, from how the container ended."""
    if exit_code is None:
        return "interrupted" if stop.is_set() else f"timed out after {budget:.0f}s (binding hung?)"
    if exit_code not in (0, 1):
        return f"container exited with code {exit_code} (crashed?)"
    return "not reported by the smoke run"


def failed_cells(name: str, reported: Iterable[str], detail: str, host: str) -> list[Cell]:
    """A failed cell (error=True: the check never reported) for every check of `name` not `reported`."""
    reported = set(reported)
    return [
        Cell(name, check, "fail", 0.0, detail, None, host, error=True)
        for check in CHECKS
        if check not in reported
    ]


def parse(line: str, host: str) -> Cell | None:
    """The cell a line of the smoke run's output carries (matrix_protocol.Result), on `host`."""
    result = Result.from_line(line)
    return None if result is None else Cell(**asdict(result), host=host)
