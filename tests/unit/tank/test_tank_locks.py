"""The machine-wide build lock: one place whatever TMPDIR says, and only lock files puffertank made.

The lock directory is writable by every user, so what someone planted there (a dangling symlink, a FIFO,
a hard link) is refused with a message naming the path to remove, and never followed or waited on.
"""

import os
import stat
import tempfile
from pathlib import Path

import pytest

from pufferlib.tank import locks
from pufferlib.tank.errors import TankError
from pufferlib.tank.paths import LOCK_PARENTS, lock_dir


def test_the_lock_directory_does_not_follow_tmpdir(tmp_path, monkeypatch):
    machine = lock_dir()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # what TMPDIR makes it
    assert lock_dir() == machine and machine in LOCK_PARENTS


def test_the_first_root_owned_sticky_folder_is_chosen(tmp_path):
    afile, closed = tmp_path / "a-file", tmp_path / "closed"
    afile.write_text("")
    closed.mkdir(mode=0o755)
    assert lock_dir((tmp_path / "missing", afile, closed, Path("/tmp"))) == Path("/tmp")
    with pytest.raises(TankError, match=r"none of .*missing.* is a root-owned folder") as info:
        lock_dir((tmp_path / "missing", closed))
    assert info.value.fix == f"sudo install -d -m 1777 {tmp_path / 'missing'}"


def test_a_lock_file_is_made_0644_and_is_exclusive(tmp_path):
    old = os.umask(0o077)
    try:
        with locks.machine_lock("build", directory=tmp_path):
            path = locks.lock_path("build", tmp_path)
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o644  # every user can open it to lock
            busy = pytest.raises(TankError, match=r"gave up after 0 s waiting for .*puffertank-build\.lock")
            with busy, locks.machine_lock("build", timeout=0, directory=tmp_path):
                pass
        with locks.machine_lock("build", timeout=0, directory=tmp_path):
            pass  # released
    finally:
        os.umask(old)


def _refused(tmp_path: Path, what: str) -> None:
    path = locks.lock_path("build", tmp_path)
    with pytest.raises(TankError) as info, locks.machine_lock("build", timeout=0, directory=tmp_path):
        pytest.fail("took a lock file puffertank did not make")
    assert f"{path} is {what}" in info.value.message
    assert info.value.fix.startswith(f"remove it when no puffertank build runs: sudo rm {path}")


def test_a_planted_dangling_symlink_is_refused_and_not_followed(tmp_path):
    victim = tmp_path / "victim"
    locks.lock_path("build", tmp_path).symlink_to(victim)
    _refused(tmp_path, "a symbolic link")
    assert not victim.exists()


def test_a_symlink_to_a_real_file_is_refused(tmp_path):
    (tmp_path / "real").write_text("")
    locks.lock_path("build", tmp_path).symlink_to(tmp_path / "real")
    _refused(tmp_path, "a symbolic link")


def test_a_planted_fifo_is_refused_without_hanging(tmp_path):
    os.mkfifo(locks.lock_path("build", tmp_path))
    _refused(tmp_path, "not a regular file")


def test_a_hard_link_is_refused(tmp_path):
    (tmp_path / "other").write_text("")
    os.link(tmp_path / "other", locks.lock_path("build", tmp_path))
    _refused(tmp_path, "a file with 2 names (hard links)")
