"""One PufferLib 2.0.2 measurement, run by the peer venv's interpreter: `python -I peer202.py SPEC`.

Runs in the peer's own interpreter, isolated (-I: no PYTHONPATH, no script directory on sys.path),
so `import pufferlib` is PufferLib 2.0.2 and nothing of ours is imported except the Performance
env, loaded from the file SPEC names. SPEC is a JSON object: performance_py, env_kwargs, backend
("serial" or "multiprocessing"), num_envs, workers, batch_size, agent_steps, cap_s. Prints one
JSON line: {"sps": agent steps per second, "version": PufferLib's version}.

Timed as our own peers are (see pufferlib/bench/__init__.py), except that the warm-up is capped
too: PufferLib 2.0.2's main process and workers all busy-wait, which can crawl when oversubscribed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time


def load_performance(path: str):
    spec = importlib.util.spec_from_file_location("bench_performance", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Performance


def main(argv: list[str]) -> int:
    import numpy as np

    import pufferlib
    import pufferlib.emulation
    import pufferlib.vector

    spec = json.loads(argv[0])
    performance = load_performance(spec["performance_py"])

    def creator():
        return pufferlib.emulation.GymnasiumPufferEnv(env=performance(**spec["env_kwargs"]))

    n = spec["num_envs"]
    if spec["backend"] == "serial":
        vec = pufferlib.vector.make(creator, backend=pufferlib.vector.Serial, num_envs=n)
    else:
        vec = pufferlib.vector.make(
            creator,
            backend=pufferlib.vector.Multiprocessing,
            num_envs=n,
            num_workers=spec["workers"],
            batch_size=spec["batch_size"],
        )
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 2, size=vec.agents_per_batch).astype(np.int32) for _ in range(64)]
    calls = max(1, spec["agent_steps"] // vec.agents_per_batch)
    vec.async_reset(0)

    def step(k: int) -> None:
        vec.recv()
        vec.send(acts[k % 64])

    warmup, made = max(calls // 10, 10), calls
    start = time.perf_counter()
    for k in range(warmup):
        step(k)
        if time.perf_counter() - start > spec["cap_s"] / 4:
            break
    start = time.perf_counter()
    for k in range(calls):
        step(k)
        if k & 15 == 15 and time.perf_counter() - start > spec["cap_s"]:
            made = k + 1
            break
    seconds = time.perf_counter() - start
    vec.close()
    print(json.dumps({"sps": made * vec.agents_per_batch / seconds, "version": pufferlib.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
