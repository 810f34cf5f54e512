"""`puffer bench --pufferlib3 --matched`: both trainers end to end at one policy and one geometry.

    puffer bench --pufferlib3 --matched --train-envs cartpole,breakout --train-seconds 30 --repeats 2

The plain `--pufferlib3` train rows run each side at its own config (PufferLib 3.0: an LSTM, 4096
envs, 262,144-step batches). Here PufferLib 3.0's trainer is set to our config's geometry for the
env (`ocean.NAME.toml`), and both sides train the same network:

- network: PL 3.0 `rnn_name = None`, its Default policy, Linear(obs, H) + GELU and the heads; ours
  `policy.num_layers 1`, `rnn.enabled false`: the same layers;
- width H: `policy.hidden_size` on both sides (our toml's);
- agent rows: PL 3.0 `env.num_envs` in one process (`vec.num_envs 1`); ours `vec.num_envs` (native);
- steps per row: PL 3.0 `train.bptt_horizon` (batch_size = rows x steps); ours `train.num_steps`;
- minibatches M: PL 3.0 `train.minibatch_size` = batch / M (and max_minibatch_size: no gradient
  accumulation); ours `train.num_minibatches`;
- epochs: `train.update_epochs` on both sides.

PL 3.0's changes are `pl3_changes` (applied after its .ini and command line by pl3_driver.apply),
ours `ours_overrides`. Everything else stays each side's own (optimizer, learning rate and its
schedule, gamma, losses, PufferLib 3.0's prioritised segment sampling, torch threads). Each run
reports back the config it trained with and its policy's parameter count (pl3_driver.py's `ran`
file; our run's config.toml and checkpoint), and the bench prints them per side: the two must show
the same rows, steps, minibatch, epochs, width and depth, and each its parameter count for one GELU
layer over its env's inputs (`mismatches`, an error otherwise). Where the games differ (breakout:
ours is our own C game, 114 observation features; PufferLib 3.0's has 118) the first layers differ by
their inputs alone, and the bench says so (`env_differences`). Medians over --repeats; the sides
alternate which goes first.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from pufferlib.bench import pufferlib3, report

MATCHABLE = ("cartpole", "breakout")  # one agent row per env, the same game and frameskip on both sides
PL3_LAYERS = 1  # PufferLib 3.0's Default policy: one hidden layer (its width is its only size)


class Geometry(NamedTuple):
    """What both sides train with: agent rows x steps per rollout, minibatches, epochs, the MLP's size."""

    rows: int
    steps: int
    minibatches: int
    epochs: int
    hidden: int
    layers: int = PL3_LAYERS

    @property
    def batch(self) -> int:
        return self.rows * self.steps

    @property
    def minibatch(self) -> int:
        return self.batch // self.minibatches


def geometry(name: str) -> Geometry:
    """Our config's geometry for ocean/<name>'s native env; ValueError where PufferLib 3.0 cannot take
    it (its minibatches are whole rows, so the rows must divide into them)."""
    from pufferlib import environments
    from pufferlib.train import config

    ours = f"ocean/{pufferlib3.RAW[name].ours}"
    cfg = config.load(ours)
    tc, hidden = cfg["train"], cfg["policy"].get("hidden_size")
    if hidden is None:  # the policy class's default width
        hidden = inspect.signature(environments.get(ours).policy_class()).parameters["hidden_size"].default
    g = Geometry(cfg["vec"]["num_envs"], tc["num_steps"], tc["num_minibatches"], tc["update_epochs"], hidden)
    check(g, ours)
    return g


def check(g: Geometry, source: str) -> None:
    """ValueError naming the fix where PufferLib 3.0 cannot train at `g` (its minibatches are whole
    rows of steps; the config of `source` gave it)."""
    if g.rows % g.minibatches:
        raise ValueError(
            f"{source}: vec.num_envs {g.rows} does not split into train.num_minibatches {g.minibatches}, and "
            "PufferLib 3.0's minibatches are whole rows: make vec.num_envs a multiple of it"
        )


def pl3_changes(g: Geometry) -> dict[str, Any]:
    """PufferLib 3.0's config changes (pl3_driver.apply, after its .ini and PL3_TRAIN_ARGS)."""
    return {
        "rnn_name": None,
        "policy.hidden_size": g.hidden,
        "env.num_envs": g.rows,
        "train.bptt_horizon": g.steps,
        "train.batch_size": g.batch,
        "train.minibatch_size": g.minibatch,
        "train.max_minibatch_size": g.minibatch,  # one optimizer step per minibatch, as ours
        "train.update_epochs": g.epochs,
    }


def ours_overrides(g: Geometry, threads: int = 0) -> list[str]:
    """Our `puffer train ocean/NAME` overrides (`threads`: train.torch_threads; 0 leaves the toml's)."""
    threads_arg = ["--train.torch_threads", str(threads)] if threads else []
    return [
        *threads_arg,
        "--vec.backend", "native",
        "--vec.num_envs", str(g.rows),
        "--train.num_steps", str(g.steps),
        "--train.num_minibatches", str(g.minibatches),
        "--train.update_epochs", str(g.epochs),
        "--policy.hidden_size", str(g.hidden),
        "--policy.num_layers", str(g.layers),
        "--rnn.enabled", "false",
    ]  # fmt: skip


def commands(name: str, g: Geometry, seconds: float, threads: int = 0) -> dict[str, str]:
    """Each side's command line, as the bench prints it before the runs."""
    sets = ", ".join(f"{k}={v!r}" for k, v in pl3_changes(g).items())
    sets += f"; torch.set_num_threads({threads})" if threads else ""
    return {
        "pl3": f"puffer train puffer_{name} {' '.join(pufferlib3.PL3_TRAIN_ARGS)}, then set {sets}",
        "ours": f"puffer train ocean/{pufferlib3.RAW[name].ours} --train.device cpu --train.max_seconds "
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
        rows, steps = c["vec"]["num_envs"], t["num_steps"]
        batch, minibatch = rows * steps, rows * steps // t["num_minibatches"]
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


def rows(
    python: Path, names: list[str], repeats: int, seconds: float, keep: Path | None, threads: int = 0
) -> list[dict]:
    """Per repeat, per env: both trainers at the matched geometry for `seconds` each, sides alternating;
    `threads`: torch threads on both sides (0: each side's own)."""
    shapes = {name: geometry(name) for name in names}
    out = []
    for rep in range(repeats):
        for name in names:
            g = shapes[name]
            for side in pufferlib3._order(rep, ("pl3", "ours")):
                row = {"repeat": rep, "env": name, "seconds_asked": seconds, "side": side, "matched": True}
                saved = keep / f"{side}-{name}-{rep}" if keep else None
                missing = pufferlib3.native_missing(pufferlib3.RAW[name].ours) if side == "ours" else None
                if missing:
                    row["skip"] = missing
                elif side == "pl3":
                    row = pufferlib3._sample(
                        row,
                        lambda n=name, d=saved, g=g: pufferlib3.train_pl3(
                            python, n, seconds, d, pl3_changes(g), threads
                        ),
                    )
                else:
                    row = pufferlib3._sample(
                        row,
                        lambda n=name, d=saved, g=g: pufferlib3.train_ours(
                            pufferlib3.RAW[n].ours, seconds, d, ours_overrides(g, threads)
                        ),
                    )
                out.append(row)
                shown = row.get("skip") or row.get("error")
                if "sps" in row:
                    shown = f"{row['sps']:,.0f} SPS, score {row['score'] or 0:.1f}, {row['steps']:,} steps"
                    shown += f" in {row['seconds']:.0f} s"
                print(
                    f"[{rep + 1}/{repeats}] matched {name:<9} {side:<5} {shown}", file=sys.stderr, flush=True
                )
    return out


def run(args: Any, machine: Any) -> int:
    """`puffer bench --pufferlib3 --matched` once the CLI has parsed it (train rows only)."""
    try:
        pufferlib3.check_training(args, "--matched")
        names = pufferlib3._check(args.train_envs, list(MATCHABLE), "--matched --train-envs")
        if not names:
            raise ValueError(f"--matched: no env given; --train-envs takes {', '.join(MATCHABLE)}")
        shapes = {name: geometry(name) for name in names}
        python = pufferlib3.asked_python(args)
    except (ValueError, pufferlib3.PeerMissing) as e:
        print(f"puffer bench: {e}", file=sys.stderr)
        return 2
    info = pufferlib3.run_info(args, machine, python)
    for name, g in shapes.items():
        for side, line in commands(name, g, args.train_seconds, args.torch_threads).items():
            print(f"{name} {side}: {line}", file=sys.stderr)
    keep = Path(args.keep) if args.keep else None
    results = rows(python, names, args.repeats, args.train_seconds, keep, args.torch_threads)
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
