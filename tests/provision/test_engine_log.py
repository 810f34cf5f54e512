"""provision/engine.sh starts dockerd as root: its log must not be a fixed name in a world-writable folder,
where another user could plant a symlink that root then writes through."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from _repo import REPO

# Stand-ins: `dockerd` logs a line and marks the engine up; `docker info` answers once it is.
FAKES = r"""
mkdir -p /fakebin
cat >/fakebin/dockerd <<'EOF'
#!/bin/sh
echo "fake dockerd started"
touch /run/fake-engine-up
EOF
cat >/fakebin/docker <<'EOF'
#!/bin/sh
[ "$1" = info ] && [ -e /run/fake-engine-up ]
EOF
chmod 755 /fakebin/dockerd /fakebin/docker
"""


def test_default_log_is_in_a_folder_only_root_writes() -> None:
    res = subprocess.run(
        ["bash", "-c", 'unset ENGINE_LOG; source provision/engine.sh; printf %s "$ENGINE_LOG"'],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    log = Path(res.stdout)
    assert log.is_absolute(), res
    folder = log.parent
    while not folder.exists():
        folder = folder.parent
    mode = folder.stat().st_mode
    assert not mode & stat.S_IWOTH, f"{log}: {folder} is world-writable ({oct(mode & 0o7777)})"
    assert folder.stat().st_uid == 0 or os.geteuid() != 0, f"{folder} is not root's"


@pytest.mark.docker
def test_a_planted_symlink_is_not_followed(box) -> None:
    """The old fixed name, planted as a symlink to a root file, stays untouched when the engine starts."""
    setup = box.sh(FAKES + "echo precious >/etc/victim && ln -s /etc/victim /tmp/puffertank-dockerd.log")
    assert setup.rc == 0, setup
    run = box.sh(
        "unset ENGINE_LOG; PATH=/fakebin:$PATH; source /src/provision/engine.sh; "
        'engine_ensure && echo "log=$ENGINE_LOG"',
        timeout=120,
    )
    assert run.rc == 0, run
    log = run.out.split("log=")[-1].split()[0]  # its own line; engine messages (stderr) may follow it
    assert box.sh("cat /etc/victim").out == "precious\n", "dockerd's log was written through the symlink"
    assert box.sh(f"cat {log}").out == "fake dockerd started\n", run
