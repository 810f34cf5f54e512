"""The family table (pufferlib/environments/families.py) is the one list of families: every other list
is derived from it or agrees with it. Each guard is a function of the text it reads, and each is shown
catching a planted mismatch (a guard that cannot fail proves nothing).
"""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from _repo import REPO

import pufferlib.environments as envs
from pufferlib.environments import families

DOCKER = REPO / "docker"
PYPROJECT = REPO / "pyproject.toml"
TABLE = REPO / "pufferlib" / "environments" / "families.py"


def normalize(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): Box2D == box2d, dm_control == dm-control."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalize(re.match(r"[A-Za-z0-9._-]+", requirement.strip()).group(0))


def pinned(*files: str) -> set[str]:
    """The names pinned (`name==version`) in docker/constraints/ files."""
    names = set()
    for file in files:
        for line in (DOCKER / "constraints" / file).read_text().splitlines():
            if "==" in line and not line.lstrip().startswith("#"):
                names.add(requirement_name(line))
    return names


# ---------------------------------------------------------------------------------------- the guards


def pyproject_mismatches(pyproject_text: str, table=families.FAMILIES) -> list[str]:
    """How pyproject.toml's extras disagree with the table."""
    project = tomllib.loads(pyproject_text)["project"]
    extras = project["optional-dependencies"]
    core = {requirement_name(r) for r in project["dependencies"]}
    allowed_anywhere = core | pinned("base.txt") | {"pufferlib"}
    problems = []
    for family in table:
        if not family.extra:
            continue
        if family.extra not in extras:
            problems.append(f"{family.module}: no extra [{family.extra}] in pyproject.toml")
            continue
        own = {normalize(n) for n in (*family.image, *family.no_deps)}
        for requirement in extras[family.extra]:
            if requirement_name(requirement) not in own | allowed_anywhere:
                problems.append(
                    f"{family.module}: extra [{family.extra}] names {requirement!r}, which the table's row "
                    f"does not install"
                )
    common = set()
    for requirement in extras.get("common", []):
        common |= {e.strip() for e in re.search(r"\[(.*)\]", requirement).group(1).split(",")}
    for family in table:
        if family.extra and family.common and family.extra not in common:
            problems.append(f"{family.module}: extra [{family.extra}] missing from [common]")
        if family.extra and not family.common and family.extra in common:
            problems.append(f"{family.module}: extra [{family.extra}] in [common], the table says not")
    extras_of_families = {f.extra for f in table if f.extra}
    for name in sorted(common - extras_of_families - set(extras)):
        problems.append(f"[common] names [{name}], which is no extra")
    return problems


def install_envs_lists(script: Path) -> dict[str, list[str]]:
    """install-envs.sh's PACKAGES and NO_DEPS, as bash reads them (the script sourced, main not run)."""
    code = f'source "{script}"; echo "${{PACKAGES[*]}}"; echo "${{NO_DEPS[*]}}"'
    out = subprocess.run(["bash", "-c", code], capture_output=True, text=True, check=True, timeout=60)
    packages, no_deps = out.stdout.splitlines()[-2:]
    return {"PACKAGES": packages.split(), "NO_DEPS": no_deps.split()}


def install_envs_mismatches(script: Path, table=families.FAMILIES) -> list[str]:
    """Table packages that docker/install-envs.sh does not install the way the table says."""
    lists = install_envs_lists(script)
    packages = {normalize(n) for n in lists["PACKAGES"]}
    no_deps = {normalize(n) for n in lists["NO_DEPS"]}
    problems = []
    for family in table:
        problems += [
            f"{family.module}: {n} not in install-envs.sh PACKAGES"
            for n in family.image
            if normalize(n) not in packages
        ]
        problems += [
            f"{family.module}: {n} not in install-envs.sh NO_DEPS"
            for n in family.no_deps
            if normalize(n) not in no_deps
        ]
    table_no_deps = {normalize(n) for f in table for n in f.no_deps}
    problems += [f"install-envs.sh NO_DEPS has {n}, no family's" for n in sorted(no_deps - table_no_deps)]
    return problems


# --------------------------------------------------------------------------------------- the tests


def test_the_table_is_well_formed():
    modules = families.modules()
    assert len(set(modules)) == len(modules), "a family listed twice"
    for family in families.FAMILIES:
        assert (REPO / "pufferlib" / "environments" / f"{family.module}.py").is_file(), family.module
        installed = {normalize(n) for n in (*family.image, *family.no_deps)}
        assert {normalize(n) for n in family.reported} <= installed, family.module


def registering_modules(folder: Path) -> set[str]:
    """Modules of `folder` that call register(), register_catalog() or register_unavailable(): family
    modules (the package's __init__, which registers plugins' modules, and registry.py, which defines
    them, aside)."""
    found = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in (
                "register",
                "register_catalog",
                "register_unavailable",
            ):
                found.add(path.stem)
    return found - {"__init__", "registry"}


def test_every_family_module_is_in_the_table(tmp_path):
    """A family module left out of the table would never be imported (nor its bindings registered)."""
    folder = REPO / "pufferlib" / "environments"
    assert registering_modules(folder) == set(families.modules())
    assert [m.__name__.rsplit(".", 1)[1] for m in envs.FAMILIES] == list(families.modules())
    # red on a planted mismatch: a new family module the table does not list
    for path in folder.glob("*.py"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "newfam.py").write_text((folder / "crafter.py").read_text())
    assert registering_modules(tmp_path) - set(families.modules()) == {"newfam"}


PACKAGE_API = {"__init__", "registry", "families", "cli"}  # environments/'s own modules, not families


def strays(folder: Path) -> set[str]:
    """Modules at the top of `folder` that are neither a family of the table nor the package's own API
    (what the families share belongs in environments/support/)."""
    return {p.stem for p in folder.glob("*.py")} - set(families.modules()) - PACKAGE_API


def test_the_folder_holds_families_and_the_packages_api(tmp_path):
    folder = REPO / "pufferlib" / "environments"
    assert strays(folder) == set()
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "_helpers.py").write_text("")  # red on a planted support module beside the families
    assert strays(tmp_path) == {"_helpers"}


def test_every_binding_carries_its_rows_extra():
    for module, family in zip(envs.FAMILIES, families.FAMILIES, strict=True):
        name = getattr(module, "FAMILY", family.module)
        modules_bindings = [b for b in envs.bindings(name) if b.make.__module__ == module.__name__]
        assert modules_bindings or not family.extra, f"{family.module}: no bindings found"
        for binding in modules_bindings:
            assert binding.extra == family.extra, (
                f"{binding.name}: extra {binding.extra!r}, table {family.extra!r}"
            )


def test_pyproject_extras_agree_with_the_table():
    assert pyproject_mismatches(PYPROJECT.read_text()) == []


def test_pyproject_guard_goes_red_on_a_planted_mismatch():
    text = PYPROJECT.read_text()
    missing = text.replace('\nvizdoom = ["vizdoom>=1.3.2,<1.4"]', "\n")
    assert missing != text
    assert pyproject_mismatches(missing) == ["vizdoom: no extra [vizdoom] in pyproject.toml"]
    stray = text.replace('vizdoom = ["vizdoom>=1.3.2,<1.4"]', 'vizdoom = ["vizdoom>=1.3.2,<1.4", "gym3"]')
    assert pyproject_mismatches(stray) == [
        "vizdoom: extra [vizdoom] names 'gym3', which the table's row does not install"
    ]
    left_out = text.replace("magent2,open_spiel,", "open_spiel,")
    assert pyproject_mismatches(left_out) == ["magent2: extra [magent2] missing from [common]"]


def test_install_envs_installs_every_family_package():
    assert install_envs_mismatches(DOCKER / "install-envs.sh") == []


def test_install_envs_guard_goes_red_on_a_planted_mismatch(tmp_path):
    script = tmp_path / "install-envs.sh"
    script.write_text((DOCKER / "install-envs.sh").read_text().replace(" stable-retro\n", "\n"))
    assert install_envs_mismatches(script) == ["retro: stable-retro not in install-envs.sh PACKAGES"]
    script.write_text(
        (DOCKER / "install-envs.sh")
        .read_text()
        .replace("NO_DEPS=(craftax flax bsuite nmmo)", "NO_DEPS=(craftax flax nmmo)")
    )
    assert install_envs_mismatches(script) == ["bsuite: bsuite not in install-envs.sh NO_DEPS"]


def test_every_family_package_is_pinned_in_envs_txt():
    pins = pinned("base.txt", "envs.txt")
    table = {normalize(n) for n in (*families.image_packages(), *families.no_deps_packages())}
    assert sorted(table - pins) == []


def check_envs_mismatches(check_names, table=families.FAMILIES) -> list[str]:
    return [
        f"{family.module}: check_envs.py has no check {check!r}"
        for family in table
        for check in family.checks
        if check not in check_names
    ] + [
        f"{f.module}: installs packages but names no check_envs.py check"
        for f in table
        if f.image and not f.checks
    ]


def test_check_envs_checks_every_family():
    sys.path.insert(0, str(DOCKER))
    try:
        import check_envs
    finally:
        sys.path.remove(str(DOCKER))
    assert check_envs_mismatches(set(check_envs.CHECKS)) == []
    # red on a planted mismatch: a check renamed (or dropped) in check_envs.py
    renamed = (set(check_envs.CHECKS) - {"vizdoom"}) | {"ViZDoom"}
    assert check_envs_mismatches(renamed) == ["vizdoom: check_envs.py has no check 'vizdoom'"]


def test_the_script_form_prints_the_lists_with_nothing_but_the_standard_library(tmp_path):
    """Loaded by path with -S -I (no site-packages, no pufferlib): what a shell in the envs stage can run."""
    for what, expected in (
        ("image-packages", families.image_packages()),
        ("no-deps-packages", families.no_deps_packages()),
        ("modules", families.modules()),
    ):
        out = subprocess.run(
            [sys.executable, "-S", "-I", str(TABLE), what],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=True,
        )
        assert tuple(out.stdout.split()) == expected
    bad = subprocess.run([sys.executable, "-I", str(TABLE), "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage: families.py" in bad.stderr


RUN_SH = REPO / "tests" / "run.sh"
TABLE_ROWS = families.FAMILIES
KINETIX_NO_DEPS = ("kinetix-env", "jax2d", "jaxgl", "gymnax")


def venv_mismatches(run_sh_text: str, table=families.FAMILIES) -> list[str]:
    """How tests/run.sh's installs of the families outside `common` disagree with the table."""
    problems = []
    if 'families.py" venv-steps' not in run_sh_text:
        problems.append("tests/run.sh does not run families.py venv-steps")
    if re.search(r"pip\" install [^\n]*--no-deps", run_sh_text):
        problems.append("tests/run.sh has a --no-deps pip line of its own: put it in the family's venv steps")
    main_line = run_sh_text[run_sh_text.index("install_python()") :].split("\n  #", 1)[0]
    for family in table:
        if family.common and family.venv:
            problems.append(f"{family.module}: venv steps, but [common] installs it")
        if not family.common and family.extra and not family.venv:
            problems.append(f"{family.module}: outside [common] with no venv steps (tests/run.sh skips it)")
        no_deps = {n for step in family.venv if "--no-deps" in step.split() for n in step.split()[1:]}
        no_deps = {normalize(n) for n in no_deps if not n.startswith("-")}
        for name in family.no_deps:
            if not family.common and normalize(name) not in no_deps and f" {name}" not in main_line:
                problems.append(f"{family.module}: {name} (no_deps) installed by no venv step")
        stray = no_deps - {normalize(n) for n in (*family.no_deps, *family.image)}
        problems += [f"{family.module}: venv step installs {n}, not in its row" for n in sorted(stray)]
    return problems


def test_run_sh_installs_the_families_outside_common_by_the_table():
    assert venv_mismatches(RUN_SH.read_text()) == []
    assert families.venv_steps("/r")[-2:] == ("-e /r[kinetix]", "--no-deps kinetix-env jax2d jaxgl gymnax")


def test_run_sh_guard_goes_red_on_a_planted_mismatch():
    text = RUN_SH.read_text()
    planted = text.replace(
        "install_python() {\n", 'install_python() {\n  "$VENV/bin/pip" install --no-deps x\n'
    )
    assert venv_mismatches(planted) == [
        "tests/run.sh has a --no-deps pip line of its own: put it in the family's venv steps"
    ]
    rows = [
        f if f.module != "kinetix" else dataclasses.replace(f, venv=f.venv[:1]) for f in families.FAMILIES
    ]
    assert venv_mismatches(text, tuple(rows)) == [
        f"kinetix: {n} (no_deps) installed by no venv step" for n in KINETIX_NO_DEPS
    ]
