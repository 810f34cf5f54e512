"""The peers `puffer bench` times, each in every configuration it is given, and how one is measured.

- ours: `serial`; `mp` (Multiprocessing, synchronous: a batch is every env) and `mp-async`
  (EnvPool: batch_size = num_envs / 2, so half the workers step while the other half's batch is
  used), each with 1 worker and with as many as physical cores;
- gymnasium's `gym-sync` (SyncVectorEnv) and `gym-async` (AsyncVectorEnv: one process per env);
- PufferLib 2.0.2's `pl202-serial`, `pl202-mp` and `pl202-mp-async`, configured as ours, run by
  its own interpreter (peer202.py) only when one is given.

Every configuration is measured in every repeat; the report shows each peer's best.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from pufferlib.bench.workloads import Workload

PEERS = ("serial", "mp", "mp-async", "gym-sync", "gym-async", "pl202-serial", "pl202-mp", "pl202-mp-async")
PEER_TITLES = {
    "serial": "Serial",
    "mp": "MP sync",
    "mp-async": "MP async",
    "gym-sync": "gym Sync",
    "gym-async": "gym Async",
    "pl202-serial": "PL 2.0.2 Serial",
    "pl202-mp": "PL 2.0.2 MP sync",
    "pl202-mp-async": "PL 2.0.2 MP async",
    "native": "ours (native)",  # `puffer bench --pufferlib3` (pufferlib3.py), not in PEERS
    "pl3": "PufferLib 3.0",
    "catalog": "its env on our engine",  # `puffer bench --pufferlib3 --catalog`: pufferlib3/<name>
}
PEER_SCRIPT = Path(__file__).with_name("peer202.py")  # run by path, never imported here
CAP_S = 10.0  # a measurement stops here and reports the steps it made (PufferLib 2.0.2 can crawl)


class Skip(Exception):
    """This peer does not apply to this workload here; the message says why."""


class Setup(NamedTuple):
    """One configuration of a peer: worker processes (None: not a choice) and envs per batch."""

    workers: int | None
    batch_size: int

    def label(self, num_envs: int) -> str:
        if self.workers is None:
            return ""
        return f"{self.workers}w" + (" async" if self.batch_size < num_envs else "")


def setups(peer: str, num_envs: int, worker_counts: list[int]) -> list[Setup]:
    """The configurations `peer` is tried in: for Multiprocessing every worker count that splits
    num_envs (and, async, that makes num_envs / 2 a whole number of workers)."""
    if peer not in ("mp", "mp-async", "pl202-mp", "pl202-mp-async"):
        return [Setup(None, num_envs)]
    batch = num_envs // 2 if peer.endswith("async") else num_envs
    return [
        Setup(w, batch)
        for w in worker_counts
        if w <= num_envs and num_envs % w == 0 and batch > 0 and batch % (num_envs // w) == 0
    ]


def _timed(step, calls: int, warmup: int, cap_s: float) -> tuple[int, float]:
    """(calls made, seconds): `calls` after `warmup`, unless cap_s runs out first."""
    for k in range(warmup):
        step(k)
    start = time.perf_counter()
    limit = start + cap_s
    for k in range(calls):
        step(k)
        if k & 15 == 15 and time.perf_counter() > limit:
            return k + 1, time.perf_counter() - start
    return calls, time.perf_counter() - start


def _actions(space, rows: int, n: int = 64) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    if hasattr(space, "nvec"):
        return [rng.integers(0, space.nvec, size=(rows, *space.nvec.shape)) for _ in range(n)]
    if hasattr(space, "n"):
        return [rng.integers(0, space.n, size=rows) for _ in range(n)]
    return [rng.uniform(-1, 1, size=(rows, *space.shape)).astype(space.dtype) for _ in range(n)]


def run_ours(peer: str, work: Workload, num_envs: int, setup: Setup) -> float:
    import pufferlib.vector as pv

    if peer == "serial":
        vecenv = pv.make(work.creator(), backend=pv.Serial, num_envs=num_envs, seed=0)
    else:
        vecenv = pv.make(
            work.creator(),
            backend=pv.Multiprocessing,
            num_envs=num_envs,
            seed=0,
            num_workers=setup.workers,
            batch_size=setup.batch_size,
        )
    try:
        acts = _actions(vecenv.single_action_space, vecenv.agents_per_batch)
        calls = max(1, work.agent_steps // vecenv.agents_per_batch)
        vecenv.async_reset()
        recv, send = vecenv.recv, vecenv.send

        def step(k: int) -> None:
            recv()
            send(acts[k % 64])

        made, seconds = _timed(step, calls, max(calls // 10, 10), CAP_S)
        return made * vecenv.agents_per_batch / seconds
    finally:
        vecenv.close()


def run_gymnasium(peer: str, work: Workload, num_envs: int, setup: Setup) -> float:
    import gymnasium

    cls = gymnasium.vector.SyncVectorEnv if peer == "gym-sync" else gymnasium.vector.AsyncVectorEnv
    envs = cls([work.raw] * num_envs)
    try:
        envs.reset(seed=0)
        acts = _actions(envs.single_action_space, num_envs)
        calls = max(1, work.agent_steps // num_envs)

        def step(k: int) -> None:
            envs.step(acts[k % 64])

        made, seconds = _timed(step, calls, max(calls // 10, 10), CAP_S)
        return made * num_envs / seconds
    finally:
        envs.close()


def run_puffer202(peer: str, work: Workload, num_envs: int, setup: Setup, python: Path | None) -> float:
    if python is None:
        raise Skip("PufferLib 2.0.2 runs only when asked: --puffer202 (the cache dir's peer venv) or PATH")
    if work.performance is None:
        raise Skip("PufferLib 2.0.2 runs the Performance env only (its pins clash with nle)")
    import pufferlib.ocean.performance as performance

    spec = {
        "performance_py": performance.__file__,
        "env_kwargs": work.performance,
        "backend": "serial" if peer == "pl202-serial" else "multiprocessing",
        "num_envs": num_envs,
        "workers": setup.workers,
        "batch_size": setup.batch_size,
        "agent_steps": work.agent_steps,
        "cap_s": CAP_S,
    }
    with tempfile.TemporaryDirectory() as tmp:  # -I and a neutral cwd: `import pufferlib` is 2.0.2
        out = subprocess.run(
            [str(python), "-I", str(PEER_SCRIPT), json.dumps(spec)],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=300,
        )
    if out.returncode:
        last = out.stderr.strip().splitlines()[-1:] or [f"exit code {out.returncode}"]
        raise RuntimeError(f"PufferLib 2.0.2 peer failed: {last[0]}")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["sps"])


def measure(peer: str, work: Workload, num_envs: int, setup: Setup, puffer202: Path | None) -> float:
    if peer.startswith("gym"):
        return run_gymnasium(peer, work, num_envs, setup)
    if peer.startswith("pl202"):
        return run_puffer202(peer, work, num_envs, setup, puffer202)
    return run_ours(peer, work, num_envs, setup)


def peer_versions(python: Path) -> str:
    """'2.0.2 (gymnasium 1.2.0)' as the peer interpreter reports it, or its error."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [
                str(python),
                "-I",
                "-c",
                "import pufferlib, gymnasium; print(pufferlib.__version__, gymnasium.__version__)",
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
            timeout=120,
        )
    got = out.stdout.split()
    return f"{got[-2]} (gymnasium {got[-1]})" if len(got) >= 2 else out.stderr.strip()[-200:]
