"""What the build environment decides before planning: pip's settings, the CA bundle pip in the build
trusts, and which torch the base stage installs (a wheelhouse, an index, or PyPI) with its CUDA version."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pufferlib.tank import cuda
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.errors import TankError, UsageError

CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"


def pip_settings() -> dict[str, str]:
    """pip's effective `cert` and `find-links` (config files and PIP_* env), read without importing pip."""
    settings: dict[str, str] = {}
    try:
        res = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        for line in res.stdout.splitlines():
            key, _, value = line.partition("=")
            name = key.rsplit(".", 1)[-1]
            if name in ("cert", "find-links") and name not in settings:
                settings[name] = value.strip().strip("'\"")
    except (OSError, subprocess.TimeoutExpired):
        pass
    for env, name in (("PIP_CERT", "cert"), ("PIP_FIND_LINKS", "find-links")):
        if os.environ.get(env):
            settings[name] = os.environ[env]
    return settings


def resolve_ca_bundle(opts: BuildOptions, pip: dict[str, str] | None = None) -> Path | None:
    """The CA bundle pip in the build should trust, or None (pip then uses its own)."""
    if not opts.use_ca_cert:
        return None
    if opts.ca_cert is not None:
        path = Path(opts.ca_cert).expanduser()
        if not path.is_file():
            raise UsageError(
                f"--ca-cert {path}: no such file",
                "pass the PEM bundle your proxy needs (e.g. /etc/ssl/certs/ca-certificates.crt), or leave "
                "--ca-cert out to use the host's",
            )
        try:
            text = path.read_text(errors="replace")
        except OSError as exc:
            raise UsageError(
                f"--ca-cert {path}: cannot read it ({exc.strerror})", "check its permissions"
            ) from exc
        if "-----BEGIN CERTIFICATE-----" not in text:
            raise UsageError(
                f"--ca-cert {path} holds no PEM certificate (no '-----BEGIN CERTIFICATE-----')",
                "pass a PEM bundle",
            )
        return path
    pip = pip if pip is not None else pip_settings()
    for candidate in (
        pip.get("cert"),
        os.environ.get("REQUESTS_CA_BUNDLE"),
        os.environ.get("SSL_CERT_FILE"),
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
    ):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def torch_version(source: Path) -> str:
    """The torch docker/constraints/base.txt pins."""
    text = (source / "docker/constraints/base.txt").read_text()
    match = re.search(r"^torch==([^\s;#]+)", text, re.M)
    if not match:
        raise TankError(
            "docker/constraints/base.txt pins no torch version", "add a line torch==X.Y.Z to that file"
        )
    return match.group(1)


def _wheel_matches(path: Path, version: str, variant: str) -> bool:
    name = path.name
    if not name.startswith(f"torch-{version}") or not name.endswith(".whl"):
        return False
    return ("+cpu" in name) == (variant == "cpu")


@dataclass
class TorchChoice:
    spec: str  # torch==X.Y.Z[+cpu]
    index: str  # an extra index for pip ("" for PyPI or the wheelhouse alone)
    cuda_version: str  # "none" for the cpu variant
    wheels: list[Path] = field(default_factory=list)  # local wheels handed to the base stage
    note: str = ""


def resolve_torch(opts: BuildOptions, source: Path, pip: dict[str, str] | None = None) -> TorchChoice:
    """Which torch the base stage installs and from where (the wheelhouse, an index, or PyPI)."""
    version = torch_version(source)
    wheels: list[Path] = []
    if opts.wheelhouse is not None:
        house = Path(opts.wheelhouse).expanduser()
        if not house.is_dir():
            raise UsageError(f"--wheelhouse {house}: no such directory", "pass a folder of .whl files")
        wheels = sorted(p for p in house.glob("*.whl") if p.is_file())
        if not wheels:
            raise UsageError(f"--wheelhouse {house} holds no .whl files", "pass a folder of .whl files")
        # A cpu torch in the wheelhouse would win over the CUDA one (its local version sorts higher).
        wheels = [
            w
            for w in wheels
            if not (w.name.startswith("torch-") and not _wheel_matches(w, version, opts.variant))
        ]
    elif opts.variant == "cpu":
        pip = pip if pip is not None else pip_settings()
        for folder in pip.get("find-links", "").split():
            if "://" not in folder and Path(folder).is_dir():
                wheels = [
                    p for p in sorted(Path(folder).glob("torch-*.whl")) if _wheel_matches(p, version, "cpu")
                ]
                if wheels:
                    break
    has_torch = any(_wheel_matches(w, version, opts.variant) for w in wheels)

    if opts.variant == "cpu":
        index = opts.torch_index or ("" if has_torch else CPU_TORCH_INDEX)
        where = f"wheelhouse ({wheels[0].parent})" if has_torch else index
        return TorchChoice(
            f"torch=={version}+cpu", index, "none", wheels, f"torch {version}+cpu from {where}"
        )
    index = opts.torch_index or ""
    cuda_version = opts.cuda_version
    if cuda_version is None:
        cuda_version = cuda.cuda_of_index(index) if index else cuda.facts(source).pypi_cuda(version)
    if cuda_version is None:
        raise TankError(
            f"cannot tell which CUDA version torch {version} from {index or 'PyPI'} is built for",
            "pass --cuda-version MAJOR.MINOR (or add torch's CUDA to docker/cuda.toml's [pypi_torch_cuda])",
        )
    return TorchChoice(
        f"torch=={version}",
        index,
        cuda_version,
        wheels,
        f"torch {version} (CUDA {cuda_version}) from {index or 'PyPI'}",
    )
