"""One fact, one place: the CUDA facts live only in docker/cuda.toml, image names are built only in
pufferlib/tank/names.py, and the one copy of the facts is found from a checkout and from an install.

The guards read the source as Python (ast), so a copy hidden in an f-string is found, and each guard is
shown catching a planted copy (a guard that cannot fail proves nothing). provision/'s shell scripts have
their own guard in tests/provision/.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from _repo import REPO

from pufferlib.tank import cuda

FACTS = cuda.facts(REPO)
NAMES_MODULE = REPO / "pufferlib" / "tank" / "names.py"


def _strings(tree: ast.AST) -> list[tuple[int, str, bool]]:
    """(line, text, is_template) of every string constant; an f-string's text has {} for each field."""
    found: list[tuple[int, str, bool]] = []
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = []
            for value in node.values:
                inside.add(id(value))
                parts.append(value.value if isinstance(value, ast.Constant) else "{}")
            found.append((node.lineno, "".join(str(p) for p in parts), True))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inside:
            found.append((node.lineno, node.value, False))
    return found


def cuda_fact_copies(root: Path, facts: cuda.CudaFacts) -> list[str]:
    """Places under `root` that restate a fact of docker/cuda.toml."""
    drivers = set(facts.min_driver.values()) | set(facts.compat_floor.values())
    urls = set(facts.torch_index.values())
    versions = set(facts.min_driver) | set(facts.pypi_torch_cuda.values())
    branches = set(facts.driver_branch.values())
    branch_word = re.compile(rf"(?<![\w.])({'|'.join(map(re.escape, branches))})(?![\w.])")
    hits: list[str] = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix not in (".py", ".toml", ".sh"):
            continue
        text = path.read_text(errors="replace")
        where = path.relative_to(root)
        hits += [f"{where}: driver {d}" for d in sorted(drivers) if d in text]
        hits += [f"{where}: index {u}" for u in sorted(urls) if u in text]
        if path.suffix != ".py":
            continue
        tree = ast.parse(text)
        for line, value, _ in _strings(tree):
            if value in versions or value in branches:
                hits.append(f"{where}:{line}: the string {value!r}")
            elif branch_word.search(value):
                hits.append(
                    f"{where}:{line}: driver branch {branch_word.search(value).group(1)} in {value!r}"
                )
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and type(node.value) is int and str(node.value) in branches:
                hits.append(f"{where}:{node.lineno}: the number {node.value}")
    return hits


IMAGE_REF = re.compile(r"(\{[^{}]*\}|puffertank)/(\{[^{}]*\}|base|envs|lib|debian):(\{|[\w.-]+$)")


def image_name_constructions(root: Path, allowed: Path) -> list[str]:
    """String literals outside `allowed` that are, or build, an image reference NAMESPACE/STAGE:VARIANT."""
    hits = []
    for path in sorted(root.rglob("*.py")):
        if path == allowed or "__pycache__" in path.parts:
            continue
        for line, value, template in _strings(ast.parse(path.read_text())):
            whole = re.fullmatch(r"puffertank/(base|envs|lib|debian):[\w.-]+", value)
            if whole or (template and IMAGE_REF.search(value)) or re.search(r"\{\}/\{\}:\{\}", value):
                hits.append(f"{path.relative_to(root)}:{line}: {value!r}")
    return hits


def test_no_second_copy_of_the_cuda_facts() -> None:
    hits = cuda_fact_copies(REPO / "pufferlib", FACTS)
    assert hits == [], (
        "CUDA facts restated outside docker/cuda.toml (read them with pufferlib.tank.cuda):\n"
        + ("\n".join(hits))
    )


def test_image_names_are_built_only_in_names_py() -> None:
    hits = image_name_constructions(REPO / "pufferlib", NAMES_MODULE)
    assert hits == [], "image names built outside tank/names.py (use names.image_ref):\n" + "\n".join(hits)


def test_the_guards_catch_planted_copies(tmp_path: Path) -> None:
    planted = tmp_path / "pkg"
    planted.mkdir()
    (planted / "table.py").write_text(
        'MIN = {"13.0": "580.65.06"}\n'
        'INDEX = "https://download.pytorch.org/whl/cu126"\n'
        'FIX = f"install driver >= 580 with {x}"\n'
        "BRANCH = 535\n"
    )
    (planted / "names.py").write_text(
        'A = f"puffertank/{stage}:{variant}"\nB = f"{ns}/lib:{v}"\nC = "puffertank/lib:cuda"\n'
        'OK = "run this image instead of puffertank/lib:VARIANT"\n'
    )
    hits = cuda_fact_copies(planted, FACTS)
    for needle in ("driver 580.65.06", "index https://", "'13.0'", "driver branch 580", "the number 535"):
        assert any(needle in h for h in hits), (needle, hits)
    names = image_name_constructions(planted, planted / "elsewhere.py")
    assert len(names) == 3 and not any("VARIANT" in h for h in names), names


def test_the_facts_are_found_from_an_install(tmp_path: Path) -> None:
    """`pip install CHECKOUT` (not editable, as provisioning may do): the facts are still the checkout's,
    found through pip's record of where it installed from, from a directory outside the checkout."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("Dockerfile.base", "Dockerfile.envs", "Dockerfile.lib", "pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, checkout / name)
    (checkout / "docker").mkdir()
    shutil.copy2(REPO / cuda.CUDA_TOML, checkout / cuda.CUDA_TOML)
    shutil.copytree(REPO / "pufferlib", checkout / "pufferlib", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--target"]
    res = subprocess.run([*pip, str(target), str(checkout)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    probe = (
        "import pufferlib, pufferlib.tank.cuda as c; "
        "print(pufferlib.__file__); print(c.facts().path); print(c.facts().min_driver == "
        f"{FACTS.min_driver!r})"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    res = subprocess.run(
        [sys.executable, "-c", probe], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    module, path, same = res.stdout.split()
    assert module.startswith(str(target)), "imported the checkout's pufferlib, not the installed one"
    assert path == str(checkout / cuda.CUDA_TOML) and same == "True"
