"""What the two commands, `puffer` (pufferlib/cli.py) and `puffertank` (pufferlib/tank/cli.py), build
their parsers with. Shared by the library and the host tooling: imports the standard library alone."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterable
from typing import Any

from pufferlib.provenance import describe


def command_parser(prog: str, description: str, modules: Iterable[str]) -> argparse.ArgumentParser:
    """The parser of `prog`: --version, then the subcommands each of `modules` adds with its
    register(subparsers) (which sets func= on them)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument(
        "--version", action="version", version=f"{prog} {describe()}", help="print the version and exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        importlib.import_module(name).register(sub)
    return parser


def add_command(sub: argparse._SubParsersAction, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose description and epilog (examples, tables) keep their line breaks."""
    return sub.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter, **kwargs)
