"""BuildKit builds through a docker *CLI*: the Docker SDK's build API drives only the legacy builder, which
rejects `RUN --mount` (our secrets and caches). The client is found at run time: `docker buildx` where
installed, otherwise a client older than 23.0 with DOCKER_BUILDKIT=1 (PUFFERTANK_DOCKER_CLI picks one)."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pufferlib.tank.errors import TankError

Log = Callable[[str], None]


@dataclass(frozen=True)
class BuildCli:
    """How to invoke a BuildKit build: `argv_prefix + [build args...]` with `env` added to os.environ."""

    path: str
    argv_prefix: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    kind: str  # "buildx" or "docker-buildkit"
    version: str

    def describe(self) -> str:
        return f"{' '.join(self.argv_prefix)} ({self.kind}, client {self.version})"


def candidate_clis() -> list[str]:
    """Every docker executable worth trying, the user's choice first, then PATH order, then known spots."""
    found: list[str] = []
    override = os.environ.get("PUFFERTANK_DOCKER_CLI")
    if override:
        found.append(override)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / "docker"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            found.append(str(candidate))
    for extra in ("/usr/bin/docker", "/usr/local/bin/docker", "/bin/docker"):
        if Path(extra).is_file():
            found.append(extra)
    unique: list[str] = []
    seen: set[str] = set()
    for path in found:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def _run_quiet(argv: list[str], timeout: float = 20) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def client_version(path: str) -> str | None:
    res = _run_quiet([path, "version", "--format", "{{.Client.Version}}"])
    if res is None or not res.stdout.strip():
        return None
    return res.stdout.strip().splitlines()[0]


def _major(version: str) -> int:
    match = re.match(r"(\d+)", version)
    return int(match.group(1)) if match else 0


def probe_cli(path: str) -> BuildCli | None:
    """A BuildCli for this executable if it can run BuildKit builds, else None.

    `docker buildx` (real hosts) is preferred. Without buildx, clients before 23.0 still run BuildKit
    through DOCKER_BUILDKIT=1; from 23.0 on that path needs buildx, so such a client is rejected.
    """
    res = _run_quiet([path, "buildx", "version"])
    version = client_version(path)
    if res is not None and res.returncode == 0:
        return BuildCli(path, (path, "buildx", "build"), (), "buildx", version or "?")
    if version and _major(version) < 23:
        return BuildCli(path, (path, "build"), (("DOCKER_BUILDKIT", "1"),), "docker-buildkit", version)
    return None


@functools.cache
def find_build_cli() -> BuildCli:
    """The first BuildKit-capable docker client, or a TankError listing what was tried and the fix."""
    tried: list[str] = []
    for path in candidate_clis():
        cli = probe_cli(path)
        if cli is not None:
            return cli
        tried.append(f"{path} (client {client_version(path) or 'unknown'}, no buildx)")
    if not tried and not shutil.which("docker"):
        tried.append("no docker executable on PATH")
    raise TankError(
        "no BuildKit-capable docker client found (tried: " + "; ".join(tried) + ")",
        "install the buildx plugin (apt-get install docker-buildx, or docker-buildx-plugin from Docker's "
        "repository), or point PUFFERTANK_DOCKER_CLI at a docker client older than 23.0 (e.g. Debian's "
        "docker.io 20.10)",
    )


_STEP_RE = re.compile(r"^#(\d+) \[([^\]]+)\] (.*)$")
_DONE_RE = re.compile(r"^#(\d+) (DONE [\d.]+s|CACHED)$")
_ERROR_RE = re.compile(r"^#(\d+) ERROR: (.*)$")
_OUTPUT_RE = re.compile(r"^#(\d+) [\d.]+ (.*\S.*)$")  # a step's own output: "#12 31.05 Collecting numpy"

# A step that runs longer than this says so, with its latest output line, every this many seconds: a cold
# envs stage's pip step takes many minutes and BuildKit's plain output may go quiet for long stretches.
HEARTBEAT_S = 15.0


class BuildFailed(TankError):
    pass


def one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def run_buildkit(
    cli: BuildCli,
    args: list[str],
    *,
    stage: str,
    timeout: float,
    verbose: bool,
    log: Log,
    log_file: Path,
    heartbeat: float = HEARTBEAT_S,
) -> tuple[int, int]:
    """Run one build, printing one line per step (and, every `heartbeat` seconds, each step still running
    with its elapsed time and latest output line); on failure raise naming the stage, step and log tail.

    Returns (RUN/COPY steps, how many of them came from the cache): a build with none cached is cold.
    """
    env = {**os.environ, **dict(cli.env)}
    argv = [*cli.argv_prefix, "--progress=plain", *args]
    log_file.parent.mkdir(parents=True, exist_ok=True)
    progress = _Progress(stage, verbose, log)
    timed_out = threading.Event()
    with open(log_file, "w") as record:
        record.write(" ".join(argv) + "\n")
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
            start_new_session=True,
        )
        beat = _Heartbeat(progress, heartbeat)
        beat.start()
        try:
            rc = _follow(proc, record, progress, timeout, timed_out)
        finally:
            beat.stop()
    if timed_out.is_set():
        raise BuildFailed(
            f"stage {stage}: the build did not finish within {timeout:.0f} s and was stopped. "
            f"Full log: {log_file}",
            "--timeout to allow longer",
        )
    if rc != 0:
        raise progress.failure(log_file)
    return progress.counts()


@dataclass
class _Progress:
    """What BuildKit's plain progress output said so far: its steps, which finished (and whether from the
    cache), its errors, and the last lines for a failure message."""

    stage: str
    verbose: bool
    log: Log
    steps: dict[str, str] = field(default_factory=dict)  # step id -> "[stage n/m] INSTRUCTION"
    done: dict[str, bool] = field(default_factory=dict)  # step id -> came from the cache
    failed: list[tuple[str, str]] = field(default_factory=list)  # (step id, reason)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=4000))
    started: dict[str, float] = field(default_factory=dict)  # step id -> time.monotonic() of its first line
    latest: dict[str, str] = field(default_factory=dict)  # step id -> its latest output line
    lock: threading.Lock = field(default_factory=threading.Lock)  # feed (reader) vs still_running (heartbeat)

    def feed(self, line: str) -> None:
        """One line of output: remembered, shown in full (verbose) or as one line per finished step."""
        with self.lock:
            self._feed(line)

    def _feed(self, line: str) -> None:
        self.tail.append(line)
        if self.verbose:
            self.log(f"  {self.stage} | {line}")
        if m := _STEP_RE.match(line):
            if not m.group(2).startswith("internal") and m.group(1) not in self.steps:
                self.steps[m.group(1)] = f"[{m.group(2)}] {m.group(3)}"
                self.started[m.group(1)] = time.monotonic()
        elif (m := _OUTPUT_RE.match(line)) and m.group(1) in self.steps:
            self.latest[m.group(1)] = m.group(2)
        elif (m := _DONE_RE.match(line)) and m.group(1) in self.steps:
            self.done[m.group(1)] = m.group(2) == "CACHED"
            if not self.verbose:
                took = "cached" if self.done[m.group(1)] else m.group(2)[5:]
                self.log(f"  {self.stage:<4} {one_line(self.steps[m.group(1)], 90)}  {took}")
        elif m := _ERROR_RE.match(line):
            self.failed.append((m.group(1), m.group(2)))

    def still_running(self, older_than: float) -> list[str]:
        """One line per step running for more than `older_than` seconds: elapsed time, latest output."""
        now = time.monotonic()
        with self.lock:
            lines = []
            for step_id, begun in self.started.items():
                if step_id in self.done or step_id in dict(self.failed) or now - begun < older_than:
                    continue
                minutes, seconds = divmod(int(now - begun), 60)
                latest = self.latest.get(step_id, "(no output yet)")
                lines.append(
                    f"  {self.stage:<4} {one_line(self.steps[step_id], 60)}  running {minutes}m{seconds:02d}s"
                    f"  | {one_line(latest, 70)}"
                )
            return lines

    def failure(self, log_file: Path) -> BuildFailed:
        """The error for a failed build: the step that failed, BuildKit's reason, that step's last lines."""
        step_id, reason = self.failed[-1] if self.failed else ("", "")
        step = self.steps.get(step_id, "(before any step: reading the Dockerfile or the context)")
        own = [ln for ln in self.tail if step_id and ln.startswith(f"#{step_id} ")]
        shown = (own or list(self.tail))[-30:]
        return BuildFailed(
            f"stage {self.stage} failed at step {one_line(step, 160)}\n"
            + (f"  reason: {reason}\n" if reason else "")
            + "--- last log lines ---\n"
            + "\n".join(shown)
            + f"\n--- full log: {log_file}"
        )

    def counts(self) -> tuple[int, int]:
        """(RUN/COPY/ADD steps that finished, how many of them came from the cache)."""
        work = [
            i
            for i, text in self.steps.items()
            if re.match(r"\[[^\]]*\] (RUN|COPY|ADD)\b", text) and i in self.done
        ]
        return len(work), sum(self.done[i] for i in work)


class _Heartbeat:
    """Every `interval` seconds, the steps of `progress` still running (TTY or not: a pipe to a log or a
    CI console needs it as much as a terminal). Shown in verbose mode too: a quiet step prints nothing."""

    def __init__(self, progress: _Progress, interval: float) -> None:
        self.progress, self.interval = progress, interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="build-heartbeat", daemon=True)

    def start(self) -> None:
        if self.interval > 0:
            self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join()

    def _run(self) -> None:
        while not self.stopped.wait(self.interval):
            for line in self.progress.still_running(self.interval):
                self.progress.log(line)


def _follow(
    proc: subprocess.Popen, record, progress: _Progress, timeout: float, timed_out: threading.Event
) -> int:
    """Feed the client's output to the record and `progress` until it exits (its exit code). After `timeout`
    seconds, or on Ctrl-C, SIGTERM or SIGHUP, the client is stopped (BuildKit then cancels the build)."""

    def on_timeout() -> None:
        timed_out.set()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)

    timer = threading.Timer(timeout, on_timeout)
    timer.start()
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            record.write(raw)
            progress.feed(raw.rstrip("\n"))
        return proc.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        proc.wait()
        raise
    finally:
        timer.cancel()
