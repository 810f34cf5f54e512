"""The testing ladder (docs/native.md; the reference's contract rules) run on built envs we did not write.

    python -m pufferlib.ocean.contracts.audit ROOT [NAME ...]     prints {name: {"rung": ..., "finding": ...}}

Rungs, each on a fresh env (2 instances, the .ini's [env] kwargs). A finding on a blocking rung makes the env
unavailable (all of them are recorded, the first reported); the others are notes, kept beside the env:
- seeding (blocking): the same seed and actions give identical traces (a note, not a block, when another
  seed gives the same trace too: a game with no randomness ignores its seed);
- masks (blocking): the env leaves the agents' masks set (3.0 and 4.0 envs have no variable population);
- lifecycle (blocking): 1,000 create/close cycles (fewer for slow envs: 8 s at most, 20 at least) with
  malloc's heap in use flat (< 8 MB: glibc's mallinfo2, which sees a leak that RSS hides while malloc
  serves it from memory freed by the rungs before) and the RSS flat (< 32 MB: a leak outside malloc);
- asan (blocking): the binding rebuilt with AddressSanitizer and UBSan, reset and stepped with random and
  boundary actions (each branch's 0 and n-1; Box +-1 and 0) in a child process; its report's first line;
- outputs (a note), in that same child, built without our engine's clearing (PT_NO_CLEAR): rewards
  poisoned with NaN and terminals with 0xFF before every step, observations before the reset. Our engine
  zeroes rewards and terminals before each step, so an env that writes them only on events is safe here;
  the note records that it relies on it.
An invalid action (outside the action space) never reaches a 3.0 or 4.0 env here: load.make checks it.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from pufferlib.ocean.contracts import Manifest, load, probe

STEPS = 128


def _env(folder: Path, seed: int = 0, num_envs: int = 2):
    m = Manifest.read(folder)
    return load.make(
        m.name, root=folder.parent, num_envs=num_envs, seed=seed, **probe.game_kwargs(folder, m.name)
    )


def boundary_actions(space, rows: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random actions, then every row at each branch's lowest and highest (Box: -1, 0, +1)."""
    sizes = probe.act_sizes(space)
    if sizes:
        nvec = np.array(sizes)
        random = [rng.integers(0, nvec, size=(rows, len(sizes))) for _ in range(STEPS)]
        edges = [np.zeros((rows, len(sizes)), np.int64), np.tile(nvec - 1, (rows, 1))]
        acts = random + edges * 8
        return [a.reshape(rows) if space.shape == () else a for a in acts]
    shape = (rows, *space.shape)
    random = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(STEPS)]
    return random + [np.full(shape, v, np.float32) for v in (-1.0, 0.0, 1.0)] * 8


def outputs(folder: Path) -> str | None:
    env = _env(folder)
    env.observations.view(np.uint8)[...] = 0xA5
    env.reset(seed=0)
    if (env.observations.view(np.uint8) == 0xA5).all(axis=tuple(range(1, env.observations.ndim))).any():
        env.close()
        return "reset left an agent's observation row unwritten"
    rng = np.random.default_rng(0)
    for step, actions in enumerate(boundary_actions(env.single_action_space, env.num_agents, rng)):
        env.rewards[:] = np.nan
        env.terminals.view(np.uint8)[:] = 0xFF
        env.step(actions)
        if np.isnan(env.rewards).any():
            env.close()
            return f"step {step + 1} left rewards[{int(np.flatnonzero(np.isnan(env.rewards))[0])}] unwritten"
        if (env.terminals.view(np.uint8) > 1).any():
            env.close()
            row = int(np.flatnonzero(env.terminals.view(np.uint8) > 1)[0])
            return f"step {step + 1} left terminals[{row}] unwritten"
    env.close()
    return None


def trace(folder: Path, seed: int) -> list[np.ndarray]:
    env = _env(folder, seed=seed)
    env.reset(seed=seed)
    rng = np.random.default_rng(1)
    out = [env.observations.copy()]
    for actions in boundary_actions(env.single_action_space, env.num_agents, rng)[:64]:
        env.step(actions)
        out += [env.observations.copy(), env.rewards.copy(), env.terminals.copy()]
    env.close()
    return out


def seeding(folder: Path, notes: list[str]) -> str | None:
    a, b, c = trace(folder, 1), trace(folder, 1), trace(folder, 2)
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if not np.array_equal(x, y, equal_nan=True):
            return f"two runs with seed 1 and the same actions differ at trace item {i} (step {(i + 2) // 3})"
    if all(np.array_equal(x, z, equal_nan=True) for x, z in zip(a, c, strict=True)):
        notes.append(
            "seeding: seeds 1 and 2 give identical traces (the game has no randomness, or ignores its seed)"
        )
    return None


def masks(folder: Path, notes: list[str]) -> str | None:
    env = _env(folder)
    env.reset(seed=0)
    for actions in boundary_actions(env.single_action_space, env.num_agents, np.random.default_rng(2))[:32]:
        env.step(actions)
    ok = bool(env.masks.all())
    env.close()
    return None if ok else "the env cleared an agent's mask, which no 3.0/4.0 env declares"


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


_MALLINFO2 = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2.split()]


def _heap_mb() -> float:
    """MB malloc has handed out and not had back (arena blocks in use and mmapped blocks); 0 off glibc."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):
        return 0.0
    libc.mallinfo2.restype = _Mallinfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20


def lifecycle(folder: Path, notes: list[str], cycles: int = 1000, seconds: float = 8.0) -> str | None:
    env = _env(folder, num_envs=1)  # warm: the first make loads the module and its shared state
    env.close()
    gc.collect()
    start, rss, heap, done = time.monotonic(), _rss_mb(), _heap_mb(), 0
    while done < cycles and (done < 20 or time.monotonic() - start < seconds):
        env = _env(folder, num_envs=1)
        env.reset(seed=done)
        env.close()
        done += 1
    gc.collect()
    heap, rss = _heap_mb() - heap, _rss_mb() - rss
    if heap > 8:
        per = heap * 1024 / done
        return f"the heap grew {heap:.0f} MB over {done} create/close cycles ({per:.0f} KB a cycle)"
    return f"RSS grew {rss:.0f} MB over {done} create/close cycles" if rss > 32 else None


def asan(folder: Path, notes: list[str]) -> str | None:
    """Rebuild the binding with ASan+UBSan beside a copy of the folder and step it in a child process."""
    from pufferlib.ocean.contracts import build

    m = Manifest.read(folder)
    runtime = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True
    ).stdout.strip()
    if not runtime or not Path(runtime).exists():
        return None if shutil.which("gcc") is None else "no libasan.so beside gcc (install libasan8)"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / m.name
        shutil.copytree(folder, copy)
        stage = Path(tmp) / "stage"
        (stage / m.name).mkdir(parents=True)
        for rel in m.sha256:
            (stage / m.name / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(copy / "src" / rel, stage / m.name / rel)
        for header in build.HEADERS.get(m.contract, []):
            shutil.copy2(header, stage / header.name)
        sanitize = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1"
        sanitize += " -DPT_NO_CLEAR"  # the env's own writes, for the outputs note
        env = {**os.environ, "PUFFER_NATIVE_CFLAGS": sanitize}
        raylib = folder.parent / "raylib-5.5_linux_amd64"  # where the catalog keeps the sdist's raylib
        if raylib.is_dir():
            env.setdefault("PUFFER_RAYLIB", str(raylib))
        cmd = [
            sys.executable,
            "-c",
            "import sys; from pufferlib.ocean.contracts import audit; audit._compile(*sys.argv[1:])",
        ]
        done = subprocess.run(
            [*cmd, str(stage), m.name, m.contract, str(copy)], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            return "the sanitizer build failed: " + (done.stderr.strip().splitlines() or ["?"])[-1]
        run_env = {
            **os.environ,
            "LD_PRELOAD": runtime,
            "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
            "UBSAN_OPTIONS": "print_stacktrace=1",
        }
        code = "import sys; from pufferlib.ocean.contracts import audit; audit._fuzz(sys.argv[1])"
        done = subprocess.run(
            [sys.executable, "-c", code, str(copy)], env=run_env, capture_output=True, text=True, timeout=300
        )
        if done.returncode != 0:
            report = [line for line in done.stderr.splitlines() if "ERROR" in line or "runtime error" in line]
            first = (report or done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"])[0]
            return re.sub(r"\S*/stage/", "", first).strip()[:300]  # the path relative to the env's folder
        written = json.loads((done.stdout.strip().splitlines() or ["null"])[0])
        if written:
            notes.append(f"outputs: {written} (our engine zeroes rewards and terminals before every step)")
    return None


def _compile(stage: str, name: str, contract: str, out: str) -> None:
    """(child) compile stage/<name> with the flags in PUFFER_NATIVE_CFLAGS into out/."""
    from pufferlib.ocean.contracts import build

    build.compile_module(Path(stage), name, contract, Path(out))


def _fuzz(folder: str) -> None:
    """(child, under ASan, built without our clearing) the outputs rung, printed as JSON; then reset and step
    with random and boundary actions; a sanitizer report kills the process."""
    print(json.dumps(outputs(Path(folder))), flush=True)
    env = _env(Path(folder))
    env.reset(seed=0)
    for actions in boundary_actions(env.single_action_space, env.num_agents, np.random.default_rng(3)):
        env.step(actions)
    env.reset(seed=1)
    env.close()


RUNGS = {"seeding": seeding, "masks": masks, "lifecycle": lifecycle, "asan": asan}


def audit(folder: Path) -> dict:
    """Every blocking rung `folder`'s env fails (`failed`: rung -> finding; `rung`/`finding`: the first, None
    when it passed) and the notes. All rungs run: a finding that depends on the run (an env that reads memory
    it never wrote, say) then still shows beside the ones that do not."""
    notes: list[str] = []
    failed: dict[str, str] = {}
    for rung, check in RUNGS.items():
        try:
            finding = check(folder, notes)
        except Exception as e:  # the env raised: that is its finding
            finding = f"{type(e).__name__}: {e}"
        if finding:
            failed[rung] = finding
    first = next(iter(failed), None)
    return {"rung": first, "finding": failed.get(first), "failed": failed, "notes": notes}


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    root, names = Path(sys.argv[1]), sys.argv[2:]
    print(json.dumps({n: audit(root / n) for n in names}))
