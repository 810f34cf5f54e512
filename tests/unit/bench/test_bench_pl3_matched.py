"""`puffer bench --pufferlib3 --matched` (pufferlib/bench/pl3_matched.py): what each side is set to,
what each side reports it ran, and one short real run of both on cartpole."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from _strict import skip_or_fail

import pufferlib.environments as environments
from pufferlib import cli
from pufferlib.bench import pl3_matched, pl3_targets, pufferlib3
from pufferlib.train import config
from pufferlib.train.setup import make_policy


def _driver():
    """pl3_driver.py as the peer runs it: loaded by path (the bench never imports it)."""
    spec = importlib.util.spec_from_file_location("pl3_driver", pufferlib3.DRIVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", pl3_matched.MATCHABLE)
def test_pufferlib3_is_set_to_our_configs_geometry_without_its_lstm(name):
    cfg = config.load(f"ocean/{pufferlib3.RAW[name].ours}")
    rows, steps = cfg["vec"]["num_envs"], cfg["train"]["num_steps"]
    batch = rows * steps
    assert pl3_matched.pl3_changes(pl3_matched.geometry(name)) == {
        "rnn_name": None,
        "policy_name": "Policy",  # its Default (its .ini names it already: cartpole's and breakout's do)
        "policy.hidden_size": cfg["policy"]["hidden_size"],
        "env.num_envs": rows,
        "train.bptt_horizon": steps,
        "train.batch_size": batch,
        "train.minibatch_size": batch // cfg["train"]["num_minibatches"],
        "train.max_minibatch_size": batch // cfg["train"]["num_minibatches"],
        "train.update_epochs": cfg["train"]["update_epochs"],
    }


@pytest.mark.parametrize("name", pl3_matched.MATCHABLE)
def test_ours_gets_pufferlib3s_network_one_gelu_layer_and_no_lstm(name):
    """Our policy at the overrides has PufferLib 3.0's Default's parameter count: Linear(obs, H), the
    action head Linear(H, A) and the value Linear(H, 1)."""
    ours = f"ocean/{pufferlib3.RAW[name].ours}"
    g = pl3_matched.geometry(name)
    cfg = config.load(ours, pl3_matched.ours_overrides(g))
    assert cfg["policy"]["num_layers"] == 1 and cfg["rnn"]["enabled"] is False
    assert (cfg["vec"]["backend"], cfg["vec"]["num_envs"], cfg["train"]["num_steps"]) == (
        "native",
        g.rows,
        g.steps,
    )
    assert (cfg["train"]["num_minibatches"], cfg["train"]["update_epochs"]) == (g.minibatches, g.epochs)
    binding = environments.get(ours)
    if not binding.available():
        skip_or_fail(f"{ours} not built: {binding.install_hint}")
    env = binding.make_env()
    try:
        obs, actions, h = (
            int(np.prod(env.single_observation_space.shape)),
            env.single_action_space.n,
            g.hidden,
        )
        policy = make_policy(binding, env, cfg)
        assert sum(p.numel() for p in policy.parameters()) == obs * h + h + h * actions + actions + h + 1
    finally:
        env.close()


def test_torch_threads_are_set_on_our_side_only_when_asked():
    g = pl3_matched.geometry("cartpole")
    assert "--train.torch_threads" not in pl3_matched.ours_overrides(g)
    cfg = config.load("ocean/cartpole", pl3_matched.ours_overrides(g, 1))
    assert cfg["train"]["torch_threads"] == 1
    assert "torch.set_num_threads(1)" in pl3_matched.commands("cartpole", g, 5, 1)["pl3"]


def test_a_geometry_pufferlib3_cannot_take_names_the_fix():
    with pytest.raises(ValueError, match=r"vec\.num_envs 10 does not split into train\.num_minibatches 4"):
        pl3_targets.check(pl3_matched.Geometry(10, 16, 4, 4, 64), "ocean/x")
    pl3_targets.check(pl3_matched.Geometry(12, 16, 4, 4, 64), "ocean/x")


def test_the_driver_sets_what_pufferlib3s_command_line_cannot():
    apply = _driver().apply
    args = {
        "rnn_name": "Recurrent",
        "train": {"minibatch_size": 32768, "use_rnn": True},
        "env": {"num_envs": 4096},
    }
    apply(
        args, {"rnn_name": None, "train.minibatch_size": 2048, "policy.hidden_size": 64, "env.num_envs": 512}
    )
    assert args == {
        "rnn_name": None,
        "train": {"minibatch_size": 2048, "use_rnn": False},
        "env": {"num_envs": 512},
        "policy": {"hidden_size": 64},  # its .ini had no [policy] keys: its policy's arguments may be added
    }
    with pytest.raises(KeyError, match=r"no train\.minibatch_sise"):
        apply(args, {"train.minibatch_sise": 1})
    with pytest.raises(KeyError, match=r"no \[trian\]"):
        apply(args, {"trian.gamma": 0.9})


def _ran(side: str, hidden: int = 64, parameters: int = 515, inputs: int = 4) -> dict:
    """A run's report as each side writes it (pl3_driver's `ran` file; pufferlib3._ran)."""
    train = {"update_epochs": 4, "learning_rate": 0.05, "optimizer": "muon"}
    sizes = {"parameters": parameters, "inputs": inputs, "actions": 2}
    if side == "pl3":
        train.update(bptt_horizon=16, batch_size=8192, minibatch_size=2048)
        config = {"train": train, "policy": {"hidden_size": hidden}}
        return {"config": config, "agents": 512, "torch_threads": 2, **sizes}
    train.update(num_steps=16, num_minibatches=4)
    config = {"train": train, "vec": {"num_envs": 512}, "policy": {"hidden_size": hidden, "num_layers": 1}}
    return {"config": {**config, "rnn": {"enabled": False}}, "agents": 512, **sizes}


def _results(pl3: dict, ours: dict) -> list[dict]:
    return [{"env": "cartpole", "side": "pl3", "ran": pl3}, {"env": "cartpole", "side": "ours", "ran": ours}]


def test_the_same_network_and_geometry_on_both_sides_is_matched():
    same = _results(_ran("pl3"), _ran("ours"))
    assert pl3_matched.mismatches(same) == [] and pl3_matched.env_differences(same) == []
    table = pl3_matched.config_table(same)
    shared = "| 512 | 16 | 8,192 | 2,048 | 4 | 64 | 1 | none |"
    assert f"| cartpole | pl3 {shared} 2 | 4 | 2 | 515 | muon | 0.05 | 1 |" in table
    assert (
        "| cartpole | ours | 512 | 16 | 8,192 | 2,048 | 4 | 64 | 1 | none | default | 4 | 2 | 515 |" in table
    )


def test_another_width_or_other_weights_is_a_mismatch():
    (line,) = pl3_matched.mismatches(_results(_ran("pl3"), _ran("ours", hidden=128, parameters=1027)))
    assert line.startswith("cartpole: PufferLib 3.0 ran") and '"hidden": 128' in line
    (line,) = pl3_matched.mismatches(_results(_ran("pl3"), _ran("ours", parameters=4675)))  # two layers of 64
    assert line == (
        "cartpole: ours trained 4,675 parameters, not the 515 of one layer of 64 over 4 inputs and 2 actions"
    )


def test_games_with_other_observations_are_noted_not_refused():
    results = _results(_ran("pl3", parameters=771, inputs=8), _ran("ours"))
    assert pl3_matched.mismatches(results) == []
    (note,) = pl3_matched.env_differences(results)
    assert "PufferLib 3.0's observation has 8 features and 2 actions, ours 4 and 2" in note


def bench(*args, capsys):
    code = cli.main(["bench", *args])
    return code, capsys.readouterr().err


def test_matched_without_pufferlib3_or_with_an_env_it_cannot_match_is_refused(capsys):
    code, err = bench("--matched", capsys=capsys)
    assert code == 2 and "--matched compares with PufferLib 3.0: puffer bench --pufferlib3 --matched" in err
    code, err = bench("--pufferlib3", "--matched", "--train-envs", "pong", capsys=capsys)
    assert code == 2 and "--matched --train-envs: unknown pong; valid: cartpole, breakout" in err
    code, err = bench("--pufferlib3", "--matched", "--train-seconds", "0", capsys=capsys)
    assert code == 2 and "--train-seconds must be above 0" in err
    code, err = bench("--pufferlib3", "--matched", "--torch-threads", "-1", capsys=capsys)
    assert code == 2 and "--torch-threads must be 0 (each side's own) or more, got -1" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
