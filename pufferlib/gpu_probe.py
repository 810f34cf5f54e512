"""What this environment can see of a GPU, in words for a smoke check's detail (pufferlib.smoke): which
renderer an EGL context gets, and, where torch sees no CUDA GPU, what it found instead (the torch build,
the NVIDIA driver and the CUDA it supports, the device nodes, torch's own warnings).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

EGL_PROBE = """
import os
os.environ["MUJOCO_GL"] = "egl"
import mujoco
from OpenGL import GL
ctx = mujoco.GLContext(16, 16)
ctx.make_current()
try:
    print(f"{GL.glGetString(GL.GL_RENDERER).decode()}, {GL.glGetString(GL.GL_VERSION).decode()}")
finally:
    ctx.free()
"""


def egl_renderer() -> str:
    """The OpenGL renderer an EGL context gets here (MuJoCo's headless path), e.g. an NVIDIA GPU's name or
    Mesa's llvmpipe. In a child process: a GL driver's state must not leak into later forks."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", EGL_PROBE], capture_output=True, text=True, timeout=60, env=os.environ
        )
    except subprocess.TimeoutExpired:
        return "no EGL context within 60 s"
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no output"])[-1]
        return f"no EGL context ({last})"
    return out.stdout.strip().splitlines()[-1]


def egl_situation() -> str:
    """Why EGL may miss the NVIDIA driver: the toolkit mounts its EGL library only for `graphics`."""
    caps = os.environ.get("NVIDIA_DRIVER_CAPABILITIES", "(unset)")
    vendor = "/usr/share/glvnd/egl_vendor.d/10_nvidia.json"
    found = [f"NVIDIA_DRIVER_CAPABILITIES={caps}"]
    found.append(
        f"{vendor} {'present' if os.path.exists(vendor) else 'absent (the NVIDIA EGL driver is not mounted)'}"
    )
    if not has_nvidia_device():
        found.append("no /dev/nvidia* device in this environment")
    return "Found: " + "; ".join(found) + ". The container needs a GPU and the `graphics` driver capability."


def cuda_situation(said: list[warnings.WarningMessage]) -> str:
    """Why torch sees no CUDA GPU, as far as this environment tells: `said` holds the warnings
    `torch.cuda.is_available()` gave."""
    import torch

    found = []
    if torch.version.cuda:
        found.append(f"torch {torch.__version__} is built for CUDA {torch.version.cuda}")
    else:
        found.append(f"torch {torch.__version__} is a CPU-only build")
    try:
        with open("/proc/driver/nvidia/version") as f:
            found.append("NVIDIA driver: " + " ".join(f.readline().split()))
    except OSError:
        found.append("no NVIDIA driver loaded (no /proc/driver/nvidia/version)")
    try:
        driver_cuda = torch._C._cuda_getDriverVersion()  # 0 without a driver
    except (AttributeError, RuntimeError):
        driver_cuda = 0
    if driver_cuda:
        found.append(f"the driver supports CUDA up to {driver_cuda // 1000}.{driver_cuda % 1000 // 10}")
    if not has_nvidia_device():
        found.append("no /dev/nvidia* device in this environment")
    found += [" ".join(str(w.message).split())[:300] for w in said if "cuda" in str(w.message).lower()]
    return "; ".join(found)


def has_nvidia_device() -> bool:
    """Whether a /dev/nvidia<N> device node is here (the NVIDIA runtime passed a GPU in)."""
    return any(name.startswith("nvidia") and name[6:].isdigit() for name in os.listdir("/dev"))
