"""Build a user's C env folder against our implementation of its contract: `puffer build-native PATH`.

The folder is copied (never compiled in place: it may be writable by others, and its `../env_binding.h` must
be ours), compiled with the flags of pufferlib/ocean/native/build.py into `home()/<name>/`, probed in a child
process (probe.py: it builds, resets and steps, and writes only what it declares), and its `.ini` mapped onto
our config (ini.py). Only then does the new build replace an old one, so a failed build leaves the last good
one in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from pufferlib.ocean.contracts import HERE, NAME, Manifest, home
from pufferlib.ocean.native import build as native_build

NATIVE_DIR = HERE.parent / "native"
HEADERS = {
    "pufferlib-3.0": [HERE / "pl3" / "env_binding.h", HERE / "pl3" / "pt_rand.h"],
    "puffertank": sorted(NATIVE_DIR.glob("*.h")),
}
SOURCES = (".c", ".h", ".py", ".ini")


class BuildError(Exception):
    """A folder that cannot be built here; the message names the thing and the fix."""


def detect(binding_c: str) -> str:
    """The contract a binding.c is written to (see the package docstring); BuildError if none."""
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", binding_c, flags=re.S)
    if re.search(r'#\s*include\s*"vecenv\.h"', code):
        return "pufferlib-4.0"
    if re.search(r"#\s*define\s+ENV_NAME\b", code) and re.search(r"#\s*define\s+OBS_T\b", code):
        return "puffertank"
    if re.search(r'#\s*include\s*"\.\./env_binding\.h"', code):
        return "pufferlib-3.0"
    raise BuildError(
        'binding.c follows no contract known here: it must include "../env_binding.h" (PufferLib 3.0, or '
        'ours with ENV_NAME and OBS_T defined) or "vecenv.h" (PufferLib 4.0); see docs/native.md'
    )


def check_folder(folder: Path) -> str:
    """The env's name (the folder's); BuildError for a folder that cannot or must not be built."""
    if not (folder / "binding.c").is_file():
        raise BuildError(f"{folder} has no binding.c: give the folder of one env (binding.c, <name>.h, ...)")
    name = folder.resolve().name
    if not NAME.fullmatch(name):
        raise BuildError(
            f"env folder name {name!r} must be lowercase letters, digits and _ (starting with a letter): "
            "rename the folder; it becomes ocean/<name>"
        )
    for path in [folder, *folder.rglob("*")]:
        mode = path.lstat().st_mode
        if mode & stat.S_IWOTH and not (stat.S_ISDIR(mode) and mode & stat.S_ISVTX):
            raise BuildError(
                f"{path} is world-writable, so anyone could change what gets built: chmod o-w it"
            )
    return name


def find_ini(folder: Path, name: str) -> Path | None:
    """`<name>.ini` in the folder, else `config/ocean/<name>.ini` beside it (PufferLib's own layout)."""
    for candidate in (
        folder / f"{name}.ini",
        folder.parent / "config" / "ocean" / f"{name}.ini",
        folder.parent.parent / "config" / "ocean" / f"{name}.ini",
    ):
        if candidate.is_file():
            return candidate
    return None


def raylib() -> Path | None:
    """A raylib 5.5 folder (include/raylib.h, lib/libraylib.a): $PUFFER_RAYLIB, else none."""
    folder = os.environ.get("PUFFER_RAYLIB")
    if folder and (Path(folder) / "include" / "raylib.h").is_file():
        return Path(folder)
    return None


def _uses_raylib(folder: Path) -> bool:
    return any('"raylib.h"' in p.read_text(errors="replace") for p in folder.rglob("*.[ch]") if p.is_file())


def compile_module(stage: Path, name: str, contract: str, out: Path) -> Path:
    """Compile stage/<name>/binding.c into out/<module file>; BuildError with the compiler's log."""
    import numpy  # the headers only

    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        raise BuildError("no C compiler: install gcc and python3-dev (the tank image has them)")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = f"_{name}{suffix}" if contract == "puffertank" else f"binding{suffix}"
    includes = [f"-I{sysconfig.get_paths()['include']}", f"-I{numpy.get_include()}", f"-I{stage / name}"]
    if contract == "pufferlib-4.0":
        includes.append(f"-I{HERE / 'pl4'}")
    if contract == "pufferlib-3.0":  # ahead of the env's own code: rand() per vector (pl3/pt_rand.h says why)
        includes += ["-include", str(stage / "pt_rand.h")]
    link: list[str] = []
    if _uses_raylib(stage / name):
        ray = raylib()
        if ray is None:
            raise BuildError(
                f"{name} includes raylib.h: set PUFFER_RAYLIB to a raylib 5.5 folder (include/raylib.h, "
                "lib/libraylib.a; PufferLib 3.0's sdist bundles one, and the tank image has it)"
            )
        includes.append(f"-I{ray / 'include'}")
        link = [str(ray / "lib" / "libraylib.a")]
    flags = native_build.cflags()
    if (
        contract != "puffertank"
    ):  # upstream's envs are GNU C and lean on implicit declarations; -std=c11 refuses
        flags = [f for f in flags if not f.startswith("-std=")] + ["-DPLATFORM_DESKTOP", "-fwrapv"]
    target = out / module
    cmd = [
        *shlex.split(cc),
        "-shared",
        "-fPIC",
        *flags,
        *includes,
        str(stage / name / "binding.c"),
        "-o",
        str(target),
        *link,
        "-lm",
        *native_build.LDFLAGS,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{name} failed to compile ({shlex.join(cmd[:1])}):\n{done.stderr.strip()}")
    return target


def stage_sources(folder: Path, name: str, contract: str, stage: Path) -> dict[str, str]:
    """Copy the env folder (and our contract headers beside it) into `stage`; the sources' sha256."""
    shutil.copytree(
        folder, stage / name, symlinks=False, ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    for header in HEADERS.get(contract, []):
        shutil.copy2(header, stage / header.name)
    return {
        str(p.relative_to(stage / name)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((stage / name).rglob("*"))
        if p.is_file() and p.suffix in SOURCES
    }


def probe(folder: Path) -> dict:
    """Run probe.py on a built folder in a child process (a crash there is a finding, not ours)."""
    cmd = [sys.executable, "-m", "pufferlib.ocean.contracts.probe", str(folder)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        lines = (done.stderr.strip() or f"exit status {done.returncode}").splitlines()
        died = f" (killed by signal {-done.returncode})" if done.returncode < 0 else ""
        raise BuildError(f"{folder.name} failed its probe{died}: {lines[-1] if lines else ''}")
    return json.loads(done.stdout)


def build(folder: Path, root: Path | None = None, shipped: set[str] = frozenset()) -> Manifest:
    """Build, probe and install one env folder; the manifest. BuildError says what went wrong and the fix."""
    from pufferlib.ocean.contracts import ini

    folder = Path(folder)
    name = check_folder(folder)
    if f"ocean/{name}" in shipped:
        raise BuildError(
            f"ocean/{name} is already a shipped binding; {folder} would shadow it: rename the folder "
            f"(e.g. my_{name})"
        )
    contract = detect((folder / "binding.c").read_text(errors="replace"))
    if contract == "pufferlib-3.0" and not (folder / f"{name}.py").is_file():
        raise BuildError(
            f"{folder} follows PufferLib 3.0's contract but has no {name}.py (its PufferEnv class)"
        )
    root = home() if root is None else Path(root)
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o700)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=root) as tmp:
        stage, out = Path(tmp) / "stage", Path(tmp) / name
        out.mkdir()
        if (root / "resources").is_dir():  # the catalog's: the probe makes the env where it finds them
            (Path(tmp) / "resources").symlink_to(root / "resources")
        digests = stage_sources(folder, name, contract, stage)
        module = compile_module(stage, name, contract, out)
        for rel in digests:  # the sources beside the module: <name>.py is imported from there
            (out / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(stage / name / rel, out / "src" / rel)
        source_ini = find_ini(folder, name)
        if source_ini:  # the probe makes the env with its [env] kwargs
            shutil.copy2(source_ini, out / f"{name}.ini")
        manifest = Manifest(name, contract, str(folder.resolve()), module.name, digests)
        manifest.write(out)
        facts = probe(out)
        for key in ("obs_shape", "obs_dtype", "act_sizes", "agents_per_env", "description"):
            setattr(manifest, key, facts[key])
        if source_ini:
            defaults = ini.PL3_DEFAULTS if contract == "pufferlib-3.0" else None  # its default.ini beneath
            manifest.config, manifest.unmapped = ini.mapped(source_ini, manifest.agents_per_env, defaults)
        if "score" in facts["log_keys"] and "episode_return" not in facts["log_keys"]:
            manifest.config.setdefault("train", {})["solve_metric"] = "score"  # PufferLib's headline metric
        manifest.write(out)
        final = root / name
        old = Path(tmp) / "old"
        if final.exists():
            final.rename(old)
        out.rename(final)
    return manifest
