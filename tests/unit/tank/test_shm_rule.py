"""One /dev/shm rule for every container PufferTank starts: `puffertank run`/`shell`/`matrix` and the dev
container give the container a /dev/shm of its own of containers.SHM_SIZE (not the host's IPC namespace,
and not Docker's 64 MB, which breaks torch multiprocessing); `--ipc-host` is the opt-in for run and shell.
"""

import json
import re

from _repo import REPO

from pufferlib.tank.cli import build_parser
from pufferlib.tank.containers import SHM_SIZE, RunSpec

DEVCONTAINER = REPO / ".devcontainer" / "devcontainer.json"


def devcontainer_run_args() -> list[str]:
    """devcontainer.json's runArgs (the file is JSON with // comment lines)."""
    text = re.sub(r"^\s*//.*$", "", DEVCONTAINER.read_text(), flags=re.M)
    return json.loads(text)["runArgs"]


def test_the_dev_container_gets_the_same_shm_size_and_not_the_hosts_ipc():
    args = devcontainer_run_args()
    assert f"--shm-size={SHM_SIZE}" in args, args
    assert not [a for a in args if a.startswith("--ipc")], args


def test_puffertank_run_gets_it_by_default_and_ipc_host_on_request():
    kwargs = RunSpec("img", ["true"], gpus="none").create_kwargs(None)
    assert kwargs["shm_size"] == SHM_SIZE and "ipc_mode" not in kwargs
    shared = RunSpec("img", ["true"], gpus="none", ipc_host=True).create_kwargs(None)
    assert shared["ipc_mode"] == "host" and "shm_size" not in shared


def test_the_help_names_the_default():
    commands = build_parser()._subparsers._group_actions[0].choices
    for name in ("run", "shell"):
        assert f"(default {SHM_SIZE})" in " ".join(commands[name].format_help().split()), name
