"""`puffertank`: the host command. Each subcommand lives in its own module with a `register()`."""

from __future__ import annotations

import argparse
import importlib
import sys

# Each module defines register(subparsers), which adds its subcommand(s) with set_defaults(func=...).
COMMAND_MODULES = (
    "pufferlib.tank.images",
    "pufferlib.tank.shell",
    "pufferlib.tank.matrix",
    "pufferlib.tank.doctor",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="puffertank",
        description="PufferTank host tooling: build the image chain, run it, test it, check the host.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from pufferlib.tank.docker_client import TankError

    try:
        return int(args.func(args) or 0)
    except TankError as exc:  # a problem the user can fix: the message says how, no traceback needed
        print(f"puffertank {args.command}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("puffertank: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
