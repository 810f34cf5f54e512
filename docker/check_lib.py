"""Build-time check of the lib stage: pufferlib imports from the venv, its dependencies are installed (it was
installed with --no-deps), and every registered environment is available in the image (`puffer envs
--json`), so a binding whose package is missing fails the build rather than a researcher's first run.

The usual fix for a failure here: add the package to docker/constraints/envs.txt and docker/install-envs.sh
(the envs stage), or correct the binding. Kept to one interpreter: it runs on every lib rebuild.
"""

from __future__ import annotations

import contextlib
import importlib.metadata as metadata
import io
import json
import re
import shutil
import sys


def missing_requirements() -> list[str]:
    """pufferlib's unconditional requirements that are not installed (what `pip check` would say, faster)."""
    missing = []
    for req in metadata.requires("pufferlib") or []:
        if "extra ==" in req:
            continue
        name = re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0]
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(req)
    return missing


def main() -> int:
    import pufferlib
    from pufferlib.cli import main as puffer

    problems = [f"requirement not installed: {req}" for req in missing_requirements()]
    print(f"check_lib: pufferlib {metadata.version('pufferlib')} from {pufferlib.__file__}")
    if not pufferlib.__file__.startswith("/opt/venv/"):
        problems.append(f"pufferlib imported from {pufferlib.__file__}, not the venv")
    if shutil.which("puffer") is None:
        problems.append("the `puffer` command is not on PATH")

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = puffer(["envs", "--json"])
    if rc:
        problems.append(f"`puffer envs --json` exited {rc}")
    else:
        envs = json.loads(out.getvalue())
        unavailable = [e for e in envs if not e.get("available", False)]
        for env in unavailable:
            problems.append(
                f"{env['name']} is not available in the image (missing: "
                f"{', '.join(env.get('missing') or ['?'])}; {env.get('install_hint', '')})"
            )
        print(f"check_lib: {len(envs) - len(unavailable)}/{len(envs)} registered environments available")

    from pufferlib.ocean import native

    for name in native.names():  # a native env with a Python fallback would not show as unavailable above
        why = native.unavailable(name)
        if why:
            problems.append(f"{why} (the image's compiler should have built it: see the build log above)")

    for problem in problems:
        print(f"check_lib: FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
