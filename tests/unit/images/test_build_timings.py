"""`puffertank build --timings`: the budgets table from the engine's sizes and the build record (a stand-in
engine here; the real one in tests/integration)."""

from __future__ import annotations

import types

import docker

from pufferlib.tank.build import timings
from pufferlib.tank.build.options import BuildOptions

STAGE = {"status": "built", "steps": 3, "cached": 0, "seconds": 4.0}
RUNS = [
    {
        "variant": "cpu",
        "when": "2026-01-01T00:00:00",
        "seconds": 540,
        "stages": dict.fromkeys(("base", "envs", "lib"), STAGE),
    },
    {
        "variant": "cpu",
        "when": "2026-01-02T00:00:00",
        "seconds": 9,
        "stages": {
            "base": {"status": "reused"},
            "envs": {"status": "reused"},
            "lib": {"status": "built", "seconds": 12.5},
        },
    },
]


class _Images:
    def __init__(self, sizes: dict[str, tuple[float, dict]]) -> None:
        self.sizes = sizes

    def get(self, ref: str):
        if ref not in self.sizes:
            raise docker.errors.ImageNotFound(ref)
        size, labels = self.sizes[ref]
        return types.SimpleNamespace(attrs={"Size": size * 1e9}, labels=labels)


def _report(monkeypatch, variant: str, images: dict) -> str:
    monkeypatch.setattr(timings, "load", lambda: RUNS)
    monkeypatch.setattr(timings, "measure_import", lambda client, image: [1.0, 3.0, 2.0])
    return timings.report(types.SimpleNamespace(images=_Images(images)), BuildOptions(variant=variant))


def _row(text: str, what: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.strip().startswith(what))
    return line.split()


def test_cpu_budgets(monkeypatch) -> None:
    opts = BuildOptions(variant="cpu")
    text = _report(monkeypatch, "cpu", {opts.tag("lib"): (3.0, {})})
    assert f"{opts.tag('base'):<28} not built" in text
    assert _row(text, "lib rebuild")[-1] == "OVER"  # 12.5 s against 10 s
    assert "2.00 s (median of 3, now)" in text
    assert _row(text, "cpu lib image")[-3:] == ["3.00", "GB", "ok"]  # the whole image, against 3.3 GB
    assert "9.0 min (last, 2026-01-01T00:00:00)" in text and _row(text, "cpu chain")[-1] == "OVER"  # 8 min


def test_an_image_over_its_size_budget(monkeypatch) -> None:
    opts = BuildOptions(variant="cpu")
    text = _report(monkeypatch, "cpu", {opts.tag("lib"): (3.4, {})})
    assert _row(text, "cpu lib image")[-3:] == ["3.40", "GB", "OVER"]


def test_cuda_without_images_measures_nothing(monkeypatch) -> None:
    text = _report(monkeypatch, "cuda", {})
    assert "import pufferlib" not in text  # no lib image: nothing to run
    assert _row(text, "cuda chain")[-1] == "-"  # only the cpu chain has a budget
    assert "no lib-only build recorded" in text  # the record holds cpu builds only
