"""Adapters from our environments and vector envs to the ecosystem's APIs.

    env = pufferlib.compat.to_gymnasium(puffer_env)        # gymnasium.Env (one agent)
    env = pufferlib.compat.to_pettingzoo(puffer_env)       # pettingzoo ParallelEnv (many agents)
    envs = pufferlib.compat.GymnasiumVectorEnv(vecenv)     # gymnasium.vector.VectorEnv (CleanRL)
    envs = pufferlib.compat.make_vector(creator, num_envs=8, backend="multiprocessing",
                                        autoreset_mode="SameStep")   # the same, built in one call
    venv = pufferlib.compat.sb3.SB3VecEnv(envs)            # stable-baselines3 VecEnv (same-step envs)

Each adapter keeps a reference to what it wraps (`.env` / `.vecenv`) and closes it on close().
docs/compat.md lists the names we share with PufferLib and every deliberate difference.
"""

from pufferlib.compat.gymnasium_env import GymnasiumEnv, to_gymnasium
from pufferlib.compat.pettingzoo_env import PettingZooEnv, to_pettingzoo
from pufferlib.compat.vector_env import GymnasiumVectorEnv, autoreset_creator, make_vector

__all__ = [
    "GymnasiumEnv",
    "GymnasiumVectorEnv",
    "PettingZooEnv",
    "autoreset_creator",
    "make_vector",
    "to_gymnasium",
    "to_pettingzoo",
]
