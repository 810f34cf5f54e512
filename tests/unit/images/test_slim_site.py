"""docker/slim_site.py removes only what the stage just installed and nothing reads: test suites, the dead
files it names (found inside a venv's site-packages too), and makes duplicates one file. Older files stay."""

import os
import subprocess
import sys
import time

from _repo import REPO

SLIM = REPO / "docker" / "slim_site.py"


def test_a_venv_loses_only_this_stages_dead_weight(tmp_path):
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    old = site / "base_pkg" / "tests" / "test_old.py"  # the base stage's: before the marker
    old.parent.mkdir(parents=True)
    old.write_text("x = 1\n")
    past = time.time() - 3600
    os.utime(old, (past, past))
    marker = tmp_path / "marker"
    marker.write_text("")
    os.utime(marker, (past + 60, past + 60))
    new = {
        "pkg/tests/test_new.py": b"y = 2\n",
        "open_spiel/games/chess.cc": b"int main() {}\n",
        "ray/jars/ray_dist.jar": b"PK",
        "pyarrow/libarrow_flight.so.2500": b"\x7fELF",
        "pyarrow/include/arrow/api.h": b"#pragma once\n",
        "pyarrow/libarrow.so.2500": b"\x7fELF arrow",
        "stable_retro/cores/fbneo_libretro.so": b"\x7fELF fbneo",
        "stable_retro/cores/genesis_plus_gx_libretro.so": b"\x7fELF genesis",
        "pkg/keep.py": b"z = 3\n",
        "pkg/data/a.bin": b"\0" * 20000,
        "other/data/b.bin": b"\0" * 20000,
    }
    for name, body in new.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(body)
    out = subprocess.run(
        [sys.executable, str(SLIM), "--newer", str(marker), str(venv)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert old.exists(), "a file of an earlier stage was touched"
    gone = ("pkg/tests", "open_spiel/games/chess.cc", "ray/jars/ray_dist.jar", "pyarrow/include/arrow/api.h")
    for name in (*gone, "pyarrow/libarrow_flight.so.2500", "stable_retro/cores/fbneo_libretro.so"):
        assert not (site / name).exists(), f"{name} was kept\n{out.stdout}"
    assert (site / "pkg/keep.py").read_bytes() == b"z = 3\n"
    for kept in ("pyarrow/libarrow.so.2500", "stable_retro/cores/genesis_plus_gx_libretro.so"):
        assert (site / kept).exists(), f"{kept} was removed"
    assert os.path.samefile(site / "pkg/data/a.bin", site / "other/data/b.bin"), "duplicates not linked"


def test_strip_leaves_nvidias_files_alone(tmp_path):
    """Symbol tables go (a real shared library, built here), except in NVIDIA's folders (NOT_STRIPPED)."""
    source = tmp_path / "lib.c"
    source.write_text("int puffer_answer(void) { return 42; }\n")
    built = tmp_path / "libanswer.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-g", "-o", built, source], check=True, timeout=60)
    past = time.time() - 3600
    marker = tmp_path / "marker"
    marker.write_text("")
    os.utime(marker, (past, past))
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    ours, nvidia = site / "pkg" / "libanswer.so", site / "nvidia" / "cu13" / "lib" / "libanswer.so"
    for path in (ours, nvidia):
        path.parent.mkdir(parents=True)
        path.write_bytes(built.read_bytes())
    out = subprocess.run(
        [sys.executable, str(SLIM), "--newer", str(marker), "--strip-root", "/", str(tmp_path / "venv")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert ours.stat().st_size < built.stat().st_size, "our library kept its symbol table"
    assert nvidia.read_bytes() == built.read_bytes(), "a file in nvidia/ was stripped"
    sections = subprocess.run(["readelf", "-SW", ours], capture_output=True, text=True, check=True).stdout
    assert ".symtab" not in sections and ".debug_info" not in sections, sections
