"""The machine-wide build lock is shared by every user: root provisions (and builds first), researchers build
later as themselves, each with a TMPDIR of their own. Real users in the lib image (it holds
pufferlib.tank): root takes the lock with a tight umask, then `puffer` and `nobody` take the same file
after, through runuser; what another user planted in the shared folder is refused with the path to remove.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker

TAKE = """
import sys
from pufferlib.tank.errors import TankError
from pufferlib.tank.locks import lock_path, machine_lock
try:
    with machine_lock("build", timeout=5):
        print("held", lock_path("build"))
except TankError as exc:
    print("error:", exc.message, "| fix:", exc.fix)
    sys.exit(1)
"""
LOCK = "/run/lock/puffertank-build.lock"  # Debian's /run/lock: root-owned, mode 1777


def as_root(lib_container, script: str, expect: int | None = 0):
    return lib_container.run_and_wait(
        ["sh", "-c", script], user="0:0", environment={"TAKE": TAKE}, entrypoint=[], expect=expect
    )


def test_one_lock_for_every_user_whatever_their_tmpdir(lib_container) -> None:
    script = (
        'umask 077 && mkdir -m 700 /tmp/root-tmp && TMPDIR=/tmp/root-tmp python -c "$TAKE"'
        f' && stat -c "%a %U" {LOCK}'
        ' && TMPDIR=/var/tmp runuser -u puffer -- python -c "$TAKE" && runuser -u nobody -- python -c "$TAKE"'
    )
    out = as_root(lib_container, script).stdout.split()
    assert out == ["held", LOCK, "644", "root", "held", LOCK, "held", LOCK], out


def test_a_lock_file_another_user_left_unreadable_names_the_path_to_remove(lib_container) -> None:
    script = (
        f'install -m 600 /dev/null {LOCK} && chown puffer {LOCK} && runuser -u nobody -- python -c "$TAKE"'
    )
    res = as_root(lib_container, script, expect=1)
    assert "Traceback" not in res.stderr, res.stderr
    assert f"cannot open the machine-wide lock {LOCK} (owner uid" in res.stdout, res
    assert f"sudo rm {LOCK}" in res.stdout, res


def test_a_planted_dangling_symlink_is_not_followed_and_names_what_to_remove(lib_container) -> None:
    """The folder is world-writable: a planted symlink must not make root open (or create) its target."""
    script = (
        f"runuser -u nobody -- ln -s /etc/victim {LOCK}"
        ' && { python -c "$TAKE"; echo "exit $?"; test -e /etc/victim && echo "victim made"; true; }'
    )
    res = as_root(lib_container, script)
    assert f"the machine-wide lock {LOCK} is a symbolic link" in res.stdout and "exit 1" in res.stdout, res
    assert f"fix: remove it when no puffertank build runs: sudo rm {LOCK}" in res.stdout, res
    assert "victim made" not in res.stdout, res
