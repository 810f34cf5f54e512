"""The `puffertank matrix` subcommand: its flags, and a run from the image check to the reports."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pufferlib.matrix_protocol import CHECKS
from pufferlib.tank import variant as auto
from pufferlib.tank.engine import TlsOptions, add_tls_arguments
from pufferlib.tank.errors import UsageError
from pufferlib.tank.matrix.baseline import check_fail_on, compare, load_baseline
from pufferlib.tank.matrix.baseline import exit_status as baseline_status
from pufferlib.tank.matrix.commands import registered_bindings
from pufferlib.tank.matrix.history import write_history
from pufferlib.tank.matrix.hosts import LABEL, Host, cleanup, require_host_image, require_same_image
from pufferlib.tank.matrix.plan import Plan, select
from pufferlib.tank.matrix.progress import Progress
from pufferlib.tank.matrix.report import STATUS_WORDS, Report, tally, write_all
from pufferlib.tank.matrix.run import progress_names, run_matrix
from pufferlib.tank.names import image_ref
from pufferlib.tank.signals import exit_status


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("matrix", help="exercise every registered binding inside the container, with reports")
    auto.add_argument(p, "image variant")
    p.add_argument(
        "--gpus",
        choices=["auto", "all", "none"],
        default="auto",
        help="request GPUs: auto (default) for the cuda variant, all always, none never. Where GPUs are "
        "requested, a missing GPU fails the gpu check (naming the driver and CUDA found)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only bindings matching this glob, e.g. 'ocean/*' (repeatable)",
    )
    p.add_argument("--jobs", type=int, default=2, help="containers at once per host (default 2)")
    p.add_argument("--timeout", type=float, help="seconds per binding (default: each binding's own budget)")
    p.add_argument(
        "--report", type=Path, metavar="DIR", help="write matrix.json, junit.xml and matrix.html here"
    )
    p.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="URL",
        help="a Docker daemon: ssh://user@box (recommended), tcp://box:2376 with --tlsverify, unix://...; "
        "'local' = this one; repeat to spread bindings over several",
    )
    p.add_argument(
        "--every-host",
        action="store_true",
        help="run every binding on every --host (two or more) instead of spreading them, to compare the "
        "boxes: a column group per host and the cells that differ between them",
    )
    p.add_argument(
        "--allow-different-images",
        action="store_true",
        help="run even when the hosts' images differ (refused by default: the report would show two "
        "images as one); matrix.json records every host's image id either way",
    )
    add_tls_arguments(p)
    p.add_argument(
        "--plugin",
        action="append",
        default=[],
        type=Path,
        metavar="FILE.py",
        help="a module that registers extra bindings, copied into each container (repeatable)",
    )
    p.add_argument("--image", help="image to test (default puffertank/lib:<variant>)")
    p.add_argument(
        "--baseline",
        type=Path,
        metavar="PREV",
        help="compare every cell with a previous run (its matrix.json or report folder): new failures, "
        "fixes, new or gone bindings, steps/s regressions beyond the noise band; versions that moved",
    )
    p.add_argument(
        "--fail-on",
        default="new-failure",
        metavar="WHAT",
        help="with --baseline, exit 1 on: new-failure (default), regression (or a new failure), any",
    )
    p.add_argument(
        "--repeats",
        type=int,
        help="run each binding's container N times; timed cells keep every sample and report the median, "
        "and their spread can widen the --baseline band (default 3 with --baseline, else 1)",
    )
    p.add_argument(
        "--retries",
        type=int,
        default=1,
        metavar="N",
        help="run a binding's container again, up to N times with backoff, when the Docker engine could not "
        "run it (an API error, the daemon gone, the container killed from outside); what still fails is an "
        "engine-error cell, apart from the envs' failures (default 1)",
    )
    p.add_argument(
        "--history",
        nargs="+",
        type=Path,
        metavar="REPORT",
        help="run nothing: lay these reports (matrix.json files or report folders) side by side by image "
        "revision into --report (default ./matrix-history): history.html, history.csv, history.png",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the report (matrix.json's content) on stdout; progress goes to stderr",
    )
    p.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    if args.history:
        return _history(args)
    fail_on = check_fail_on(args.fail_on)
    base = load_baseline(args.baseline) if args.baseline else None
    plan = _plan(args)
    out = sys.stderr if args.json else sys.stdout  # --json: stdout carries the report and nothing else
    try:
        plan.bindings = select(registered_bindings(plan.hosts[0], plan), args.env)
        gpus = f"GPUs requested ({plan.gpu_request})" if plan.gpu_request else "no GPUs requested"
        print(
            f"puffertank matrix: {len(plan.bindings)} bindings x {len(CHECKS)} checks on {plan.image} "
            f"({', '.join(h.url for h in plan.hosts)}; {args.jobs} job(s) per host; {gpus}"
            f"{'; every binding on every host' if plan.every_host else ''})",
            file=out,
            flush=True,
        )
        view = Progress(progress_names(plan), stream=out, per_host=plan.every_host)
        report = run_matrix(plan, view)
    except KeyboardInterrupt as exc:
        cleanup(plan.hosts, plan.run_id)
        print(
            f"puffertank matrix: interrupted; removed the run's containers (label {LABEL}={plan.run_id})",
            file=out,
        )
        return exit_status(exc)
    if base is not None:
        report.comparison = {**compare(report.to_json(), base), "fail_on": fail_on}
        report.comparison["failed"] = baseline_status(report.comparison, fail_on) == 1
    _summarise(report, args, out)
    return run_status(report, fail_on)


# The exit status when no env failed but the engine could not run some cells (1 is an env's failure, or
# what --fail-on names; 2 a usage error; 130 an interrupt): docs/matrix.md, "Exit status".
ENGINE_EXIT = 3


def run_status(report: Report, fail_on: str) -> int:
    """The exit status of a run: 1 an env failed (with a baseline: what --fail-on names), else ENGINE_EXIT
    where the engine could not run some cells, else 0."""
    failed = baseline_status(report.comparison, fail_on) if report.comparison else int(report.failed)
    return failed or (ENGINE_EXIT if report.engine_failed else 0)


def _history(args: argparse.Namespace) -> int:
    if args.baseline:
        raise UsageError("--history and --baseline do not go together", "pass one of them")
    files = write_history(args.history, args.report or Path("matrix-history"))
    for kind, path in files.items():
        print(f"puffertank matrix --history: {kind:4} {path}")
    if "png" not in files:
        print("puffertank matrix --history: no history.png: pip install matplotlib for it")
    return 0


def _plan(args: argparse.Namespace) -> Plan:
    """The plan the flags ask for, once they are checked, the hosts reached and the image found on each."""
    if args.jobs < 1:
        raise UsageError(f"--jobs must be >= 1, got {args.jobs}", "pass --jobs 1 or more")
    if args.every_host and len(set(args.host)) < 2:
        raise UsageError(
            f"--every-host compares hosts, and {len(set(args.host))} --host was given",
            "pass --host twice or more (e.g. --host local --host ssh://user@box2)",
        )
    repeats = args.repeats if args.repeats is not None else (3 if args.baseline else 1)
    if repeats < 1:
        raise UsageError(f"--repeats must be >= 1, got {repeats}", "pass --repeats 1 or more")
    if args.retries < 0:
        raise UsageError(f"--retries must be >= 0, got {args.retries}", "pass --retries 0 or more")
    for plugin in args.plugin:
        if not plugin.is_file() or plugin.suffix != ".py":
            raise UsageError(
                f"--plugin {plugin}: not a .py file", "pass a Python module that calls register()"
            )
    tls = TlsOptions.from_args(args)
    hosts = [Host.connect(url, tls, args.insecure) for url in (args.host or ["local"])]
    variant = auto.auto_variant() if args.variant == "auto" else args.variant
    image = args.image or image_ref("lib", variant)
    digests = {host.url: require_host_image(host, image, variant).id for host in hosts}
    if not args.allow_different_images:
        require_same_image(digests, image, variant)
    elif len(set(digests.values())) > 1:
        print(
            f"puffertank matrix: different images under {image}, as allowed: "
            + ", ".join(f"{url} {digest[:19]}" for url, digest in digests.items()),
            file=sys.stderr,
        )
    plugins = [p.resolve() for p in args.plugin]
    plan = Plan(image, variant, hosts, [], args.jobs, args.timeout, plugins, repeats=repeats, gpus=args.gpus)
    plan.patterns = list(args.env)
    plan.every_host = args.every_host
    plan.retries = args.retries
    plan.command = ["puffertank", *getattr(args, "argv", sys.argv[1:])]
    return plan


def _summarise(report: Report, args: argparse.Namespace, out) -> None:
    """The counts and each failure's first line on `out`, the report files, and --json's report."""
    print(f"{tally(report.counts())} in {report.wall_seconds:.0f}s", file=out)
    for row in report.rows:
        if row.status in STATUS_WORDS:
            first = row.detail.splitlines()[0] if row.detail else ""
            print(f"  {STATUS_WORDS[row.status]} {row.env} {row.check}: {first}", file=out)
    retried = {(a["env"], a["host"]) for a in report.attempts}
    if retried:
        ran = sum(a["outcome"] == "ran" for a in report.attempts)
        print(
            f"the engine failed {len(retried)} binding(s)' containers; {ran} ran on a retry"
            + (
                " (engine-error cells: the envs were not tested there; exit 3 if no env failed)"
                if report.engine_failed
                else ""
            ),
            file=out,
        )
    if report.every_host:
        print(f"differs between hosts: {len(report.host_differences)} cell(s)", file=out)
        for diff in report.host_differences:
            values = ", ".join(f"{h}: {v}" for h, v in zip(diff["hosts"], diff["values"], strict=True))
            print(f"  {diff['kind'].upper()} {diff['env']} {diff['check']}: {values}", file=out)
    if report.comparison:
        counts = ", ".join(f"{n} {k}" for k, n in report.comparison["counts"].items() if n) or "no changes"
        print(f"since baseline: {counts}", file=out)
        for change in report.comparison["changes"]:
            if change["kind"] in ("new-failure", "regression", "gone"):
                print(f"  {change['kind'].upper()} {change['env']} {change['check']}", file=out)
    if args.report:
        paths = write_all(report, args.report)
        print("reports: " + ", ".join(str(p) for p in paths.values()), file=out)
    if args.json:
        print(json.dumps(report.to_json()), flush=True)
