"""A fleet's image registry (Debian's docker-registry, the CNCF distribution registry): where it is, and what
it holds, read over its HTTP API (v2) with the standard library.

The engine moves the layers (tank/transfer.py); this module only asks the registry what a tag is: its
manifest digest, its config digest (which is the image id an engine gives the pulled image, so it is what
"the same image" means across boxes) and its labels. The registry is plain HTTP on the tailnet (WireGuard
encrypts it; docs/fleet.md says why that is acceptable), or https:// when the address says so.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass

from pufferlib.tank import settings
from pufferlib.tank.errors import TankError, UsageError

MANIFEST_TYPES = (
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.index.v1+json",
)
INDEX_TYPES = MANIFEST_TYPES[2:]
SERVE_HINT = "serve one with provision/setup-host.sh --registry on the box that keeps the images"


def resolve(flag: str | None, flag_name: str = "--registry") -> str:
    """The registry address: the flag, else PUFFERTANK_REGISTRY, else the settings file; UsageError if none
    is set or the value is not HOST:PORT."""
    try:
        if flag:
            return settings.check_registry(flag, flag_name)
        value = settings.get("registry")
    except settings.SettingError as exc:
        raise UsageError(exc.message, exc.fix) from None
    if not value:
        raise UsageError(
            f"no registry given: no {flag_name}, no PUFFERTANK_REGISTRY, "
            f"no registry= in {settings.config_file()}",
            f"pass {flag_name} HOST:PORT, or set it once: provision/setup-host.sh --registry-url HOST:PORT",
        )
    return value


def configured() -> str | None:
    """The registry this host is set up for (PUFFERTANK_REGISTRY or the settings file), or None."""
    try:
        return settings.get("registry")
    except settings.SettingError:
        return None


@dataclass(frozen=True)
class Remote:
    """What a registry says one tag is."""

    manifest_digest: str
    config_digest: str  # = the image id of the pulled image
    labels: dict[str, str]
    layers: tuple[tuple[str, int], ...]  # (digest, compressed size) in order


class Registry:
    """The v2 HTTP API of the registry at HOST:PORT (http) or https://HOST:PORT."""

    def __init__(self, address: str, timeout: float = 30.0) -> None:
        self.address = address
        self.base = address if address.startswith("https://") else f"http://{address}"
        self.timeout = timeout

    def _get(self, path: str, accept: tuple[str, ...] = ()) -> tuple[bytes, dict[str, str]] | None:
        """The body and headers of GET base/v2/path; None on 404; TankError when the registry is not there."""
        request = urllib.request.Request(f"{self.base}/v2/{path}", headers={"Accept": ", ".join(accept)})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise TankError(
                f"registry {self.address} answered {exc.code} {exc.reason} for /v2/{path}",
                "check that it is a docker-registry (curl http://HOST:PORT/v2/ answers {})",
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise TankError(
                f"registry {self.address} is not reachable: {reason}",
                f"check the address and that it runs there (curl {self.base}/v2/); {SERVE_HINT}",
            ) from None

    def ping(self) -> None:
        """TankError unless a v2 registry answers at this address."""
        if self._get("") is None:
            raise TankError(f"{self.address} answers, but not as a v2 registry (/v2/ is 404)", SERVE_HINT)

    def remote(self, repository: str, tag: str) -> Remote | None:
        """What `repository:tag` is in the registry (linux/amd64 of an index); None if no such tag."""
        got = self._get(f"{repository}/manifests/{tag}", MANIFEST_TYPES)
        if got is None:
            return None
        body, headers = got
        manifest = json.loads(body)
        digest = headers.get("Docker-Content-Digest", "")
        if manifest.get("mediaType") in INDEX_TYPES or "manifests" in manifest:
            chosen = [
                m
                for m in manifest.get("manifests", [])
                if m.get("platform", {}).get("os") == "linux"
                and m.get("platform", {}).get("architecture") == "amd64"
            ]
            if not chosen:
                raise TankError(f"tag {tag} of {self.address}/{repository} has no linux/amd64 image")
            return self.remote(repository, chosen[0]["digest"])
        config_digest = manifest["config"]["digest"]
        config = self._get(f"{repository}/blobs/{config_digest}")
        if config is None:
            raise TankError(
                f"tag {tag} of {self.address}/{repository}: its config blob {config_digest} is missing",
                "push the image again (puffertank push)",
            )
        labels = (json.loads(config[0]).get("config") or {}).get("Labels") or {}
        layers = tuple((layer["digest"], int(layer.get("size", 0))) for layer in manifest.get("layers", []))
        return Remote(digest, config_digest, labels, layers)
