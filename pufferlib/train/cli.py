"""`puffer train ENV [--section.key value ...]`, `puffer eval ENV --checkpoint PATH`, `puffer plot RUN...`."""

from __future__ import annotations

import argparse
import importlib.util
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pufferlib.command_line import add_command

if TYPE_CHECKING:
    from pufferlib.train.spec import RunSpec

TRAIN_EPILOG = """\
Every config value can be overridden: --train.learning-rate 3e-4 --vec.num-envs 16 --train.compile
(dashes or underscores; --section.key=value works too). Defaults come from
pufferlib/train/configs/default.toml, then <family>.toml, then <family>.<env>.toml, then --config
FILE; --print-config shows the result for ENV. Sections: train, vec, rnn, track (fixed keys),
policy and env (keyword arguments of the policy class and the environment).

Each run writes runs/<env>/<time>-<id>/ (--train.run-dir DIR or a template with {env}, {time},
{id}; "" for none): config.toml, metrics.jsonl, TensorBoard events, checkpoints, summary.json.
View the curves with `tensorboard --logdir runs` or `puffer plot runs/<env>`.

Checkpoints every --train.checkpoint-minutes (10) and at the end hold the whole training state:
`puffer train --resume RUN_DIR [--train.total-timesteps N ...]` continues the run in RUN_DIR, with
the overrides on top of its config. An error mid-run saves, writes summary.json, prints that
command and exits 1, or 2 when the error is the config's (--debug: with the traceback).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "train", help="train a policy with PPO (e.g. puffer train ocean/squared)", epilog=TRAIN_EPILOG
    )
    p.add_argument(
        "env", nargs="?", help="environment binding, e.g. ocean/squared (optional with a run's --config)"
    )
    p.add_argument(
        "--config", metavar="FILE", help="start from this config file (a run's config.toml), then overrides"
    )
    p.add_argument(
        "--track",
        action="append",
        default=[],
        choices=("wandb", "neptune"),
        help="also log to Weights & Biases or Neptune (repeatable; TensorBoard is always on). "
        "WANDB_MODE=offline / NEPTUNE_MODE=offline need no network",
    )
    p.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR from its latest checkpoint (overrides apply on top of its config)",
    )
    p.add_argument("--debug", action="store_true", help="show the traceback of an error")
    p.add_argument("--json", action="store_true", help="print only the summary, as one JSON line")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as TOML and exit")
    p.add_argument(
        "--no-dashboard", action="store_true", help="plain progress lines even on a terminal, no live view"
    )
    p.add_argument(
        "--progress-seconds",
        type=float,
        default=10.0,
        metavar="S",
        help="off a terminal: seconds between progress lines (default 10)",
    )
    _add_launch_flags(p)
    p.set_defaults(func=run_train, accepts_overrides=True)

    e = sub.add_parser("eval", help="run a checkpoint and print its mean return")
    e.add_argument("env", help="environment binding the checkpoint was trained on")
    e.add_argument("--checkpoint", required=True, help="a model_*.pt file written by `puffer train`")
    e.add_argument("--episodes", type=int, default=100, help="episodes to average over (default 100)")
    e.add_argument("--deterministic", action="store_true", help="take the most likely action, not a sample")
    e.add_argument("--json", action="store_true", help="print only the result, as one JSON line")
    e.add_argument("--video", metavar="FILE", help="record the episodes to FILE (.mp4 or .gif), headless")
    e.add_argument("--render", action="store_true", help="print each step's text frame (ANSI), for text envs")
    e.set_defaults(func=run_eval, accepts_overrides=True)

    g = sub.add_parser(
        "plot",
        help="learning curves of runs (return vs steps and vs time), as PNG and SVG",
        description="Learning curves of one or more run directories (or folders holding them, such as "
        "runs/ocean/squared). Runs that share a config except the seed are drawn as their mean with a "
        "min-max band.",
    )
    g.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories, or folders that hold them")
    g.add_argument(
        "-o",
        "--out",
        action="append",
        default=[],
        metavar="FILE",
        help="output file, .png or .svg (repeatable; default learning_curves.png and learning_curves.svg)",
    )
    g.add_argument("--title", help="figure title (default: the envs plotted)")
    g.add_argument("--json", action="store_true", help="print what was drawn (files, groups, runs) as JSON")
    g.set_defaults(func=run_plot)


TORCH_MISSING = (
    "needs PyTorch, which this Python does not have: pip install 'pufferlib[train]' "
    "(or train in the image: puffertank run -- puffer {command} ...)"
)


def _errors() -> tuple[type[Exception], ...]:
    """Errors that are the user's to fix: printed as one line, without a traceback."""
    from pufferlib import APIUsageError, EnvironmentSetupError
    from pufferlib.environments import UnknownEnvironmentError
    from pufferlib.train.config import ConfigError
    from pufferlib.train.run.tracking import TrackingError

    return (ConfigError, UnknownEnvironmentError, EnvironmentSetupError, APIUsageError, TrackingError)


def _fail(command: str, error: Exception | str) -> int:
    print(f"puffer {command}: error: {error}", file=sys.stderr)
    return 2


LAUNCH_FLAGS = ("nproc_per_node", "nnodes", "node_rank", "master_addr", "master_port")


def _add_launch_flags(p: argparse.ArgumentParser) -> None:
    """--nproc-per-node, --nnodes, --node-rank, --master-addr, --master-port: run torchrun."""
    group = p.add_argument_group("distributed", "any of these runs torchrun (torch.distributed.run) for you")
    add = group.add_argument
    add("--nproc-per-node", metavar="N", help="ranks on this node: a number, gpu, cpu or auto")
    add("--nnodes", type=int, metavar="N", help="nodes in the job (default 1)")
    add("--node-rank", type=int, metavar="I", help="this node's index, 0..nnodes-1 (default 0)")
    add("--master-addr", metavar="HOST", help="node 0's address, e.g. its Tailscale MagicDNS name")
    add("--master-port", type=int, metavar="PORT", help="node 0's rendezvous port (default 29500)")


def _launch(args: argparse.Namespace) -> int:
    """torchrun, whose ranks run this same `puffer train` without the launch flags."""
    from pufferlib.train.scale import distributed

    flags = [flag for flag, on in (("--json", args.json), ("--no-dashboard", args.no_dashboard)) if on]
    flags += ["--progress-seconds", str(args.progress_seconds)]
    flags += ["--config", args.config] if args.config else []
    flags += [f"--track={backend}" for backend in args.track]
    try:
        return distributed.launch(args, [*([args.env] if args.env else []), *flags, *args.overrides])
    except _errors() as e:
        return _fail("train", e)


def run_train(args: argparse.Namespace) -> int:
    from pufferlib.train import config as configuration
    from pufferlib.train.spec import RunSpec

    _give_back_value(args)
    try:
        spec = RunSpec.build(
            args.env, args.overrides, config_file=args.config, resume=args.resume, track=args.track
        )
        if args.print_config:
            print(configuration.to_toml(spec.config_toml, spec.env_name), end="")
            return 0
    except _errors() as e:
        return _fail("train", e)
    if importlib.util.find_spec("torch") is None:
        return _fail("train", TORCH_MISSING.format(command="train"))
    if any(getattr(args, flag, None) is not None for flag in LAUNCH_FLAGS):
        if args.resume:
            return _fail(
                "train", "--resume of a distributed run is not supported yet: resume without torchrun"
            )
        return _launch(args)

    from pufferlib.train.run import failure, signals
    from pufferlib.train.run.checkpoint import CheckpointError
    from pufferlib.train.scale import distributed

    try:
        summary = _train(args, spec)
    except (*_errors(), CheckpointError) as e:
        return _fail("train", e)
    except failure.TrainingError as e:  # saved, summary.json written: say what happened, how to resume
        _debug(args, e)
        summary = e.summary
        saved = f"; saved {summary['checkpoint']}" if summary.get("checkpoint") else "; no checkpoint saved"
        if summary.get("run_dir") and not Path(summary["run_dir"]).is_dir():
            saved = ""  # the run directory is gone: the message says so, and what to do
        command = failure.resume_command(summary.get("run_dir")) if summary.get("checkpoint") else None
        again = f"; resume with: {command}" if command else ""
        print(f"puffer train: error: {e}{saved}{again}", file=sys.stderr)
        return 2 if isinstance(e.__cause__, _errors()) else 1  # bad input found mid-run: still the user's
    except distributed.DistributedError as e:  # a rank lost, or the ranks never met
        distributed.record_failure(e)
        saved = getattr(e, "checkpoint", None)
        print(f"puffer train: error: {e}" + (f"; saved {saved}" if saved else ""), file=sys.stderr)
        return 1
    except signals.Interrupted as e:
        if e.after_save:  # it came during the final save, which finished first
            print(f"puffer train: stopped by {e.signal_name} after the final save", file=sys.stderr)
        else:  # before training began: nothing to save
            print(f"puffer train: stopped by {e.signal_name} before training began", file=sys.stderr)
        return signals.exit_code(e.signal_name)
    except Exception as e:  # not the user's to fix, and outside the loop: one line, unless --debug
        _debug(args, e)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        hint = "" if args.debug else " (--debug shows the traceback)"
        print(f"puffer train: error: {type(e).__name__}: {first}{hint}", file=sys.stderr)
        return 1
    if not distributed.is_main():  # rank 0 alone prints
        return signals.exit_code(summary.get("signal")) if summary["stop_reason"] == "interrupted" else 0
    _report(summary, args.json, "training summary")
    if summary["stop_reason"] == "interrupted":
        command = failure.resume_command(summary.get("run_dir")) if summary.get("checkpoint") else None
        if command:
            stopper = summary.get("signal") or "Ctrl-C"
            print(f"puffer train: stopped by {stopper}; resume with: {command}", file=sys.stderr)
        return signals.exit_code(summary.get("signal"))
    return 0


def _train(args: argparse.Namespace, spec: RunSpec) -> dict[str, Any]:
    """pufferlib.train.train_spec with the command's flags, SIGTERM/SIGHUP (and under torchrun SIGINT)
    stopping it as Ctrl-C does."""
    from pufferlib.train import train_spec
    from pufferlib.train.run import signals
    from pufferlib.train.scale import distributed

    stop = signals.STOP_SIGNALS
    if distributed.under_torchrun():  # torchrun passes a Ctrl-C on: a second one must not stop the save
        stop = (*stop, signal.SIGINT)
    with signals.stop_on(stop):  # SIGTERM/SIGHUP save and report like Ctrl-C
        return train_spec(
            spec,
            quiet=args.json,
            dashboard=not args.no_dashboard,
            progress_seconds=args.progress_seconds,
        )


def _debug(args: argparse.Namespace, error: BaseException) -> None:
    """--debug: the traceback, on stderr."""
    if args.debug:
        import traceback

        traceback.print_exception(error)


def _give_back_value(args: argparse.Namespace) -> None:
    """`puffer train --config F --train.seed 2` (or --resume DIR): with ENV optional, argparse takes
    the 2 for ENV (the override is unknown to it). A token that is no binding and follows an
    override option is that option's value: put it back."""
    import pufferlib.environments as envs

    argv = getattr(args, "argv", None)
    if (
        not ((args.config or args.resume) and args.env and argv)
        or args.env in envs.catalog()
        or args.env not in argv
    ):
        return
    before = argv[argv.index(args.env) - 1] if argv.index(args.env) > 0 else ""
    if before.startswith("--") and "." in before and "=" not in before and before in args.overrides:
        args.overrides.insert(args.overrides.index(before) + 1, args.env)
        args.env = None


def run_eval(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("torch") is None:
        return _fail("eval", TORCH_MISSING.format(command="eval"))
    from pufferlib.train import evaluate
    from pufferlib.train.run.checkpoint import CheckpointError

    try:
        result = evaluate(
            args.env,
            args.checkpoint,
            args.episodes,
            args.overrides,
            args.deterministic,
            video=args.video,
            render=args.render,
        )
    except (*_errors(), CheckpointError, TimeoutError) as e:
        return _fail("eval", e)
    _report(result, args.json, "evaluation")
    return 0


def run_plot(args: argparse.Namespace) -> int:
    from pufferlib import plot
    from pufferlib.train.run import rundir

    if importlib.util.find_spec("matplotlib") is None:
        return _fail("plot", "needs matplotlib: pip install 'pufferlib[plot]'")
    runs = rundir.find(args.runs)
    if not runs:
        return _fail("plot", f"no run directory (one holding metrics.jsonl) in {' '.join(args.runs)}")
    outs = [Path(o) for o in args.out] or [Path("learning_curves.png"), Path("learning_curves.svg")]
    try:
        drawn = plot.learning_curves(runs, outs, title=args.title)
    except plot.PlotError as e:
        return _fail("plot", e)
    for warning in drawn["warnings"]:
        print(f"puffer plot: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(drawn), flush=True)
    else:
        for group in drawn["groups"]:
            print(f"{group['label']}: {len(group['runs'])} run(s)")
        print("wrote " + ", ".join(drawn["files"]))
    return 0


def _report(summary: dict[str, Any], as_json: bool, title: str) -> None:
    if as_json:
        print(json.dumps(summary), flush=True)
        return
    from pufferlib.train.run.dashboard import print_summary

    print_summary(summary, title)
