"""docs/architecture.md agrees with the tree: every path its tree names exists, and every package under
pufferlib/ is named there. Red on a planted path and on a package the page leaves out."""

from __future__ import annotations

import re
from pathlib import Path

from _repo import REPO

PAGE = REPO / "docs" / "architecture.md"


def tree_paths(page: str) -> list[str]:
    """The paths the page's tree names: each line's first entry, joined to its parent folders by indent."""
    block = re.search(r"```\n(.*?)```", page, re.S).group(1)
    parents: list[str] = []  # the folder at each indent level (two spaces a level)
    paths = []
    for line in block.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or (len(line) - len(stripped)) % 2 or len(line) - len(stripped) > 2 * len(parents):
            continue  # a description's continuation line
        level = (len(line) - len(stripped)) // 2
        entries = re.split(r" {2,}", stripped)
        names = (
            entries if all(re.fullmatch(r"[\w.]+", e) for e in entries) else entries[:1]
        )  # a list of files
        for name in names:
            path = "".join(parents[:level]) + name
            paths.append(path.rstrip("/"))
        parents[level:] = [names[0] if names[0].endswith("/") else ""]
    return paths


def missing(page: str, root: Path = REPO) -> list[str]:
    """Paths the page names that do not exist under `root`, and packages under pufferlib/ it does not name."""
    named = tree_paths(page)
    problems = [
        f"{p}: named in docs/architecture.md, not in the tree" for p in named if not (root / p).exists()
    ]
    packages = sorted(str(p.parent.relative_to(root)) for p in (root / "pufferlib").rglob("__init__.py"))
    problems += [
        f"{p}: a package docs/architecture.md does not name"
        for p in packages
        if not any(n == p or n.startswith(p + "/") for n in named)
    ]
    return problems


def test_the_page_names_the_tree():
    page = PAGE.read_text()
    assert "pufferlib/environments/support" in tree_paths(page)
    assert "pufferlib/tank/matrix" in tree_paths(page) and "Dockerfile.lib" in tree_paths(page)
    assert missing(page) == []


def test_the_check_goes_red_on_a_planted_path_and_a_missing_package():
    page = PAGE.read_text()
    planted = page.replace("  smoke.py  ", "  smoked.py ", 1)
    assert "pufferlib/smoked.py: named in docs/architecture.md, not in the tree" in missing(planted)
    dropped = re.sub(r"\n    support/ .*?(?=\n  \w)", "", page, count=1, flags=re.S)
    assert missing(dropped) == [
        "pufferlib/environments/support: a package docs/architecture.md does not name"
    ]
