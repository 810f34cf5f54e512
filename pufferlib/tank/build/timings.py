"""What each build took, kept on disk, and the budgets table `puffertank build --timings` shows.

Sizes come from the engine, the import time is measured now, build times come from the record. Budgets
are shown beside what was measured, never asserted.
"""

from __future__ import annotations

import datetime as dt
import json
import os

import docker  # docker.errors comes with it

from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.containers import RunSpec, run_captured
from pufferlib.tank.errors import TankError
from pufferlib.tank.names import HASH_LABEL, STAGES
from pufferlib.tank.paths import cache_dir

TIMINGS_FILE = "timings.json"
BUDGETS = {
    "lib_rebuild_s": 10.0,
    "import_s": 2.5,
    "cpu_lib_gb": 3.3,  # the whole image, with every environment family installed: envs carries them all
    "cuda_lib_gb": 8.0,
    "cold_cpu_chain_s": 480.0,  # quiet 2-core box, the packages already in BuildKit's pip cache
}


def record(run: dict) -> None:
    """Append one build (ChainResult.record()) to the file, keeping the last 200."""
    path = cache_dir() / TIMINGS_FILE
    runs = [*load(), {"when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), **run}]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(runs[-200:], indent=1))
    tmp.replace(path)


def load() -> list[dict]:
    path = cache_dir() / TIMINGS_FILE
    try:
        return json.loads(path.read_text()) if path.is_file() else []
    except (OSError, ValueError):
        return []


def measure_import(client: docker.DockerClient, image: str, repeats: int = 3) -> list[float]:
    """Wall times of `docker run --rm IMAGE python -c 'import pufferlib, torch'` (create to removal)."""
    times: list[float] = []
    for _ in range(repeats):
        spec = RunSpec(
            image,
            ["python", "-c", "import pufferlib, torch"],
            gpus="none",
            timeout=120,
            labels={"puffertank.purpose": "timings"},
        )
        result = run_captured(client, spec)
        if result.exit_code != 0:
            raise TankError(
                f"`python -c 'import pufferlib, torch'` failed in {image} (exit {result.exit_code}):\n"
                f"{result.stderr[-2000:]}",
                f"rebuild it: puffertank build --variant {image.rsplit(':', 1)[-1]}",
            )
        times.append(result.seconds)
    return times


Row = tuple[str, str, str, str]  # what, budget, measured, ok/OVER/-


def report(client: docker.DockerClient, opts: BuildOptions) -> str:
    """The budgets table: sizes from the engine, import time measured now, build times from the record."""
    lines, sizes = _image_lines(client, opts)
    runs = [r for r in load() if r.get("variant") == opts.variant]
    rows = [_lib_rebuild_row(runs)]
    if "lib" in sizes:
        rows += _lib_image_rows(client, opts, sizes["lib"])
    rows.append(_cold_chain_row(runs, opts.variant))
    width = [max(len(r[i]) for r in rows) for i in range(4)]
    lines.append("Budgets:")
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(width[i]) for i, cell in enumerate(row)).rstrip())
    load_avg = os.getloadavg()[0]
    lines.append(
        f"(build times recorded in {cache_dir() / TIMINGS_FILE}; load average now {load_avg:.1f} on "
        f"{os.cpu_count()} cores: times are noisy on a busy machine)"
    )
    return "\n".join(lines)


def _status(value: float | None, budget: float) -> str:
    return "-" if value is None else ("ok" if value <= budget else "OVER")


def _image_lines(client: docker.DockerClient, opts: BuildOptions) -> tuple[list[str], dict[str, float]]:
    """One line per stage's image (size and content hash, or 'not built') and the sizes in GB."""
    sizes: dict[str, float] = {}
    lines = [f"Images ({opts.variant}):"]
    for stage in STAGES:
        try:
            image = client.images.get(opts.tag(stage))
        except docker.errors.ImageNotFound:
            lines.append(f"  {opts.tag(stage):<28} not built")
            continue
        sizes[stage] = image.attrs["Size"] / 1e9
        lines.append(
            f"  {opts.tag(stage):<28} {sizes[stage]:6.2f} GB  {image.labels.get(HASH_LABEL, '')[:12]}"
        )
    return lines, sizes


def _lib_rebuild_row(runs: list[dict]) -> Row:
    """The last build that rebuilt lib alone (base and envs reused): what an edit to pufferlib costs."""
    incremental = [
        r
        for r in runs
        if r["stages"].get("lib", {}).get("status") == "built"
        and all(r["stages"].get(s, {}).get("status") == "reused" for s in ("base", "envs"))
    ]
    lib_s = incremental[-1]["stages"]["lib"]["seconds"] if incremental else None
    return (
        "lib rebuild after an edit",
        f"<= {BUDGETS['lib_rebuild_s']:.0f} s",
        f"{lib_s:.1f} s (last lib-only build)" if lib_s is not None else "no lib-only build recorded",
        _status(lib_s, BUDGETS["lib_rebuild_s"]),
    )


def _lib_image_rows(client: docker.DockerClient, opts: BuildOptions, lib_gb: float) -> list[Row]:
    """The import time, measured now, and the lib image's size, in all."""
    times = measure_import(client, opts.tag("lib"))
    import_s = sorted(times)[len(times) // 2]
    rows: list[Row] = [
        (
            "docker run --rm: import pufferlib, torch",
            f"<= {BUDGETS['import_s']} s",
            f"{import_s:.2f} s (median of {len(times)}, now)",
            _status(import_s, BUDGETS["import_s"]),
        )
    ]
    budget = BUDGETS["cpu_lib_gb" if opts.variant == "cpu" else "cuda_lib_gb"]
    size = (f"{opts.variant} lib image", f"<= {budget:g} GB", f"{lib_gb:.2f} GB", _status(lib_gb, budget))
    return [*rows, size]


def _cold(run: dict) -> bool:
    """A build where every stage was built and no step came from the cache."""
    stages = [run["stages"].get(s, {}) for s in STAGES]
    return all(s.get("status") == "built" and s.get("steps") and not s.get("cached") for s in stages)


def _cold_chain_row(runs: list[dict], variant: str) -> Row:
    """The last cold build of the whole chain (only the cpu chain has a budget)."""
    full = [r for r in runs if _cold(r)]
    chain_s = full[-1]["seconds"] if full else None
    return (
        f"{variant} chain from a cold cache",
        f"<= {BUDGETS['cold_cpu_chain_s'] / 60:.0f} min" if variant == "cpu" else "-",
        (
            f"{chain_s / 60:.1f} min (last, {full[-1]['when']})"
            if chain_s is not None
            else "none recorded (a build where no step came from the cache)"
        ),
        _status(chain_s, BUDGETS["cold_cpu_chain_s"]) if variant == "cpu" else "-",
    )
