"""`puffer bench`: the command (see pufferlib/bench/__init__.py for what is timed and how)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from pufferlib.bench import pl3_matched, pl3_to_score, pufferlib3, report
from pufferlib.bench.interpreter import UntrustedInterpreter, default_peer_python, trusted_python
from pufferlib.bench.peers import PEERS, Setup, Skip, measure, peer_versions, setups
from pufferlib.bench.workloads import workloads
from pufferlib.provenance import cpu_model

ASK = "asked"  # --puffer202 without a path: the cache dir's peer venv


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="vector env throughput beside gymnasium (and PufferLib 2.0.2)")
    p.add_argument(
        "--workloads", help="comma-separated (default all): " + ", ".join(w.name for w in workloads())
    )
    p.add_argument(
        "--peers",
        help=f"comma-separated, of: {', '.join(PEERS)} (default all; the pl202 ones with --puffer202)",
    )
    p.add_argument("--num-envs", default="2,8", help="comma-separated env counts (default 2,8)")
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        help="Multiprocessing workers (default: try 1 and as many as physical cores, report the best)",
    )
    p.add_argument("--repeats", type=int, default=3, help="independent repeats (default 3)")
    p.add_argument("--scale", type=float, default=1.0, help="multiply every workload's timed agent steps")
    p.add_argument("--quick", action="store_true", help="1 repeat, perf-0/perf-1000 only, 1/4 of the steps")
    p.add_argument(
        "--puffer202",
        nargs="?",
        const=ASK,
        metavar="PYTHON",
        help=f"also run PufferLib 2.0.2 with this interpreter (alone: {default_peer_python()}); it must "
        "belong to you or root and be writable by no one else",
    )
    p.add_argument(
        "--pufferlib3",
        nargs="?",
        const=ASK,
        metavar="PYTHON",
        help=f"instead: our native envs and trainer beside PufferLib 3.0's (its venv's python; alone: "
        f"{pufferlib3.default_python()}, built by {pufferlib3.BUILD})",
    )
    p.add_argument(
        "--pl3-envs",
        default=",".join(pufferlib3.RAW),
        help=f"--pufferlib3: raw env steps of these (default {','.join(pufferlib3.RAW)}; '' for none)",
    )
    p.add_argument(
        "--train-envs",
        default="cartpole,breakout",
        help="--pufferlib3: puffer train these (default cartpole,breakout; --matched also pufferlib3/NAME)",
    )
    p.add_argument(
        "--train-seconds",
        type=float,
        default=60.0,
        help="--pufferlib3: each puffer train run's wall time (0: none)",
    )
    p.add_argument(
        "--raw-seconds", type=float, default=3.0, help="--pufferlib3: each raw-steps sample's timed seconds"
    )
    p.add_argument(
        "--catalog",
        metavar="NAMES",
        default="",
        help="--pufferlib3: raw steps of its own env code over its binding and ours (pufferlib3/<name>): "
        "'all' (every available env of the built catalog) or a comma list",
    )
    p.add_argument(
        "--keep", metavar="DIR", help="--pufferlib3: keep each training run's logs, and PL 3.0's curves, here"
    )
    p.add_argument(
        "--matched",
        action="store_true",
        help=f"--pufferlib3: train both at one policy and geometry, no LSTM (pl3_matched.py); --train-envs "
        f"{','.join(pl3_matched.MATCHABLE)} (PL 3.0 set to our config) or pufferlib3/NAME (its own env "
        "code and geometry on both sides); no raw steps",
    )
    p.add_argument(
        "--to-score",
        action="store_true",
        help="--pufferlib3: wall time to --target per seed (--repeats, default 3): ours, PL 3.0 shipped and "
        "with rnn_name = None, each up to --train-seconds (pl3_to_score.py)",
    )
    p.add_argument("--target", type=float, help="--to-score: the score to reach (cartpole: 195)")
    p.add_argument("--plot", metavar="FILE", help="--to-score: draw every run's curve into this .png or .svg")
    p.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="--matched, --to-score: torch threads on every side (0: each side's own; 1 keeps runs on a "
        "shared box from stalling each other's threads)",
    )
    p.add_argument("--json-file", help="write machine, samples and table to this JSON file")
    p.add_argument("--json", action="store_true", help="print that JSON on stdout (progress goes to stderr)")
    p.add_argument("--markdown", help="write the table (and machine) to this Markdown file; a .png beside")
    p.add_argument("--from-json", help="only render the table of an earlier --json-file (with --markdown)")
    p.add_argument(
        "--native",
        action="store_true",
        help="instead: raw steps/s of every native Ocean env, 1024 instances (--num-envs N), one process",
    )
    p.set_defaults(func=run)


def machine(python202: Path | None) -> dict[str, Any]:
    import gymnasium

    import pufferlib
    from pufferlib.vector import physical_cores

    cpu = cpu_model()
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    versions["gymnasium"] = gymnasium.__version__
    versions["pufferlib"] = pufferlib.__version__
    for mod in ("minigrid", "nle"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:
            versions[mod] = "absent"
    if python202 is not None:
        versions["PufferLib peer"] = peer_versions(python202)
    method = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_all_start_methods()[0]
    return {
        "cpu": cpu,
        "physical_cores": physical_cores(),
        "logical_cpus": os.cpu_count(),
        "os": platform.platform(),
        "start_method": method,
        "versions": versions,
        "load_average_start": os.getloadavg(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _fail(message: str) -> int:
    print(f"puffer bench: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    if args.native:
        from pufferlib.bench import native

        explicit = args.num_envs != "2,8"  # the vector benchmark's default; native's is 1024 instances
        count = int(args.num_envs.split(",")[0]) if explicit else 1024
        return native.run(count, 0.25 if args.quick else 1.0, args.repeats, args.json)
    if args.json:  # --json: stdout carries the JSON document and nothing else
        with contextlib.redirect_stdout(sys.stderr):
            code = _run(args)
        print(json.dumps(getattr(args, "document", None)))
        return code
    return _run(args)


def _chart(results: list[dict], peers: list[str], markdown: str) -> None:
    """The table as a chart beside the Markdown file (pufferlib/plot.py draws it, as for every chart)."""
    from pufferlib import plot

    print("chart: " + ", ".join(plot.bench_chart(results, peers, [Path(markdown).with_suffix(".png")])))


class BadArgument(ValueError):
    """An argument `puffer bench` cannot use; the message names it and what would work."""


def env_counts(text: str) -> list[int]:
    """--num-envs '2,8' -> [2, 8]."""
    try:
        counts = [int(n) for n in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1:
        raise BadArgument(f"--num-envs expects comma-separated env counts >= 1, like 2,8; got {text!r}")
    return counts


def check_arguments(args: argparse.Namespace) -> None:
    """BadArgument for a count or scale that would measure nothing."""
    env_counts(args.num_envs)
    for flag, value, least in (("--repeats", args.repeats, 1), ("--workers", args.workers, 1)):
        if value is not None and value < least:
            raise BadArgument(f"{flag} must be >= {least}, got {value}")
    if not args.scale > 0:
        raise BadArgument(f"--scale must be > 0, got {args.scale}")
    if args.matched:
        raise BadArgument("--matched compares with PufferLib 3.0: puffer bench --pufferlib3 --matched")
    if args.to_score or args.target is not None or args.plot:
        raise BadArgument(
            "--to-score, --target and --plot compare with PufferLib 3.0: puffer bench "
            "--pufferlib3 --to-score --target SCORE"
        )


def load_saved(path: str) -> dict[str, Any]:
    """An earlier --json-file (machine and results), or BadArgument saying what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            saved = json.load(f)
    except OSError as e:
        raise BadArgument(f"--from-json {path}: cannot read it: {e.strerror or e}") from None
    except ValueError as e:  # not JSON, or not UTF-8
        raise BadArgument(f"--from-json {path} is not JSON ({e}): pass a file --json-file wrote") from None
    if not (isinstance(saved, dict) and isinstance(saved.get("machine"), dict)):
        raise BadArgument(f"--from-json {path} holds no 'machine': pass a file --json-file wrote")
    results = saved.get("results")
    if not (isinstance(results, list) and all(isinstance(r, dict) and "peer" in r for r in results)):
        raise BadArgument(f"--from-json {path} holds no 'results' rows: pass a file --json-file wrote")
    return saved


def _run(args: argparse.Namespace) -> int:
    if args.pufferlib3:
        if args.matched and args.to_score:
            return _fail("error: --matched and --to-score are two runs: pass one of them")
        if not args.to_score and (args.target is not None or args.plot):
            return _fail("error: --target and --plot belong to --to-score: add --to-score")
        mode = pl3_to_score.run if args.to_score else pl3_matched.run if args.matched else pufferlib3.run
        return mode(args, machine)
    try:
        check_arguments(args)
        saved = load_saved(args.from_json) if args.from_json else None
        if saved is not None:
            return _report_saved(args, saved)
        plan = _plan(args)
    except BadArgument as e:
        return _fail(f"error: {e}")
    except _Refused as e:
        return _fail(str(e))
    info = machine(plan.python202)
    info["command"] = "puffer bench " + " ".join(sys.argv[2:] if sys.argv[1:2] == ["bench"] else sys.argv[1:])
    info["workers"] = plan.worker_counts
    print(json.dumps(info, indent=1))
    results = _measure_all(args, plan)
    info["load_average_end"] = os.getloadavg()
    return _report_run(args, info, results, plan)


@dataclasses.dataclass
class _Plan:
    """What one run measures: the workloads (scaled), env counts, peers and their worker counts."""

    chosen: list
    counts: list[int]
    peers: list[str]
    worker_counts: list[int]
    cores: int
    python202: Path | None


class _Refused(ValueError):
    """Unknown workloads or peers, or an untrusted peer interpreter: said as it is, without 'error:'."""


def _report_saved(args: argparse.Namespace, saved: dict) -> int:
    """--from-json: the table (and --markdown's file and chart) of an earlier run, nothing measured."""
    peers = [p for p in PEERS if any(r["peer"] == p for r in saved["results"])]
    cores = saved["machine"].get("physical_cores")
    try:
        text = report.markdown(saved["machine"], report.table(saved["results"], peers, cores))
    except (KeyError, TypeError, ValueError) as e:  # rows of another shape
        raise BadArgument(f"--from-json {args.from_json}: a result row lacks or mistypes {e}") from e
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
        _chart(saved["results"], peers, args.markdown)
    return 0


def _plan(args: argparse.Namespace) -> _Plan:
    """The workloads, peers and counts the options ask for; _Refused names what is unknown."""
    from pufferlib.vector import physical_cores

    all_work = {w.name: w for w in workloads()}
    names = args.workloads.split(",") if args.workloads else list(all_work)
    if args.quick:
        names = args.workloads.split(",") if args.workloads else ["perf-0", "perf-1000"]
        args.repeats, args.scale = 1, args.scale / 4
    unknown = [n for n in names if n not in all_work]
    if args.peers:
        peers = args.peers.split(",")
    else:
        peers = [p for p in PEERS if args.puffer202 or not p.startswith("pl202")]
    unknown += [p for p in peers if p not in PEERS]
    if unknown:
        raise _Refused(f"unknown {', '.join(unknown)}; see --help for the choices")
    python202 = None
    if args.puffer202 and any(p.startswith("pl202") for p in peers):
        try:
            python202 = trusted_python(default_peer_python() if args.puffer202 == ASK else args.puffer202)
        except UntrustedInterpreter as e:
            raise _Refused(str(e)) from e
    cores = physical_cores()
    worker_counts = [args.workers] if args.workers else sorted({1, cores})
    chosen = []
    for n in names:
        w = all_work[n]
        missing = [m for m in w.requires if importlib.util.find_spec(m) is None]
        if missing:
            print(f"skipping {n}: {', '.join(missing)} not installed", file=sys.stderr)
            continue
        w.agent_steps = max(1, int(w.agent_steps * args.scale))
        chosen.append(w)
    return _Plan(chosen, env_counts(args.num_envs), peers, worker_counts, cores, python202)


def _measure_all(args: argparse.Namespace, plan: _Plan) -> list[dict]:
    """Every (repeat, workload, env count, peer, setup) sample, each printed as it is taken."""
    results = []
    for rep in range(args.repeats):
        for w in plan.chosen:
            for n in plan.counts:
                for p in plan.peers:
                    for setup in setups(p, n, plan.worker_counts) or [None]:
                        row = _measure(rep, w, n, p, setup, plan.python202)
                        results.append(row)
                        shown = (
                            f"{row['sps']:,.0f} agent steps/s"
                            if "sps" in row
                            else row.get("skip") or row["error"]
                        )
                        where = f"{p} {row.get('setup', '')}".rstrip()
                        print(
                            f"[{rep + 1}/{args.repeats}] {w.name:<14} envs={n:<2} {where:<20} {shown}",
                            flush=True,
                        )
    return results


def _report_run(args: argparse.Namespace, info: dict, results: list[dict], plan: _Plan) -> int:
    """The table, the errors, the --json-file and --markdown outputs; 1 when a peer only errored."""
    peers = plan.peers
    text = report.table(results, peers, plan.cores)
    print()
    print(text)
    errors = report.errors(results)
    if errors:
        print("\nerrors:\n" + "\n".join(f"  {line}" for line in errors))
    args.document = {"machine": info, "results": results, "table": text}
    if args.json_file:
        with open(args.json_file, "w") as f:
            json.dump(args.document, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report.markdown(info, text))
        _chart(results, peers, args.markdown)
    failed = report.failed_rows(results, peers)
    if failed:
        print(f"puffer bench: every measurement errored in {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _measure(rep: int, work, num_envs: int, peer: str, setup: Setup | None, python202: Path | None) -> dict:
    """One sample: {'sps': ...}, {'skip': why} or {'error': what} with where it was taken."""
    row: dict[str, Any] = {
        "repeat": rep,
        "workload": work.name,
        "description": work.description,
        "num_envs": num_envs,
        "peer": peer,
    }
    if setup is None:
        row["skip"] = f"no worker count in the ones tried splits {num_envs} envs into 2 batches"
        return row
    row["setup"], row["workers"], row["batch_size"] = setup.label(num_envs), setup.workers, setup.batch_size
    try:
        row["sps"] = measure(peer, work, num_envs, setup, python202)
    except Skip as e:
        row["skip"] = str(e)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {e}"
    return row
