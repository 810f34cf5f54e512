"""docker/install-lab.sh's install_ffmpeg, run for real (bash, pip, zipfile) against a local wheel instead of
PyPI: the pinned hash admits the wheel and its binary lands in the venv's bin; a wheel that does not match
the pin, a missing pin and an ffmpeg without H.264 are each refused with a message saying what to do."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

from _repo import REPO

SCRIPT = REPO / "docker" / "install-lab.sh"
LIB = REPO / "docker" / "constraints" / "lib.txt"
WHEEL = "imageio_ffmpeg-0.6.0-py3-none-manylinux2014_x86_64.whl"


def make_wheel(folder: Path, encoders: str) -> str:
    """A real wheel of imageio-ffmpeg 0.6.0 whose ffmpeg is a script listing `encoders`; its sha256."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / WHEEL
    info = "imageio_ffmpeg-0.6.0.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("imageio_ffmpeg/__init__.py", "")
        ffmpeg = zipfile.ZipInfo("imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-v7.0.2")
        ffmpeg.external_attr = 0o755 << 16
        wheel.writestr(ffmpeg, f"#!/bin/sh\necho ' V..... {encoders}'\n")
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: imageio-ffmpeg\nVersion: 0.6.0\n")
        wheel.writestr(
            f"{info}/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
            "Tag: py3-none-manylinux2014_x86_64\n",
        )
        wheel.writestr(f"{info}/RECORD", "")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def install_ffmpeg(tmp_path: Path, pin: str | None, wheels: Path) -> subprocess.CompletedProcess:
    constraints = tmp_path / "constraints"
    constraints.mkdir(exist_ok=True)
    text = "# lib layer pins\n" + (f"# ffmpeg-wheel: {pin}\n" if pin else "")
    (constraints / "lib.txt").write_text(text)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "VIRTUAL_ENV": str(venv),
        "PIP_NO_INDEX": "1",  # the local wheel only: no network
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    script = f'source "{SCRIPT}"; CONSTRAINTS="{constraints}"; install_ffmpeg'
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=120)


def test_the_pinned_wheel_puts_its_ffmpeg_in_the_venv(tmp_path):
    digest = make_wheel(tmp_path / "wheels", "libx264 H.264")
    done = install_ffmpeg(tmp_path, f"imageio-ffmpeg==0.6.0 --hash=sha256:{digest}", tmp_path / "wheels")
    assert done.returncode == 0, done.stderr
    ffmpeg = tmp_path / "venv" / "bin" / "ffmpeg"
    assert oct(ffmpeg.stat().st_mode & 0o777) == "0o755"
    assert "libx264" in subprocess.run([ffmpeg], capture_output=True, text=True).stdout


def test_a_wheel_that_does_not_match_the_pin_is_refused(tmp_path):
    make_wheel(tmp_path / "wheels", "libx264 H.264")  # not the wheel lib.txt's hash names
    done = install_ffmpeg(tmp_path, pinned(), tmp_path / "wheels")
    assert done.returncode != 0 and "DO NOT MATCH THE HASHES" in done.stderr.upper(), done.stderr
    assert not (tmp_path / "venv" / "bin" / "ffmpeg").exists()


def test_a_missing_pin_says_what_to_restore(tmp_path):
    done = install_ffmpeg(tmp_path, None, tmp_path)
    assert (
        done.returncode == 1 and "no '# ffmpeg-wheel:' line" in done.stderr and "--hash=sha256" in done.stderr
    )


def test_an_ffmpeg_without_h264_is_refused(tmp_path):
    digest = make_wheel(tmp_path / "wheels", "gif GIF")
    done = install_ffmpeg(tmp_path, f"imageio-ffmpeg==0.6.0 --hash=sha256:{digest}", tmp_path / "wheels")
    assert done.returncode == 1 and "no libx264 encoder" in done.stderr, done.stderr


def pinned() -> str:
    """lib.txt's pin: one version and one sha256 (the form pip's --require-hashes takes)."""
    [line] = [x for x in LIB.read_text().splitlines() if x.startswith("# ffmpeg-wheel: ")]
    pin = line.removeprefix("# ffmpeg-wheel: ")
    assert re.fullmatch(r"imageio-ffmpeg==[\d.]+ --hash=sha256:[0-9a-f]{64}", pin), pin
    return pin


def test_the_pin_is_one_version_and_one_hash():
    assert pinned().startswith("imageio-ffmpeg==")
