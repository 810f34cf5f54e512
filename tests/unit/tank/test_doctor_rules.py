"""The doctor's rules: driver vs CUDA (against docker/cuda.toml), versions, host facts read from /proc and
/sys, the auto variant, exit code, output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _repo import REPO

from pufferlib.tank import cuda, doctor, hostfacts, variant
from pufferlib.tank.cli import build_parser
from pufferlib.tank.doctor import FAIL, PASS, SKIP, WARN, Check
from pufferlib.tank.errors import TankError

FACTS = cuda.facts(REPO)


@pytest.mark.parametrize(
    ("driver", "cuda", "status"),
    [
        ("580.65.06", "13.0", PASS),  # the first 580 release runs PyPI's CUDA 13 torch
        ("580.95.05", "13.0", PASS),
        ("535.309.01", "13.0", FAIL),  # Debian 12's nvidia-driver cannot run CUDA 13
        ("575.51.03", "13.0", FAIL),
        ("535.309.01", "12.2", PASS),
        ("535.309.01", "12.6", WARN),  # minor-version compatibility only
        ("560.35.03", "12.6", PASS),
        ("520.61.05", "12.6", FAIL),  # below CUDA 12's compatibility floor
        ("570.26", "12.8", PASS),
        ("590.10", "14.0", WARN),  # unknown future CUDA: say so instead of guessing
    ],
)
def test_driver_vs_cuda(driver: str, cuda: str, status: str) -> None:
    got, why = doctor.driver_vs_cuda(driver, cuda, FACTS)
    assert got == status, why
    assert driver in why and cuda in why


def test_version_tuple() -> None:
    assert cuda.version_tuple("580.65.06") == (580, 65, 6)
    assert cuda.version_tuple("20.10.24+dfsg1") == (20, 10, 24)
    with pytest.raises(ValueError, match="not a version"):
        cuda.version_tuple("unknown")


def test_torch_index_for_old_drivers() -> None:
    assert doctor.torch_index_for_driver("535.309.01", FACTS) == "https://download.pytorch.org/whl/cu126"
    assert doctor.torch_index_for_driver("470.256.02", FACTS) is None  # too old for any CUDA 12 build


def test_cuda_of_index() -> None:
    assert cuda.cuda_of_index("https://download.pytorch.org/whl/cu126") == "12.6"
    assert cuda.cuda_of_index("https://download.pytorch.org/whl/cu130/") == "13.0"
    assert cuda.cuda_of_index("https://example.invalid/simple") is None


def test_a_broken_facts_file_names_itself(tmp_path) -> None:
    broken = tmp_path / "cuda.toml"
    broken.write_text("[min_driver]\n")
    with pytest.raises(TankError, match="lacks the table") as caught:
        cuda.load(broken)
    assert str(broken) in caught.value.message and caught.value.fix


def test_loaded_driver_reads_proc_format(tmp_path) -> None:
    proc = tmp_path / "version"
    proc.write_text(
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
        "(dvs-builder@U16-I2-C04-35-2)  Tue Sep 23 09:23:50 UTC 2025\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n"
    )
    assert hostfacts.loaded_driver(proc) == "580.95.05"
    proc.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.309.01  Sat Jan  3 2026\n")
    assert hostfacts.loaded_driver(proc) == "535.309.01"
    assert hostfacts.loaded_driver(tmp_path / "missing") is None


def test_nvidia_gpus_from_sysfs(tmp_path) -> None:
    def device(addr: str, vendor: str, klass: str) -> None:
        (tmp_path / addr).mkdir()
        (tmp_path / addr / "vendor").write_text(vendor + "\n")
        (tmp_path / addr / "class").write_text(klass + "\n")

    device("0000:01:00.0", "0x10de", "0x030000")  # an NVIDIA VGA controller (a 4090)
    device("0000:01:00.1", "0x10de", "0x040300")  # its HDMI audio function: not a GPU
    device("0000:00:02.0", "0x8086", "0x030000")  # an Intel iGPU
    assert variant.nvidia_gpus(tmp_path) == ["0000:01:00.0"]
    assert variant.nvidia_gpus(tmp_path / "absent") == []
    assert variant.auto_variant(tmp_path) == "cuda"
    (tmp_path / "0000:01:00.0" / "vendor").write_text("0x1002\n")  # the same slot with an AMD card
    assert variant.auto_variant(tmp_path) == "cpu"


def test_variant_runs_without_the_package() -> None:
    """The shell side runs the rule before the host venv exists: python3 pufferlib/tank/variant.py."""
    script = REPO / "pufferlib" / "tank" / "variant.py"
    res = subprocess.run(
        [sys.executable, "-I", "-S", str(script), "--explain"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split(":")[0] == variant.auto_variant()


def test_exit_code_only_fails_count() -> None:
    warned = [Check("a", PASS, "ok"), Check("b", WARN, "meh", "do x"), Check("c", SKIP, "moot")]
    assert doctor.exit_code(warned) == 0
    assert doctor.exit_code([*warned, Check("d", FAIL, "broken", "fix it")]) == 1


def test_render_shows_fixes_and_counts() -> None:
    text = doctor.render(
        [Check("docker", FAIL, "engine not reachable", "start it"), Check("shm", PASS, "8 GiB")]
    )
    assert "FAIL  docker  engine not reachable" in text
    assert "fix: start it" in text
    assert text.endswith("1 passed, 0 warnings, 1 failed")


def test_humanize_age() -> None:
    assert doctor.humanize_age(120) == "2 min"
    assert doctor.humanize_age(5 * 3600) == "5 h"
    assert doctor.humanize_age(9 * 86400) == "9 days"


def test_doctor_subcommand_registered() -> None:
    args = build_parser().parse_args(["doctor", "--json", "--no-probe"])
    assert args.func is doctor.cmd_doctor
    assert args.json and args.no_probe


def test_json_report_shape() -> None:
    """`doctor --json` is read by provision/setup-host.sh: these fields are its contract (docs/images.md)."""
    checks = [Check("docker", PASS, "ok"), Check("shm", WARN, "small", "remount")]
    data = json.loads(json.dumps(doctor.report(checks)))
    assert set(data) == {"schema", "variant", "checks", "summary", "exit_code"}
    assert data["schema"] == doctor.JSON_SCHEMA and data["variant"] in ("cpu", "cuda")
    assert data["checks"][1] == {"name": "shm", "status": "warn", "detail": "small", "fix": "remount"}
    assert data["summary"] == {"pass": 1, "warn": 1, "fail": 0, "skip": 0} and data["exit_code"] == 0
