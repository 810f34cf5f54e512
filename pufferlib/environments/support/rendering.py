"""Headless OpenGL defaults for the families that render with MuJoCo (mujoco, dm_control, metaworld).

MUJOCO_GL=egl: draw without a display, through EGL. Without a GPU, libglvnd picks Mesa's EGL (llvmpipe,
software); with one (and the container's `graphics` driver capability), the NVIDIA driver's.
LP_NUM_THREADS=0: llvmpipe draws in the calling thread. With its worker threads, a process that rendered
and then forked (pufferlib.vector.Multiprocessing's default start method) hangs in the child's first
frame; 84x84 frames gain nothing from the threads anyway.

Both are read when the libraries load, not per env: dm_control initializes its EGL display (and with it
llvmpipe's threads) when it is imported. So the image sets them (Dockerfile.envs), and elsewhere the
families that render with MuJoCo call `headless()` when they are imported, i.e. when
`pufferlib.environments` is: unless already set (MUJOCO_GL=glfw or osmesa to choose another backend).
"""

from __future__ import annotations

import os

DEFAULTS = {"MUJOCO_GL": "egl", "LP_NUM_THREADS": "0"}


def headless() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
