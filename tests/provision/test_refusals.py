"""Wrong OS, no root, a driver that cannot run the image, bad options: refused with the reason and the fix."""

from __future__ import annotations

import re
import tomllib

import pytest
from _repo import REPO

pytestmark = pytest.mark.docker

FACTS = tomllib.loads((REPO / "docker" / "cuda.toml").read_text())
TORCH = re.search(r"^torch==(\S+)", (REPO / "docker" / "constraints" / "base.txt").read_text(), re.M).group(1)
IMAGE_CUDA = FACTS["pypi_torch_cuda"][TORCH]
IMAGE_FLOOR = FACTS["compat_floor"][IMAGE_CUDA.split(".")[0]].split(".")[0]


@pytest.mark.parametrize(
    ("os_release", "shown"),
    [
        ('ID=ubuntu\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n', "Ubuntu 22.04.4 LTS"),
        ('ID=debian\nVERSION_ID="11"\nPRETTY_NAME="Debian GNU/Linux 11 (bullseye)"\n', "Debian GNU/Linux 11"),
        ('ID=debian\nVERSION_ID="13"\nPRETTY_NAME="Debian GNU/Linux 13 (trixie)"\n', "Debian GNU/Linux 13"),
    ],
)
def test_other_os_is_refused(box, os_release: str, shown: str) -> None:
    fake = box.sh(f"rm -f /etc/os-release && printf '%s' '{os_release}' > /etc/os-release")
    assert fake.rc == 0, fake
    res = box.setup("--dry-run")
    assert res.rc == 1, res
    assert shown in res.out and "supports Debian 12 (bookworm) only" in res.out, res
    assert "==>" not in res.out, "a step ran on the wrong OS"


def test_real_run_needs_root(box) -> None:
    res = box.setup("--only", "base-tools", user="nobody", timeout=60)
    assert res.rc == 1, res
    assert "run as root" in res.out, res


def test_debian_driver_with_the_default_cuda_image_is_refused(box) -> None:
    res = box.setup("--dry-run", "--variant", "cuda", "--driver", "debian", timeout=60)
    assert res.rc == 1, res
    debian = FACTS["driver_branch"]["debian"]
    for text in (f"CUDA {IMAGE_CUDA}", f"driver >= {IMAGE_FLOOR}", debian, "--torch-index", "--driver cuda"):
        assert text in res.out, f"{text!r} missing from:\n{res.out}"


def test_old_cuda_repo_branch_with_the_default_cuda_image_is_refused(box) -> None:
    older = str(int(IMAGE_FLOOR) - 10)
    res = box.setup("--dry-run", "--variant", "cuda", "--driver-branch", older, timeout=60)
    assert res.rc == 1, res
    assert "driver/CUDA mismatch" in res.out and older in res.out, res


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "drivers"], "unknown step 'drivers'; steps are: base-tools nvidia-driver"),
        (["--driver", "nouveau"], "--driver must be cuda, debian or none"),
        (["--tailscale-tags", "gpu"], "'gpu' is not an ACL tag"),
        (["--tailscale-authkey-file", "/nonexistent"], "cannot read /nonexistent"),
        (["--user", "nosuchuser"], "no such user 'nosuchuser'"),
        (["--frobnicate"], "unknown option '--frobnicate'"),
    ],
)
def test_bad_options_are_named(module_box, args: list[str], message: str) -> None:
    res = module_box.setup("--dry-run", *args, timeout=60)
    assert res.rc == 1, res
    assert message in res.out, res
