"""`puffer bench --pufferlib3 --matched --train-envs pufferlib3/NAME` (pl3_targets.py, pl3_matched.py):
PufferLib 3.0's own env code on both sides, at its own geometry. The entries parsed and refused, the
geometry read from its .ini over its default.ini (one agent an env, and many), what each side is set to,
one short real run of our side on a many-agent env read back, and a side reporting another geometry
going red. The catalog is $PUFFERTANK_TEST_PL3_HOME's (tests/run.sh builds it); PufferLib 3.0's
default.ini is read from the pinned sdist it was built from. Nothing here runs the PufferLib 3.0 peer."""

from __future__ import annotations

import configparser
import copy
import importlib.util
import re
import tarfile

import pytest
from _strict import skip_or_fail

from pufferlib import cli
from pufferlib.bench import pl3_matched, pl3_targets, pufferlib3
from pufferlib.ocean.contracts import built, catalog, ini
from pufferlib.train import config

BUILD = "python -m pufferlib.ocean.contracts.catalog build"


def _needs_catalog() -> None:
    if not catalog.read():
        skip_or_fail("no pufferlib3 catalog registered: tests/run.sh builds it ($PUFFERTANK_TEST_PL3_HOME)")


def _sdist_text(member: str) -> str:
    """A file of the pinned PufferLib 3.0.0 sdist (the cached one the catalog was built from)."""
    path = catalog.sdist_cache() / catalog.SDIST
    if not path.is_file():
        skip_or_fail(
            f"no {catalog.SDIST} in {catalog.sdist_cache()}: `python -m pufferlib.ocean.contracts.catalog "
            "fetch`"
        )
    with tarfile.open(path) as tar:
        return tar.extractfile(f"pufferlib-{catalog.VERSION}/{member}").read().decode()


def _pl3_config(name: str) -> dict:
    """PufferLib 3.0's parsed config of puffer_<name> as its load_config reads it: default.ini, then the
    env's .ini over it ([base] keys at the top), each value through ast.literal_eval where it parses."""
    parser = configparser.ConfigParser()
    parser.read_string(_sdist_text("pufferlib/config/default.ini"))
    parser.read_string((catalog.catalog_home() / name / f"{name}.ini").read_text())
    args: dict = {}
    for section in parser.sections():
        values = {k: ini.value(v) for k, v in parser[section].items()}
        if section == "base":
            args.update(values)
        elif "." not in section and not section.startswith("sweep"):
            args[section] = values
    return args


def _driver():
    """pl3_driver.py as the peer runs it: loaded by path (the bench never imports it)."""
    spec = importlib.util.spec_from_file_location("pl3_driver", pufferlib3.DRIVER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench(*args, capsys):
    code = cli.main(["bench", "--pufferlib3", "--matched", *args])
    return code, capsys.readouterr().err


def test_an_unknown_entry_is_refused_naming_the_valid_ones(capsys):
    _needs_catalog()
    assert pl3_targets.parse("cartpole,pufferlib3/pong,pufferlib3/snake") == [
        "cartpole",
        "pufferlib3/pong",
        "pufferlib3/snake",
    ]
    code, err = bench("--train-envs", "pufferlib3/nosuch,pong,pufferlib3/../pong", capsys=capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    unknown, valid = err.split("; valid: ")
    assert unknown.endswith("--matched --train-envs: unknown pufferlib3/nosuch, pong, pufferlib3/../pong")
    valid = valid.strip().split(", ")
    assert valid[:2] == ["cartpole", "breakout"] and {"pufferlib3/pong", "pufferlib3/rware"} <= set(valid)
    assert all(catalog.read()[v.removeprefix("pufferlib3/")]["available"] for v in valid[2:])


def test_an_env_the_catalog_could_not_build_is_skipped_with_its_finding():
    _needs_catalog()
    failed = sorted(n for n, e in catalog.read().items() if not e["available"])
    if not failed:
        pytest.skip("every env of this catalog is available")
    label = f"pufferlib3/{failed[0]}"
    assert pl3_targets.parse(label) == [label]
    assert "rung of our audit" in pl3_targets.missing(label)
    assert pl3_matched.shapes([label]) == {label: None}


def test_without_a_catalog_a_catalog_entry_is_skipped_naming_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("PUFFER_PL3_HOME", str(tmp_path))
    assert pl3_targets.parse("pufferlib3/pong,cartpole") == ["pufferlib3/pong", "cartpole"]
    with pytest.raises(
        ValueError, match=rf"unknown pong; valid: cartpole, breakout, pufferlib3/NAME once {BUILD}$"
    ):
        pl3_targets.parse("pong")
    why = pl3_targets.missing("pufferlib3/pong")
    assert f"not built yet (no pufferlib3/pong in the PufferLib 3.0 catalog at {tmp_path})" in why
    assert f"build it with `{BUILD}`" in why and "PUFFER_PL3_HOME" in why
    shaped = pl3_matched.shapes(["pufferlib3/pong", "cartpole"])
    assert shaped["pufferlib3/pong"] is None and shaped["cartpole"] == pl3_targets.geometry("cartpole")
    assert pl3_matched.skipped("pufferlib3/pong", "ours", {"pong"}) == why
    assert pl3_matched.skipped("pufferlib3/pong", "pl3", {"pong"}) is None


def test_a_peer_without_the_env_skips_its_side_naming_the_build():
    assert pl3_matched.skipped("pufferlib3/rware", "pl3", {"cartpole", "pong"}) == (
        "the PufferLib 3.0 peer did not build puffer_rware: "
        "python -m pufferlib.bench.pufferlib3_peer --envs rware"
    )


# PufferLib 3.0.0's own geometry (its .ini over default.ini): envs x agents each = rows, steps, M, epochs, H
OWN = {
    "pong": (1024, 1, 64, 2, 1, 128),  # 1024 games, minibatch_size 32768 of a 65,536-step batch
    "squared": (4096, 1, 64, 8, 1, 128),  # no bptt_horizon in its .ini: default.ini's 64
    "snake": (4, 256, 64, 2, 1, 128),  # 4 maps of 256 snakes
    "rware": (128, 8, 64, 2, 1, 128),  # 128 warehouses of 8 robots
    "trash_pickup": (128, 8, 64, 8, 1, 128),  # no minibatch_size: default.ini's 8192
}


@pytest.mark.parametrize("name", OWN)
def test_a_catalog_envs_geometry_is_pufferlib3s_own(name):
    _needs_catalog()
    instances, per_env, steps, minibatches, epochs, hidden = OWN[name]
    g = pl3_targets.geometry(f"pufferlib3/{name}")
    assert g == pl3_targets.Geometry(instances * per_env, steps, minibatches, epochs, hidden, per_env=per_env)
    assert (g.instances, g.per_env) == (instances, built(catalog.catalog_home())[name].agents_per_env)
    # `puffer train pufferlib3/<name>` runs that geometry too: its .ini over default.ini's values (ini.py)
    cfg = config.load(f"pufferlib3/{name}")
    train, policy = cfg["train"], cfg["policy"]
    ran = (train["num_steps"], train["num_minibatches"], train["update_epochs"], policy["hidden_size"])
    assert (cfg["vec"]["num_envs"], *ran, policy["num_layers"]) == (
        g.instances,
        g.steps,
        g.minibatches,
        g.epochs,
        g.hidden,
        g.layers,
    )


def test_pufferlib3s_defaults_here_are_its_default_ini():
    parser = configparser.ConfigParser()
    parser.read_string(_sdist_text("pufferlib/config/default.ini"))
    for key, value in ini.PL3_DEFAULTS["train"].items():  # what `puffer train pufferlib3/NAME` reads beneath
        assert ini.value(parser["train"][key]) == value, key
    models = _sdist_text("pufferlib/models.py")
    default = models[models.index("class Default(") :]
    assert re.search(r"def __init__\(self, env, hidden_size=(\d+)\)", default)[1] == str(
        pl3_targets.PL3_HIDDEN
    )


@pytest.mark.parametrize(("name", "policy"), [("pong", "Policy"), ("snake", "Snake"), ("rware", "Policy")])
def test_pufferlib3_runs_its_own_ini_less_its_lstm_and_custom_policy(name, policy):
    """pl3_changes on its own parsed config (through the driver's apply) changes its network alone: every
    geometry key is what it already had (batch_size 'auto' is rows x bptt_horizon; [policy] without
    hidden_size is its Default's width)."""
    _needs_catalog()
    g = pl3_targets.geometry(f"pufferlib3/{name}")
    changes = pl3_matched.pl3_changes(g)
    network, geometry = list(changes.items())[:2], tuple(changes.values())[2:]
    assert network == [("rnn_name", None), ("policy_name", "Policy")], changes
    assert geometry == (g.hidden, g.instances, g.steps, g.batch, g.minibatch, g.minibatch, g.epochs), changes
    own = _pl3_config(name)
    assert (own["rnn_name"], own["policy_name"]) == ("Recurrent", policy)
    ran = copy.deepcopy(own)
    _driver().apply(ran, changes)
    resolved = {
        **own["train"],
        "batch_size": own["env"]["num_envs"] * g.per_env * own["train"]["bptt_horizon"],
    }
    before = {**own, "train": resolved, "policy": {"hidden_size": pl3_targets.PL3_HIDDEN, **own["policy"]}}

    def value(args, dotted):
        section, _, key = dotted.rpartition(".")
        return (args[section] if section else args)[key]

    assert {k for k in changes if value(before, k) != value(ran, k)} == {"rnn_name"} | (
        {"policy_name"} if policy != "Policy" else set()
    )
    assert (
        ran["train"]["max_minibatch_size"] == own["train"]["max_minibatch_size"] == 32768
    )  # no accumulation


def test_ours_at_the_overrides_trains_the_catalog_env_at_the_same_rows():
    cfg = config.load(
        "pufferlib3/snake", pl3_matched.ours_overrides(pl3_targets.Geometry(1024, 64, 2, 1, 128, per_env=256))
    )
    assert (cfg["vec"]["num_envs"], cfg["train"]["num_steps"], cfg["train"]["num_minibatches"]) == (4, 64, 2)
    assert (cfg["policy"]["num_layers"], cfg["rnn"]["enabled"], cfg["vec"]["backend"]) == (1, False, "native")


@pytest.fixture(scope="module")
def ours_snake() -> tuple[pl3_targets.Geometry, dict]:
    """One real update of our `puffer train pufferlib3/snake` at PufferLib 3.0's geometry (1024 snakes x
    64 steps): what our side reports it ran."""
    _needs_catalog()
    g = pl3_targets.geometry("pufferlib3/snake")
    overrides = [*pl3_matched.ours_overrides(g, threads=1), "--train.total_timesteps", str(g.batch)]
    return g, pufferlib3.train_ours("pufferlib3/snake", 300, None, overrides)["ran"]


def _pl3_ran(g: pl3_targets.Geometry, ours: dict, **agents) -> dict:
    """PufferLib 3.0's report (the driver's `ran` file) of a run of puffer_snake at `g`: its own config
    through apply, and the sizes of the same C env."""
    args = _pl3_config("snake")
    _driver().apply(args, pl3_matched.pl3_changes(g))
    sizes = {k: ours[k] for k in ("inputs", "actions")}
    parameters = pl3_matched.one_layer_parameters(sizes["inputs"], sizes["actions"], g.hidden)
    return {"config": args, "agents": g.rows, "torch_threads": 1, "parameters": parameters, **sizes, **agents}


def test_our_run_of_a_many_agent_env_reports_its_agent_rows_and_one_layer(ours_snake):
    _, ran = ours_snake
    row = pl3_matched.ran_row("ours", ran)
    assert {k: row[k] for k in pl3_matched.SHAPE} == {
        "rows": 1024,  # 4 maps (vec.num_envs) x 256 snakes
        "steps": 64,
        "batch": 65536,
        "minibatch": 32768,
        "epochs": 1,
        "hidden": 128,
        "layers": 1,
        "rnn": None,
    }
    assert (row["inputs"], row["actions"], ran["config"]["vec"]["num_envs"]) == (121, 4, 4)  # its 11x11 view
    assert row["parameters"] == pl3_matched.one_layer_parameters(121, 4, 128)


def test_a_side_reporting_another_geometry_is_a_mismatch(ours_snake):
    g, ours = ours_snake

    def results(pl3: dict, mine: dict) -> list[dict]:
        env = "pufferlib3/snake"
        return [{"env": env, "side": "pl3", "ran": pl3}, {"env": env, "side": "ours", "ran": mine}]

    same = results(_pl3_ran(g, ours), ours)
    assert pl3_matched.mismatches(same) == [] and pl3_matched.env_differences(same) == []
    assert (
        "| pufferlib3/snake | pl3 | 1,024 | 64 | 65,536 | 32,768 | 1 | 128 | 1 | none |"
        in pl3_matched.config_table(same)
    )
    # PufferLib 3.0 counting its 4 env objects (not their 1024 snakes) as rows, or ours doing so
    (line,) = pl3_matched.mismatches(results(_pl3_ran(g, ours, agents=4), ours))
    assert line.startswith("pufferlib3/snake: PufferLib 3.0 ran") and '"rows": 4,' in line
    (line,) = pl3_matched.mismatches(results(_pl3_ran(g, ours), {**ours, "agents": 4}))
    assert '"rows": 4,' in line.split(", ours ")[1]
    # PufferLib 3.0 at half the horizon: 32 steps a row, a 32,768-step batch
    short = pl3_targets.Geometry(1024, 32, 2, 1, 128, per_env=256)
    (line,) = pl3_matched.mismatches(results(_pl3_ran(short, ours), ours))
    theirs, mine = line.split(", ours ")
    assert '"steps": 32, "batch": 32768' in theirs and '"steps": 64, "batch": 65536' in mine


def test_a_catalog_geometry_pufferlib3_cannot_take_is_refused_saying_why():
    with pytest.raises(
        ValueError, match=r"its 1024 agent rows do not split into 3 minibatches.*pick another env"
    ):
        pl3_targets.check(pl3_targets.Geometry(1024, 64, 3, 1, 128, per_env=8), "pufferlib3/x (x.ini)")
    pl3_targets.check(pl3_targets.Geometry(1024, 64, 8, 1, 128, per_env=8), "pufferlib3/x (x.ini)")
