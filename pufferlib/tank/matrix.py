"""`puffertank matrix`: every registered binding exercised inside the container, with reports.

The image is asked which bindings it has (`puffer envs --json`); each binding then runs
`python -m pufferlib.smoke NAME --json` in a fresh container, which prints one JSON line per check.
A binding that crashes or outlives its time budget fails its own remaining cells; the others go on.
Bindings are spread over `--jobs` containers per host and over every `--host` (Docker daemons over
ssh://, TLS tcp:// or unix://; see tank/engine.py), taken from one queue so a fast host takes more.
Every container carries the run's label and is removed at the end, on errors, on Ctrl-C, SIGTERM and
SIGHUP. When GPUs are requested (the cuda variant, or --gpus all) the containers are told so, and the
`gpu` check fails where no GPU is visible, naming the driver and CUDA it found.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import fnmatch
import json
import os
import queue
import shlex
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
import requests

import pufferlib
from pufferlib.matrix_protocol import CHECKS, GPU_REQUESTED_ENV
from pufferlib.provenance import git_revision, machine
from pufferlib.tank import variant as auto
from pufferlib.tank.containers import RunSpec, nvidia_runtime_available, run_captured, tracked
from pufferlib.tank.engine import TlsOptions, connect, get_client, require_image
from pufferlib.tank.errors import TankError, UsageError
from pufferlib.tank.names import image_ref
from pufferlib.tank.report import Cell, Report, write_all
from pufferlib.tank.signals import exit_status

LABEL = "puffertank.matrix"  # every matrix container carries LABEL=<run id>
PLUGIN_DIR = "/opt/puffertank/plugins"
TAIL_LINES = 25


@dataclass
class Host:
    """One Docker daemon the matrix runs containers on."""

    url: str  # "local" for the default engine (DOCKER_HOST or the socket)
    client: docker.DockerClient

    @classmethod
    def connect(cls, url: str | None, tls: TlsOptions | None = None, insecure: bool = False) -> Host:
        """The default engine for None/"local"; else ssh://, TLS tcp:// (plain tcp:// only if insecure)."""
        if url in (None, "", "local"):
            return cls(url="local", client=get_client())
        return cls(url=url, client=connect(url, tls, insecure=insecure))


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
    gpus: str = "auto"  # auto: GPUs requested for the cuda variant; all: always; none: never
    patterns: list[str] = field(default_factory=list)  # --env filters, for the report's provenance
    command: list[str] = field(default_factory=lambda: list(sys.argv))  # the exact command line, likewise

    @property
    def gpu_request(self) -> str:
        """Why GPUs are requested ("" when they are not): the containers' gpu check then must find one."""
        if self.gpus == "all":
            return "--gpus all"
        if self.gpus == "auto" and self.variant == "cuda":
            return "the cuda variant"
        return ""


def require_host_image(host: Host, image: str, variant: str) -> docker.models.images.Image:
    fix = f"puffertank build --variant {variant}"
    if host.url != "local":
        fix = f"DOCKER_HOST={host.url} {fix}  (or: docker save {image} | docker -H {host.url} load)"
    return require_image(host.client, image, fix, where=host.url)


def _spec(plan: Plan, host: Host, command: list[str], gpu: bool) -> RunSpec:
    """A matrix container: the run's label, the plugins copied in, and (gpu) the GPU request."""
    env = {"SDL_VIDEODRIVER": "dummy", **_plugin_env(plan.plugins)}
    gpus = "none"
    if gpu and plan.gpu_request:
        runtime = nvidia_runtime_available(host.client)
        gpus = "all" if runtime else "none"
        situation = (
            ""
            if runtime
            else f"; the Docker engine on {host.url} has no NVIDIA runtime, so none was passed in"
        )
        env[GPU_REQUESTED_ENV] = f"{plan.gpu_request} on {host.url}{situation}"
    return RunSpec(
        image=plan.image,
        command=command,
        gpus=gpus,
        labels={LABEL: plan.run_id},
        env=env,
        hostname="puffertank-matrix",
        copy_in=[(p, PLUGIN_DIR) for p in plan.plugins],
    )


def _run_once(host: Host, plan: Plan, command: list[str]) -> str:
    """Run a short command in a labelled container and return its stdout (a TankError on failure)."""
    spec = _spec(plan, host, command, gpu=False)
    spec.timeout = 120
    result = run_captured(host.client, spec, fix=f"puffertank build (on {host.url})")
    if result.exit_code != 0:
        raise TankError(
            f"`{' '.join(command)}` failed in {plan.image} on {host.url}:\n{_tail(result.stderr)}"
        )
    return result.stdout


def registered_bindings(host: Host, plan: Plan) -> list[dict]:
    """The bindings the image registers (with the plan's plugins: they register at import)."""
    return json.loads(_run_once(host, plan, ["puffer", "envs", "--json"]))


def _plugin_env(plugins: list[Path]) -> dict[str, str]:
    if not plugins:
        return {}
    return {"PYTHONPATH": PLUGIN_DIR, "PUFFERLIB_PLUGINS": ",".join(p.stem for p in plugins)}


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
    spec = _spec(plan, host, command, gpu=True)
    with tracked(host.client, spec, fix=f"puffertank build (on {host.url})") as container:
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
                on_cell(Cell(name, check, "fail", 0.0, detail, None, host.url, error=True))
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
        provenance=provenance(plan),
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
                            error=True,
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
        report.versions = versions(plan.hosts[0], plan)
    except KeyboardInterrupt:
        stop.set()
        for t in threads:
            t.join(timeout=15)
        raise
    finally:
        stop.set()
        report.wall_seconds = round(time.monotonic() - t0, 2)
        report.provenance["load_end"] = [round(x, 2) for x in os.getloadavg()]
        cleanup(plan.hosts, plan.run_id)
    order = {name: i for i, name in enumerate(b["name"] for b in plan.bindings)}
    report.rows.sort(key=lambda c: (order.get(c.env, 0), CHECKS.index(c.check) if c.check in CHECKS else 99))
    return report


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
            "filters": list(plan.patterns),
            "plugins": [p.name for p in plan.plugins],
            "timeout": plan.timeout,
            "gpus": f"{plan.gpus} ({plan.gpu_request or 'none requested'})",
        },
        "pufferlib": {"version": pufferlib.__version__, "git_revision": git_revision()},
        "machine": machine(),
        "engines": engines,
    }


def versions(host: Host, plan: Plan) -> dict[str, str]:
    out = _run_once(host, plan, ["python", "-m", "pufferlib.smoke", "--versions"])
    return json.loads(out.strip().splitlines()[-1])


def select(bindings: list[dict], patterns: list[str]) -> list[dict]:
    """Bindings whose name matches any glob (e.g. 'ocean/*', 'minigrid/*Empty*'); all when none given."""
    if not patterns:
        return bindings
    chosen = [b for b in bindings if any(fnmatch.fnmatch(b["name"], p) for p in patterns)]
    if not chosen:
        names = ", ".join(b["name"] for b in bindings[:8])
        raise TankError(
            f"no binding matches {' '.join(patterns)}; e.g. {names}",
            "`puffer envs` lists them (inside the image)",
        )
    return chosen


# ----------------------------------------------------------------------------------------------- progress

GLYPHS = {"pass": ("✓", "green"), "fail": ("✗", "red"), "skip": ("–", "grey50")}


class Progress:
    """A live table in a terminal; one line per finished binding otherwise."""

    def __init__(self, names: list[str], quiet: bool = False, stream=None) -> None:
        self.names = names
        self.quiet = quiet
        self.stream = stream or sys.stdout
        self.cells: dict[str, dict[str, Cell]] = {n: {} for n in names}
        self.state: dict[str, str] = dict.fromkeys(names, "queued")
        self.live = None
        self.done = 0

    def __enter__(self) -> Progress:
        if not self.quiet and self.stream.isatty():
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream)
            self.live = Live(self._table(), console=console, refresh_per_second=4, transient=False)
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
            line = f"[{self.done}/{len(self.names)}] {name:<45} {marks:<12} {total:6.1f}s"
            print(line, file=self.stream, flush=True)
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
        help="image variant (auto: cuda when this machine has an NVIDIA GPU, else cpu: puffertank variant)",
    )
    p.add_argument(
        "--gpus",
        choices=["auto", "all", "none"],
        default="auto",
        help="request GPUs: auto (default) for the cuda variant, all always, none never. Where GPUs are "
        "requested, a missing GPU fails the gpu check (naming the driver and CUDA found)",
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
        help="a Docker daemon: ssh://user@box (recommended), tcp://box:2376 with --tlsverify, unix://...; "
        "'local' = this one; repeat to spread bindings over several",
    )
    tls = p.add_argument_group(
        "TLS for tcp:// hosts (as the docker CLI: DOCKER_TLS_VERIFY, DOCKER_CERT_PATH)"
    )
    tls.add_argument("--tls", action="store_true", help="encrypt (without checking the daemon's certificate)")
    tls.add_argument(
        "--tlsverify",
        action="store_true",
        default=None,
        help="encrypt and check the daemon's certificate (default: on when DOCKER_TLS_VERIFY is set)",
    )
    tls.add_argument("--tlscacert", type=Path, metavar="FILE", help="CA (default DOCKER_CERT_PATH/ca.pem)")
    tls.add_argument(
        "--tlscert", type=Path, metavar="FILE", help="client cert (default DOCKER_CERT_PATH/cert.pem)"
    )
    tls.add_argument(
        "--tlskey", type=Path, metavar="FILE", help="client key (default DOCKER_CERT_PATH/key.pem)"
    )
    tls.add_argument(
        "--insecure",
        action="store_true",
        help="allow plain tcp:// (no TLS): whoever reaches the port is root there (trusted networks only)",
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
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report (matrix.json's content) on stdout; progress goes to stderr",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}", "pass --jobs 1 or more")
    for plugin in args.plugin:
        if not plugin.is_file() or plugin.suffix != ".py":
            raise UsageError(
                f"--plugin {plugin}: not a .py file", "pass a Python module that calls register()"
            )
    tls = TlsOptions.resolve(args.tls, args.tlsverify, args.tlscacert, args.tlscert, args.tlskey)
    hosts = [Host.connect(url, tls, args.insecure) for url in (args.host or ["local"])]
    variant = auto.auto_variant() if args.variant == "auto" else args.variant
    image = args.image or image_ref("lib", variant)
    for host in hosts:
        require_host_image(host, image, variant)
    plugins = [p.resolve() for p in args.plugin]
    plan = Plan(image, variant, hosts, [], args.jobs, args.timeout, plugins, gpus=args.gpus)
    plan.patterns = list(args.env)
    plan.command = ["puffertank", *getattr(args, "argv", sys.argv[1:])]
    out = sys.stderr if args.json else sys.stdout  # --json: stdout carries the report and nothing else
    try:
        plan.bindings = select(registered_bindings(hosts[0], plan), args.env)
        gpus = f"GPUs requested ({plan.gpu_request})" if plan.gpu_request else "no GPUs requested"
        print(
            f"puffertank matrix: {len(plan.bindings)} bindings x {len(CHECKS)} checks on {image} "
            f"({', '.join(h.url for h in hosts)}; {args.jobs} job(s) per host; {gpus})",
            file=out,
            flush=True,
        )
        report = run_matrix(plan, Progress([b["name"] for b in plan.bindings], stream=out))
    except KeyboardInterrupt as exc:
        cleanup(hosts, plan.run_id)
        print(
            f"puffertank matrix: interrupted; removed the run's containers (label {LABEL}={plan.run_id})",
            file=out,
        )
        return exit_status(exc)
    counts = report.counts()
    print(
        f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped "
        f"in {report.wall_seconds:.0f}s",
        file=out,
    )
    for row in report.rows:
        if row.status == "fail":
            first = row.detail.splitlines()[0] if row.detail else ""
            print(f"  FAIL {row.env} {row.check}: {first}", file=out)
    if args.report:
        paths = write_all(report, args.report)
        print("reports: " + ", ".join(str(p) for p in paths.values()), file=out)
    if args.json:
        print(json.dumps(report.to_json()), flush=True)
    return 1 if report.failed else 0
