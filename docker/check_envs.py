"""Build-time check of the envs stage: every environment family makes an env, resets and steps it.

Runs inside the image during `docker build`, so a broken package or a missing system library fails the
build (naming the package), not a researcher's first run. MuJoCo and dm_control also render a frame
headless (MUJOCO_GL, EGL through Mesa on the CPU), and Griddly a sprite frame (Vulkan through Mesa's
lavapipe). Each check runs in a child process with a time limit, so a segfault or a hang in one package
fails that check by name. Offline: the Atari ROMs ship with ale-py, the free retro ROMs with stable-retro.
Each family's row in pufferlib/environments/families.py names the checks here that prove it
(tests/unit/envs/test_families.py: a family with packages and no check, or a check renamed, goes red).

    python docker/check_envs.py                             # all checks
    python docker/check_envs.py --only crafter              # some, each in a child process
    python docker/check_envs.py --one crafter               # one, in this process
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame-ce: no display in a build
os.environ.setdefault("MUJOCO_GL", "egl")  # the image sets it; for runs by hand
TIMEOUT = 300.0  # seconds per check (Craftax compiles with XLA on 2 cores)


def frame_ok(frame, shape: tuple[int, ...], what: str) -> str:
    """A rendered frame has the asked shape and is not one flat colour (a blank one: a broken renderer)."""
    import numpy as np

    frame = np.asarray(frame)
    if frame.shape != shape:
        raise AssertionError(f"{what}: frame shape {frame.shape}, asked for {shape}")
    if frame.min() == frame.max():
        raise AssertionError(f"{what}: frame is one flat value {frame.min()} (the renderer drew nothing)")
    return f"{what} {frame.shape} std {frame.std():.1f}"


def gymnasium_env(env_id: str, module: str | None = None, **kwargs) -> Callable[[], str]:
    def check() -> str:
        import gymnasium

        if module:
            __import__(module)
        env = gymnasium.make(env_id, **kwargs)
        try:
            env.reset(seed=0)
            obs, *_ = env.step(env.action_space.sample())
        finally:
            env.close()
        return f"{env_id} obs {getattr(obs, 'shape', type(obs).__name__)}"

    return check


def procgen() -> str:
    import numpy as np
    from procgen import ProcgenGym3Env

    env = ProcgenGym3Env(num=1, env_name="coinrun")
    env.act(np.zeros(1, dtype=np.int32))
    _, obs, _ = env.observe()
    return f"coinrun {obs['rgb'].shape}"


def butterfly() -> str:
    from pettingzoo.butterfly import pistonball_v6

    env = pistonball_v6.parallel_env()
    try:
        env.reset(seed=0)
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})
    finally:
        env.close()
    return "pistonball_v6"


def gym_legacy() -> str:
    import gym  # procgen's old API needs gym<1

    assert gym.__version__.startswith("0.26"), gym.__version__
    return gym.__version__


def box2d() -> str:
    import gymnasium

    gymnasium_env("LunarLander-v3")()
    gymnasium_env("BipedalWalker-v3")()
    env = gymnasium.make("CarRacing-v3")  # draws its pixels with pygame(-ce)
    try:
        env.reset(seed=0)
        obs, *_ = env.step(env.action_space.sample())
    finally:
        env.close()
    return frame_ok(obs, (96, 96, 3), "CarRacing-v3 pixels (pygame-ce)")


def mujoco() -> str:
    import gymnasium

    env = gymnasium.make("HalfCheetah-v5", render_mode="rgb_array", width=84, height=84)
    try:
        env.reset(seed=0)
        env.step(env.action_space.sample())
        frame = env.render()
    finally:
        env.close()
    return frame_ok(frame, (84, 84, 3), f"HalfCheetah-v5 render (MUJOCO_GL={os.environ['MUJOCO_GL']})")


def dm_control() -> str:
    import numpy as np
    from dm_control import suite

    env = suite.load("cartpole", "swingup", task_kwargs={"random": 0})
    env.reset()
    spec = env.action_spec()
    env.step(np.zeros(spec.shape, spec.dtype))
    frame = env.physics.render(height=84, width=84, camera_id=0)
    return frame_ok(frame, (84, 84, 3), f"cartpole-swingup render (MUJOCO_GL={os.environ['MUJOCO_GL']})")


def shimmy() -> str:
    from dm_control import suite
    from shimmy import DmControlCompatibilityV0

    env = DmControlCompatibilityV0(suite.load("reacher", "easy", task_kwargs={"random": 0}))
    try:
        env.reset(seed=0)
        obs, *_ = env.step(env.action_space.sample())
    finally:
        env.close()
    return f"reacher-easy through DmControlCompatibilityV0, obs keys {sorted(obs)}"


def metaworld() -> str:
    import gymnasium
    import metaworld  # noqa: F401  (registers Meta-World/*)

    env = gymnasium.make("Meta-World/MT1", env_name="reach-v3", seed=0)
    try:
        env.reset(seed=0)
        obs, _, _, _, info = env.step(env.action_space.sample())
    finally:
        env.close()
    return f"MT1 reach-v3 obs {obs.shape}, success {info['success']}"


def vizdoom() -> str:
    import vizdoom as vzd

    game = vzd.DoomGame()
    game.load_config(os.path.join(vzd.scenarios_path, "basic.cfg"))
    game.set_window_visible(False)
    game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
    game.init()
    try:
        game.new_episode()
        game.make_action([1, 0, 0])
        frame = game.get_state().screen_buffer
    finally:
        game.close()
    return frame_ok(frame, frame.shape, "basic screen buffer")


def magent2() -> str:
    from magent2.environments import battle_v4

    env = battle_v4.parallel_env(map_size=45)
    try:
        env.reset(seed=0)
        agents = len(env.agents)
        env.step({agent: env.action_space(agent).sample() for agent in env.agents})
    finally:
        env.close()
    return f"battle_v4, {agents} agents"


def open_spiel() -> str:
    import pyspiel

    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    state.apply_action(state.legal_actions()[0])
    return f"tic_tac_toe, {len(state.legal_actions())} legal actions after one move"


def crafter() -> str:
    import crafter

    env = crafter.Env(seed=0)
    env.reset()
    obs, *_ = env.step(0)
    return frame_ok(obs, (64, 64, 3), "crafter frame")


def craftax() -> str:
    import jax
    from craftax.craftax_env import make_craftax_env_from_name

    env = make_craftax_env_from_name("Craftax-Classic-Symbolic-v1", auto_reset=True)
    obs, _ = jax.jit(env.reset)(jax.random.PRNGKey(0), env.default_params)
    platform = jax.devices()[0].platform
    return f"Craftax-Classic-Symbolic-v1 reset (jit) on {platform}: obs {obs.shape}"


def bsuite() -> str:
    import bsuite

    env = bsuite.load_from_id("catch/0")
    env.reset()
    step = env.step(0)
    return f"catch/0 obs {step.observation.shape}"


def highway() -> str:
    return gymnasium_env("highway-fast-v0", module="highway_env")()


def griddly() -> str:
    import gym
    import numpy as np
    from griddly import gd

    shapes = []
    for observer in (gd.ObserverType.VECTOR, gd.ObserverType.SPRITE_2D):  # sprites: Vulkan (lavapipe)
        env = gym.make("GDY-Sokoban-v0", player_observer_type=observer)
        try:
            obs = np.asarray(env.reset())
            env.step(env.action_space.sample())
        finally:
            env.close()
        shapes.append(obs.shape)
    frame_ok(obs, shapes[-1], "Sokoban sprite frame")
    return f"Sokoban vector {shapes[0]}, sprites {shapes[1]}"


def retro() -> str:
    import stable_retro

    env = stable_retro.make("Airstriker-Genesis-v0", render_mode=None)  # its default, "human", needs X
    try:
        env.reset(seed=0)
        obs, *_ = env.step(env.action_space.sample())
    finally:
        env.close()
    return frame_ok(obs, (224, 320, 3), "Airstriker-Genesis frame")


def tooling() -> str:
    import io

    import matplotlib
    import optuna
    import tomli_w

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as logdir:
        writer = SummaryWriter(logdir)
        writer.add_scalar("check", 1.0, 0)
        writer.close()
        assert any(name.startswith("events.out.tfevents") for name in os.listdir(logdir))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study()
    study.optimize(lambda trial: trial.suggest_float("x", -1, 1) ** 2, n_trials=3)
    fig, ax = plt.subplots()
    ax.plot([0, 1])
    fig.savefig(io.BytesIO(), format="png")
    tomli_w.dumps({"check": 1})
    return "tensorboard SummaryWriter, optuna study, matplotlib Agg, tomli-w"


def slimevolley() -> str:
    import numpy as np
    import slimevolleygym.slimevolley as sv

    sv.setPixelObsMode()  # OpenCV drawing on a NumPy canvas (pyglet would need a display)
    env = sv.SlimeVolleyEnv()
    env.seed(0)
    obs = env.reset()
    obs, *_ = env.step([1, 0, 1])
    if np.asarray(obs).shape != (12,):
        raise AssertionError(f"SlimeVolley state observation {np.shape(obs)}, expected (12,)")
    return frame_ok(env.render(mode="state"), (84, 168, 3), "SlimeVolley frame")


def pyboy() -> str:
    """PyBoy runs a cartridge we write here (the check cannot import pufferlib's generator, which is not
    installed yet): the Nintendo logo, a header checksum and a loop that draws a checkerboard."""
    import warnings

    warnings.simplefilter("ignore")  # PyBoy's notice that it uses pysdl2-dll's SDL2
    from pyboy import PyBoy

    rom = bytearray(0x8000)
    rom[0x100:0x104] = bytes.fromhex("00C35001")
    rom[0x104:0x134] = bytes.fromhex(
        "CEED6666CC0D000B03730083000C000D0008111F8889000EDCCC6EE6DDDDD999BBBB67636E0EECCCDDDC999FBBB9333E"
    )
    # LCD off; tile 1 solid; map = checkerboard of tiles 0/1; palette; LCD on; then loop forever.
    code = (
        "F3 F044FE9020FA AFE040 2110800610 3EFF 220520FC 2100980E00 0600 78A9E601220478FE2020F5 0C79FE2020ED"
    )
    code += " 3EE4E047 3E91E040 18FE"
    rom[0x150 : 0x150 + len(code.replace(" ", "")) // 2] = bytes.fromhex(code.replace(" ", ""))
    rom[0x14D] = (-sum(rom[0x134:0x14D]) - (0x14D - 0x134)) & 0xFF
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "check.gb")
        with open(path, "wb") as f:
            f.write(rom)
        pb = PyBoy(path, window="null", sound_emulated=False)
        try:
            pb.tick(150, True)
            frame = pb.screen.ndarray[:, :, :3].copy()
        finally:
            pb.stop(save=False)
    return frame_ok(frame, (144, 160, 3), "PyBoy frame")


def microrts() -> str:
    """The JVM starts with MicroRTS's jars, and its batched client resets and steps 2 games, masks and all."""
    import gym_microrts
    import jpype
    import numpy as np
    from jpype.imports import registerDomain

    root = os.path.join(gym_microrts.__path__[0], "microrts")
    registerDomain("ts", alias="tests")
    registerDomain("ai")
    jpype.addClassPath(os.path.join(root, "microrts.jar"))
    jpype.startJVM("-Djava.awt.headless=true", convertStrings=False)
    from ai import PassiveAI
    from ai.core import AI
    from ai.rewardfunction import RewardFunctionInterface, WinLossRewardFunction
    from jpype.types import JArray, JInt
    from rts.units import UnitTypeTable
    from ts import JNIGridnetVecClient

    utt = UnitTypeTable()
    rewards = JArray(RewardFunctionInterface)([WinLossRewardFunction()])
    bots = JArray(AI)([PassiveAI(), PassiveAI()])
    client = JNIGridnetVecClient(0, 2, 100, rewards, root, "maps/8x8/basesWorkers8x8.xml", bots, utt, False)
    try:
        obs = np.asarray(client.reset([0, 0]).observation)
        masks = np.asarray(client.getMasks(0))
        noop = JArray(JArray(JArray(JInt)))([JArray(JArray(JInt))([]), JArray(JArray(JInt))([])])
        client.gameStep(noop, [0, 0])
    finally:
        client.close()
    if obs.shape != (2, 5, 8, 8) or masks.shape != (2, 8, 8, 79) or not masks[..., 0].any():
        raise AssertionError(f"MicroRTS observation {obs.shape}, masks {masks.shape} (no unit may act)")
    return f"8x8 observation planes {obs.shape[1:]}, masks {masks.shape[1:]}"


def nmmo() -> str:
    import nmmo

    class Config(nmmo.config.Small, nmmo.config.AllGameSystems):
        PLAYER_N = 16

    with tempfile.TemporaryDirectory() as maps:  # nmmo writes its generated maps here
        config = Config()
        config.set("PATH_MAPS", maps)
        env = nmmo.Env(config, seed=0)
        obs, _ = env.reset(seed=0)
        agents = len(obs)
        for _ in range(20):
            env.step({agent: env.action_space(agent).sample() for agent in env.agents})
        env.close()
    return f"Small x {agents} agents, {len(env.agents)} alive after 20 random steps"


def kinetix() -> str:
    """Kinetix's env modules import (without the package __init__, which imports its training stack, as
    pufferlib/environments/support/kinetix_jax.py loads them) and observe a level; the layer after this one
    builds and steps the registered programs (kinetix_jax.py)."""
    import importlib.util
    import types

    root = importlib.util.find_spec("kinetix").submodule_search_locations[0]
    hollow = types.ModuleType("kinetix.environment")
    hollow.__path__ = [os.path.join(root, "environment")]
    sys.modules["kinetix.environment"] = hollow
    from kinetix.environment.env import make_kinetix_env
    from kinetix.environment.env_state import EnvParams
    from kinetix.environment.spaces import ActionType, ObservationType
    from kinetix.environment.utils import create_empty_env, static_env_params_from_size

    static, params = static_env_params_from_size("s"), EnvParams()
    env = make_kinetix_env(ActionType.MULTI_DISCRETE, ObservationType.SYMBOLIC_FLAT, None, params, static)
    obs = env.get_obs(create_empty_env(static))
    if "kinetix.util" in sys.modules:
        raise AssertionError("kinetix.util (Kinetix's training stack) was imported")
    return f"size s, symbolic observation {obs.shape}, actions {env.action_space(params).shape}"


CHECKS: dict[str, Callable[[], str]] = {
    "gymnasium (classic control)": gymnasium_env("CartPole-v1"),
    "ale-py (Atari)": gymnasium_env("ALE/Pong-v5", module="ale_py"),
    "minigrid": gymnasium_env("MiniGrid-Empty-5x5-v0", module="minigrid"),
    "nle (NetHack)": gymnasium_env("NetHackScore-v0", module="nle"),
    "minihack": gymnasium_env("MiniHack-Room-5x5-v0", module="minihack"),
    "procgen2 (procgen)": procgen,
    "pettingzoo butterfly": butterfly,
    "gym (legacy, for procgen and griddly)": gym_legacy,
    "rich": lambda: __import__("importlib.metadata").metadata.version("rich"),
    "ray (pufferlib.vector.Ray)": lambda: __import__("ray").__version__,
    "box2d (Box2D, CarRacing on pygame-ce)": box2d,
    "mujoco (gymnasium MuJoCo v5, headless render)": mujoco,
    "dm_control (suite, headless render)": dm_control,
    "shimmy (dm_control adapter)": shimmy,
    "metaworld (MT1)": metaworld,
    "vizdoom": vizdoom,
    "magent2": magent2,
    "open-spiel": open_spiel,
    "crafter": crafter,
    "craftax (CPU JAX)": craftax,
    "bsuite": bsuite,
    "highway-env": highway,
    "griddly (vector and Vulkan sprites)": griddly,
    "stable-retro (Airstriker-Genesis)": retro,
    "tensorboard, optuna, matplotlib, tomli-w": tooling,
    "slimevolleygym (Slime Volleyball)": slimevolley,
    "pyboy (Pokémon Red binding, generated test ROM)": pyboy,
    "gym-microrts (MicroRTS on the JVM, masks)": microrts,
    "nmmo (Neural MMO)": nmmo,
    "kinetix-env (Kinetix random levels, exported JAX programs)": kinetix,
}


def run_one(name: str) -> int:
    """Run one check in this process: 0 and its detail on stdout, or 1 and the traceback."""
    try:
        detail = CHECKS[name]()
    except Exception:
        traceback.print_exc()
        return 1
    print(detail)
    return 0


def run_child(name: str) -> tuple[str, bool, float, str]:
    start = time.perf_counter()
    # In a scratch directory: some packages write files where they run (ViZDoom's _vizdoom.ini, MuJoCo's
    # MUJOCO_LOG.TXT), which must not land in the image's /workspace.
    try:
        with tempfile.TemporaryDirectory(prefix="check-envs-") as scratch:
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--one", name],
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                cwd=scratch,
            )
    except subprocess.TimeoutExpired:
        return name, False, time.perf_counter() - start, f"timed out after {TIMEOUT:.0f} s"
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        why = f"crashed (signal {-proc.returncode})" if proc.returncode < 0 else f"exit {proc.returncode}"
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        return name, False, seconds, f"{why}\n{tail}"
    return name, True, seconds, (proc.stdout.strip().splitlines() or [""])[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", choices=sorted(CHECKS), help="run one check in this process")
    parser.add_argument(
        "--only", action="append", choices=sorted(CHECKS), help="run these checks (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="checks run at once")
    args = parser.parse_args(argv)
    if args.one:
        return run_one(args.one)
    failed: list[str] = []
    names = args.only or list(CHECKS)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for name, ok, seconds, detail in pool.map(run_child, names):
            if ok:
                print(f"check_envs: ok   {name} ({seconds:.1f} s): {detail}", flush=True)
            else:
                failed.append(name)
                print(f"check_envs: FAIL {name} ({seconds:.1f} s): {detail}", file=sys.stderr, flush=True)
    if failed:
        print(
            f"check_envs: {len(failed)} environment package(s) broken: {', '.join(failed)}", file=sys.stderr
        )
        return 1
    print(f"check_envs: all {len(names)} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
