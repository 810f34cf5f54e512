"""`puffer train ENV [--section.key value ...]` and `puffer eval ENV --checkpoint PATH`."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from typing import Any

TRAIN_EPILOG = """\
Every config value can be overridden: --train.learning-rate 3e-4 --vec.num-envs 16 --train.compile
(dashes or underscores; --section.key=value works too). Defaults come from
pufferlib/train/config/default.toml, then <family>.toml, then <family>.<env>.toml;
--print-config shows the result for ENV. Sections: train, vec, rnn (fixed keys), policy and env
(keyword arguments of the policy class and the environment).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train",
        help="train a policy with PPO (e.g. puffer train ocean/squared)",
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("env", help="environment binding, e.g. ocean/squared (see `puffer envs`)")
    p.add_argument("--json", action="store_true", help="print only the summary, as one JSON line")
    p.add_argument("--print-config", action="store_true", help="print the resolved config as TOML and exit")
    p.add_argument("--no-dashboard", action="store_true", help="no live dashboard even on a terminal")
    _add_launch_flags(p)
    p.set_defaults(func=run_train, accepts_overrides=True)

    e = sub.add_parser("eval", help="run a checkpoint and print its mean return")
    e.add_argument("env", help="environment binding the checkpoint was trained on")
    e.add_argument("--checkpoint", required=True, help="a model_*.pt file written by `puffer train`")
    e.add_argument("--episodes", type=int, default=100, help="episodes to average over (default 100)")
    e.add_argument("--deterministic", action="store_true", help="take the most likely action, not a sample")
    e.add_argument("--json", action="store_true", help="print only the result, as one JSON line")
    e.set_defaults(func=run_eval, accepts_overrides=True)


def _errors() -> tuple[type[Exception], ...]:
    """Errors that are the user's to fix: printed as one line, without a traceback."""
    from pufferlib import APIUsageError, EnvironmentSetupError
    from pufferlib.environments import UnknownEnvironmentError
    from pufferlib.train.config import ConfigError

    return (ConfigError, UnknownEnvironmentError, EnvironmentSetupError, APIUsageError)


def _fail(command: str, error: Exception) -> int:
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
    from pufferlib.train import distributed

    flags = [flag for flag, on in (("--json", args.json), ("--no-dashboard", args.no_dashboard)) if on]
    try:
        return distributed.launch(args, [args.env, *flags, *args.overrides])
    except _errors() as e:
        return _fail("train", e)


def run_train(args: argparse.Namespace) -> int:
    from pufferlib.train import config as configuration

    try:
        import pufferlib.environments as envs

        envs.get(args.env)
        cfg = configuration.load(args.env, args.overrides)
    except _errors() as e:
        return _fail("train", e)
    if args.print_config:
        print(configuration.to_toml(cfg), end="")
        return 0
    if any(getattr(args, flag, None) is not None for flag in LAUNCH_FLAGS):
        return _launch(args)

    from pufferlib.train import distributed, signals, train

    stop = signals.STOP_SIGNALS
    if distributed.under_torchrun():  # torchrun passes a Ctrl-C on: a second one must not stop the save
        stop = (*stop, signal.SIGINT)
    try:
        with signals.stop_on(stop):  # SIGTERM/SIGHUP save and report like Ctrl-C
            summary = train(
                args.env,
                args.overrides,
                quiet=args.json or args.no_dashboard,
                checkpoint_dir=cfg["train"]["checkpoint_dir"],
            )
    except _errors() as e:
        return _fail("train", e)
    except distributed.DistributedError as e:  # a rank lost, or the ranks never met
        distributed.record_failure(e)
        saved = getattr(e, "checkpoint", None)
        print(f"puffer train: error: {e}" + (f"; saved {saved}" if saved else ""), file=sys.stderr)
        return 1
    except signals.Interrupted as e:  # before training began: nothing to save
        print(f"puffer train: stopped by {e.signal_name} before training began", file=sys.stderr)
        return signals.exit_code(e.signal_name)
    if not distributed.is_main():  # rank 0 alone prints
        return signals.exit_code(summary.get("signal")) if summary["stop_reason"] == "interrupted" else 0
    _report(summary, args.json, "training summary")
    if summary["stop_reason"] == "interrupted":
        return signals.exit_code(summary.get("signal"))
    return 0


def run_eval(args: argparse.Namespace) -> int:
    from pufferlib.train import evaluate
    from pufferlib.train.checkpoint import CheckpointError

    try:
        result = evaluate(args.env, args.checkpoint, args.episodes, args.overrides, args.deterministic)
    except (*_errors(), CheckpointError, TimeoutError) as e:
        return _fail("eval", e)
    _report(result, args.json, "evaluation")
    return 0


def _report(summary: dict[str, Any], as_json: bool, title: str) -> None:
    if as_json:
        print(json.dumps(summary), flush=True)
        return
    from pufferlib.train.dashboard import print_summary

    print_summary(summary, title)
