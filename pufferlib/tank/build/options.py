"""BuildOptions: what `puffertank build` (or a test) asked for, validated before anything runs (a wrong
option is a UsageError, exit 2)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pufferlib.tank.errors import UsageError
from pufferlib.tank.names import NAMESPACE, STAGES, VARIANTS, image_ref
from pufferlib.tank.settings import SettingError, check_registry

DEFAULT_BASE_IMAGE = "debian:12-slim"


@dataclass
class BuildOptions:
    variant: str = "cpu"
    stage: str = "all"  # the stage to end at; the ones below are built (or reused) first
    base_image: str = DEFAULT_BASE_IMAGE
    wheelhouse: Path | None = None  # None: pip's find-links, when it holds the CPU torch wheel (cpu only)
    ca_cert: Path | None = None  # None: the host's bundle (pip's cert, SSL_CERT_FILE, ...), if any
    use_ca_cert: bool = True
    torch_index: str | None = None
    cuda_version: str | None = None
    uid: int = 1000
    gid: int = 1000
    no_cache: bool = False
    namespace: str = NAMESPACE
    source: Path | None = None
    timeout: float = 3600.0  # per stage
    verbose: bool = False
    keep_old: bool = False  # keep the previous content-hash tags (default: untag them, freeing the space)
    pull_from: str | None = None  # a registry (HOST:PORT) whose stages with the same content hash are pulled

    def validate(self) -> None:
        if self.variant not in VARIANTS:
            raise UsageError(f"unknown variant {self.variant!r}", f"choose one of {', '.join(VARIANTS)}")
        if self.stage not in (*STAGES, "all"):
            raise UsageError(f"unknown stage {self.stage!r}", f"choose one of {', '.join(STAGES)}, all")
        if self.cuda_version is not None and not re.fullmatch(r"\d+\.\d+", self.cuda_version):
            raise UsageError(
                f"--cuda-version {self.cuda_version!r} is not MAJOR.MINOR", "e.g. --cuda-version 12.6"
            )
        if self.variant == "cpu" and self.cuda_version not in (None, "none"):
            raise UsageError("--cuda-version only applies to --variant cuda", "add --variant cuda or drop it")
        if not re.fullmatch(r"[a-z0-9][a-z0-9._/-]*", self.namespace):
            raise UsageError(
                f"--namespace {self.namespace!r} is not a valid image repository prefix",
                "use lowercase letters, digits and . _ / -",
            )
        if self.pull_from is not None:
            try:
                check_registry(self.pull_from, "--pull-from")
            except SettingError as exc:
                raise UsageError(exc.message, exc.fix) from None
            if self.no_cache:
                raise UsageError("--pull-from and --no-cache do not go together", "pass one of them")
        for name in ("uid", "gid"):
            if not 1 <= getattr(self, name) < 2**31:
                raise UsageError(
                    f"--{name} must be a positive number (not root): got {getattr(self, name)}",
                    f"pass --{name} $(id -{name[0]})",
                )

    def targets(self) -> list[str]:
        end = "lib" if self.stage == "all" else self.stage
        return list(STAGES[: STAGES.index(end) + 1])

    def tag(self, stage: str) -> str:
        return image_ref(stage, self.variant, self.namespace)
