"""The machine-wide build lock is shared by every user: root provisions (and builds first), researchers build
later as themselves. Real users in the lib image (it holds pufferlib.tank): root takes the lock with a
root umask, then `puffer` and `nobody` take it after, through runuser.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker

TAKE = """
import sys
from pufferlib.tank.errors import TankError
from pufferlib.tank.locks import machine_lock
try:
    with machine_lock("build", timeout=5):
        print("held")
except TankError as exc:
    print("error:", exc.message, "| fix:", exc.fix)
    sys.exit(1)
"""
SHARED = "/tmp/shared"  # a TMPDIR every user can enter
SETUP = f"umask 022 && mkdir -m 1777 {SHARED} && export TMPDIR={SHARED}"


def as_root(lib_container, script: str, expect: int | None = 0):
    return lib_container.run_and_wait(
        ["sh", "-c", f"{SETUP} && {script}"],
        user="0:0",
        environment={"TAKE": TAKE},
        entrypoint=[],
        expect=expect,
    )


def test_a_lock_made_by_root_is_taken_by_other_users(lib_container) -> None:
    script = (
        'python -c "$TAKE" && stat -c "%a" $TMPDIR/puffertank-locks $TMPDIR/puffertank-locks/build.lock'
        ' && runuser -u puffer -- python -c "$TAKE" && runuser -u nobody -- python -c "$TAKE"'
    )
    out = as_root(lib_container, script).stdout.split()
    assert out == ["held", "1777", "666", "held", "held"], out


def test_a_lock_dir_others_cannot_write_names_the_path_and_the_fix(lib_container) -> None:
    """E.g. made by an older puffertank as root (mode 0755, lock 0644): no traceback, the path and the fix."""
    script = (
        "mkdir -m 0755 $TMPDIR/puffertank-locks && touch $TMPDIR/puffertank-locks/build.lock"
        ' && runuser -u nobody -- python -c "$TAKE"'
    )
    res = as_root(lib_container, script, expect=1)
    assert "Traceback" not in res.stderr, res.stderr
    assert f"cannot open the machine-wide lock {SHARED}/puffertank-locks/build.lock" in res.stdout, res
    assert f"sudo chmod 1777 {SHARED}/puffertank-locks" in res.stdout, res


def test_a_symlinked_lock_file_is_not_followed(lib_container) -> None:
    """The directory is world-writable: a planted symlink must not make root open (or create) its target."""
    script = (
        "mkdir -m 1777 $TMPDIR/puffertank-locks && ln -s /etc/victim $TMPDIR/puffertank-locks/build.lock"
        ' && { python -c "$TAKE"; echo "exit $?"; test -e /etc/victim && echo "victim made"; true; }'
    )
    res = as_root(lib_container, script)
    assert "cannot open the machine-wide lock" in res.stdout and "exit 1" in res.stdout, res
    assert "victim made" not in res.stdout, res
