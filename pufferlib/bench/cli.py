"""`puffer bench`: agent steps per second of pufferlib.vector beside gymnasium's vector envs.

    puffer bench                                    # the full table (about 15 minutes on 2 cores)
    puffer bench --quick                            # one repeat of fewer workloads, to try things
    puffer bench --workloads perf-0,perf-1000 --num-envs 2 --repeats 5 --json out.json

What is timed: only step calls (send/recv or step) with random actions drawn beforehand, for a
fixed number of agent steps per workload, after a separate warm-up; a measurement still running
after 10 s stops there and reports the rate of the steps it made (only PufferLib 2.0.2 does).
Not timed: construction, reset, warm-up, close. No policy, no learning: this is simulation
throughput, not training SPS.
Every repeat builds every vector env anew, and peers are interleaved within a repeat so that a
change of machine load hits them alike. Reported: the median over repeats, the spread
((max - min) / 2 as a percentage of the median) and every sample in the JSON.

Peers, on the same envs in the same run:
- ours: Serial, Multiprocessing synchronous (batch = every env) and asynchronous (EnvPool:
  batch_size = num_envs / 2, so half the workers step while the other half's batch is used);
  our envs are the registry bindings (GymnasiumPufferEnv around the gymnasium env);
- gymnasium's SyncVectorEnv and AsyncVectorEnv (shared memory, one process per env) on the raw
  gymnasium env (with the same observation wrapper our binding uses, so observations match);
- PufferLib 2.0.2's Multiprocessing (sync and async) when a venv with it exists (default
  /tmp/puffer202, --puffer202 PATH): it runs in a subprocess with that venv's python on the
  Performance env only (its pins clash with nle and our gymnasium), reported beside ours.

Workloads: the Performance env (`pufferlib.ocean.Performance`) at 0, 10, 100 and 1000 us mean
CPU work per step, with std 0 and 50 % of the mean; MiniGrid DoorKey-8x8; NetHackScore.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

PEERS = ("serial", "mp", "mp-async", "gym-sync", "gym-async", "pl202-mp", "pl202-mp-async")
PEER_TITLES = {
    "serial": "Serial",
    "mp": "MP sync",
    "mp-async": "MP async",
    "gym-sync": "gym Sync",
    "gym-async": "gym Async",
    "pl202-mp": "PL 2.0.2 MP sync",
    "pl202-mp-async": "PL 2.0.2 MP async",
}
PUFFER202 = "/tmp/puffer202/bin/python"


# ------------------------------------------------------------------------------------------ workloads


def _raw_performance(delay_mean: float, delay_std: float):
    from pufferlib.ocean import Performance

    return Performance(delay_mean=delay_mean, delay_std=delay_std)


def _raw_minigrid(name: str):
    import gymnasium
    import minigrid  # noqa: F401  (registers the ids)

    try:  # the same observation as our binding: image, direction and the mission as bytes
        from pufferlib.environments.minigrid import MISSION_LENGTH, MissionBytes

        return MissionBytes(gymnasium.make(name), MISSION_LENGTH)
    except ImportError:
        from minigrid.wrappers import ImgObsWrapper

        return ImgObsWrapper(gymnasium.make(name))


def _raw_nethack(name: str):
    import gymnasium
    import nle  # noqa: F401

    try:
        from pufferlib.environments.nethack import OBSERVATION_KEYS
    except ImportError:
        OBSERVATION_KEYS = ("glyphs", "blstats", "message")
    return gymnasium.make(name, observation_keys=tuple(OBSERVATION_KEYS), render_mode="ansi")


def _ours_from_raw(raw_creator, buf=None, seed=0):
    from pufferlib.emulation import GymnasiumPufferEnv

    return GymnasiumPufferEnv(env=raw_creator(), buf=buf, seed=seed)


def _ours(binding: str, raw_creator):
    """The registry binding when there is one, else the raw env wrapped by GymnasiumPufferEnv."""
    import pufferlib.environments as environments

    try:
        return environments.get(binding).env_creator()
    except LookupError:
        return functools.partial(_ours_from_raw, raw_creator)


@dataclass
class Workload:
    name: str
    description: str
    agent_steps: int  # timed agent steps per measurement, the same for every peer
    raw: Any  # a picklable creator of the raw gymnasium env
    binding: str
    requires: tuple[str, ...] = ()
    performance: dict | None = None  # Performance kwargs, for the PufferLib 2.0.2 peer
    ours: Any = field(default=None, repr=False)

    def creator(self):
        if self.ours is None:
            self.ours = _ours(self.binding, self.raw)
        return self.ours


def workloads() -> list[Workload]:
    out = []
    for mean, steps in ((0, 20_000), (10, 20_000), (100, 5_000), (1000, 1_000)):
        for rel in (0.0, 0.5) if mean else (0.0,):
            kw = {"delay_mean": float(mean), "delay_std": mean * rel}
            name = f"perf-{mean}" + ("-std50" if rel else "")
            desc = f"Performance {mean} us" + (f" +- {int(rel * 100)}%" if rel else "")
            raw = functools.partial(_raw_performance, **kw)
            ours = functools.partial(_perf_binding, **kw)
            out.append(Workload(name, desc, steps, raw, "ocean/performance", performance=kw, ours=ours))
    out.append(
        Workload(
            "minigrid",
            "MiniGrid DoorKey-8x8",
            5_000,
            functools.partial(_raw_minigrid, "MiniGrid-DoorKey-8x8-v0"),
            "minigrid/MiniGrid-DoorKey-8x8-v0",
            requires=("minigrid",),
        )
    )
    out.append(
        Workload(
            "nethack",
            "NetHackScore",
            2_000,
            functools.partial(_raw_nethack, "NetHackScore-v0"),
            "nethack/NetHackScore-v0",
            requires=("nle",),
        )
    )
    return out


def _perf_binding(buf=None, seed=0, **kwargs):
    from pufferlib.environments import ocean

    return ocean.make_env("performance", buf=buf, seed=seed, **kwargs)


# ------------------------------------------------------------------------------------------ runners


CAP_S = 10.0  # a measurement stops here and reports the steps it made (PufferLib 2.0.2 can crawl)


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


def run_ours(peer: str, work: Workload, num_envs: int, workers: int) -> float:
    import pufferlib.vector as pv

    kwargs: dict[str, Any] = {}
    backend = pv.Serial
    if peer != "serial":
        backend = pv.Multiprocessing
        kwargs = {"num_workers": workers}
        if peer == "mp-async":
            kwargs["batch_size"] = num_envs // 2
    vecenv = pv.make(work.creator(), backend=backend, num_envs=num_envs, seed=0, **kwargs)
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


def run_gymnasium(peer: str, work: Workload, num_envs: int, workers: int) -> float:
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


PEER202_SCRIPT = r"""
import importlib.util, json, sys, time
import numpy as np
spec = json.loads(sys.argv[1])
loader = importlib.util.spec_from_file_location("bench_performance", spec["performance_py"])
perf = importlib.util.module_from_spec(loader)
loader.loader.exec_module(perf)
import pufferlib, pufferlib.emulation, pufferlib.vector

def creator():
    return pufferlib.emulation.GymnasiumPufferEnv(env=perf.Performance(**spec["env_kwargs"]))

if __name__ == "__main__":
    n, batch = spec["num_envs"], spec["batch_size"]
    vec = pufferlib.vector.make(creator, backend=pufferlib.vector.Multiprocessing, num_envs=n,
                                num_workers=spec["workers"], batch_size=batch)
    rng = np.random.default_rng(0)
    acts = [rng.integers(0, 2, size=vec.agents_per_batch).astype(np.int32) for _ in range(64)]
    calls = max(1, spec["agent_steps"] // vec.agents_per_batch)
    vec.async_reset(0)
    def step(k):
        vec.recv()
        vec.send(acts[k % 64])
    warmup, made = max(calls // 10, 10), calls
    start = time.perf_counter()
    for k in range(warmup):  # warm-up, capped too: the main and the workers all busy-wait
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
"""


def run_puffer202(peer: str, work: Workload, num_envs: int, workers: int, python: str) -> float:
    if work.performance is None:
        raise Skip("PufferLib 2.0.2 runs the Performance env only (its pins clash with nle)")
    if not os.path.exists(python):
        raise Skip(f"no PufferLib 2.0.2 venv at {python} (see docs/vector.md to make one)")
    import pufferlib.ocean.performance as performance

    spec = {
        "performance_py": performance.__file__,
        "env_kwargs": work.performance,
        "num_envs": num_envs,
        "workers": workers,
        "batch_size": num_envs // 2 if peer.endswith("async") else num_envs,
        "agent_steps": work.agent_steps,
        "cap_s": CAP_S,
    }
    with tempfile.TemporaryDirectory() as tmp:  # run outside our tree so `import pufferlib` is 2.0.2
        script = os.path.join(tmp, "peer202.py")
        with open(script, "w") as f:
            f.write(PEER202_SCRIPT)
        out = subprocess.run(
            [python, script, json.dumps(spec)], cwd=tmp, capture_output=True, text=True, timeout=300
        )
    if out.returncode:
        raise RuntimeError(f"PufferLib 2.0.2 peer failed: {out.stderr.strip().splitlines()[-1:]}")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["sps"])


class Skip(Exception):
    """This peer does not apply to this workload here; the message says why."""


def measure(peer: str, work: Workload, num_envs: int, workers: int, puffer202: str) -> float:
    if peer.startswith("gym"):
        return run_gymnasium(peer, work, num_envs, workers)
    if peer.startswith("pl202"):
        return run_puffer202(peer, work, num_envs, workers, puffer202)
    return run_ours(peer, work, num_envs, workers)


# ------------------------------------------------------------------------------------------ machine


def machine(python202: str) -> dict[str, Any]:
    import gymnasium

    import pufferlib
    from pufferlib.vector import physical_cores

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    versions["gymnasium"] = gymnasium.__version__
    versions["pufferlib"] = pufferlib.__version__
    for mod in ("minigrid", "nle"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            versions[mod] = "absent"
    if os.path.exists(python202):
        out = subprocess.run(
            [
                python202,
                "-c",
                "import pufferlib, gymnasium; print(pufferlib.__version__, gymnasium.__version__)",
            ],
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
        )
        got = out.stdout.split()
        versions["PufferLib peer"] = (
            f"{got[0]} (gymnasium {got[1]})" if len(got) == 2 else out.stderr.strip()[-200:]
        )
    method = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    return {
        "cpu": cpu,
        "physical_cores": physical_cores(),
        "logical_cpus": os.cpu_count(),
        "os": platform.platform(),
        "start_method": method,
        "versions": versions,
        "load_average_start": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


# ------------------------------------------------------------------------------------------ report


def _fmt(values: list[float]) -> str:
    if not values:
        return "-"
    med = statistics.median(values)
    spread = (max(values) - min(values)) / 2 / med * 100 if med else 0.0
    text = f"{med:,.0f}" if med < 1e4 else f"{med / 1e3:.1f}k" if med < 1e6 else f"{med / 1e6:.2f}M"
    return f"{text} ±{spread:.0f}%"


def table(results: list[dict], peers: list[str]) -> str:
    keys = []
    for r in results:
        key = (r["workload"], r["description"], r["num_envs"])
        if key not in keys:
            keys.append(key)
    head = ["workload", "envs", *[PEER_TITLES[p] for p in peers]]
    ratio = "gym-async" in peers and ("mp" in peers or "mp-async" in peers)
    if ratio:
        head.append("best MP / gym Async")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, desc, n in keys:
        cells = [desc, str(n)]
        med = {}
        for p in peers:
            rs = [r for r in results if (r["workload"], r["num_envs"], r["peer"]) == (name, n, p)]
            sps = [r["sps"] for r in rs if r.get("sps")]
            skip = next((r.get("skip") or r.get("error") for r in rs if not r.get("sps")), None)
            cells.append(_fmt(sps) if sps else ("n/a" if skip else "-"))
            if sps:
                med[p] = statistics.median(sps)
        if ratio:
            best = max(med.get("mp", 0), med.get("mp-async", 0))
            cells.append(f"{best / med['gym-async']:.2f}x" if med.get("gym-async") and best else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(info: dict[str, Any], text: str) -> str:
    v = info["versions"]
    load = lambda key: ", ".join(f"{x:.2f}" for x in info.get(key, ()))  # noqa: E731
    return (
        f"Command: `{info['command']}` ({info['date']})\n\n"
        f"Machine: {info['cpu']}, {info['physical_cores']} physical cores / {info['logical_cpus']} logical "
        f"CPUs, {info['os']}; start method `{info['start_method']}`; {info['workers']} workers.\n"
        f"Load average (1, 5, 15 min) at start {load('load_average_start')}, at end "
        f"{load('load_average_end')}.\n"
        f"Versions: {', '.join(f'{k} {x}' for k, x in v.items())}.\n\n"
        "Agent steps per second, median of the repeats ± half their range.\n\n"
        f"{text}\n"
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="vector env throughput beside gymnasium (and PufferLib 2.0.2)")
    p.add_argument(
        "--workloads", help="comma-separated (default all): " + ", ".join(w.name for w in workloads())
    )
    p.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of: {', '.join(PEERS)}")
    p.add_argument("--num-envs", default="2,8", help="comma-separated env counts (default 2,8)")
    p.add_argument(
        "--workers", type=int, default=None, help="Multiprocessing workers (default: physical cores)"
    )
    p.add_argument("--repeats", type=int, default=3, help="independent repeats (default 3)")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every workload's timed agent steps")
    p.add_argument("--quick", action="store_true", help="1 repeat, perf-0/perf-1000 only, 1/4 of the steps")
    p.add_argument("--puffer202", default=PUFFER202, help=f"python of a PufferLib 2.0.2 venv ({PUFFER202})")
    p.add_argument("--json", help="write machine, samples and table to this JSON file")
    p.add_argument("--markdown", help="write the table (with the machine) to this Markdown file")
    p.add_argument("--from-json", help="only render the table of an earlier --json file (with --markdown)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pufferlib.vector import physical_cores

    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        peers = [p for p in PEERS if any(r["peer"] == p for r in saved["results"])]
        text = markdown(saved["machine"], table(saved["results"], peers))
        print(text)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(text)
        return 0

    all_work = {w.name: w for w in workloads()}
    names = args.workloads.split(",") if args.workloads else list(all_work)
    if args.quick:
        names = args.workloads.split(",") if args.workloads else ["perf-0", "perf-1000"]
        args.repeats, args.scale = 1, args.scale / 4
    unknown = [n for n in names if n not in all_work]
    peers = args.peers.split(",")
    unknown += [p for p in peers if p not in PEERS]
    if unknown:
        raise SystemExit(f"puffer bench: unknown {', '.join(unknown)}; see --help for the choices")
    workers = args.workers or physical_cores()
    counts = [int(n) for n in args.num_envs.split(",")]
    bad = [n for n in counts if n % workers or (n // 2) % (n // workers)]
    if bad:
        raise SystemExit(f"puffer bench: num_envs {bad} must split into {workers} workers and 2 batches")
    chosen = []
    for n in names:
        w = all_work[n]
        missing = [m for m in w.requires if not _importable(m)]
        if missing:
            print(f"skipping {n}: {', '.join(missing)} not installed", file=sys.stderr)
            continue
        w.agent_steps = max(1, int(w.agent_steps * args.scale))
        chosen.append(w)
    info = machine(args.puffer202)
    info["command"] = "puffer bench " + " ".join(sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:])
    info["workers"] = workers
    print(json.dumps(info, indent=1))
    results = []
    for rep in range(args.repeats):
        for w in chosen:
            for n in counts:
                for p in peers:
                    row = {
                        "repeat": rep,
                        "workload": w.name,
                        "description": w.description,
                        "num_envs": n,
                        "peer": p,
                    }
                    try:
                        row["sps"] = measure(p, w, n, workers, args.puffer202)
                    except Skip as e:
                        row["skip"] = str(e)
                    except Exception as e:
                        row["error"] = f"{type(e).__name__}: {e}"
                    results.append(row)
                    shown = (
                        f"{row['sps']:,.0f} agent steps/s"
                        if "sps" in row
                        else row.get("skip") or row["error"]
                    )
                    print(f"[{rep + 1}/{args.repeats}] {w.name:<14} envs={n:<2} {p:<15} {shown}", flush=True)
    info["load_average_end"] = os.getloadavg()
    text = table(results, peers)
    print()
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": info, "results": results, "table": text}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(info, text))
    return 0


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
