"""What emulation costs per step: the 0 us Performance env raw, through GymnasiumPufferEnv, in Serial.

    python -m pufferlib.bench.emulation                  # microseconds, median of 7 repeats
    python -m pufferlib.bench.emulation --instructions   # also CPU instructions (valgrind, ~3 min)

Three measurements of the same env (pufferlib.ocean.Performance, 0 us of work, Discrete(2) actions):
`raw` calls the gymnasium env's step(); `step()` calls GymnasiumPufferEnv.step() with a one-row
action array (its checks, the writes into its buffers, episode statistics); `Serial` is recv() +
send() of an 8-env Serial vector env, per agent step (the batch's action check, handing each env
its action, the env step and writes). Emulation's cost is each minus `raw`. Times are the median
over repeats of the mean over `--calls` calls; instruction counts (callgrind, the difference of
two runs of different lengths) are the same on a busy machine as on a quiet one.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

CASES = ("raw", "step()", "Serial")
SERIAL_ENVS = 8


def stepper(case: str, bandwidth: int) -> tuple[Callable[[int], None], int]:
    """A function doing one call of `case`, and the agent steps one call makes."""
    from pufferlib.emulation import GymnasiumPufferEnv
    from pufferlib.ocean import Performance

    if case == "raw":
        raw = Performance(bandwidth=bandwidth)
        raw.reset(seed=0)

        def step(k: int) -> None:
            if raw.step(k & 1)[3]:
                raw.reset()

        return step, 1
    if case == "step()":
        env = GymnasiumPufferEnv(env=Performance(bandwidth=bandwidth), seed=0)
        env.reset()
        actions = [np.array([0], np.int32), np.array([1], np.int32)]

        def step(k: int) -> None:
            if env.done:
                env.reset()
            else:
                env.step(actions[k & 1])

        return step, 1
    import functools

    import pufferlib.vector
    from pufferlib.environments import ocean

    creator = functools.partial(ocean.make_env, "performance", bandwidth=bandwidth)
    vecenv = pufferlib.vector.make(creator, backend="serial", num_envs=SERIAL_ENVS, seed=0)
    rng = np.random.default_rng(0)
    batches = [rng.integers(0, 2, size=SERIAL_ENVS) for _ in range(64)]
    vecenv.async_reset()

    def step(k: int) -> None:
        vecenv.recv()
        vecenv.send(batches[k & 63])

    return step, SERIAL_ENVS


def microseconds(case: str, bandwidth: int, calls: int, repeats: int) -> list[float]:
    step, agents = stepper(case, bandwidth)
    for k in range(calls // 10):
        step(k)
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        for k in range(calls):
            step(k)
        out.append((time.perf_counter() - start) / (calls * agents) * 1e6)
    return out


def instructions(case: str, bandwidth: int, calls: int) -> float:
    """CPU instructions per agent step: callgrind's total of two runs that differ only in length."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    totals = []
    for n in (calls // 5, calls):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [valgrind, "--tool=callgrind", f"--callgrind-out-file={tmp}/out", sys.executable]
            cmd += ["-m", "pufferlib.bench.emulation", "--only", case, "--calls", str(n)]
            cmd += ["--bandwidth", str(bandwidth), "--run-once"]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        line = next(x for x in out.stderr.splitlines() if "Collected :" in x)
        totals.append(int(line.rsplit(":", 1)[1]))
    agents = SERIAL_ENVS if case == "Serial" else 1
    return (totals[1] - totals[0]) / ((calls - calls // 5) * agents)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pufferlib.bench.emulation", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--calls", type=int, default=20_000, help="calls per repeat (default 20000)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--bandwidth", type=int, default=1, help="observation floats (default 1, as puffer bench)"
    )
    parser.add_argument("--instructions", action="store_true", help="also count instructions with valgrind")
    parser.add_argument("--only", choices=CASES, help=argparse.SUPPRESS)
    parser.add_argument("--run-once", action="store_true", help=argparse.SUPPRESS)  # under valgrind
    args = parser.parse_args(argv)
    if args.run_once:
        step, _ = stepper(args.only, args.bandwidth)
        for k in range(args.calls):
            step(k)
        return 0
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load}; Performance env, 0 us, bandwidth {args.bandwidth}")
    times = {
        case: statistics.median(microseconds(case, args.bandwidth, args.calls, args.repeats))
        for case in CASES
    }
    counts = {case: instructions(case, args.bandwidth, 20_000) for case in CASES} if args.instructions else {}
    print(
        "| per agent step | us (median) | emulation's cost, us |"
        + (" instructions | emulation's |" if counts else "")
    )
    print("|---|---:|---:|" + ("---:|---:|" if counts else ""))
    for case in CASES:
        row = f"| {case} | {times[case]:.3f} | {times[case] - times['raw']:.3f} |"
        if counts:
            row += f" {counts[case]:,.0f} | {counts[case] - counts['raw']:,.0f} |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
