"""Two nodes as two containers of the lib image on a Docker network made for the test: `puffer train
--nnodes 2` rendezvous at node 0 by its container name (as two boxes do by MagicDNS name over
Tailscale). Together they solve ocean/squared and each log says its rank; a node killed mid-run makes
the other stop within a bounded time with an error naming the lost rank, and no container is left."""

from __future__ import annotations

import json
import time
import uuid

import pytest

pytestmark = pytest.mark.docker

TRAIN = ["puffer", "train", "ocean/squared", "--json", "--nproc-per-node", "1", "--nnodes", "2"]
FOREVER = ["--train.stop-when-solved", "false", "--train.total-timesteps", "100000000"]


def start_nodes(lib_container, network: str, extra: list[str]) -> list:
    """Node 0 and node 1, each one rank, meeting at node 0's container name."""
    tag = uuid.uuid4().hex[:8]
    master = f"node0-{tag}"
    nodes = []
    for rank in (0, 1):
        name = f"node{rank}-{tag}"
        argv = [*TRAIN, "--node-rank", str(rank), "--master-addr", master, "--master-port", "29500"]
        nodes.append(
            lib_container.run_detached(
                [*argv, "--train.dist-timeout", "60", *extra],
                name=name,
                hostname=name,
                network=network,
                shm_size="256m",
                environment={"PYTHONUNBUFFERED": "1"},
            )
        )
    return nodes


def logs(container) -> tuple[str, str]:
    return (
        container.logs(stdout=True, stderr=False).decode(errors="replace"),
        container.logs(stdout=False, stderr=True).decode(errors="replace"),
    )


def wait(container, timeout: float) -> int:
    return int(container.wait(timeout=timeout)["StatusCode"])


def test_two_containers_solve_and_each_logs_its_rank(lib_container, network):
    node0, node1 = start_nodes(lib_container, network, ["--train.run-dir", "/tmp/checkpoints/{time}-{id}"])
    codes = [wait(node0, 600), wait(node1, 120)]
    (out0, err0), (out1, err1) = logs(node0), logs(node1)
    assert codes == [0, 0], f"node 0:\n{err0}\nnode 1:\n{err1}"
    assert "rank 0 of 2" in err0 and f"host {node0.name}" in err0
    assert "rank 1 of 2" in err1 and f"host {node1.name}" in err1
    assert out1 == "", "rank 0 alone prints the summary"
    summary = json.loads(out0.strip().splitlines()[-1])
    assert summary["solved"] and summary["world_size"] == 2 and summary["replicas_identical"], summary


def test_a_killed_node_stops_the_other_with_the_rank_named(lib_container, network, docker_client):
    extra = [*FOREVER, "--train.run-dir", "/tmp/checkpoints/{time}-{id}", "--train.checkpoint-interval", "1"]
    node0, node1 = start_nodes(lib_container, network, extra)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # training runs once node 0 has saved a checkpoint
        if node0.exec_run(["sh", "-c", "ls /tmp/checkpoints/*/model_*.pt"]).exit_code == 0:
            break
        node0.reload()
        assert node0.status == "running", logs(node0)
        time.sleep(1)
    else:
        pytest.fail(f"node 0 saved no checkpoint within 300 s: {logs(node0)}")
    node1.kill()
    killed = time.monotonic()
    code = wait(node0, 120)  # dist_timeout is 60 s; a dead peer is seen at once
    stopped_after = time.monotonic() - killed
    _, err0 = logs(node0)
    assert code != 0, err0
    assert "rank 1 stopped" in err0 and "rank 0 stops too" in err0, err0
    assert "saved /tmp/checkpoints/" in err0, err0
    assert stopped_after < 60, f"node 0 took {stopped_after:.0f} s to stop"
    lib_container.remove_all()
    left = docker_client.containers.list(all=True, filters={"network": network})
    assert left == [], f"containers left on the test network: {[c.name for c in left]}"
