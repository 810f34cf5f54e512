"""No import loop in the package: the imports of pufferlib/ form a graph without cycles.

Imports inside functions count too: a lazy import that runs back (ppo imports checkpoint,
checkpoint imports ppo inside a function) is still two modules that cannot be understood or
changed apart. A module's own parent packages do not count (importing a submodule imports them).
"""

import ast
from pathlib import Path

from _repo import REPO

PACKAGE = REPO / "pufferlib"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The package's modules that `path` imports, anywhere in it, other than its own parents."""
    parents = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{node.module}"
            # `from package import module` depends on that module; `from module import name` on it
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name and t not in parents)
    return out


def test_no_import_loop():
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {name: imports(path, name, set(paths)) for name, path in paths.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    loops = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                loops.append(" -> ".join([*path[path.index(dep) :], dep]))
            elif dep not in state:
                visit(dep, [*path, dep])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not loops, "import loops:\n" + "\n".join(loops)
