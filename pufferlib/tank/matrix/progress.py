"""The live view of a matrix run: a rich table in a terminal, one line per finished binding otherwise."""

from __future__ import annotations

import sys

from pufferlib.matrix_protocol import CHECKS, FAILED
from pufferlib.tank.matrix.report import Cell

GLYPHS = {
    "pass": ("✓", "green"),
    "fail": ("✗", "red"),
    "timeout": ("⧗", "dark_orange"),
    "skip": ("–", "grey50"),
    "engine-error": ("E", "magenta"),
}


class Progress:
    """A live table in a terminal; one line per finished binding otherwise. With `per_host` (--every-host)
    a line is a binding on one host, named `label(binding, host)`."""

    def __init__(self, names: list[str], quiet: bool = False, stream=None, per_host: bool = False) -> None:
        self.names = names
        self.per_host = per_host
        self.quiet = quiet
        self.stream = stream or sys.stdout
        self.cells: dict[str, dict[str, Cell]] = {n: {} for n in names}
        self.state: dict[str, str] = dict.fromkeys(names, "queued")
        self.live = None
        self.done = 0

    def __enter__(self) -> Progress:
        if not self.quiet and self.stream.isatty():
            from rich.console import Console
            from rich.live import Live

            console = Console(file=self.stream)
            self.live = Live(self._table(), console=console, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.live is not None:
            self.live.update(self._table())
            self.live.__exit__(*exc)

    def label(self, name: str, host: str) -> str:
        return f"{name} @ {host}" if self.per_host else name

    def started(self, name: str, host: str) -> None:
        self.state[name] = f"running on {host}"
        self._refresh()

    def update(self, cell: Cell) -> None:
        self.cells.setdefault(self.label(cell.env, cell.host), {})[cell.check] = cell
        self._refresh()

    def finished(self, name: str) -> None:
        self.done += 1
        cells = self.cells.get(name, {})
        failed = [c for c in cells.values() if c.status in FAILED]
        self.state[name] = "failed" if failed else "passed"
        if self.live is None and not self.quiet:
            marks = "".join(GLYPHS[c.status][0] for c in (cells.get(k) for k in CHECKS) if c)
            total = sum(c.seconds for c in cells.values())
            line = f"[{self.done}/{len(self.names)}] {name:<45} {marks:<12} {total:6.1f}s"
            print(line, file=self.stream, flush=True)
        self._refresh()

    def _refresh(self) -> None:
        if self.live is not None:
            self.live.update(self._table())

    def _table(self):
        from rich.table import Table

        table = Table(title=f"puffertank matrix: {self.done}/{len(self.names)} bindings done", expand=False)
        table.add_column("environment", no_wrap=True)
        for check in CHECKS:
            table.add_column(check[:5], justify="center")
        table.add_column("state")
        visible = [n for n in self.names if self.state[n] != "queued"][-30:]  # fit the terminal
        for name in visible:
            row = []
            for check in CHECKS:
                cell = self.cells.get(name, {}).get(check)
                glyph, colour = GLYPHS.get(cell.status, ("?", "white")) if cell else ("·", "grey30")
                row.append(f"[{colour}]{glyph}[/]")
            table.add_row(name, *row, self.state[name])
        return table
