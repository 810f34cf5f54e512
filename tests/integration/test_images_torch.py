"""The cpu variant's torch: the pinned version, CPU build, shared memory sized for its multiprocessing, and
no C++ toolchain (so no torch headers): --train.compile says so."""

from __future__ import annotations

import json
import re

import pytest
from _repo import REPO

pytestmark = pytest.mark.docker


def pinned_torch() -> str:
    text = (REPO / "docker/constraints/base.txt").read_text()
    return re.search(r"^torch==(\S+)", text, re.M).group(1)


def test_torch_is_the_pinned_cpu_build(lib_container):
    out = lib_container.run_and_wait(
        ["python", "-c", "import json, torch; print(json.dumps([torch.__version__, torch.version.cuda]))"]
    ).stdout
    assert json.loads(out) == [f"{pinned_torch()}+cpu", None]


# spawn (not fork: a forked child of a process with torch's thread pool can hang) needs a script file.
SHARE = """
import torch, torch.multiprocessing as mp
def fill(t): t.fill_(7)
if __name__ == "__main__":
    t = torch.zeros(48 * 2**20).share_memory_()   # 192 MB in /dev/shm: three times Docker's default 64 MB
    p = mp.get_context("spawn").Process(target=fill, args=(t,)); p.start(); p.join()
    print(p.exitcode, float(t[-1]))
"""


def test_shared_memory_fits_torch_multiprocessing(docker_client, lib_image):
    """With the /dev/shm size `puffertank run` gives by default, a 192 MB shared tensor works."""
    from pufferlib.tank.containers import SHM_SIZE, RunSpec, run_captured

    spec = RunSpec(
        lib_image,
        ["sh", "-c", 'printf "%s" "$SHARE" > /tmp/share.py && python /tmp/share.py'],
        gpus="none",
        timeout=120,
        env={"SHARE": SHARE},
    )
    result = run_captured(docker_client, spec)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["0", "7.0"], (SHM_SIZE, result.stderr)


def test_dockers_default_shm_is_too_small_for_that(docker_client, lib_image):
    """The control: the same script fails with Docker's 64 MB default, so the check above means something."""
    from pufferlib.tank.containers import RunSpec, run_captured

    spec = RunSpec(
        lib_image,
        ["sh", "-c", 'printf "%s" "$SHARE" > /tmp/share.py && python /tmp/share.py'],
        gpus="none",
        timeout=120,
        shm_size="64m",
        env={"SHARE": SHARE},
    )
    result = run_captured(docker_client, spec)
    assert result.exit_code != 0, result.stdout
    assert "No space left on device" in result.stderr, result.stderr


def test_compile_in_the_cpu_image_names_the_missing_headers(lib_container):
    """The cpu image ships a C++ compiler (the lib layer's build-essential) but not torch's headers
    (docker/install-torch.sh): a user who asks for torch.compile gets what is missing and the way out,
    not inductor's traceback, and is not told to install a compiler the image has."""
    res = lib_container.run_and_wait(
        ["puffer", "train", "ocean/bandit", "--train.compile", "true", "--train.run-dir", ""], expect=None
    )
    assert res.exit_code == 2, res
    out = res.stdout + res.stderr
    assert "train.compile on the CPU needs torch's C++ headers (torch/include)" in out, res
    assert "C++ compiler" not in out and "Traceback" not in out, res
