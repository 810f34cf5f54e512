"""This host's puffertank settings: the one place a provisioned box keeps its fleet defaults (the registry).

The file is KEY=VALUE lines (`#` comments), by default /etc/puffertank/puffertank.conf (PUFFERTANK_CONFIG
names another); an environment variable PUFFERTANK_<KEY> wins over the file, and a command-line flag over
both. provision/setup-host.sh writes it through this file, which needs only the standard library and runs
by path, so the path, the format and the checks of each value live here alone:

    python3 pufferlib/tank/settings.py path                    # where the file is
    python3 pufferlib/tank/settings.py get registry            # the value (none: no output)
    python3 pufferlib/tank/settings.py set registry HOST:PORT  # checked, then written (exit 2 if bad)
    python3 pufferlib/tank/settings.py check registry HOST:PORT  # checked only: the value, or exit 2
    python3 pufferlib/tank/settings.py registry-port           # the port a served registry listens on
    python3 pufferlib/tank/settings.py daemon-json FILE HOST:PORT
        # FILE's Docker daemon.json (other keys kept) with HOST:PORT in insecure-registries, on stdout
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

DEFAULT_FILE = Path("/etc/puffertank/puffertank.conf")
FILE_ENV = "PUFFERTANK_CONFIG"
REGISTRY_PORT = 5000  # docker-registry's own default; setup-host.sh --registry serves on it
KEYS = ("registry",)

# HOST:PORT. The port is required: without a dot, a colon or "localhost", Docker takes the first part of
# "box1/puffertank/lib" for a Docker Hub account, not for a registry.
_HOST = r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?"
REGISTRY_PATTERN = re.compile(rf"^({_HOST}):(\d{{1,5}})$")


class SettingError(ValueError):
    """A value that is not of its key's form; `fix` says what would be."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix


def config_file() -> Path:
    return Path(os.environ.get(FILE_ENV) or DEFAULT_FILE)


def check_registry(value: str, where: str = "registry") -> str:
    """`value` if it is HOST:PORT (a port in 1..65535), else SettingError naming `where`."""
    match = REGISTRY_PATTERN.match(value.strip())
    if match is None or not 0 < int(match.group(2)) < 65536:
        raise SettingError(
            f"{where} {value!r} is not HOST:PORT",
            "name the registry as HOST:PORT without a scheme or path, e.g. "
            f"box1.tailnet.ts.net:{REGISTRY_PORT} or 127.0.0.1:{REGISTRY_PORT}",
        )
    return value.strip()


CHECKERS = {"registry": check_registry}


def read_file(path: Path | None = None) -> dict[str, str]:
    """The file's settings (empty when it does not exist); a malformed line is a SettingError."""
    path = path or config_file()
    try:
        text = path.read_text()
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or key.strip() not in KEYS:
            raise SettingError(
                f"{path} line {number}: {line!r} is not KEY=VALUE with a known key ({', '.join(KEYS)})",
                "fix or remove the line (python3 pufferlib/tank/settings.py set KEY VALUE writes it)",
            )
        key = key.strip()
        values[key] = CHECKERS[key](value.strip().strip("\"'"), f"{path}: {key}")
    return values


def get(key: str) -> str | None:
    """PUFFERTANK_<KEY> from the environment, else the file's value, else None."""
    env = f"PUFFERTANK_{key.upper()}"
    if os.environ.get(env):
        return CHECKERS[key](os.environ[env], env)
    return read_file().get(key)


def put(key: str, value: str, path: Path | None = None) -> Path:
    """Check `value` and write it into the file (other keys kept); returns the file."""
    path = path or config_file()
    values = read_file(path)
    values[key] = CHECKERS[key](value, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{k}={v}\n" for k, v in sorted(values.items()))
    path.write_text("# puffertank's settings (pufferlib/tank/settings.py reads and writes them)\n" + body)
    return path


def daemon_json(path: Path, address: str) -> str:
    """The Docker daemon.json at `path` (absent: {}) with `address` in insecure-registries, other keys kept:
    the fleet's registry is plain HTTP on the tailnet (docs/fleet.md says why), so each engine is told that
    one name, and only it."""
    check_registry(address, "registry")
    try:
        data = json.loads(path.read_text() or "{}")
    except FileNotFoundError:
        data = {}
    except ValueError as exc:
        raise SettingError(
            f"{path} is not JSON ({exc})", f"fix {path} by hand, then run this again"
        ) from None
    if not isinstance(data, dict):
        raise SettingError(f"{path} is not a JSON object", f"fix {path} by hand, then run this again")
    names = data.setdefault("insecure-registries", [])
    if address not in names:
        names.append(address)
    return json.dumps(data, indent=4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="settings.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("path", help="where the settings file is")
    sub.add_parser("get", help="print a setting (nothing when unset)").add_argument("key", choices=KEYS)
    put_parser = sub.add_parser("set", help="check and write a setting")
    put_parser.add_argument("key", choices=KEYS)
    put_parser.add_argument("value")
    check_parser = sub.add_parser("check", help="check a value (printed back when good)")
    check_parser.add_argument("key", choices=KEYS)
    check_parser.add_argument("value")
    sub.add_parser("registry-port", help="the port a served registry listens on")
    daemon_parser = sub.add_parser("daemon-json", help="daemon.json with a registry in insecure-registries")
    daemon_parser.add_argument("file", type=Path)
    daemon_parser.add_argument("address")
    args = parser.parse_args(argv)
    try:
        if args.what == "path":
            print(config_file())
        elif args.what == "check":
            print(CHECKERS[args.key](args.value, args.key))
        elif args.what == "registry-port":
            print(REGISTRY_PORT)
        elif args.what == "daemon-json":
            print(daemon_json(args.file, args.address))
        elif args.what == "get":
            value = get(args.key)
            if value:
                print(value)
        else:
            print(put(args.key, args.value))
    except SettingError as exc:
        print(f"settings.py: error: {exc.message}\nFix: {exc.fix}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
