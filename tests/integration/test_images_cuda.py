"""The cuda variant builds: PyPI's CUDA torch, the CUDA compiler, Triton, labels, and the matrix runs on it.
~7 GB of image and ~2.7 GB of download, so it is opt-in: PUFFERTANK_TEST_CUDA=1 pytest -m cuda_build.
Removes what it made afterwards (images, and the BuildKit cache it filled) unless PUFFERTANK_KEEP_CUDA=1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from _repo import REPO

from pufferlib.tank.build.chain import build_chain
from pufferlib.tank.build.options import BuildOptions
from pufferlib.tank.build.resolve import torch_version
from pufferlib.tank.build.timings import BUDGETS
from pufferlib.tank.containers import nvidia_runtime_available
from pufferlib.tank.cuda import facts
from pufferlib.tank.names import STAGES
from pufferlib.tank.variant import nvidia_gpus

TORCH = torch_version(REPO)
PYPI_CUDA = facts(REPO).pypi_cuda(TORCH)  # docker/cuda.toml: what PyPI's torch is built for

pytestmark = [
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.cuda_build,
    pytest.mark.timeout(3600),
    pytest.mark.skipif(
        os.environ.get("PUFFERTANK_TEST_CUDA") != "1", reason="opt in: PUFFERTANK_TEST_CUDA=1"
    ),
]


@pytest.fixture(scope="module")
def cuda_chain(docker_client):
    free = shutil.disk_usage("/var/lib/docker" if os.path.isdir("/var/lib/docker") else "/").free
    if free < 20e9:
        pytest.fail(f"the cuda build needs ~15 GB free for the engine; {free / 1e9:.0f} GB left")
    chain = build_chain(BuildOptions(variant="cuda"), docker_client)
    yield chain
    if os.environ.get("PUFFERTANK_KEEP_CUDA") != "1":
        for stage in reversed(STAGES):
            for tag in (chain.stages[stage].hash_tag, chain.stages[stage].tag):
                docker_client.images.remove(tag)
        docker_client.api.prune_builds()


def test_cuda_images_and_labels(docker_client, cuda_chain, capsys):
    lib = docker_client.images.get(cuda_chain.tag("lib"))
    assert lib.labels["puffertank.variant"] == "cuda"
    assert lib.labels["puffertank.cuda-version"] == PYPI_CUDA
    with capsys.disabled():
        size, budget = lib.attrs["Size"] / 1e9, BUDGETS["cuda_lib_gb"]
        print(f"\n[budget] cuda lib image: {size:.2f} GB (<= {budget:g} GB)")


def test_cuda_torch_and_compiler(container, cuda_chain):
    script = (
        "python -c 'import torch, pufferlib; print(torch.__version__, torch.version.cuda)'"
        " && nvcc --version | tail -n 1"
        " && python -c 'from torch.utils.cpp_extension import CUDA_HOME; print(CUDA_HOME)'"
    )
    out = container.run_and_wait(["sh", "-c", script], image=cuda_chain.hash_tag("lib"), timeout=300).stdout
    lines = out.splitlines()
    assert lines[0].startswith(TORCH) and lines[0].endswith(f" {PYPI_CUDA}"), out
    assert f"cuda_{PYPI_CUDA}" in lines[1], out
    assert lines[2] == "/usr/local/cuda", out


KERNEL = """
__global__ void add_one(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}
void add_one_launch(torch::Tensor x) {
    add_one<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
}
"""

EXTENSION = """
import os, torch
from torch.utils.cpp_extension import load_inline

module = load_inline(
    "puffer_ext", cpp_sources="void add_one_launch(torch::Tensor x);", cuda_sources=os.environ["KERNEL"],
    functions=["add_one_launch"], extra_cuda_cflags=["-gencode=arch=compute_90,code=sm_90"],
)
print("built", module.add_one_launch.__name__)
if torch.cuda.is_available():
    x = torch.zeros(1000, device="cuda")
    module.add_one_launch(x)
    print("ran", float(x.sum()))
"""


def test_a_cuda_extension_compiles_links_and_loads(container, cuda_chain):
    """What the CUDA compiler is there for: torch.utils.cpp_extension builds a kernel (no GPU needed)."""
    result = container.run_and_wait(
        ["python", "-c", EXTENSION],
        image=cuda_chain.hash_tag("lib"),
        environment={"KERNEL": KERNEL, "TORCH_CUDA_ARCH_LIST": "9.0", "MAX_JOBS": "2"},
        timeout=900,
        expect=None,
    )
    assert result.exit_code == 0, result
    assert "built add_one_launch" in result.stdout


TRITON = """
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource


@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


source = ASTSource(add_one, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 256})
kernel = triton.compile(source, target=GPUTarget("cuda", 89, 32))  # an RTX 4090
print("ptx for sm_89:", ".target sm_89" in kernel.asm["ptx"], "cubin bytes:", len(kernel.asm["cubin"]))
"""


def test_triton_compiles_a_kernel_ahead_of_time(container, cuda_chain):
    """torch.compile's GPU code generator, with no GPU: Triton (its libtriton.so stripped of ~0.3 GB of
    debug info by docker/slim_site.py) lowers a kernel through MLIR and LLVM to PTX, and ptxas to a cubin."""
    script = 'printf "%s" "$TRITON" > /tmp/add_one.py && python /tmp/add_one.py'  # @jit reads its source file
    image = cuda_chain.hash_tag("lib")
    out = container.run_and_wait(
        ["sh", "-c", script], image=image, environment={"TRITON": TRITON}, timeout=300
    ).stdout
    assert "ptx for sm_89: True" in out, out
    assert int(out.rsplit("cubin bytes:", 1)[1]) > 1000, out


def test_matrix_on_the_cuda_image(docker_client, cuda_chain, tmp_path):
    """`puffertank matrix --variant cuda` requests GPUs: with one, the gpu cell passes and the render cell
    draws dm_control's frames through the NVIDIA driver's EGL; without one (or with a driver too old for the
    image's CUDA) both cells are red and name the driver situation, never a skip."""
    argv = [sys.executable, "-m", "pufferlib.tank.cli", "matrix", "--variant", "cuda"]
    envs = ["--env", "ocean/squared", "--env", "dm_control/cartpole-swingup-pixels"]
    res = subprocess.run(
        [*argv, "--image", cuda_chain.hash_tag("lib"), *envs, "--report", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert "GPUs requested (the cuda variant)" in res.stdout, res.stdout + res.stderr
    rows = json.loads((tmp_path / "matrix.json").read_text())["rows"]
    cell = {(row["env"], row["check"]): row for row in rows}
    gpu = cell["ocean/squared", "gpu"]
    render = cell["dm_control/cartpole-swingup-pixels", "render"]
    if nvidia_runtime_available(docker_client) and nvidia_gpus():
        assert gpu["status"] == "pass", gpu
        assert render["status"] == "pass" and "EGL renders on the GPU" in render["detail"], render
        assert res.returncode == 0, res.stdout
    else:
        assert gpu["status"] == "fail" and res.returncode == 1, gpu
        assert f"is built for CUDA {PYPI_CUDA}" in gpu["detail"] and "NVIDIA driver" in gpu["detail"], gpu
        assert render["status"] == "fail", render
        assert "EGL does not render on it" in render["detail"], render
        assert "NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics" in render["detail"], render
