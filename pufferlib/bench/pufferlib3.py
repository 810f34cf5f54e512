"""`puffer bench --pufferlib3`: our native Ocean envs and trainer beside PufferLib 3.0.0's, in one run.

    puffer bench --pufferlib3                        # raw steps, then puffer train (~25 min on 2 cores)
    puffer bench --pufferlib3 --train-seconds 0      # raw env steps only (~2 min)
    puffer bench --pufferlib3 /other/venv/bin/python --pl3-envs cartpole --train-envs cartpole --repeats 5
    puffer bench --pufferlib3 --catalog all --pl3-envs '' --train-seconds 0   # its own envs, both engines

Raw env steps/s: one process, 1024 agent rows, random actions drawn beforehand, env.step alone
timed for --raw-seconds after a warm-up; PufferLib 3.0's Python env class over its C binding
beside our `pufferlib.ocean.native.NativeEnv`, each in a fresh interpreter running the same loop
(pl3_driver.py). End to end: each side's own `puffer train` at its own config for the env (PL:
its .ini, `--train.device cpu --vec.backend Serial --vec.num-envs 1`, so its 4096 envs step in the
trainer's process; ours: `puffer train ocean/NAME`, its toml) for --train-seconds of the trainer's
own clock (ours: from the start of train(), env construction included; PL: from its trainer's
construction), SPS = agent steps / those seconds, score = the mean episode score of the last log.
Sides alternate within a repeat (which goes first alternates too) so a change of load hits both.
The PufferLib 3.0 peer is a venv built by `python -m pufferlib.bench.pufferlib3_peer`.

--catalog: PufferLib 3.0's own env code twice, the same Python class and C game with the env's .ini [env]
keywords: over its own binding (its env_binding.h, the peer's build) and as pufferlib3/<name> over our
3.0 header (catalog.py's build, actions checked against the space before each step). The ratio is what
our contract costs or gains on identical env code. An env the peer did not build is a skipped cell
naming the build that adds it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pufferlib.bench import pl3_dashboard, report
from pufferlib.bench.interpreter import UntrustedInterpreter, trusted_python
from pufferlib.bench.pufferlib3_peer import DEFAULT_VENV

DRIVER = Path(__file__).with_name("pl3_driver.py")  # run by path, never imported here
BUILD = "python -m pufferlib.bench.pufferlib3_peer"
AGENTS = 1024
ROOT = Path(__file__).resolve().parents[2]  # the folder holding our pufferlib package


class Raw(NamedTuple):
    """One raw-steps row: PufferLib 3.0's env class and keywords (AGENTS agent rows), our native env and
    the game keywords that make it play as much game per step as theirs (None: its defaults do)."""

    factory: str
    kwargs: dict[str, Any]
    ours: str
    game: dict[str, Any] | None = None


RAW = {
    # its squared's rules are our ocean/squared_pl3 (ocean/squared and ocean/squared_py: the older game)
    "squared": Raw("pufferlib.ocean.squared.squared:Squared", {"num_envs": AGENTS}, "squared_pl3"),
    "cartpole": Raw("pufferlib.ocean.cartpole.cartpole:Cartpole", {"num_envs": AGENTS}, "cartpole"),
    "breakout": Raw("pufferlib.ocean.breakout.breakout:Breakout", {"num_envs": AGENTS}, "breakout"),
    # its Pong class plays 1 frame a step by default, ours 4 (both take `frameskip`): the same frames per step
    "pong": Raw("pufferlib.ocean.pong.pong:Pong", {"num_envs": AGENTS}, "pong", {"frameskip": 1}),
    # many snakes per map: 4 maps of 256 snakes, as its config
    "snake": Raw("pufferlib.ocean.snake.snake:Snake", {"num_envs": 4, "num_snakes": AGENTS // 4}, "snake"),
    "connect4": Raw("pufferlib.ocean.connect4.connect4:Connect4", {"num_envs": AGENTS}, "connect4"),
}
PL3_TRAIN_ARGS = ("--train.device", "cpu", "--vec.backend", "Serial", "--vec.num-envs", "1")


class PeerMissing(Exception):
    """The PufferLib 3.0 peer venv is not there or may not run; the message names the build script."""


def default_python() -> Path:
    return DEFAULT_VENV / "bin" / "python"


def peer_python(path: str | os.PathLike | None) -> Path:
    """The peer's interpreter, checked as trusted_python does; PeerMissing if absent or unsafe."""
    python = Path(os.path.abspath(os.path.expanduser(path or default_python())))
    if not python.exists():
        raise PeerMissing(
            f"no PufferLib 3.0 peer at {python}. Build it with: {BUILD} (--dry-run shows the steps; "
            f"--venv DIR puts it elsewhere), or pass --pufferlib3 PATH to its python"
        )
    try:
        return trusted_python(python)
    except UntrustedInterpreter as e:
        raise PeerMissing(str(e)) from None


def _driver(python: Path, mode: str, spec: dict, ours: bool, timeout: float, stdout=None) -> str:
    """Run pl3_driver.py MODE SPEC in a fresh interpreter from a neutral cwd: PL isolated (-I), ours
    with our package on PYTHONPATH. Returns its stdout (or writes it to `stdout`)."""
    env = {**os.environ, "COLUMNS": "160", "FORCE_COLOR": "1"}
    if ours:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))
        cmd = [str(python), str(DRIVER), mode, json.dumps(spec)]
    else:
        env.pop("PYTHONPATH", None)
        cmd = [str(python), "-I", str(DRIVER), mode, json.dumps(spec)]
    with tempfile.TemporaryDirectory(prefix="pl3bench-") as tmp:
        out = subprocess.run(
            cmd,
            cwd=tmp,
            env=env,
            stdout=stdout or subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=timeout,
        )
    if out.returncode:
        last = pl3_dashboard.strip(out.stderr).strip().splitlines()[-1:] or [f"exit code {out.returncode}"]
        raise RuntimeError(f"{'ours' if ours else 'PufferLib 3.0'} {mode} failed: {last[0]}")
    return out.stdout or ""


def native_missing(name: str) -> str | None:
    """Why our native env `name` cannot run here (None: it can), without building anything."""
    try:
        from pufferlib.ocean import native
    except ImportError:
        return "not built yet (no pufferlib.ocean.native in this checkout)"
    if name not in native.names():
        return f"not built yet (no native {name} in pufferlib/ocean/native)"
    return native.unavailable(name)


def raw_ours(name: str, seconds: float) -> dict[str, Any]:
    from pufferlib.ocean import native

    game = RAW[name].game or {}
    per_env = native.load(RAW[name].ours).num_agents(game)
    spec = {
        "factory": "pufferlib.ocean.native:NativeEnv",
        "args": [RAW[name].ours],
        "kwargs": {"num_envs": max(1, AGENTS // per_env), **game},
        "seconds": seconds,
        "warmup_s": min(1.0, seconds / 4),
    }
    return json.loads(_driver(Path(sys.executable), "steps", spec, True, 120 + 4 * seconds).splitlines()[-1])


def raw_pl3(python: Path, name: str, seconds: float) -> dict[str, Any]:
    spec = {
        "factory": RAW[name].factory,
        "kwargs": RAW[name].kwargs,
        "seconds": seconds,
        "warmup_s": min(1.0, seconds / 4),
    }
    return json.loads(_driver(python, "steps", spec, False, 120 + 4 * seconds).splitlines()[-1])


def train_pl3(
    python: Path,
    name: str,
    seconds: float,
    keep: Path | None,
    changes: dict[str, Any] | None = None,
    threads: int = 0,
    score_keys: tuple[str, ...] = pl3_dashboard.SCORE_KEYS,
) -> dict[str, Any]:
    """PufferLib 3.0's `puffer train puffer_NAME` for `seconds`: figures from its log lines, the
    dashboard's steady frames beside them, and `ran`, the config it trained with (`changes` applied
    to its .ini's, pl3_driver.apply) and its policy's parameter count; `threads`: its torch threads
    (0: torch's default); `score_keys`: the log keys its score and curve read (pl3_dashboard.score);
    with `keep`, its stdout and log are saved there."""
    with tempfile.TemporaryDirectory(prefix="pl3train-") as tmp:
        log, shown, ran = Path(tmp) / "log.jsonl", Path(tmp) / "dashboard.txt", Path(tmp) / "ran.json"
        spec = {"env": f"puffer_{name}", "args": list(PL3_TRAIN_ARGS), "seconds": seconds, "log": str(log)}
        spec.update({"set": changes or {}, "ran": str(ran), "torch_threads": threads})
        with open(shown, "w") as f:
            _driver(python, "train", spec, False, 600 + 3 * seconds, stdout=f)
        lines = pl3_dashboard.log_lines(log)
        text = shown.read_text()
        config = json.loads(ran.read_text()) if ran.is_file() else None
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "log.jsonl").write_text(log.read_text())
            (keep / "dashboard.txt").write_text(text)
    if not lines:
        raise RuntimeError(f"PufferLib 3.0 train {name} logged nothing in {seconds:.0f} s")
    last = lines[-1]
    frames = pl3_dashboard.steady(pl3_dashboard.frames(text))
    return {
        "steps": int(last["agent_steps"]),
        "seconds": float(last["uptime"]),
        "sps": last["agent_steps"] / last["uptime"],
        "score": pl3_dashboard.score(last, score_keys),
        "dashboard_sps": sorted(f["sps"] for f in frames)[len(frames) // 2] if frames else None,
        "curve": pl3_dashboard.curve(lines, score_keys),
        "ran": config,
    }


def train_ours(
    binding: str, seconds: float, keep: Path | None, overrides: Sequence[str] = ()
) -> dict[str, Any]:
    """Our `puffer train BINDING [overrides]` (ocean/cartpole, pufferlib3/pong) for `seconds` (its config,
    not stopping when solved; its step budget stays, so a run that spends it early stops there: the table
    shows the seconds it took); `ran`: the config.toml it wrote and the parameter count of its last
    checkpoint's policy. `score`: the mean episode return; `env_score`: the mean of the env's own `score`
    info where it logs one (what PufferLib 3.0's dashboard shows for its C envs), else None."""
    with tempfile.TemporaryDirectory(prefix="ourtrain-") as tmp:
        run_dir = Path(tmp) / "run"
        cmd = [
            sys.executable, "-m", "pufferlib.cli", "train", binding, "--train.device", "cpu",
            "--train.max_seconds", str(seconds),
            "--train.stop_when_solved", "false", "--train.run_dir", str(run_dir),
            "--track.tensorboard", "false", *overrides,
        ]  # fmt: skip
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        }
        out = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=600 + 3 * seconds)
        if out.returncode or not (run_dir / "summary.json").is_file():
            last = out.stderr.strip().splitlines()[-1:] or [f"exit code {out.returncode}"]
            raise RuntimeError(f"ours train {binding} failed: {last[0]}")
        summary = json.loads((run_dir / "summary.json").read_text())
        logged = run_dir / "metrics.jsonl"  # none when the budget ended before the first update
        metrics = (
            [json.loads(x) for x in logged.read_text().splitlines() if x.strip()] if logged.is_file() else []
        )
        ran = _ran(run_dir, binding)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for f in ("summary.json", "metrics.jsonl", "config.toml"):
                if (run_dir / f).is_file():
                    (keep / f).write_text((run_dir / f).read_text())
    return {
        "steps": summary["steps"],
        "seconds": summary["seconds"],
        "sps": summary["sps"],
        "score": summary["mean_return"],
        "env_score": next(
            (m["env/score"] for m in reversed(metrics) if m.get("env/score") is not None), None
        ),
        "curve": [
            (m["global_step"], m["time"], m["episodic_return"])
            for m in metrics
            if m.get("episodic_return") is not None
        ],
        "ran": ran,
    }


def _ran(run_dir: Path, binding: str) -> dict[str, Any]:
    """The config our run of `binding` wrote (config.toml), the parameter count of its last checkpoint,
    the env's observation features and action logits (as pl3_driver reports them) and its agent rows
    (vec.num_envs instances x one instance's agents, made with the run's [env] keywords)."""
    import tomllib

    import numpy as np

    from pufferlib import environments
    from pufferlib.train.run import checkpoint

    config = tomllib.loads((run_dir / "config.toml").read_text())
    saved = checkpoint.listed(run_dir)
    weights = checkpoint.load(saved[-1])["state_dict"] if saved else {}
    env = environments.get(binding).make_env(**config.get("env", {}))
    try:
        agents = env.num_agents * config["vec"]["num_envs"]
        space = env.single_action_space
        actions = int(space.n) if hasattr(space, "n") else None
        actions = int(np.sum(space.nvec)) if hasattr(space, "nvec") else actions
        inputs = int(np.prod(env.single_observation_space.shape))
    finally:
        env.close()
    parameters = sum(v.numel() for v in weights.values()) or None
    return {
        "config": config,
        "parameters": parameters,
        "inputs": inputs,
        "actions": actions,
        "agents": agents,
    }


def _sample(base: dict[str, Any], measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`base` with the measurement's figures, or {'error': what} if it raised."""
    try:
        return {**base, **measure()}
    except Exception as e:
        return {**base, "error": f"{type(e).__name__}: {e}"}


def _order(rep: int, sides: tuple[str, str]) -> tuple[str, ...]:
    """Both sides, the first one first on even repeats: a change of load hits both alike."""
    return sides if rep % 2 == 0 else sides[::-1]


def raw_rows(python: Path, names: list[str], repeats: int, seconds: float) -> list[dict[str, Any]]:
    """report.table's rows: per repeat, per env, a sample of each side (or why it was skipped)."""
    rows = []
    for rep in range(repeats):
        for name in names:
            for peer in _order(rep, ("pl3", "native")):
                row = {"repeat": rep, "workload": name, "description": name, "num_envs": AGENTS, "peer": peer}
                missing = native_missing(RAW[name].ours) if peer == "native" else None
                if missing:
                    row["skip"] = missing
                elif peer == "pl3":
                    row = _sample(row, lambda n=name: raw_pl3(python, n, seconds))
                else:
                    row = _sample(row, lambda n=name: raw_ours(n, seconds))
                rows.append(row)
                shown = (
                    f"{row['sps']:,.0f} agent steps/s" if "sps" in row else row.get("skip") or row["error"]
                )
                print(f"[{rep + 1}/{repeats}] raw {name:<9} {peer:<7} {shown}", file=sys.stderr, flush=True)
    return rows


def train_rows(python: Path, names: list[str], repeats: int, seconds: float, keep: Path | None) -> list[dict]:
    """Per repeat, per env: both trainers for `seconds` each; with `keep`, their logs saved there."""
    rows = []
    for rep in range(repeats):
        for name in names:
            for side in _order(rep, ("pl3", "ours")):
                row = {"repeat": rep, "env": name, "seconds_asked": seconds, "side": side}
                saved = keep / f"{side}-{name}-{rep}" if keep else None
                missing = native_missing(RAW[name].ours) if side == "ours" else None
                if missing:
                    row["skip"] = missing
                elif side == "pl3":
                    row = _sample(row, lambda n=name, d=saved: train_pl3(python, n, seconds, d))
                else:
                    row = _sample(row, lambda n=RAW[name].ours, d=saved: train_ours(f"ocean/{n}", seconds, d))
                rows.append(row)
                if "sps" in row:
                    shown = f"{row['sps']:,.0f} SPS, score {row['score'] or 0:.1f}, {row['steps']:,} steps"
                    shown += f" in {row['seconds']:.0f} s"
                else:
                    shown = row.get("skip") or row["error"]
                print(f"[{rep + 1}/{repeats}] train {name:<9} {side:<5} {shown}", file=sys.stderr, flush=True)
    return rows


def peer_versions(python: Path) -> str:
    """'pufferlib 3.0.0, torch 2.13.0+cpu, numpy 1.26.4' as the peer interpreter reports them."""
    code = (
        "from importlib.metadata import version as v; "
        "print(', '.join(f'{p} {v(p)}' for p in ('pufferlib', 'torch', 'numpy')))"
    )
    out = subprocess.run(
        [str(python), "-I", "-c", code], capture_output=True, text=True, cwd="/", timeout=120
    )
    return out.stdout.strip() or out.stderr.strip()[-200:]


def export_curves(rows: list[dict], directory: Path) -> list[str]:
    """Each PufferLib 3.0 training run's curve as a run directory `puffer plot` draws."""
    made = []
    for r in rows:
        if r.get("side") == "pl3" and r.get("curve"):
            env = r["env"].removeprefix("pufferlib3/")  # --matched's catalog rows: its own env's name
            out = directory / f"pufferlib3-{env}-{r['repeat']}"
            made.append(str(pl3_dashboard.export_run(r["curve"], out, f"PufferLib 3.0 puffer_{env}")))
    return made


def catalog_specs(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The driver specs (PufferLib 3.0's, ours) of catalog env `name` at AGENTS agent rows."""
    from pufferlib.ocean.contracts import catalog, load

    m, folder = load.manifest(name, catalog.catalog_home())
    cls = load.pl3_class(folder)
    kwargs = {**m.config.get("env", {}), "num_envs": max(1, AGENTS // max(1, m.agents_per_env))}
    theirs = {"factory": f"pufferlib.ocean.{name}.{name}:{cls.__name__}", "kwargs": kwargs}
    ours = {
        "factory": "pufferlib.environments.ocean_native:make_pufferlib3_env",
        "args": [name],
        "kwargs": kwargs,
    }
    return theirs, ours


def catalog_names(chosen: str) -> list[str]:
    """--catalog's envs: 'all' (every available env of the built catalog) or a comma list of them."""
    from pufferlib.ocean.contracts import catalog

    entries = catalog.read()
    if not entries:
        raise ValueError(
            "--catalog: no PufferLib 3.0 catalog built here; build it with "
            "`python -m pufferlib.ocean.contracts.catalog build`"
        )
    valid = sorted(n for n, e in entries.items() if e["available"])
    return valid if chosen == "all" else _check(chosen, valid, "--catalog")


def catalog_rows(python: Path, names: list[str], repeats: int, seconds: float) -> list[dict[str, Any]]:
    """Per repeat, per env: its class over its own binding (peer 'pl3') and over ours ('catalog')."""
    peer_has = set(json.loads(_driver(python, "envs", {}, False, 120).splitlines()[-1]))
    rows = []
    for rep in range(repeats):
        for name in names:
            theirs, ours = catalog_specs(name)
            for peer in _order(rep, ("pl3", "catalog")):
                row = {"repeat": rep, "workload": f"pufferlib3/{name}", "description": name, "peer": peer}
                row["num_envs"] = AGENTS
                spec = {
                    **(theirs if peer == "pl3" else ours),
                    "seconds": seconds,
                    "warmup_s": min(1.0, seconds / 4),
                }
                if peer == "pl3" and name not in peer_has:
                    row["skip"] = f"the peer did not build {name}: {BUILD} --envs {name}"
                else:
                    py = python if peer == "pl3" else Path(sys.executable)
                    row = _sample(
                        row,
                        lambda py=py, spec=spec, ours=peer == "catalog": json.loads(
                            _driver(py, "steps", spec, ours, 120 + 4 * seconds).splitlines()[-1]
                        ),
                    )
                rows.append(row)
                shown = (
                    f"{row['sps']:,.0f} agent steps/s" if "sps" in row else row.get("skip") or row["error"]
                )
                print(
                    f"[{rep + 1}/{repeats}] catalog {name:<12} {peer:<7} {shown}", file=sys.stderr, flush=True
                )
    return rows


def asked_python(args: Any) -> Path:
    """The peer's interpreter `--pufferlib3 [PYTHON]` names (alone: the default venv's); PeerMissing."""
    return peer_python(None if args.pufferlib3 == "asked" else args.pufferlib3)


def run_info(args: Any, machine: Callable[[None], dict[str, Any]], python: Path) -> dict[str, Any]:
    """The machine, the command and the peer's versions, printed to stderr before a run's rows."""
    info = {**machine(None), "command": "puffer " + " ".join(getattr(args, "argv", []) or sys.argv[1:])}
    info["versions"]["PufferLib 3.0 peer"] = peer_versions(python)
    print(json.dumps(info, indent=1), file=sys.stderr)
    return info


def check_training(args: Any, mode: str) -> None:
    """ValueError naming the flag where a training mode (`mode`: --matched, --to-score) would measure
    nothing: --repeats below 1, --torch-threads below 0, --train-seconds not above 0."""
    if args.repeats < 1:
        raise ValueError(f"--repeats must be at least 1, got {args.repeats}")
    if args.torch_threads < 0:
        raise ValueError(f"--torch-threads must be 0 (each side's own) or more, got {args.torch_threads}")
    if args.train_seconds <= 0:
        raise ValueError(f"{mode} trains: --train-seconds must be above 0, got {args.train_seconds:g}")


def _check(names: str, valid: list[str], flag: str) -> list[str]:
    chosen = [n for n in names.split(",") if n] if names else []
    unknown = [n for n in chosen if n not in valid]
    if unknown:
        raise ValueError(f"{flag}: unknown {', '.join(unknown)}; valid: {', '.join(valid)}")
    return chosen


def run(args: Any, machine: Callable[[None], dict[str, Any]]) -> int:
    """`puffer bench --pufferlib3` once the CLI has parsed it; `machine` is cli.machine."""
    try:
        for flag, value, least in (("--raw-seconds", args.raw_seconds, 0.1), ("--repeats", args.repeats, 1)):
            if value < least:
                raise ValueError(f"{flag} must be at least {least}, got {value}")
        raw = _check(args.pl3_envs, list(RAW), "--pl3-envs")
        trained = _check(args.train_envs, list(RAW), "--train-envs") if args.train_seconds > 0 else []
        listed = catalog_names(args.catalog) if args.catalog else []
        python = asked_python(args)
    except (ValueError, PeerMissing) as e:
        print(f"puffer bench: {e}", file=sys.stderr)
        return 2
    info = run_info(args, machine, python)
    keep = Path(args.keep) if args.keep else None
    raw_results = raw_rows(python, raw, args.repeats, args.raw_seconds) if raw else []
    train_results = train_rows(python, trained, args.repeats, args.train_seconds, keep) if trained else []
    catalog_results = catalog_rows(python, listed, args.repeats, args.raw_seconds) if listed else []
    info["load_average_end"] = os.getloadavg()
    tables = {}
    if raw_results:
        tables["raw"] = report.table(raw_results, ["pl3", "native"])
    if train_results:
        tables["train"] = report.train_table(train_results)
    if catalog_results:
        tables["catalog"] = report.table(catalog_results, ["pl3", "catalog"])
    curves = export_curves(train_results, keep) if keep else []
    text = report.machine_lines(info) + "\n"
    if "raw" in tables:
        text += (
            f"Raw env steps/s, one process, {AGENTS} agent rows, random actions, median of "
            f"{args.repeats} ± half their range:\n\n{tables['raw']}\n\n"
        )
    if "train" in tables:
        text += (
            f"`puffer train` end to end on the CPU, {args.train_seconds:.0f} s each, median of "
            f"{args.repeats}:\n\n{tables['train']}\n"
        )
    if "catalog" in tables:
        text += (
            f"\nPufferLib 3.0 env code, its binding beside ours, raw steps/s, one process, {AGENTS} agent "
            f"rows, median of {args.repeats} ± half their range:\n\n{tables['catalog']}\n"
        )
    print(text)
    for path in curves:
        print(f"PufferLib 3.0 learning curve (draw with `puffer plot {path}`): {path}")
    args.document = {
        "machine": info,
        "raw": raw_results,
        "train": train_results,
        "catalog": catalog_results,
        "tables": tables,
    }
    if args.json_file:
        with open(args.json_file, "w") as f:
            json.dump(args.document, f, indent=1)
    if args.markdown:
        Path(args.markdown).write_text(text)
    failed = [f"raw {r['workload']}" for r in raw_results + catalog_results if "error" in r] + [
        f"train {r['env']} {r['side']}" for r in train_results if "error" in r
    ]
    for line in dict.fromkeys(
        r["error"] for r in raw_results + train_results + catalog_results if "error" in r
    ):
        print(f"error: {line}", file=sys.stderr)
    return 1 if failed else 0
