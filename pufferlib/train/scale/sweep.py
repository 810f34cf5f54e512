"""`puffer sweep`: hyperparameter search over `pufferlib.train.train`, on Ray Tune with Optuna.

    puffer sweep ocean/squared --trials 6 --param train.learning_rate=log:1e-4:1e-2 \
        --param train.ent_coef=0:0.05

Each trial is one `train()` call in a Ray worker, in a run dir of its own (config.toml, metrics.jsonl,
summary.json and the checkpoint). Optuna's TPE proposes the configs (Tune's OptunaSearch); ASHA stops
bad trials early on the returns each update reports through the trainer's `on_update` hook. At the end:
a table of the trials, the best config, and, cost-aware like Protein/CARBS, the Pareto front of score
against wall-clock seconds (`--within 10`: the best config that solved within 10 s), a plot
(sweep.png: that front, and the trials in parallel coordinates) and results.csv.

Ray starts inside this process by default; `--address auto` joins the cluster this box is part of
(`ray start --head` on one box, `ray start --address HEAD:6379` on the others). A sweep interrupted by
Ctrl-C, SIGTERM or SIGHUP saves its state; `--resume` continues it (Tune's Tuner.restore).

Search space (--param KEY=SPEC, the key as in `puffer train --KEY`; the type is the key's own):
    log:LOW:HIGH   log-uniform        LOW:HIGH   uniform (integers for an int key)
    A,B,C          one of these values
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pufferlib.command_line import add_command
from pufferlib.train import config as configuration
from pufferlib.train.config import ConfigError
from pufferlib.train.run import rundir
from pufferlib.train.scale import sweep_report
from pufferlib.train.scale.sweep_report import Report

SPEC_FILE = "sweep.json"  # what the sweep is, kept beside Tune's state so that --resume needs nothing else
DEFAULT_ROOT = Path("runs") / "sweeps"


@dataclass
class Param:
    """One searched key: log-uniform, uniform or a choice, of the key's own type."""

    key: str  # section.key
    kind: str  # log, uniform, choice
    kind_of: str  # int, float, bool, str
    low: float | None = None
    high: float | None = None
    values: list[Any] = field(default_factory=list)

    def domain(self):
        """The Tune search-space domain (OptunaSearch turns it into an Optuna distribution)."""
        from ray import tune

        if self.kind == "choice":
            return tune.choice(self.values)
        if self.kind_of == "int":
            low, high = int(self.low), int(self.high)
            return tune.lograndint(low, high + 1) if self.kind == "log" else tune.randint(low, high + 1)
        return (
            tune.loguniform(self.low, self.high) if self.kind == "log" else tune.uniform(self.low, self.high)
        )

    def normalized(self, value: Any) -> float:
        """`value` on this parameter's axis, 0..1 (log axis for log parameters), for the plot."""
        if self.kind == "choice":
            return self.values.index(value) / max(1, len(self.values) - 1)
        if self.kind == "log":
            return (math.log(value) - math.log(self.low)) / (math.log(self.high) - math.log(self.low))
        return (value - self.low) / (self.high - self.low) if self.high > self.low else 0.5


def parse_param(text: str, env_name: str) -> Param:
    """'train.learning_rate=log:1e-4:1e-2' -> a Param, checked against the env's config."""
    key, eq, spec = text.partition("=")
    key = key.strip().removeprefix("--").replace("-", "_")
    if not eq or "." not in key or not spec:
        raise ConfigError(
            f"--param {text!r}: expected SECTION.KEY=SPEC, e.g. train.learning_rate=log:1e-4:1e-2, "
            "train.ent_coef=0:0.05 or vec.num_envs=16,32,64"
        )
    section, _, name = key.partition(".")
    cfg = configuration.load(env_name)
    default = cfg.get(section, {}).get(name)
    parts = spec.split(":")
    kind = "log" if parts[0] == "log" else ("choice" if len(parts) == 1 else "uniform")
    bounds = parts[1:] if kind == "log" else parts
    if kind == "choice":
        raw = [v.strip() for v in spec.split(",")]
        if len(raw) < 2:
            raise ConfigError(f"--param {text!r}: one value is not a search; pass it as --{key} {spec}")
        values = [_typed(key, v, env_name) for v in raw]
        kind_of = type(values[0]).__name__
        return Param(key, kind, kind_of, values=values)
    if len(bounds) != 2:
        raise ConfigError(f"--param {text!r}: a range is LOW:HIGH or log:LOW:HIGH")
    low, high = (_typed(key, b, env_name) for b in bounds)
    kind_of = type(default).__name__ if default is not None else type(low).__name__
    if kind_of not in ("int", "float") or isinstance(low, bool):
        raise ConfigError(f"--param {text!r}: {key} is not a number; list its values: {key}=A,B")
    if not low < high:
        raise ConfigError(f"--param {text!r}: LOW must be below HIGH")
    if kind == "log" and low <= 0:
        raise ConfigError(f"--param {text!r}: a log range needs LOW > 0")
    return Param(key, kind, kind_of, low=float(low), high=float(high))


def _typed(key: str, value: str, env_name: str) -> Any:
    """`value` as the type the config gives `key` (an unknown key is a ConfigError naming the valid ones)."""
    cfg = configuration.load(env_name, {key: value})
    section, _, name = key.partition(".")
    return cfg[section][name]


def parse_point(text: str, params: list[Param], env_name: str) -> dict[str, Any]:
    """--first 'train.learning_rate=1e-3,train.ent_coef=0': a config Optuna evaluates first."""
    point = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip().removeprefix("--").replace("-", "_")
        if not eq or key not in {p.key for p in params}:
            raise ConfigError(
                f"--first {text!r}: expected KEY=VALUE[,KEY=VALUE...] over the searched keys "
                f"({', '.join(p.key for p in params)})"
            )
        point[key] = _typed(key, value.strip(), env_name)
    return point


@dataclass
class Spec:
    """What a sweep is: enough to start it, and to resume it from its folder alone."""

    env: str
    params: list[str]  # the --param texts
    fixed: list[str]  # --section.key value tokens every trial gets
    trials: int
    metric: str = "mean_return"
    mode: str = "max"
    first: list[str] = field(default_factory=list)
    seed: int = 0
    budget_seconds: float = 0.0
    cpus_per_trial: float = 1.0
    max_concurrent: int = 0  # 0: as many as the cluster's CPUs allow

    def parsed(self) -> list[Param]:
        return [parse_param(text, self.env) for text in self.params]


# ---------------------------------------------------------------------------------------------
# One trial (runs in a Ray worker)


def trial(params: dict[str, Any], spec: dict[str, Any], folder: str) -> None:
    """Train once with `params` over the sweep's fixed overrides, in this trial's own run dir
    (FOLDER/trial-<id>, beside Tune's files for the trial, on the node that runs it); report the
    metric after every update (for ASHA) and the summary at the end."""
    from ray import tune

    import pufferlib.train

    run_dir = Path(folder) / f"trial-{tune.get_context().get_trial_id()}"
    leftovers = [run_dir / name for name in (rundir.CONFIG, rundir.METRICS, rundir.SUMMARY)]
    for leftover in [*leftovers, *run_dir.glob("model_*.pt")]:  # a trial restarted by --resume starts over
        leftover.unlink(missing_ok=True)
    metric, env = spec["metric"], spec["env"]
    overrides = {**configuration.parse_args(spec["fixed"]), **params}
    worst = -math.inf if spec["mode"] == "max" else math.inf

    def on_update(progress: dict[str, Any]) -> None:
        value = progress.get(metric)
        if value is not None:
            report = {metric: value, "steps": progress["steps"], "elapsed": progress["elapsed"]}
            tune.report({**report, "solved": progress["solved"]})  # an early-stopped trial still says

    # the trial's run dir: config.toml, metrics.jsonl, TensorBoard, checkpoints, summary.json (rundir.py)
    summary = pufferlib.train.train(env, overrides, run_dir=run_dir, on_update=on_update)
    value = summary.get(metric)
    final = {metric: worst if value is None else value, "steps": summary["steps"], "finished": True}
    final.update(solved=summary["solved"], seconds=summary["seconds"], elapsed=summary["seconds"])
    tune.report(final)  # Tune adds the hostname and node_ip of the node that ran the trial


def _start_ray(ray, address: str | None, quiet: bool, attempts: int = 2) -> None:
    """ray.init, tried again once when the local node does not come up: Ray gives its raylet a fixed
    30 s to register, which a box busy with other work can miss. A cluster (`address`) is not retried."""
    for attempt in range(1, attempts + 1):
        try:
            ray.init(
                address=address, include_dashboard=False, log_to_driver=not quiet, logging_level="WARNING"
            )
            return
        except Exception as e:  # Ray raises a bare Exception for this
            if address is not None or "timed out during startup" not in str(e):
                raise
            ray.shutdown()  # the half-started node's processes
            if attempt == attempts:
                raise ConfigError(
                    f"Ray's local node did not start ({attempts} tries, 30 s each): the machine is too "
                    "busy; retry when it is quieter, or start Ray yourself (`ray start --head`) and pass "
                    "--address auto"
                ) from None
            print("puffer sweep: Ray's local node did not start in 30 s; trying once more", file=sys.stderr)


def trial_dirname(trial_obj) -> str:
    """Tune's folder for a trial, which is the trial's run dir too (see `trial`)."""
    return f"trial-{trial_obj.trial_id}"


# ---------------------------------------------------------------------------------------------
# The sweep


def run(
    spec: Spec,
    folder: Path,
    *,
    resume: bool = False,
    address: str | None = None,
    within: float | None = None,
    quiet: bool = True,
) -> Report:
    """Run (or resume) the sweep in `folder`; the report. Ray starts in this process unless
    `address` names a cluster ("auto": the one this box joined with `ray start`)."""
    params = spec.parsed()
    points = [parse_point(text, params, spec.env) for text in spec.first]
    folder = folder.resolve()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no calls home
    os.environ.setdefault("TUNE_DISABLE_AUTO_CALLBACK_LOGGERS", "1")  # JSON and CSV loggers only (_tuner)
    if quiet:
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")  # the classic reporter: silent at verbose 0
    import optuna
    import ray
    from ray import tune

    optuna.logging.set_verbosity(optuna.logging.WARNING if quiet else optuna.logging.INFO)
    trainable = tune.with_parameters(trial, spec=asdict(spec), folder=str(folder))
    trainable = tune.with_resources(trainable, {"cpu": spec.cpus_per_trial})
    _start_ray(ray, address, quiet)
    stopped: list[str] = []
    try:
        with _stop_signals_as_sigint(stopped):
            if resume:
                tuner = tune.Tuner.restore(str(folder), trainable=trainable, resume_errored=False)
            else:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / SPEC_FILE).write_text(json.dumps(asdict(spec), indent=1) + "\n")
                tuner = _tuner(spec, params, points, folder, trainable, quiet)
            grid = tuner.fit()
    finally:
        ray.shutdown()
    rows = _rows(grid, params, spec.metric)
    report = sweep_report.build(
        env=spec.env,
        metric=spec.metric,
        mode=spec.mode,
        trials=spec.trials,
        params=params,
        rows=rows,
        folder=folder,
        within=within,
    )
    report.signal = stopped[0] if stopped else None
    return report


def _trial_slots(spec: Spec) -> int:
    """How many trials the cluster (or this machine) runs at once: its CPUs over the CPUs per trial."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1.0) // max(spec.cpus_per_trial, 1e-3)))


def _tuner(spec: Spec, params: list[Param], points: list[dict], folder: Path, trainable, quiet: bool):
    import optuna
    from ray import tune
    from ray.tune.logger import CSVLoggerCallback, JsonLoggerCallback
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search import ConcurrencyLimiter
    from ray.tune.search.optuna import OptunaSearch

    cfg = configuration.load(spec.env, spec.fixed)
    tc = cfg["train"]
    per_update = max(1, cfg["vec"]["num_envs"] * tc["num_steps"])
    searcher = OptunaSearch(
        points_to_evaluate=points or None, sampler=optuna.samplers.TPESampler(seed=spec.seed)
    )
    # Always limited: with a bare searcher Tune keeps one trial pending at a time, so on a cluster short
    # trials run one after another on one node; the limit is also how many Tune keeps pending.
    searcher = ConcurrencyLimiter(searcher, max_concurrent=spec.max_concurrent or _trial_slots(spec))
    scheduler = ASHAScheduler(  # rungs in agent steps, so configs with other batch sizes compare fairly
        time_attr="steps",
        # past the budget by one update: the last update's report (steps >= the budget) must not
        # count as ASHA's stop, or a trial that ran its whole budget reads "stopped", its summary lost
        max_t=tc["total_timesteps"] + per_update,
        grace_period=max(2 * per_update, tc["total_timesteps"] // 64),
        reduction_factor=3,
    )
    return tune.Tuner(
        trainable,
        param_space={p.key: p.domain() for p in params},
        tune_config=tune.TuneConfig(
            metric=spec.metric,
            mode=spec.mode,
            search_alg=searcher,
            scheduler=scheduler,
            num_samples=spec.trials,
            time_budget_s=spec.budget_seconds or None,
            reuse_actors=True,  # one torch import per worker, not per trial
            trial_dirname_creator=trial_dirname,
        ),
        run_config=tune.RunConfig(
            name=folder.name,
            storage_path=str(folder.parent),
            failure_config=tune.FailureConfig(max_failures=0, fail_fast=False),  # a failed trial is reported
            callbacks=[JsonLoggerCallback(), CSVLoggerCallback()],  # result.json and progress.csv per trial
            verbose=0 if quiet else 1,
        ),
    )


@contextmanager
def _stop_signals_as_sigint(received: list[str]) -> Iterator[None]:
    """SIGTERM and SIGHUP stop the sweep the way Ctrl-C does (Tune saves its state and returns);
    their names go to `received`. Signal only this process: a signal to its whole process group
    (`timeout`, a closing terminal) also reaches the Ray services ray.init started, which die."""

    def forward(signum: int, _frame) -> None:
        received.append(signal.Signals(signum).name)
        signal.raise_signal(signal.SIGINT)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _rows(grid, params: list[Param], metric: str) -> list[dict[str, Any]]:
    """One row per trial: its params, status (finished, stopped, failed), metric, cost, node."""
    rows = []
    for result in grid:
        metrics = result.metrics or {}
        config = result.config or {}
        if result.error is not None:
            status = "failed"
        elif metrics.get("finished"):
            status = "finished"
        else:
            status = "stopped"  # early by ASHA, or by the budget or an interruption
        value = metrics.get(metric)
        rows.append(
            {
                "trial": Path(result.path).name if result.path else "?",
                "status": status,
                **{p.key: config.get(p.key) for p in params},
                metric: None if value is None or not math.isfinite(value) else value,
                "solved": bool(metrics.get("solved", False)),
                "seconds": metrics.get("seconds", metrics.get("elapsed", metrics.get("time_total_s"))),
                "steps": metrics.get("steps"),
                "node": metrics.get("hostname"),
                "error": None if result.error is None else _error_line(result.error),
                "path": result.path,
            }
        )
    return sorted(rows, key=lambda row: row["trial"])


def _error_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    last = [line for line in text if line.strip()][-1] if text else type(error).__name__
    return last[:300]


def default_folder(env_name: str, root: Path = DEFAULT_ROOT) -> Path:
    return root / f"{env_name.replace('/', '-')}-{time.strftime('%Y%m%d-%H%M%S')}"


def latest_folder(env_name: str, root: Path = DEFAULT_ROOT) -> Path | None:
    """The most recent sweep of `env_name` under `root` (what --resume continues by default)."""
    found = sorted(root.glob(f"{env_name.replace('/', '-')}-*"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


# ---------------------------------------------------------------------------------------------
# `puffer sweep`


SWEEP_EPILOG = """\
--param KEY=SPEC (repeat it): log:LOW:HIGH (log-uniform), LOW:HIGH (uniform; integers for an int key)
or A,B,C (a choice). Other --section.key value tokens are fixed for every trial. Examples:
  puffer sweep ocean/squared --trials 6 --param train.learning_rate=log:1e-4:1e-2
  puffer sweep classic_control/CartPole-v1 --trials 32 --param train.learning_rate=log:1e-4:1e-2 \\
      --param train.ent_coef=0:0.05 --param vec.num_envs=8,16,32 --budget-seconds 600 --within 10
  puffer sweep ocean/squared --resume                 # continue the last sweep of ocean/squared
  ray start --head   (box A);  ray start --address A:6379   (box B);  puffer sweep ... --address auto   (on A)
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "sweep",
        help="search hyperparameters with Ray Tune and Optuna (e.g. puffer sweep ocean/squared --param ...)",
        epilog=SWEEP_EPILOG,
    )
    p.add_argument("env", help="environment binding, e.g. ocean/squared")
    p.add_argument("--trials", type=int, default=16, help="trials to run (default 16)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=SPEC", help="a searched key (repeat)")
    p.add_argument(
        "--first", action="append", default=[], metavar="KEY=V[,KEY=V]", help="a config to try first"
    )
    p.add_argument("--metric", default="mean_return", help="summary value to optimise (default mean_return)")
    p.add_argument("--mode", choices=("max", "min"), default="max", help="maximise (default) or minimise it")
    p.add_argument("--budget-seconds", type=float, default=0.0, metavar="S", help="stop the sweep after S s")
    p.add_argument(
        "--within", type=float, metavar="S", help="also report the best config that solved within S s"
    )
    p.add_argument(
        "--cpus-per-trial", type=float, default=1.0, help="CPUs Ray reserves per trial (default 1)"
    )
    p.add_argument("--max-concurrent", type=int, default=0, help="trials at once (default: as CPUs allow)")
    p.add_argument("--seed", type=int, default=0, help="the TPE sampler's seed (default 0)")
    p.add_argument(
        "--address", help="a Ray cluster to join: auto, or HOST:6379 (default: Ray in this process)"
    )
    p.add_argument("--out", type=Path, help=f"the sweep's folder (default {DEFAULT_ROOT}/<env>-<time>)")
    p.add_argument("--resume", action="store_true", help="continue the sweep in --out (default: the latest)")
    p.add_argument("--json", action="store_true", help="print only the report, as one JSON line")
    p.add_argument("--verbose", action="store_true", help="Ray Tune's progress and the trials' logs")
    p.set_defaults(func=run_sweep, accepts_overrides=True)


def run_sweep(args: argparse.Namespace) -> int:
    import pufferlib.environments as envs

    try:
        envs.get(args.env)
        spec, folder = _spec_and_folder(args)
        spec.parsed()  # bad --param and --first are errors before Ray starts
        for text in spec.first:
            parse_point(text, spec.parsed(), spec.env)
        require_extra()
        quiet = not args.verbose
        report = run(spec, folder, resume=args.resume, address=args.address, within=args.within, quiet=quiet)
    except (ConfigError, envs.UnknownEnvironmentError) as e:
        print(f"puffer sweep: error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(asdict(report), default=str), flush=True)
    else:
        sweep_report.print_report(report)
    if report.signal:  # SIGTERM or SIGHUP: state saved, as `puffer train` reports a stop signal
        return 128 + int(signal.Signals[report.signal])
    if report.unfinished and not spec.budget_seconds:  # Ctrl-C (Tune caught it and saved its state)
        return 130
    return 0 if report.best is not None else 1


def require_extra() -> None:
    """ConfigError naming the extra when Ray Tune or Optuna cannot be imported."""
    try:
        import optuna  # noqa: F401
        import ray.tune  # noqa: F401
    except ImportError as e:
        missing = (e.name or "ray").partition(".")[0]
        raise ConfigError(
            f"needs Ray Tune and Optuna ({missing} is missing): pip install 'pufferlib[sweep]'"
        ) from None


def _spec_and_folder(args: argparse.Namespace) -> tuple[Spec, Path]:
    if args.resume:
        folder = args.out or latest_folder(args.env)
        if folder is None or not (folder / SPEC_FILE).is_file():
            where = folder or f"{DEFAULT_ROOT}/{args.env.replace('/', '-')}-*"
            raise ConfigError(f"--resume: no sweep of {args.env} at {where}; pass its folder with --out")
        spec = Spec(**json.loads((folder / SPEC_FILE).read_text()))
        if spec.env != args.env:
            raise ConfigError(f"--resume: {folder} is a sweep of {spec.env}, not {args.env}")
        return spec, folder
    if not args.param:
        raise ConfigError("nothing to search: give at least one --param KEY=SPEC (see puffer sweep --help)")
    if args.trials < 1:
        raise ConfigError(f"--trials must be >= 1, got {args.trials}")
    folder = args.out or default_folder(args.env)
    if (folder / SPEC_FILE).exists():
        raise ConfigError(f"{folder} already holds a sweep: --resume continues it, or choose another --out")
    configuration.load(args.env, args.overrides)  # the fixed overrides are checked now
    spec = Spec(
        env=args.env,
        params=args.param,
        fixed=list(args.overrides),
        trials=args.trials,
        metric=args.metric,
        mode=args.mode,
        first=args.first,
        seed=args.seed,
        budget_seconds=args.budget_seconds,
        cpus_per_trial=args.cpus_per_trial,
        max_concurrent=args.max_concurrent,
    )
    return spec, folder
