"""`puffertank build`: the subcommand's options, turned into BuildOptions and handed to build_chain."""

from __future__ import annotations

import argparse
from pathlib import Path

from pufferlib.tank import registry, variant
from pufferlib.tank.build import timings
from pufferlib.tank.build.chain import build_chain
from pufferlib.tank.build.options import DEFAULT_BASE_IMAGE, BuildOptions
from pufferlib.tank.engine import get_client
from pufferlib.tank.names import NAMESPACE, STAGES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build",
        help="build the image chain base -> envs -> lib (unchanged stages are reused)",
        description=(
            "Build puffertank/base, puffertank/envs and puffertank/lib for a variant, in order. A stage "
            "whose inputs did not change is reused, so after an edit to pufferlib only lib is rebuilt. Works "
            "without a registry: the Debian 12 base is made locally (debootstrap) when it cannot be pulled."
        ),
    )
    variant.add_argument(p, "torch build")
    p.add_argument(
        "--stage", choices=(*STAGES, "all"), default="all", help="build up to this stage (default: all = lib)"
    )
    p.add_argument(
        "--base-image", default=DEFAULT_BASE_IMAGE, help=f"Debian 12 image (default {DEFAULT_BASE_IMAGE})"
    )
    p.add_argument(
        "--wheelhouse", type=Path, help="folder of local wheels (e.g. the CPU torch wheel) for pip"
    )
    p.add_argument("--ca-cert", type=Path, help="CA bundle for pip behind a TLS proxy (default: the host's)")
    p.add_argument("--no-ca-cert", action="store_true", help="do not hand pip any CA bundle")
    p.add_argument(
        "--torch-index", help="extra pip index for torch (docker/cuda.toml names one for older drivers)"
    )
    p.add_argument(
        "--cuda-version", help="CUDA version of that torch (MAJOR.MINOR; guessed from cuXYZ index URLs)"
    )
    p.add_argument("--uid", type=int, default=1000, help="UID of the image's user (default 1000)")
    p.add_argument("--gid", type=int, default=1000, help="GID of the image's user (default 1000)")
    p.add_argument("--no-cache", action="store_true", help="rebuild every stage up to --stage from scratch")
    p.add_argument("--timings", action="store_true", help="afterwards, show sizes, times and the budgets")
    p.add_argument("--namespace", default=NAMESPACE, help=f"image repository prefix (default {NAMESPACE})")
    p.add_argument("--source", type=Path, help="PufferTank source tree (default: found from the cwd)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds allowed per stage (default 3600)")
    p.add_argument("--keep-old", action="store_true", help="keep superseded content-hash tags")
    p.add_argument(
        "--pull-from",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="pull the stages the fleet's registry has with the same content hash instead of building them "
        "(and the Debian base they were built on); without a value: the registry puffertank push/pull use",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="show the full BuildKit log")
    p.set_defaults(func=cmd_build)


def cmd_build(args: argparse.Namespace) -> int:
    opts = BuildOptions(
        variant=variant.resolve(args.variant),
        stage=args.stage,
        base_image=args.base_image,
        wheelhouse=args.wheelhouse,
        ca_cert=args.ca_cert,
        use_ca_cert=not args.no_ca_cert,
        torch_index=args.torch_index,
        cuda_version=args.cuda_version,
        uid=args.uid,
        gid=args.gid,
        no_cache=args.no_cache,
        namespace=args.namespace,
        source=args.source,
        timeout=args.timeout,
        verbose=args.verbose,
        keep_old=args.keep_old,
        pull_from=None if args.pull_from is None else registry.resolve(args.pull_from or None, "--pull-from"),
    )
    chain = build_chain(opts)
    built = [n for n, r in chain.stages.items() if r.status == "built"]
    pulled = [n for n, r in chain.stages.items() if r.status == "pulled"]
    what = ", ".join(built) or ("nothing" if pulled else "nothing, all up to date")
    if pulled:
        what += f"; pulled from {opts.pull_from}: {', '.join(pulled)}"
    print(f"puffertank build: {chain.tag(opts.targets()[-1])} ready in {chain.seconds:.1f} s (built: {what})")
    if args.timings:
        print(timings.report(get_client(), opts))
    return 0
