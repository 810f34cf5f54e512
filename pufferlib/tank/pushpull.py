"""The `puffertank push` and `puffertank pull` commands: through the fleet's registry (tank/transfer.py), or
with `push --host`, straight into another box's engine over ssh (tank/saveload.py)."""

from __future__ import annotations

import argparse
import time

from pufferlib.tank import registry as reg
from pufferlib.tank import variant as auto
from pufferlib.tank.engine import TlsOptions, add_tls_arguments
from pufferlib.tank.names import NAMESPACE, image_ref
from pufferlib.tank.saveload import push_to_host
from pufferlib.tank.transfer import MB, Moved, pull, push

KEEP_OLD = "keep the content-hash tags the new chain supersedes (default: untag them, freeing the space)"


def _common(p: argparse.ArgumentParser) -> None:
    auto.add_argument(p)
    p.add_argument("--namespace", default=NAMESPACE, help=f"image repository prefix (default {NAMESPACE})")


REGISTRY_HELP = (
    "the registry (default: PUFFERTANK_REGISTRY, else registry= in the settings file, which "
    "provision/setup-host.sh --registry-url writes)"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "push",
        help="send the image chain (base, envs, lib) to the fleet's registry, or to a box over ssh",
        description=(
            "Send base, envs and lib of a variant (content-hash and variant tags) to the fleet's registry: "
            "only the layers it lacks move. Or, with --host ssh://USER@BOX, straight into that box's engine "
            "(no registry): only the images it lacks move, whole (docker save | docker load). Progress "
            "shows bytes and speed."
        ),
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--registry", metavar="HOST:PORT", help=REGISTRY_HELP)
    where.add_argument(
        "--host",
        metavar="URL",
        help="a box's Docker engine: ssh://USER@HOST[:PORT], or tcp://HOST:2376 with --tlsverify",
    )
    _common(p)
    p.add_argument("--keep-old", action="store_true", help=f"with --host: {KEEP_OLD} on that box")
    add_tls_arguments(p, insecure=False)
    p.set_defaults(func=cmd_push)

    p = sub.add_parser(
        "pull",
        help="fetch the image chain (base, envs, lib) from the fleet's registry",
        description=(
            "Fetch base, envs and lib of a variant from the fleet's registry: only the layers this engine "
            "lacks move (progress shows layers, bytes and speed). The pulled images get the usual local "
            "names, all or none; the content-hash tags they supersede are untagged (--keep-old keeps them)."
        ),
    )
    p.add_argument("--registry", metavar="HOST:PORT", help=REGISTRY_HELP)
    _common(p)
    p.add_argument("--keep-old", action="store_true", help=KEEP_OLD)
    p.set_defaults(func=cmd_pull)


def _summary(verb: str, registry: str, moved: list[Moved], seconds: float) -> str:
    layers = sum(len(m.moved_ids) for m in moved)
    size = sum(m.bytes for m in moved) / MB
    return (
        f"puffertank {verb}: {len(moved)} images, {layers} layers ({size:.1f} MB) moved "
        f"{'to' if verb == 'push' else 'from'} {registry} in {seconds:.1f} s"
    )


def cmd_push(args: argparse.Namespace) -> int:
    if args.host:
        sent = push_to_host(
            args.host,
            auto.resolve(args.variant),
            args.namespace,
            TlsOptions.from_args(args),
            keep_old=args.keep_old,
        )
        print(sent.summary())
        return 0
    registry = reg.resolve(args.registry)
    start = time.monotonic()
    moved = push(registry, auto.resolve(args.variant), args.namespace)
    print(_summary("push", registry, moved, time.monotonic() - start))
    return 0


def cmd_pull(args: argparse.Namespace) -> int:
    registry = reg.resolve(args.registry)
    variant = auto.resolve(args.variant)
    start = time.monotonic()
    moved = pull(registry, variant, args.namespace, keep_old=args.keep_old)
    print(_summary("pull", registry, moved, time.monotonic() - start))
    print(f"puffertank pull: {image_ref('lib', variant, args.namespace)} is {moved[-1].ref}")
    return 0
