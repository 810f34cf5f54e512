"""The layer rules: the host tooling (pufferlib/tank/) stands apart from the library it tests.

1. A module under pufferlib/tank/ imports, of the rest of pufferlib, only the shared modules that
   import the standard library alone: the package root (`pufferlib/__init__.py`, whose attributes load
   lazily), pufferlib.matrix_protocol (what the host and the in-container smoke run agree on) and
   pufferlib.provenance (version and machine facts) and pufferlib.command_line (what both commands'
   parsers are built with). Imports inside functions count, and so do
   `importlib.import_module("pufferlib....")` calls; `from pufferlib import PufferEnv` counts as
   importing pufferlib.PufferEnv, which the root would load from pufferlib.core.
2. So importing the host tooling (every module of pufferlib.tank, and building the `puffertank` parser)
   loads no numpy, gymnasium or torch: checked in a fresh interpreter.

Each rule's checker is shown to go red on a planted violation, so a green run means something.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

from _repo import REPO

ROOT = REPO
PACKAGE = ROOT / "pufferlib"
HOST = PACKAGE / "tank"
SHARED = {
    "pufferlib",
    "pufferlib._version",
    "pufferlib.command_line",
    "pufferlib.matrix_protocol",
    "pufferlib.provenance",
}
HEAVY = ("numpy", "gymnasium", "torch")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def _from_target(base: str, name: str) -> str:
    """What `from base import name` depends on: a submodule when it is one; any name but __version__ of
    the package root (its attributes load from submodules, pufferlib/__init__.py); else base itself."""
    if base == "pufferlib":
        return base if name == "__version__" else f"{base}.{name}"
    return f"{base}.{name}" if f"{base}.{name}" in MODULES else base


def imported(source: str, name: str, is_package: bool = False) -> set[str]:
    """Every module `source` (the text of module `name`) imports, anywhere in it, as absolute names.
    `from a import b` counts as a.b where that is a submodule (see _from_target)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name if is_package else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{base}" if base else package
            out.update(_from_target(base, alias.name) for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.add(node.args[0].value)
    return out


def host_violations(path: Path, name: str) -> list[str]:
    """Rule 1 for one host module: the pufferlib modules it imports outside pufferlib.tank and SHARED."""
    found = imported(path.read_text(), name, path.name == "__init__.py")
    library = {m for m in found if m == "pufferlib" or m.startswith("pufferlib.")}
    host = {m for m in library if m == "pufferlib.tank" or m.startswith("pufferlib.tank.")}
    return sorted(library - host - SHARED)


def non_stdlib(path: Path, name: str) -> list[str]:
    """What a shared module imports besides the standard library and the other shared modules."""
    found = imported(path.read_text(), name, path.name == "__init__.py")
    return sorted(m for m in found if m.split(".")[0] not in sys.stdlib_module_names and m not in SHARED)


def heavy_after(code: str) -> list[str]:
    """Which of HEAVY a fresh interpreter has loaded after running `code` (with this checkout first)."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


HOST_IMPORTS = (
    "import importlib, pkgutil, pufferlib.tank, pufferlib.tank.cli\n"
    "for m in pkgutil.walk_packages(pufferlib.tank.__path__, 'pufferlib.tank.'):\n"
    "    importlib.import_module(m.name)\n"
    "pufferlib.tank.cli.build_parser()"
)


def test_host_imports_only_the_shared_modules():
    bad = {}
    for path in sorted(HOST.rglob("*.py")):
        if violations := host_violations(path, module_name(path)):
            bad[str(path.relative_to(ROOT))] = violations
    assert not bad, f"the host imports the library (move what both sides need to a shared module): {bad}"


def test_shared_modules_import_the_standard_library_only():
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    bad = {name: non_stdlib(paths[name], name) for name in SHARED}
    assert not any(bad.values()), f"shared modules must import the standard library only: {bad}"


def test_host_tooling_loads_no_numpy_gymnasium_or_torch():
    assert heavy_after(HOST_IMPORTS) == []


def test_the_checkers_go_red_on_planted_violations(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text(
        "import importlib\n"
        "import docker\n"
        "import pufferlib\n"
        "from pufferlib import PufferEnv, __version__\n"
        "from pufferlib.matrix_protocol import CHECKS\n"
        "from pufferlib.tank.errors import TankError\n"
        "from . import paths\n"
        "def later():\n"
        "    import pufferlib.emulation\n"
        "    from pufferlib.smoke import Smoke\n"
        "    from .. import vector\n"
        "    return importlib.import_module('pufferlib.environments')\n"
    )
    assert host_violations(planted, "pufferlib.tank.planted") == [
        "pufferlib.PufferEnv",
        "pufferlib.emulation",
        "pufferlib.environments",
        "pufferlib.smoke",
        "pufferlib.vector",
    ]
    assert non_stdlib(planted, "pufferlib.tank.planted") == [
        "docker",
        "pufferlib.PufferEnv",
        "pufferlib.emulation",
        "pufferlib.environments",
        "pufferlib.smoke",
        "pufferlib.tank.errors",
        "pufferlib.tank.paths",
        "pufferlib.vector",
    ]
    assert set(heavy_after("import pufferlib\npufferlib.PufferEnv")) == {"numpy", "gymnasium"}
    assert heavy_after(HOST_IMPORTS + "\nimport pufferlib.smoke") == ["numpy"]  # what matrix.py once did
    assert "torch" in heavy_after("import pufferlib.pytorch")
