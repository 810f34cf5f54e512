"""`puffer`: the library's command (envs, smoke, train, eval, plot, bench, build-native, play).
One module per subcommand.

Conventions shared by every subcommand: `--json` is a flag that makes stdout machine-readable and
nothing else (progress goes to stderr or is left out); a file to write is `--out FILE` or
`--json-file FILE`; `puffer --version` names the version and, in a checkout, the git revision.
"""

from __future__ import annotations

import argparse
import signal
import sys

from pufferlib.command_line import command_parser

# Each module defines register(subparsers), which adds its subcommand(s) with set_defaults(func=...).
COMMAND_MODULES = (
    "pufferlib.environments.cli",
    "pufferlib.smoke",
    "pufferlib.train.cli",
    "pufferlib.train.scale.sweep",
    "pufferlib.bench.cli",
    "pufferlib.ocean.contracts.cli",
    "pufferlib.play",
)


def build_parser() -> argparse.ArgumentParser:
    return command_parser("puffer", "PufferLib: environments, training, benchmarks.", COMMAND_MODULES)


def main(argv: list[str] | None = None) -> int:
    process = argv is None  # the `puffer` command itself, not a call from Python
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if extra and not getattr(args, "accepts_overrides", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.overrides = extra
    args.argv = argv
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("puffer: interrupted", file=sys.stderr)
        return 130
    finally:
        if process:  # the work is done and saved: another Ctrl-C could only break the interpreter's exit
            signal.signal(signal.SIGINT, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
