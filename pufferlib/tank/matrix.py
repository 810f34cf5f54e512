"""`puffertank matrix`: every registered binding exercised inside the container, with reports.

The image is asked which bindings it has (`puffer envs --json`); each binding then runs
`python -m pufferlib.smoke NAME --json` in a fresh container, which prints one JSON line per check.
A binding that crashes or outlives its time budget fails its own remaining cells; the others go on.
Bindings are spread over `--jobs` containers per host and over every `--host` (Docker daemons over
unix://, tcp:// or ssh://), taken from one queue so a fast host takes more. Every container carries
the run's label and is removed at the end, on errors and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fnmatch
import io
import json
import queue
import sys
import tarfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
import requests

from pufferlib.smoke import CHECKS
from pufferlib.tank.containers import RunSpec, nvidia_runtime_available, tracked
from pufferlib.tank.docker_client import TankError, get_client
from pufferlib.tank.report import Cell, Report, write_all

LABEL = "puffertank.matrix"  # every matrix container carries LABEL=<run id>
PLUGIN_DIR = "/opt/puffertank/plugins"
TAIL_LINES = 25


@dataclass
class Host:
    """One Docker daemon the matrix runs containers on."""

    url: str  # "local" for the default engine (DOCKER_HOST or the socket)
    client: docker.DockerClient

    @classmethod
    def connect(cls, url: str | None) -> Host:
        if url in (None, "", "local"):
            client = get_client()
            url = "local"
        else:
            try:
                client = docker.DockerClient(
                    base_url=url, use_ssh_client=url.startswith("ssh://"), timeout=120
                )
                client.ping()
            except docker.errors.DockerException as exc:
                raise TankError(
                    f"cannot reach the Docker daemon at {url}: {exc}. Fix: check the address "
                    "(ssh://user@box, tcp://box:2375), that dockerd runs there, and that "
                    f"`docker -H {url} info` works."
                ) from exc
        return cls(url=url, client=client)


@dataclass
class Plan:
    image: str
    variant: str
    hosts: list[Host]
    bindings: list[dict]
    jobs: int = 2
    timeout: float | None = None  # per binding; None = the binding's own smoke budget
    plugins: list[Path] = field(default_factory=list)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


def image_name(variant: str) -> str:
    return f"puffertank/lib:{variant}"


def require_image(host: Host, image: str, variant: str) -> docker.models.images.Image:
    try:
        return host.client.images.get(image)
    except docker.errors.ImageNotFound:
        fix = f"puffertank build --variant {variant}"
        if host.url != "local":
            fix = f"DOCKER_HOST={host.url} {fix}  (or: docker save {image} | docker -H {host.url} load)"
        raise TankError(f"image {image} is not on {host.url}. Build it there: {fix}") from None


def _spec(plan_image: str, command: list[str], run_id: str, plugins: list[Path], gpus: str) -> RunSpec:
    return RunSpec(
        image=plan_image,
        command=command,
        gpus=gpus,
        labels={LABEL: run_id},
        env={"SDL_VIDEODRIVER": "dummy", **_plugin_env(plugins)},
        hostname="puffertank-matrix",
    )


@contextlib.contextmanager
def _container(host: Host, spec: RunSpec, plugins: list[Path]):
    """A created, removed-at-exit container with the plugins copied in (works on remote daemons too)."""
    with tracked(host.client, spec, fix=f"puffertank build (on {host.url})") as container:
        if plugins:
            host.client.api.put_archive(container.id, "/", _plugin_archive(plugins))
        yield container


def _run_once(host: Host, image: str, command: list[str], run_id: str, plugins: list[Path] = ()) -> str:
    """Run a short command in a labelled container and return its stdout (a TankError on failure)."""
    with _container(host, _spec(image, command, run_id, plugins, gpus="none"), plugins) as container:
        container.start()
        status = container.wait(timeout=120)
        if status.get("StatusCode") != 0:
            err = container.logs(stdout=False, stderr=True).decode()
            raise TankError(f"`{' '.join(command)}` failed in {image} on {host.url}:\n{_tail(err)}")
        return container.logs(stdout=True, stderr=False).decode()


def registered_bindings(host: Host, image: str, run_id: str, plugins: list[Path]) -> list[dict]:
    # plugins register bindings at import, so the listing needs them too
    return json.loads(_run_once(host, image, ["puffer", "envs", "--json"], run_id, plugins))


def _plugin_env(plugins: list[Path]) -> dict[str, str]:
    if not plugins:
        return {}
    return {"PYTHONPATH": PLUGIN_DIR, "PUFFERLIB_PLUGINS": ",".join(p.stem for p in plugins)}


def _plugin_archive(plugins: list[Path]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path in plugins:
            tar.add(path, arcname=f"{PLUGIN_DIR.lstrip('/')}/{path.name}")
    return buf.getvalue()


def run_binding(
    host: Host, plan: Plan, binding: dict, on_cell: Callable[[Cell], None], stop: threading.Event
) -> float:
    """Run the smoke checks of one binding in a fresh container; report each cell as it lands."""
    name = binding["name"]
    budget = plan.timeout or float(binding.get("smoke", {}).get("seconds", 120))
    command = ["python", "-m", "pufferlib.smoke", name, "--json"]
    start = time.monotonic()
    seen: set[str] = set()
    lines: list[str] = []
    spec = _spec(plan.image, command, plan.run_id, plan.plugins, "auto" if plan.variant == "cuda" else "none")
    with _container(host, spec, plan.plugins) as container:
        container.start()

        def read() -> None:
            for raw in container.logs(stream=True, follow=True, stdout=True, stderr=True):
                for line in raw.decode(errors="replace").splitlines():
                    lines.append(line)
                    cell = _parse(line, host.url)
                    if cell is not None and cell.env == name and cell.check not in seen:
                        seen.add(cell.check)
                        on_cell(cell)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        exit_code = None
        while exit_code is None and not stop.is_set():
            left = budget - (time.monotonic() - start)
            if left <= 0:
                break
            # A timeout is the SDK's way of saying "still running".
            with contextlib.suppress(requests.exceptions.RequestException):
                exit_code = container.wait(timeout=min(2.0, left)).get("StatusCode")
        if exit_code is None:
            container.kill()
        reader.join(timeout=5)
        elapsed = time.monotonic() - start
        if exit_code is None:
            why = "interrupted" if stop.is_set() else f"timed out after {budget:.0f}s (binding hung?)"
        elif exit_code not in (0, 1):
            why = f"container exited with code {exit_code} (crashed?)"
        else:
            why = "not reported by the smoke run"
        for check in CHECKS:
            if check not in seen:
                detail = f"{why}\n--- last output ---\n{_tail(lines)}"
                on_cell(Cell(name, check, "fail", 0.0, detail, None, host.url))
        return elapsed


def _parse(line: str, host: str) -> Cell | None:
    if not line.startswith("{"):
        return None
    try:
        data = json.loads(line)
        return Cell(
            data["env"],
            data["check"],
            data["status"],
            float(data["seconds"]),
            data.get("detail", ""),
            data.get("sps"),
            host,
        )
    except (ValueError, KeyError, TypeError):
        return None


def _tail(text: str | list[str], n: int = TAIL_LINES) -> str:
    lines = text.splitlines() if isinstance(text, str) else text
    return "\n".join(lines[-n:])


def cleanup(hosts: list[Host], run_id: str) -> int:
    """Remove every container of this run on every host (the safety net behind each finally)."""
    removed = 0
    for host in hosts:
        with contextlib.suppress(docker.errors.DockerException):
            for container in host.client.containers.list(all=True, filters={"label": f"{LABEL}={run_id}"}):
                with contextlib.suppress(docker.errors.APIError):
                    container.remove(force=True)
                    removed += 1
    return removed


def run_matrix(plan: Plan, progress: Progress | None = None) -> Report:
    """Run every binding of the plan; returns the report (also when interrupted, then re-raises)."""
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    report = Report(
        image=plan.image,
        digest=plan.hosts[0].client.images.get(plan.image).id,
        variant=plan.variant,
        hosts=[h.url for h in plan.hosts],
        started=started,
    )
    progress = progress or Progress([b["name"] for b in plan.bindings], quiet=True)
    todo: queue.Queue[dict] = queue.Queue()
    for binding in plan.bindings:
        todo.put(binding)
    stop = threading.Event()
    lock = threading.Lock()
    errors: list[BaseException] = []

    def on_cell(cell: Cell) -> None:
        with lock:
            report.rows.append(cell)
            progress.update(cell)

    def worker(host: Host) -> None:
        while not stop.is_set():
            try:
                binding = todo.get_nowait()
            except queue.Empty:
                return
            progress.started(binding["name"], host.url)
            try:
                seconds = run_binding(host, plan, binding, on_cell, stop)
            except Exception as exc:  # a broken daemon: fail this binding's cells, keep going
                seconds = 0.0
                for check in CHECKS:
                    on_cell(
                        Cell(
                            binding["name"],
                            check,
                            "fail",
                            0.0,
                            f"{type(exc).__name__}: {exc}",
                            None,
                            host.url,
                        )
                    )
                errors.append(exc)
            with lock:
                report.env_seconds[binding["name"]] = round(seconds, 2)
                progress.finished(binding["name"])

    t0 = time.monotonic()
    threads = [
        threading.Thread(target=worker, args=(h,), daemon=True) for h in plan.hosts for _ in range(plan.jobs)
    ]
    try:
        with progress:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(timeout=0.2)
        report.versions = versions(plan.hosts[0], plan.image, plan.run_id)
    except KeyboardInterrupt:
        stop.set()
        for t in threads:
            t.join(timeout=15)
        raise
    finally:
        stop.set()
        report.wall_seconds = round(time.monotonic() - t0, 2)
        cleanup(plan.hosts, plan.run_id)
    order = {name: i for i, name in enumerate(b["name"] for b in plan.bindings)}
    report.rows.sort(key=lambda c: (order.get(c.env, 0), CHECKS.index(c.check) if c.check in CHECKS else 99))
    return report


def versions(host: Host, image: str, run_id: str) -> dict[str, str]:
    out = _run_once(host, image, ["python", "-m", "pufferlib.smoke", "--versions"], run_id)
    return json.loads(out.strip().splitlines()[-1])


def select(bindings: list[dict], patterns: list[str]) -> list[dict]:
    """Bindings whose name matches any glob (e.g. 'ocean/*', 'minigrid/*Empty*'); all when none given."""
    if not patterns:
        return bindings
    chosen = [b for b in bindings if any(fnmatch.fnmatch(b["name"], p) for p in patterns)]
    if not chosen:
        names = ", ".join(b["name"] for b in bindings[:8])
        raise TankError(f"no binding matches {' '.join(patterns)}; e.g. {names} (`puffer envs` lists them)")
    return chosen


# ----------------------------------------------------------------------------------------------- progress

GLYPHS = {"pass": ("✓", "green"), "fail": ("✗", "red"), "skip": ("–", "grey50")}


class Progress:
    """A live table in a terminal; one line per finished binding otherwise."""

    def __init__(self, names: list[str], quiet: bool = False) -> None:
        self.names = names
        self.quiet = quiet
        self.cells: dict[str, dict[str, Cell]] = {n: {} for n in names}
        self.state: dict[str, str] = dict.fromkeys(names, "queued")
        self.live = None
        self.done = 0

    def __enter__(self) -> Progress:
        if not self.quiet and sys.stdout.isatty():
            from rich.live import Live

            self.live = Live(self._table(), refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.update(self._table())
            self.live.__exit__(*exc)

    def started(self, name: str, host: str) -> None:
        self.state[name] = f"running on {host}"
        self._refresh()

    def update(self, cell: Cell) -> None:
        self.cells.setdefault(cell.env, {})[cell.check] = cell
        self._refresh()

    def finished(self, name: str) -> None:
        self.done += 1
        cells = self.cells.get(name, {})
        failed = [c for c in cells.values() if c.status == "fail"]
        self.state[name] = "failed" if failed else "passed"
        if self.live is None and not self.quiet:
            marks = "".join(GLYPHS[c.status][0] for c in (cells.get(k) for k in CHECKS) if c)
            total = sum(c.seconds for c in cells.values())
            print(f"[{self.done}/{len(self.names)}] {name:<45} {marks:<12} {total:6.1f}s", flush=True)
        self._refresh()

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._table())

    def _table(self):
        from rich.table import Table

        table = Table(title=f"puffertank matrix: {self.done}/{len(self.names)} bindings done", expand=False)
        table.add_column("environment", no_wrap=True)
        for check in CHECKS:
            table.add_column(check[:5], justify="center")
        table.add_column("state")
        visible = [n for n in self.names if self.state[n] != "queued"][-30:]  # fit the terminal
        for name in visible:
            row = []
            for check in CHECKS:
                cell = self.cells.get(name, {}).get(check)
                glyph, colour = GLYPHS.get(cell.status, ("?", "white")) if cell else ("·", "grey30")
                row.append(f"[{colour}]{glyph}[/]")
            table.add_row(name, *row, self.state[name])
        return table


# ---------------------------------------------------------------------------------------------------- CLI


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("matrix", help="exercise every registered binding inside the container, with reports")
    p.add_argument(
        "--variant",
        choices=["cpu", "cuda", "auto"],
        default="auto",
        help="image variant (auto: cuda where the NVIDIA runtime is configured, else cpu)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only bindings matching this glob, e.g. 'ocean/*' (repeatable)",
    )
    p.add_argument("--jobs", type=int, default=2, help="containers at once per host (default 2)")
    p.add_argument("--timeout", type=float, help="seconds per binding (default: each binding's own budget)")
    p.add_argument(
        "--report", type=Path, metavar="DIR", help="write matrix.json, junit.xml and matrix.html here"
    )
    p.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="URL",
        help="a Docker daemon (ssh://user@box, tcp://box:2375, unix://...; 'local' = this one); "
        "repeat to spread bindings over several",
    )
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        type=Path,
        metavar="FILE.py",
        help="a module that registers extra bindings, copied into each container (repeatable)",
    )
    p.add_argument("--image", help="image to test (default puffertank/lib:<variant>)")
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise TankError(f"--jobs must be >= 1, got {args.jobs}")
    for plugin in args.plugin:
        if not plugin.is_file() or plugin.suffix != ".py":
            raise TankError(f"--plugin {plugin}: not a .py file")
    hosts = [Host.connect(url) for url in (args.host or ["local"])]
    variant = args.variant
    if variant == "auto":
        variant = "cuda" if nvidia_runtime_available(hosts[0].client) else "cpu"
    image = args.image or image_name(variant)
    for host in hosts:
        require_image(host, image, variant)
    run_id = uuid.uuid4().hex[:12]
    plugins = [p.resolve() for p in args.plugin]
    bindings = select(registered_bindings(hosts[0], image, run_id, plugins), args.env)
    plan = Plan(image, variant, hosts, bindings, args.jobs, args.timeout, plugins, run_id)
    print(
        f"puffertank matrix: {len(bindings)} bindings x {len(CHECKS)} checks on {image} "
        f"({', '.join(h.url for h in hosts)}; {args.jobs} job(s) per host)",
        flush=True,
    )
    try:
        report = run_matrix(plan, Progress([b["name"] for b in bindings]))
    except KeyboardInterrupt:
        print(f"puffertank matrix: interrupted; removed the run's containers (label {LABEL}={run_id})")
        return 130
    counts = report.counts()
    print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped "
        f"in {report.wall_seconds:.0f}s"
    )
    for row in report.rows:
        if row.status == "fail":
            print(f"  FAIL {row.env} {row.check}: {row.detail.splitlines()[0] if row.detail else ''}")
    if args.report:
        paths = write_all(report, args.report)
        print("reports: " + ", ".join(str(p) for p in paths.values()))
    return 1 if report.failed else 0
