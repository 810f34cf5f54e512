"""Run a command with no network at all but loopback: a fresh network namespace (`unshare --net`) whose
loopback is brought up before the command starts. What "works offline" means, proven rather than assumed:
nothing outside the machine is reachable from inside (test_train_tracking_offline.py checks that too)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from _strict import skip_or_fail

# Bring `lo` up (SIOCSIFFLAGS with IFF_UP | IFF_RUNNING), then become the command.
_LOOPBACK_UP_THEN_EXEC = (
    "import fcntl, os, socket, struct, sys\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "fcntl.ioctl(s, 0x8914, struct.pack('16sh22x', b'lo', 0x1 | 0x40))\n"
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)


def offline(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """subprocess.run(cmd) inside a new network namespace (loopback only). Skips (fails under
    PUFFERTANK_STRICT) where namespaces cannot be made: util-linux missing, or no privilege."""
    if shutil.which("unshare") is None:
        skip_or_fail("unshare (util-linux) is not installed: cannot cut the network off")
    probe = subprocess.run(["unshare", "--net", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        skip_or_fail(f"cannot make a network namespace here (root needed): {probe.stderr.strip()}")
    wrapped = ["unshare", "--net", sys.executable, "-c", _LOOPBACK_UP_THEN_EXEC, *cmd]
    return subprocess.run(wrapped, capture_output=True, text=True, **kwargs)
