"""run_matrix(): every binding of a plan, taken from one queue by `jobs` workers per host (so a fast host
takes more), or with `every_host` from a queue per host (each host runs every binding, to compare the
boxes: matrix/hostdiff.py), each cell into the progress view as it lands and into the report once its
container is done; a container the engine could not run is retried (plan.retries, with backoff), every
attempt recorded in report.attempts, and what still fails is an engine-error cell; the run's containers
are removed at the end, on errors and on Ctrl-C."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import queue
import statistics
import threading
import time

from pufferlib.matrix_protocol import CHECKS, ENGINE
from pufferlib.tank.matrix.binding import EngineFault, engine_cells, failed_cells, run_binding
from pufferlib.tank.matrix.commands import versions
from pufferlib.tank.matrix.hostdiff import differences
from pufferlib.tank.matrix.hosts import Host, cleanup
from pufferlib.tank.matrix.plan import Plan
from pufferlib.tank.matrix.progress import Progress
from pufferlib.tank.matrix.provenance import provenance
from pufferlib.tank.matrix.report import Cell, Report


def run_matrix(plan: Plan, progress: Progress | None = None) -> Report:
    """Run every binding of the plan; returns the report (also when interrupted, then re-raises)."""
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    report = Report(
        image=plan.image,
        digest=plan.hosts[0].client.images.get(plan.image).id,
        digests={h.url: h.client.images.get(plan.image).id for h in plan.hosts},
        variant=plan.variant,
        hosts=[h.url for h in plan.hosts],
        started=started,
        provenance=provenance(plan),
        every_host=plan.every_host,
    )
    progress = progress or Progress(progress_names(plan), quiet=True, per_host=plan.every_host)
    run = Run(plan, report, progress)
    t0 = time.monotonic()
    threads = [
        threading.Thread(target=run.worker, args=(h,), daemon=True)
        for h in plan.hosts
        for _ in range(plan.jobs)
    ]
    try:
        with progress:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.2)
        report.versions = versions(plan.hosts[0], plan)
    except KeyboardInterrupt:
        run.stop.set()
        for t in threads:
            t.join(timeout=15)
        raise
    finally:
        run.stop.set()
        report.wall_seconds = round(time.monotonic() - t0, 2)
        report.provenance["load_end"] = [round(x, 2) for x in os.getloadavg()]
        cleanup(plan.hosts, plan.run_id)
    order = {name: i for i, name in enumerate(b["name"] for b in plan.bindings)}
    hosts = [h.url for h in plan.hosts]
    rank = {url: i for i, url in enumerate(hosts)}
    report.rows.sort(
        key=lambda c: (
            order.get(c.env, 0),
            CHECKS.index(c.check) if c.check in CHECKS else 99,
            rank.get(c.host, 0),
        )
    )
    if plan.every_host:
        seeding = {b["name"]: b.get("seeding", "") for b in plan.bindings}
        report.host_differences = differences(report.rows, hosts, seeding)
    return report


def progress_names(plan: Plan) -> list[str]:
    """What the live view shows a line for: each binding, or each binding on each host (--every-host)."""
    names = [b["name"] for b in plan.bindings]
    if not plan.every_host:
        return names
    return [f"{name} @ {host.url}" for name in names for host in plan.hosts]


class Run:
    """The state the workers of one run share: the queue of bindings (one per host with every_host),
    the report and the view (under one lock), the stop flag, and the errors of bindings whose engine
    failed."""

    def __init__(self, plan: Plan, report: Report, progress: Progress) -> None:
        self.plan = plan
        self.report = report
        self.progress = progress
        urls = [h.url for h in plan.hosts]
        if plan.every_host:
            self.todo = {url: self._queue() for url in urls}
        else:
            self.todo = dict.fromkeys(urls, self._queue())  # one queue: a fast host takes more
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.errors: list[BaseException] = []

    def _queue(self) -> queue.Queue[dict]:
        todo: queue.Queue[dict] = queue.Queue()
        for binding in self.plan.bindings:
            todo.put(binding)
        return todo

    def on_cell(self, cell: Cell, into: list[Cell] | None = None) -> None:
        """A cell landed: shown now, and into the report (or `into`: an attempt's, until it is known
        whether the engine ended that attempt)."""
        with self.lock:
            if cell.status == "pass" and cell.sps:
                cell.samples = [cell.sps]
            (self.report.rows if into is None else into).append(cell)
            self.progress.update(cell)

    def on_repeat(self, cell: Cell) -> None:
        """A cell of a repeated run: its steps/s joins the first run's cell, whose figure becomes the median.
        What a repeat fails is not recorded: the first run decides the status."""
        if cell.status != "pass" or not cell.sps:
            return
        with self.lock:
            for row in self.report.rows:
                if (row.env, row.check, row.host) == (cell.env, cell.check, cell.host) and row.samples:
                    row.samples.append(cell.sps)
                    row.sps = statistics.median(row.samples)

    def worker(self, host: Host) -> None:
        """Take bindings off the queue and run them on `host` until none is left or the run stops."""
        while not self.stop.is_set():
            try:
                binding = self.todo[host.url].get_nowait()
            except queue.Empty:
                return
            label = self.progress.label(binding["name"], host.url)
            self.progress.started(label, host.url)
            try:
                seconds = self.attempts(host, binding)
                for _ in range(self.plan.repeats - 1):
                    if not self.stop.is_set():
                        with contextlib.suppress(EngineFault):  # a repeat is a sample more, or none
                            run_binding(host, self.plan, binding, self.on_repeat, self.stop)
            except Exception as exc:  # not the engine's doing (that is EngineFault): fail the binding's cells
                seconds = 0.0
                for cell in failed_cells(binding["name"], (), f"{type(exc).__name__}: {exc}", host.url):
                    self.on_cell(cell)
                self.errors.append(exc)
            with self.lock:
                if self.plan.every_host:
                    self.report.host_seconds.setdefault(host.url, {})[binding["name"]] = round(seconds, 2)
                wall = self.report.env_seconds.get(binding["name"], 0.0)
                self.report.env_seconds[binding["name"]] = max(wall, round(seconds, 2))
                self.progress.finished(label)

    def attempts(self, host: Host, binding: dict) -> float:
        """Run a binding until the engine lets its container run, at most 1 + plan.retries times, waiting
        plan.backoff seconds (doubling) between; its cells go into the report, the attempts into
        report.attempts when the engine failed one. Returns the last attempt's seconds."""
        name, tries = binding["name"], []
        for attempt in range(1, self.plan.retries + 2):
            cells: list[Cell] = []
            try:
                seconds = run_binding(
                    host, self.plan, binding, lambda c, into=cells: self.on_cell(c, into), self.stop
                )
            except EngineFault as fault:
                tries.append(_attempt(name, host, attempt, ENGINE, fault.why, fault.seconds))
                if attempt <= self.plan.retries and not self.stop.wait(
                    self.plan.backoff * 2 ** (attempt - 1)
                ):
                    continue
                seconds = fault.seconds
                for cell in engine_cells(name, fault, host.url):
                    self.on_cell(cell, cells)
            else:
                if tries:
                    tries.append(_attempt(name, host, attempt, "ran", "the container ran", seconds))
            with self.lock:
                self.report.rows.extend(cells)
                self.report.attempts.extend(tries)
            return seconds
        raise AssertionError("unreachable: the last attempt returns")


def _attempt(env: str, host: Host, attempt: int, outcome: str, detail: str, seconds: float) -> dict:
    """One attempt at a binding's container, as report.attempts records it."""
    return {
        "env": env,
        "host": host.url,
        "attempt": attempt,
        "outcome": outcome,
        "detail": detail,
        "seconds": round(seconds, 2),
    }
