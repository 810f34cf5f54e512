"""tests/gpu/run.sh, the prepared check of the CUDA path, cannot rot between GPU lends: its dry run (on the
CPU, small sizes) runs here, every step that needs no GPU passes and gpu.json says so; a step that fails or
hangs is recorded and the next one still runs; and the real run fits 8 minutes by its steps' timeouts."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _repo import REPO

RUN = REPO / "tests" / "gpu" / "run.sh"

pytestmark = pytest.mark.slow


def load_steps():
    spec = importlib.util.spec_from_file_location("gpu_steps", REPO / "tests" / "gpu" / "steps.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


STEPS = load_steps()


def run_script(out: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "OUT": str(out), "PYTHON": sys.executable}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return subprocess.run(
        ["bash", str(RUN), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    out = tmp_path_factory.mktemp("gpu-out")
    done = run_script(out, "--dry-run")
    report = json.loads((out / "gpu.json").read_text())
    return done, report, out


def test_the_dry_run_passes_every_step_that_needs_no_gpu(dry_run):
    done, report, out = dry_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["schema"] == 1 and report["dry_run"] is True and report["finished"]
    steps = {entry["name"]: entry for entry in report["steps"]}
    assert list(steps) == [step.name for step in STEPS.STEPS]  # every step, in order
    for entry in steps.values():
        assert set(entry) >= {"name", "what", "status", "seconds", "timeout", "exit_code", "result"}, entry
        step = STEPS.BY_NAME[entry["name"]]
        if step.gpu_only:
            assert entry["status"] == "skipped" and entry["reason"] == "no GPU (dry run)", entry
        elif step.dry_skip:
            assert entry["status"] == "skipped" and entry["reason"].startswith(step.dry_skip), entry
        else:
            assert entry["status"] == "passed", entry
    skipped = sum(1 for step in STEPS.STEPS if step.gpu_only or step.dry_skip)
    assert report["summary"]["counts"] == {"passed": len(STEPS.STEPS) - skipped, "skipped": skipped}
    assert "=== install: passed" in (out / "gpu.log").read_text()
    assert "[gpu] done in" in done.stdout


def test_the_dry_run_installs_our_package_into_a_target_and_uses_it(dry_run):
    _, report, _ = dry_run
    steps = {entry["name"]: entry["result"] for entry in report["steps"]}
    natives = sorted(p.parent.name for p in (REPO / "pufferlib/ocean/native").glob("*/binding.c"))
    assert steps["install"]["natives_built"] == natives  # compiled by the install's build
    site = steps["install"]["site"]
    assert steps["imports"]["pufferlib"].startswith(site)  # not this checkout's
    assert steps["imports"]["pufferlib_in_a_child"].startswith(site)  # so `python -m pufferlib.cli` too
    assert sorted(steps["native"]["compiled"]) == [f"ocean/{n}" for n in natives]
    assert all(s["status"] == "pass" for s in steps["native"]["stepped"].values()), steps["native"]


def test_the_dry_run_trains_on_the_cpu_and_reads_the_figures_a_gpu_run_reports(dry_run):
    _, report, _ = dry_run
    steps = {entry["name"]: entry["result"] for entry in report["steps"]}
    for name in ("breakout_cuda", "breakout_cpu", "breakout_cuda_bf16", "cartpole_cuda", "pixel_cuda"):
        result = steps[name]
        assert result["device"] == "cpu" and result["updates"] >= 1 and result["sps"] > 0, (name, result)
        assert result["command"].startswith(f"puffer train {STEPS.TRAIN[name][0]} --json"), result
    assert "--train.precision bf16" in steps["breakout_cuda_bf16"]["command"]
    staging = steps["breakout_cuda"]["staging"]
    assert staging["pinned"] is False and staging["staged_us_per_step"] > 0  # the CPU: no pinned copy
    ddp = steps["ddp_nccl"]
    assert ddp["world_size"] == 1 and ddp["backend"] == "gloo" and ddp["replicas_identical"] is True
    assert "rank 0 of 1" in ddp["rank_line"]


def test_a_failing_step_and_a_hanging_step_are_recorded_and_the_next_step_still_runs(tmp_path):
    args = ["--dry-run", "--only", "imports,native,cartpole_cuda", "--plant", "imports=fail"]
    done = run_script(tmp_path, *args, "--plant", "native=hang", "--limit", "native=3")
    assert done.returncode == 1, done.stdout + done.stderr  # a step failed: the script says so
    report = json.loads((tmp_path / "gpu.json").read_text())
    steps = {entry["name"]: entry for entry in report["steps"]}
    assert list(steps) == ["imports", "native", "cartpole_cuda"]
    assert steps["imports"]["status"] == "failed" and "planted failure" in steps["imports"]["reason"]
    assert steps["native"]["status"] == "timeout" and steps["native"]["timeout"] == 3
    assert steps["native"]["reason"] == "killed at its timeout of 3 s"
    assert steps["cartpole_cuda"]["status"] == "passed" and steps["cartpole_cuda"]["result"]["updates"] >= 1
    assert report["summary"]["counts"] == {"failed": 1, "timeout": 1, "passed": 1}
    assert "[gpu] imports: failed" in done.stdout and "[gpu] native: timeout" in done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--plant", "gpu=explode"], "give STEP=fail or STEP=hang"),
        (["--only", "gpu,warp"], "unknown step warp"),
        (["--limit", "egl=soon"], "give STEP=SECONDS"),
        (["--frobnicate"], "unknown argument --frobnicate"),
    ],
)
def test_bad_arguments_exit_2_naming_them(tmp_path, args, said):
    done = run_script(tmp_path, "--dry-run", *args, timeout=60)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert not (tmp_path / "gpu.json").exists()  # nothing ran


def test_the_real_run_fits_8_minutes_by_its_timeouts_and_every_step_has_its_function():
    assert sum(step.timeout for step in STEPS.STEPS) + STEPS.SHELL_SECONDS <= STEPS.BUDGET == 480
    functions = set(re.findall(r"^step_(\w+)\(\)", RUN.read_text(), re.MULTILINE))
    assert functions == set(STEPS.BY_NAME) == set(STEPS.STEP_FUNCTIONS)
    for name, (_, _, seconds, _) in STEPS.TRAIN.items():
        assert seconds < STEPS.BY_NAME[name].timeout  # the training budget inside its step's timeout


def test_the_carried_wheels_are_pinned_in_the_constraints():
    pins = STEPS.pins()
    assert all(STEPS.normal(name) in pins for name in STEPS.WHEELS)
