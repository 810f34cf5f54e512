"""`puffertank`: the host command. Each subcommand lives in its own module with a `register()`.

The one place errors are printed: a TankError becomes `puffertank CMD: error: MESSAGE` and `Fix: FIX` on
stderr with exit status 1 (no traceback). Ctrl-C, SIGTERM and SIGHUP interrupt any subcommand the same way
(tank/signals.py); whatever it started is stopped and removed on the way out, and the exit status is
128 + the signal's number (130, 143, 129).
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from pufferlib.command_line import command_parser

# Each module defines register(subparsers), which adds its subcommand(s) with set_defaults(func=...).
COMMAND_MODULES = (
    "pufferlib.tank.build.cli",
    "pufferlib.tank.pushpull",
    "pufferlib.tank.shell",
    "pufferlib.tank.lab",
    "pufferlib.tank.matrix",
    "pufferlib.tank.doctor",
    "pufferlib.tank.variant",
)


def build_parser() -> argparse.ArgumentParser:
    return command_parser(
        "puffertank",
        "PufferTank host tooling: build the image chain, run it, test it, check the host.",
        COMMAND_MODULES,
    )


def _say(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # after SIGHUP the terminal may be gone
        print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv  # the exact command line, for reports
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from pufferlib.tank.errors import TankError
    from pufferlib.tank.signals import exit_status, interrupts, signum_of

    try:
        with interrupts():
            return int(args.func(args) or 0)
    except TankError as exc:  # a problem the user can fix: the message says how, no traceback needed
        _say(f"puffertank {args.command}: error: {exc.message}" + (f"\nFix: {exc.fix}" if exc.fix else ""))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        import signal

        _say(f"puffertank {args.command}: interrupted ({signal.Signals(signum_of(exc)).name})")
        return exit_status(exc)


if __name__ == "__main__":
    sys.exit(main())
