"""The Debian 12 base image, made locally when no registry is reachable.

`debootstrap --variant=minbase bookworm`, checked against Debian's archive keyring (required: the mirror
is plain http), into a temporary root filesystem, then apt sources and no package cache (like Debian's
official images), then `docker import`. Needs root for debootstrap (`sudo -n` is tried when not root).
Every command is an argument list: paths and the mirror URL never pass through a shell, so a quote in the
mirror or a space in TMPDIR is just a character.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import docker  # docker.errors comes with it

from pufferlib.tank.engine import get_client, image_exists
from pufferlib.tank.errors import TankError
from pufferlib.tank.locks import machine_lock
from pufferlib.tank.names import DEBIAN_BASE

DEBIAN_MIRROR = "http://deb.debian.org/debian"
MIRROR_ENV = "PUFFERTANK_DEBIAN_MIRROR"
# The mirror is plain http: debootstrap checks the Release file's signature against this keyring (and
# without one only warns), so the build refuses to run without it.
DEBIAN_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
KEYRING_ENV = "PUFFERTANK_DEBIAN_KEYRING"
KEYRING_PACKAGE = "debian-archive-keyring"
Log = Callable[[str], None]
# Tags ensure_debian_base made with debootstrap in this process (tests use it to avoid a second debootstrap).
MADE_BY_DEBOOTSTRAP: set[str] = set()


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_debian_base(
    client: docker.DockerClient | None = None,
    tag: str = DEBIAN_BASE,
    *,
    mirror: str | None = None,
    log: Log = log_stderr,
) -> str:
    """Return the tag of a local Debian 12 (bookworm) image, making it with debootstrap when missing.

    Other code (provisioning tests, the devcontainer) calls this to get a base without a registry.
    """
    client = client or get_client()
    if image_exists(client, tag):
        return tag
    with machine_lock("debian-base", waiting_message=f"puffertank: waiting for another process making {tag}"):
        if image_exists(client, tag):
            return tag
        make_debian_base(client, tag, mirror or os.environ.get(MIRROR_ENV) or DEBIAN_MIRROR, log)
    return tag


def _root_prefix(tag: str) -> list[str]:
    if os.geteuid() == 0:
        return []
    if not shutil.which("sudo"):
        raise TankError(f"making {tag} with debootstrap needs root", "run this once as root")
    return ["sudo", "-n"]


def _debootstrap() -> str:
    found = shutil.which("debootstrap") or next(
        (p for p in ("/usr/sbin/debootstrap", "/sbin/debootstrap") if Path(p).is_file()), None
    )
    if found is None:
        raise TankError(
            "cannot make the Debian 12 base image: debootstrap is not installed",
            "sudo apt-get install debootstrap (or make a Debian 12 image available: "
            "docker pull debian:12-slim)",
        )
    return found


def debian_keyring() -> Path:
    """The keyring debootstrap verifies the mirror with: $PUFFERTANK_DEBIAN_KEYRING or Debian's own."""
    path = Path(os.environ.get(KEYRING_ENV) or DEBIAN_KEYRING)
    if path.is_file():
        return path
    install = f"sudo apt-get install {KEYRING_PACKAGE}"
    fix = install
    if path != DEBIAN_KEYRING:
        fix = f"point {KEYRING_ENV} at an existing keyring, or unset it and {install}"
    raise TankError(
        f"cannot make the Debian 12 base image: the archive keyring {path} is missing, and without it "
        "debootstrap would not check the signatures of what it downloads over http",
        fix,
    )


def apt_sources(mirror: str) -> str:
    """sources.list for a root filesystem bootstrapped from `mirror` (security updates with Debian's own)."""
    lines = [f"deb {mirror} bookworm main", f"deb {mirror} bookworm-updates main"]
    if mirror == DEBIAN_MIRROR:
        lines.append("deb http://deb.debian.org/debian-security bookworm-security main")
    return "\n".join(lines) + "\n"


def finish_rootfs(rootfs: Path, mirror: str, root: list[str]) -> None:
    """apt sources for updates, no downloaded packages, no package lists (the shape of Debian's images)."""
    _run(
        [*root, "tee", str(rootfs / "etc/apt/sources.list")],
        what="writing apt sources",
        stdin=apt_sources(mirror),
    )
    for folder, pattern in (("var/cache/apt/archives", "*.deb"), ("var/lib/apt/lists", "*")):
        if (rootfs / folder).is_dir():
            argv = [*root, "find", str(rootfs / folder), "-mindepth", "1", "-maxdepth", "1", "-name", pattern]
            _run([*argv, "-exec", "rm", "-rf", "--", "{}", "+"], what=f"emptying {folder}")


def pack_rootfs(rootfs: Path, tarball: Path, root: list[str]) -> None:
    """A tarball of the root filesystem with numeric owners, readable by us for `docker import`."""
    _run(
        [*root, "tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(tarball), "."],
        what="packing the root filesystem",
    )
    _run([*root, "chmod", "0644", str(tarball)], what="packing the root filesystem")


def import_rootfs(client: docker.DockerClient, tarball: Path, tag: str) -> None:
    repository, _, image_tag = tag.rpartition(":")
    client.api.import_image_from_file(
        str(tarball),
        repository=repository,
        tag=image_tag,
        changes=["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["bash"]'],
    )
    if not image_exists(client, tag):
        raise TankError(f"importing the debootstrap root filesystem as {tag} failed (no image afterwards)")


def make_debian_base(client: docker.DockerClient, tag: str, mirror: str, log: Log = log_stderr) -> None:
    keyring = debian_keyring()
    debootstrap, root = _debootstrap(), _root_prefix(tag)
    log(
        f"puffertank: {tag} is missing and no registry is needed: making Debian 12 (bookworm) with "
        f"debootstrap from {mirror} and importing it (about a minute)"
    )
    start = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="puffertank-debian-"))
    rootfs, tarball = work / "rootfs", work / "rootfs.tar"
    try:
        _run(
            [
                *root,
                debootstrap,
                "--variant=minbase",
                f"--keyring={keyring}",
                "bookworm",
                str(rootfs),
                mirror,
            ],
            what="debootstrap",
            timeout=1200,
            fix=f"check that the mirror is reachable over http ({MIRROR_ENV} to use another)",
        )
        finish_rootfs(rootfs, mirror, root)
        pack_rootfs(rootfs, tarball, root)
        import_rootfs(client, tarball, tag)
    finally:
        subprocess.run([*root, "rm", "-rf", "--", str(work)], check=False)
    MADE_BY_DEBOOTSTRAP.add(tag)
    log(f"puffertank: made {tag} in {time.monotonic() - start:.0f} s")


def _run(
    argv: list[str], *, what: str, timeout: float = 600, fix: str = "", stdin: str | None = None
) -> None:
    try:
        res = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise TankError(f"{what} did not finish within {timeout:.0f} s", fix) from exc
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
        raise TankError(f"{what} failed (exit {res.returncode}):\n{tail}", fix)


def _is_debian12(ref: str) -> bool:
    return bool(re.fullmatch(r"(docker\.io/)?(library/)?debian:(12|bookworm)([-.][\w.-]+)?", ref))


def resolve_base_image(client: docker.DockerClient, ref: str, log: Log = log_stderr) -> str:
    """The base image to build on: `ref` if local or pullable; else, for Debian 12, the locally made one."""
    if image_exists(client, ref):
        return ref
    try:
        repository, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "latest")
        client.images.pull(repository, tag=tag)
        return ref
    except docker.errors.DockerException as exc:
        reason = " ".join(str(getattr(exc, "explanation", None) or exc).split())
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        if _is_debian12(ref):
            log(f"puffertank: cannot pull {ref} ({reason}); using a locally made Debian 12 base instead")
            return ensure_debian_base(client, log=log)
        raise TankError(
            f"base image {ref} is not in the local engine and cannot be pulled ({reason})",
            "load it (docker load -i FILE), pass a local image to --base-image, or leave --base-image out "
            "to build on a locally made Debian 12",
        ) from exc
