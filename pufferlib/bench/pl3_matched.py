"""`puffer bench --pufferlib3 --matched`: both trainers end to end at one policy and one geometry.

    puffer bench --pufferlib3 --matched --train-envs cartpole,breakout --train-seconds 30 --repeats 2
    puffer bench --pufferlib3 --matched --train-envs pufferlib3/pong,pufferlib3/snake --train-seconds 60

The plain `--pufferlib3` train rows run each side at its own config (PufferLib 3.0: an LSTM, 4096
envs, 262,144-step batches). Here both sides train the same network at one geometry (pl3_targets.py):

- `cartpole`, `breakout`: PufferLib 3.0's `puffer_NAME` set to OUR config's geometry for our own
  game of that name (`ocean.NAME.toml`);
- `pufferlib3/NAME`: PufferLib 3.0's `puffer_NAME` at ITS OWN geometry (its NAME.ini over its
  default.ini), beside ours training the same C env, built here from its sdist (`pufferlib3/NAME`), set
  to that geometry. A catalog not built here, or a peer without the env, makes a skipped row naming
  the command that builds it.

What each side is set to:

- network: PL 3.0 `rnn_name = None`, `policy_name = Policy` (its Default: snake's .ini names its own
  Snake), Linear(obs, H) + GELU and the heads; ours `policy.num_layers 1`, `rnn.enabled false`;
- width H: `policy.hidden_size` on both sides;
- agent rows: env instances x agents each (snake: 4 maps x 256 snakes). PL 3.0 `env.num_envs`
  instances in one process (`vec.num_envs 1`); ours `vec.num_envs` instances (native);
- steps per row: PL 3.0 `train.bptt_horizon` (batch_size = rows x steps); ours `train.num_steps`;
- minibatches M: PL 3.0 `train.minibatch_size` = batch / M (and max_minibatch_size: no gradient
  accumulation); ours `train.num_minibatches`;
- epochs: `train.update_epochs` on both sides.

PL 3.0's changes are `pl3_changes` (applied after its .ini and command line by pl3_driver.apply),
ours `ours_overrides`; for a catalog env they restate its own geometry, so PL 3.0 runs its .ini less
its LSTM and custom policy. Everything else stays each side's own (optimizer, learning rate and its
schedule, gamma, losses, PufferLib 3.0's prioritised segment sampling, torch threads). Each run
reports back the config it trained with, its agent rows and its policy's parameter count
(pl3_driver.py's `ran` file; our run's config.toml and checkpoint), and the bench prints them per
side: the two must show the same rows, steps, minibatch, epochs, width and depth, and each its
parameter count for one GELU layer over its env's inputs (`mismatches`, an error otherwise). Where the
games differ (breakout: ours is our own C game, 114 observation features; PufferLib 3.0's has 118) the
first layers differ by their inputs alone, and the bench says so (`env_differences`); a catalog env is
one game, and its score on both sides is the env's own `score` info (PufferLib 3.0's dashboard's).
Medians over --repeats; the sides alternate which goes first.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from pufferlib.bench import pufferlib3, report
from pufferlib.bench.pl3_targets import (
    MATCHABLE,
    PL3_LAYERS,
    Geometry,
    binding,
    geometry,
    is_catalog,
    missing,
    parse,
    pl3_env,
)


def pl3_changes(g: Geometry) -> dict[str, Any]:
    """PufferLib 3.0's config changes (pl3_driver.apply, after its .ini and PL3_TRAIN_ARGS): its Default
    policy (`Policy`; snake's .ini names its own `Snake`), no LSTM, and the geometry."""
    return {
        "rnn_name": None,
        "policy_name": "Policy",
        "policy.hidden_size": g.hidden,
        "env.num_envs": g.instances,
        "train.bptt_horizon": g.steps,
        "train.batch_size": g.batch,
        "train.minibatch_size": g.minibatch,
        "train.max_minibatch_size": g.minibatch,  # one optimizer step per minibatch, as ours
        "train.update_epochs": g.epochs,
    }


def ours_overrides(g: Geometry, threads: int = 0) -> list[str]:
    """Our `puffer train BINDING` overrides (`threads`: train.torch_threads; 0 leaves the config's)."""
    threads_arg = ["--train.torch_threads", str(threads)] if threads else []
    return [
        *threads_arg,
        "--vec.backend", "native",
        "--vec.num_envs", str(g.instances),
        "--train.num_steps", str(g.steps),
        "--train.num_minibatches", str(g.minibatches),
        "--train.update_epochs", str(g.epochs),
        "--policy.hidden_size", str(g.hidden),
        "--policy.num_layers", str(g.layers),
        "--rnn.enabled", "false",
    ]  # fmt: skip


def commands(label: str, g: Geometry, seconds: float, threads: int = 0) -> dict[str, str]:
    """Each side's command line, as the bench prints it before the runs."""
    sets = ", ".join(f"{k}={v!r}" for k, v in pl3_changes(g).items())
    sets += f"; torch.set_num_threads({threads})" if threads else ""
    return {
        "pl3": f"puffer train puffer_{pl3_env(label)} {' '.join(pufferlib3.PL3_TRAIN_ARGS)}, then set {sets}",
        "ours": f"puffer train {binding(label)} --train.device cpu --train.max_seconds "
        f"{seconds:g} --train.stop_when_solved false {' '.join(ours_overrides(g, threads))}",
    }


def ran_row(side: str, ran: dict[str, Any] | None) -> dict[str, Any]:
    """What one run reported it trained with, in one shape for both sides (None where it said nothing)."""
    if not ran:
        return {}
    c = ran["config"]
    t = c["train"]
    if side == "pl3":
        rows, steps, batch = ran.get("agents"), t["bptt_horizon"], t["batch_size"]
        minibatch, hidden = t["minibatch_size"], c["policy"].get("hidden_size")
        layers, rnn, threads = PL3_LAYERS, c.get("rnn_name"), ran.get("torch_threads")
    else:
        rows, steps = ran.get("agents"), t["num_steps"]  # vec.num_envs instances x the env's agents
        batch = rows * steps if rows else None
        minibatch = batch // t["num_minibatches"] if batch else None
        hidden, layers = c["policy"].get("hidden_size"), c["policy"].get("num_layers")
        rnn = "LSTM" if c["rnn"]["enabled"] else None
        threads = t.get("torch_threads") or "default"  # 0: torch's default, one per core
    return {
        "rows": rows,
        "steps": steps,
        "batch": batch,
        "minibatch": minibatch,
        "epochs": t["update_epochs"],
        "hidden": hidden,
        "layers": layers,
        "rnn": rnn,
        "threads": threads,
        "inputs": ran.get("inputs"),
        "actions": ran.get("actions"),
        "parameters": ran.get("parameters"),
        "optimizer": t.get("optimizer", "adam"),
        "learning_rate": t["learning_rate"],
    }


SHAPE = ("rows", "steps", "batch", "minibatch", "epochs", "hidden", "layers", "rnn")  # equal on both sides
COLUMNS = (*SHAPE, "threads", "inputs", "actions", "parameters", "optimizer", "learning_rate")


def one_layer_parameters(inputs: int, actions: int, hidden: int) -> int:
    """PufferLib 3.0's Default policy's weights: Linear(inputs, H), the action head and the value head."""
    return inputs * hidden + hidden + hidden * actions + actions + hidden + 1


def config_table(results: list[dict[str, Any]]) -> str:
    """Every distinct configuration each side ran, per env, with how many runs ran it."""
    head = ["env", "side", *COLUMNS, "runs"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for env in dict.fromkeys(r["env"] for r in results):
        for side in ("pl3", "ours"):
            seen: dict[str, int] = {}
            for r in results:
                if r["env"] == env and r["side"] == side and r.get("ran"):
                    key = json.dumps(ran_row(side, r["ran"]))
                    seen[key] = seen.get(key, 0) + 1
            for key, count in seen.items():
                row = json.loads(key)
                cells = [_show(row[c]) for c in COLUMNS]
                lines.append("| " + " | ".join([env, side, *cells, str(count)]) + " |")
    return "\n".join(lines)


def _show(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _runs(results: list[dict[str, Any]], env: str, side: str) -> list[dict[str, Any]]:
    return [
        ran_row(side, r["ran"]) for r in results if r["env"] == env and r["side"] == side and r.get("ran")
    ]


def mismatches(results: list[dict[str, Any]]) -> list[str]:
    """Where the two sides trained different geometry or network on an env (SHAPE differs), or a run
    trained other weights than one GELU layer of its width over its env's inputs."""
    out = []
    for env in dict.fromkeys(r["env"] for r in results):
        runs = {side: _runs(results, env, side) for side in ("pl3", "ours")}
        shapes = {
            side: {json.dumps({k: row[k] for k in SHAPE}) for row in rows} for side, rows in runs.items()
        }
        if shapes["pl3"] and shapes["ours"] and shapes["pl3"] != shapes["ours"]:
            out.append(f"{env}: PufferLib 3.0 ran {sorted(shapes['pl3'])}, ours {sorted(shapes['ours'])}")
        for side, rows in runs.items():
            for row in rows:
                if None in (row["inputs"], row["actions"], row["hidden"], row["parameters"]):
                    out.append(f"{env}: {side} did not report its inputs, actions, width and parameters")
                    continue
                want = one_layer_parameters(row["inputs"], row["actions"], row["hidden"])
                if row["parameters"] != want:
                    out.append(
                        f"{env}: {side} trained {row['parameters']:,} parameters, not the {want:,} of one "
                        f"layer of {row['hidden']} over {row['inputs']} inputs and {row['actions']} actions"
                    )
    return list(dict.fromkeys(out))


def env_differences(results: list[dict[str, Any]]) -> list[str]:
    """Where the two sides' envs differ in observation features or actions (their own games: the
    networks then differ in their first layer's inputs alone)."""
    out = []
    for env in dict.fromkeys(r["env"] for r in results):
        sizes = {
            side: {(row["inputs"], row["actions"]) for row in _runs(results, env, side)}
            for side in ("pl3", "ours")
        }
        if sizes["pl3"] and sizes["ours"] and sizes["pl3"] != sizes["ours"]:
            (a_in, a_act), (b_in, b_act) = min(sizes["pl3"]), min(sizes["ours"])
            out.append(
                f"{env}: the games differ: PufferLib 3.0's observation has {a_in} features and {a_act} "
                f"actions, ours {b_in} and {b_act}, so the first layers differ by their inputs"
            )
    return out


def skipped(label: str, side: str, peer_has: set[str]) -> str | None:
    """Why `side` of `label` does not train here (None: it does), naming what builds it."""
    if side == "ours":
        return missing(label)
    name = pl3_env(label)
    if name not in peer_has:
        return f"the PufferLib 3.0 peer did not build puffer_{name}: {pufferlib3.BUILD} --envs {name}"
    return None


def shapes(labels: list[str]) -> dict[str, Geometry | None]:
    """Each env's matched geometry; None for a catalog env not built here (no .ini to read it from)."""
    return {label: None if is_catalog(label) and missing(label) else geometry(label) for label in labels}


def rows(
    python: Path,
    shaped: dict[str, Geometry | None],
    repeats: int,
    seconds: float,
    keep: Path | None,
    threads: int = 0,
) -> list[dict]:
    """Per repeat, per env of `shaped` (`shapes`): both trainers at its geometry for `seconds` each, sides
    alternating (a side that cannot train here is a skipped row saying why); `threads`: torch threads on
    both sides (0: each side's own)."""
    peer_has = set(json.loads(pufferlib3._driver(python, "envs", {}, False, 120).splitlines()[-1]))
    out = []
    for rep in range(repeats):
        for label, g in shaped.items():
            for side in pufferlib3._order(rep, ("pl3", "ours")):
                row = {"repeat": rep, "env": label, "seconds_asked": seconds, "side": side, "matched": True}
                saved = keep / f"{side}-{label.replace('/', '-')}-{rep}" if keep else None
                why = skipped(label, side, peer_has)
                if why or g is None:  # no geometry: a catalog env not built here (`missing` says so)
                    row["skip"] = why or f"its geometry is read from the catalog's .ini, {missing(label)}"
                elif side == "pl3":
                    row = pufferlib3._sample(
                        row,
                        lambda label=label, d=saved, g=g: pufferlib3.train_pl3(
                            python, pl3_env(label), seconds, d, pl3_changes(g), threads
                        ),
                    )
                else:
                    row = pufferlib3._sample(
                        row,
                        lambda label=label, d=saved, g=g: pufferlib3.train_ours(
                            binding(label), seconds, d, ours_overrides(g, threads)
                        ),
                    )
                    if is_catalog(label) and row.get("env_score") is not None:  # as PL 3.0's dashboard
                        row["score"] = row["env_score"]
                out.append(row)
                shown = row.get("skip") or row.get("error")
                if "sps" in row:
                    shown = f"{row['sps']:,.0f} SPS, score {row['score'] or 0:.1f}, {row['steps']:,} steps"
                    shown += f" in {row['seconds']:.0f} s"
                print(
                    f"[{rep + 1}/{repeats}] matched {label:<9} {side:<5} {shown}", file=sys.stderr, flush=True
                )
    return out


def run(args: Any, machine: Any) -> int:
    """`puffer bench --pufferlib3 --matched` once the CLI has parsed it (train rows only)."""
    try:
        pufferlib3.check_training(args, "--matched")
        labels = parse(args.train_envs)
        if not labels:
            raise ValueError(
                f"--matched: no env given; --train-envs takes {', '.join(MATCHABLE)} or pufferlib3/NAME"
            )
        shaped = shapes(labels)
        python = pufferlib3.asked_python(args)
    except (ValueError, pufferlib3.PeerMissing) as e:
        print(f"puffer bench: {e}", file=sys.stderr)
        return 2
    info = pufferlib3.run_info(args, machine, python)
    for label, g in shaped.items():
        if g is None:
            print(f"{label}: skipped: {missing(label)}", file=sys.stderr)
            continue
        for side, line in commands(label, g, args.train_seconds, args.torch_threads).items():
            print(f"{label} {side}: {line}", file=sys.stderr)
    keep = Path(args.keep) if args.keep else None
    results = rows(python, shaped, args.repeats, args.train_seconds, keep, args.torch_threads)
    info["load_average_end"] = os.getloadavg()
    tables = {"train": report.train_table(results), "configs": config_table(results)}
    wrong, notes = mismatches(results), env_differences(results)
    text = report.machine_lines(info) + "\n"
    text += (
        f"`puffer train` end to end on the CPU at a matched policy and geometry, {args.train_seconds:g} s "
        f"each, median of {args.repeats}:\n\n{tables['train']}\n\n"
        f"What each side ran (read back from each run):\n\n{tables['configs']}\n"
    )
    text += "".join(f"\nNote: {line}.\n" for line in notes)
    print(text)
    args.document = {"machine": info, "train": results, "tables": tables, "mismatches": wrong, "notes": notes}
    if args.json_file:
        with open(args.json_file, "w") as f:
            json.dump(args.document, f, indent=1, default=str)
    if args.markdown:
        Path(args.markdown).write_text(text)
    for path in pufferlib3.export_curves(results, keep) if keep else []:
        print(f"PufferLib 3.0 learning curve (draw with `puffer plot {path}`): {path}")
    for line in wrong:
        print(f"error: not matched: {line}", file=sys.stderr)
    for line in dict.fromkeys(r["error"] for r in results if "error" in r):
        print(f"error: {line}", file=sys.stderr)
    return 1 if wrong or any("error" in r for r in results) else 0
