"""Pokémon Red binding, run end to end on our generated cartridge (gbrom): it proves the binding (PyBoy, the
ROM lookup, buttons, frames, RAM reads, seeding), not the game. The real ROM cannot ship: its absence is
listed with the hint and refused with a clear error, and a bad file is refused by name."""

import subprocess
import sys

import numpy as np
import pytest
from _binding_checks import require, run_contract, trace

import pufferlib.environments as environments
from pufferlib import EnvironmentSetupError
from pufferlib.environments import pokemon_red
from pufferlib.environments.support import gbrom

BINDINGS = environments.bindings("pokemon_red")
GAME = "pokemon_red/PokemonRed-v0"


@pytest.fixture(autouse=True)
def _installed(monkeypatch):
    require(BINDINGS[0])
    monkeypatch.delenv(pokemon_red.ROMS_ENV, raising=False)


def test_generated_rom_is_a_valid_cartridge():
    rom = gbrom.build()
    assert len(rom) == gbrom.ROM_SIZE and gbrom.problems(rom) == [] and gbrom.title(rom) == "PUFFERTANK"
    broken = bytearray(rom)
    broken[0x134] ^= 0xFF  # the title changes, the header checksum no longer matches
    assert any("header checksum" in p for p in gbrom.problems(bytes(broken)))
    broken = bytearray(rom)
    broken[0x104] = 0  # the first logo byte (0xCE)
    assert gbrom.problems(bytes(broken)) == ["no Nintendo logo at 0x104"]
    assert gbrom.problems(rom[:1000]) != []
    assert int.from_bytes(rom[0x14E:0x150], "big") == gbrom.global_checksum(rom)


def test_testrom_steps_within_its_spaces():
    env = environments.make("pokemon_red/testrom")
    try:
        run_contract(env, steps=24)
        assert env.single_observation_space.shape == pokemon_red.PIXELS
        assert env.single_action_space.n == len(pokemon_red.BUTTONS)
    finally:
        env.close()


def test_frames_are_drawn_and_buttons_reach_the_program():
    env = environments.make("pokemon_red/testrom", frame_skip=8)
    try:
        env.reset(seed=0)
        game = env.env
        first = env.observations[0].copy()
        assert first.std() > 0, "the checkerboard must be drawn"
        counter = game.pyboy.memory[gbrom.FRAME_COUNTER]
        env.step(np.array([pokemon_red.BUTTONS.index("down")]))  # the program ignores directions
        assert (game.pyboy.memory[gbrom.FRAME_COUNTER] - counter) % 256 == 8, (
            "one step runs frame_skip frames"
        )
        assert not np.array_equal(first, env.observations[0]), "the background scrolls every frame"
        scy = game.pyboy.memory[0xFF42]
        env.step(np.array([pokemon_red.BUTTONS.index("start")]))  # Start held: SCY += 8 per frame
        assert (game.pyboy.memory[0xFF42] - scy) % 256 == 8 * pokemon_red.PRESS_FRAMES
        np.testing.assert_array_equal(env.render(), env.observations[0])
    finally:
        env.close()


def test_same_seed_same_episode_other_seed_other_start():
    def make():
        return environments.make("pokemon_red/testrom")

    first, again, other = trace(make(), 6, seed=1), trace(make(), 6, seed=1), trace(make(), 6, seed=4)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_without_a_rom_it_is_listed_with_the_hint_and_refused():
    binding = environments.get(GAME)
    assert GAME in environments.catalog("pokemon_red") and not binding.available()
    assert binding.missing() == ["its ROM"] and binding.install_hint == pokemon_red.ROM_HINT
    with pytest.raises(EnvironmentSetupError, match=r"PUFFERTANK_ROMS is not set.*--env\.rom PATH"):
        binding.make_env()
    listing = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "envs", "--all", "--family", "pokemon_red"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"{GAME}" in listing and f"missing its ROM: {pokemon_red.ROM_HINT}" in listing


def test_train_without_a_rom_exits_2_naming_the_fix(tmp_path):
    run = subprocess.run(
        [sys.executable, "-m", "pufferlib.cli", "train", GAME, "--train.total-timesteps", "64"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 2, run.stderr
    assert "PUFFERTANK_ROMS" in run.stderr and "--env.rom" in run.stderr and "Traceback" not in run.stderr


def test_rom_is_found_in_puffertank_roms(tmp_path, monkeypatch):
    folder = tmp_path / "roms"
    monkeypatch.setenv(pokemon_red.ROMS_ENV, str(folder))
    with pytest.raises(EnvironmentSetupError, match=r"holds no pokemon_red\.gb"):
        pokemon_red.find_rom()
    # A stand-in under the expected name: the lookup and the binding's path run, the game does not.
    gbrom.write(folder / pokemon_red.ROM_FILE)
    binding = environments.get(GAME)
    assert binding.available() and binding.missing() == []
    env = binding.make_env()
    try:
        env.reset(seed=0)
        assert env.env.title == "PUFFERTANK"
    finally:
        env.close()


def test_a_file_that_is_not_a_cartridge_is_refused_by_name(tmp_path):
    bad = tmp_path / "pokemon_red.gb"
    bad.write_bytes(b"\0" * gbrom.ROM_SIZE)
    with pytest.raises(EnvironmentSetupError, match=r"is not a Game Boy ROM \(no Nintendo logo"):
        pokemon_red.make_env("PokemonRed-v0", rom=bad)
    with pytest.raises(EnvironmentSetupError, match="no ROM file at"):
        pokemon_red.make_env("PokemonRed-v0", rom=tmp_path / "absent.gb")
