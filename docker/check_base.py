"""Build-time check of the base stage: fail the build, not the researcher's first run.

Runs inside the image during `docker build`: Python 3.11 in /opt/venv, torch importable, and torch built for
the CUDA version the image's label will claim (none for the cpu variant).
"""

from __future__ import annotations

import argparse
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=("cpu", "cuda"), required=True)
    parser.add_argument("--cuda-version", required=True, help="'none' or MAJOR.MINOR")
    args = parser.parse_args()

    problems: list[str] = []
    if sys.version_info[:2] != (3, 11):
        problems.append(f"Python is {sys.version.split()[0]}, expected 3.11")
    if sys.prefix != "/opt/venv":
        problems.append(f"sys.prefix is {sys.prefix}, expected the venv /opt/venv")

    import torch

    found = torch.version.cuda or "none"
    if args.variant == "cpu" and found != "none":
        problems.append(f"the cpu variant got a CUDA build of torch ({torch.__version__}, CUDA {found})")
    if args.variant == "cuda":
        if found == "none":
            problems.append(f"the cuda variant got a CPU-only torch ({torch.__version__})")
        elif found.split(".")[:2] != args.cuda_version.split(".")[:2]:
            problems.append(
                f"torch {torch.__version__} is built for CUDA {found} but the image will be labelled "
                f"CUDA {args.cuda_version}; pass --cuda-version {found} (or pick a matching --torch-index)"
            )
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    if float((x @ x.T).sum()) != 83.0:
        problems.append("a 2x3 matmul gave a wrong result")

    print(f"check_base: python {sys.version.split()[0]}, torch {torch.__version__}, cuda {found}")
    for problem in problems:
        print(f"check_base: FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
