"""Every subcommand that picks an image defaults to --variant auto, resolved by the one rule (variant.py)."""

from __future__ import annotations

import pytest

from pufferlib.tank import variant
from pufferlib.tank.cli import build_parser


@pytest.mark.parametrize("argv", [["build"], ["shell"], ["run", "--", "true"], ["matrix"]])
def test_the_default_variant_is_auto(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.variant == "auto"


def test_resolve_follows_the_hardware_only_for_auto(tmp_path) -> None:
    gpu = tmp_path / "0000:01:00.0"
    gpu.mkdir()
    (gpu / "vendor").write_text("0x10de\n")
    (gpu / "class").write_text("0x030000\n")
    assert variant.resolve("auto", tmp_path) == "cuda"
    assert variant.resolve("auto", tmp_path / "absent") == "cpu"
    assert variant.resolve("cpu", tmp_path) == "cpu"
    assert variant.resolve("cuda", tmp_path / "absent") == "cuda"
