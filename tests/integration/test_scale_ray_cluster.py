"""`puffer sweep --address auto` on a Ray cluster of two containers of the lib image, joined over a
Docker network made for the test the way two boxes join over Tailscale (`ray start --head` on one,
`ray start --address HEAD:6379` on the other, token authentication from a file): the trials land
on both nodes (each trial's result names its node)."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

RAY_ENV = {
    "RAY_AUTH_MODE": "token",
    "RAY_AUTH_TOKEN_PATH": "/secrets/ray-token",
    "RAY_USAGE_STATS_ENABLED": "0",
}
RAY_NODE = ["--num-cpus", "1", "--object-store-memory", "100000000", "--disable-usage-stats", "--block"]


@pytest.fixture
def token_dir(tmp_path: Path) -> Iterator[Path]:
    """The cluster's token as a file both nodes mount (never in argv, env or logs); removed after."""
    folder = tmp_path / "secrets"
    folder.mkdir()
    token = folder / "ray-token"
    token.write_text(secrets.token_hex(32))
    token.chmod(0o644)  # read by the image's user; a throwaway token for a throwaway cluster
    folder.chmod(0o755)
    yield folder
    token.unlink()


def test_the_sweep_stack_imports_in_the_image(lib_container):
    """Ray Tune imports what it needs at import time (pyarrow, pandas, fsspec, pydantic)."""
    script = "import ray.tune, optuna, matplotlib, pufferlib.train.scale.sweep; print('ok')"
    result = lib_container.run_and_wait(["python", "-c", script], timeout=300)
    assert result.stdout.strip() == "ok", str(result)


def test_a_sweep_on_a_two_node_cluster_runs_trials_on_both(lib_container, network, token_dir):
    tag = uuid.uuid4().hex[:8]
    head_name, worker_name = f"ray-head-{tag}", f"ray-worker-{tag}"
    common = {
        "network": network,
        "shm_size": "512m",
        "environment": RAY_ENV,
        "volumes": {str(token_dir): {"bind": "/secrets", "mode": "ro"}},
    }
    head = lib_container.run_detached(
        ["ray", "start", "--head", "--port", "6379", *RAY_NODE], name=head_name, hostname=head_name, **common
    )
    worker = lib_container.run_detached(
        ["ray", "start", "--address", f"{head_name}:6379", *RAY_NODE],
        name=worker_name,
        hostname=worker_name,
        **common,
    )
    wait_for_nodes(head, 2, timeout=240)

    sweep = ["puffer", "sweep", "ocean/squared", "--address", "auto", "--trials", "2", "--json"]
    sweep += ["--param", "train.learning_rate=log:1e-3:1e-2", "--cpus-per-trial", "1", "--out", "/tmp/sweep"]
    # Squared solves in ~6k steps (a second): trials that stop there end before Tune places the next,
    # so both would run one after the other on one node. A fixed budget makes them overlap: 200k steps
    # (~10 s), since 60k ended before Tune placed the second trial on a loaded box (a CI run, 2026-12-06).
    sweep += ["--train.stop_when_solved", "false", "--train.total_timesteps", "200000"]
    code, output = head.exec_run(sweep, environment=RAY_ENV, demux=True)
    stdout, stderr = ((part or b"").decode(errors="replace") for part in output)
    assert code == 0, f"{stderr[-4000:]}\nworker:\n{worker.logs().decode(errors='replace')[-2000:]}"
    report = json.loads(stdout.strip().splitlines()[-1])
    nodes = {row["node"] for row in report["rows"]}
    assert nodes == {head_name, worker_name}, report["rows"]  # 1 CPU per node, 1 per trial: one on each
    assert {row["status"] for row in report["rows"]} <= {"finished", "stopped"}, report["rows"]  # ASHA
    assert report["best"]["status"] == "finished", report["best"]  # its whole budget, its summary read
    assert report["best"]["steps"] >= 200000 and report["best"]["solved"], report["best"]


def wait_for_nodes(head, count: int, timeout: float) -> None:
    """Until the head's cluster has `count` live nodes."""
    deadline = time.monotonic() + timeout
    probe = "import ray; ray.init(address='auto', logging_level='ERROR')\n"
    probe += "print(len([node for node in ray.nodes() if node['Alive']]))"
    last = ""
    while time.monotonic() < deadline:
        head.reload()
        assert head.status == "running", head.logs().decode(errors="replace")[-3000:]
        code, out = head.exec_run(["python", "-c", probe], environment=RAY_ENV)
        last = out.decode(errors="replace")
        if code == 0 and last.strip().splitlines()[-1:] == [str(count)]:
            return
        time.sleep(2)
    pytest.fail(f"the cluster did not reach {count} nodes within {timeout} s: {last[-2000:]}")
