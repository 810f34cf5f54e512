"""The "auto" image variant: the one rule for choosing cpu or cuda on a machine.

    cuda  when the machine has an NVIDIA display/3D controller on its PCI bus
          (a /sys/bus/pci/devices/*/ with vendor 0x10de and a class starting 0x03),
    cpu   otherwise.

The rule looks at the hardware only, not at the driver or Docker's NVIDIA runtime: on a GPU box whose
driver or runtime is missing, the cuda variant is still the right image, and doctor and the matrix (whose
GPU checks then fail) say what to fix. `puffertank variant` prints the answer; this file needs only the
standard library, so a shell without the host venv can run it as `python3 pufferlib/tank/variant.py`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__:
    from pufferlib.tank.hostfacts import DISPLAY_CLASS, NVIDIA_VENDOR, PCI_DEVICES, nvidia_gpus
else:  # run by path, even as `python3 -I`: the sibling file, without importing the pufferlib package
    import importlib.util

    _spec = importlib.util.spec_from_file_location("hostfacts", Path(__file__).with_name("hostfacts.py"))
    hostfacts = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(hostfacts)
    DISPLAY_CLASS, NVIDIA_VENDOR = hostfacts.DISPLAY_CLASS, hostfacts.NVIDIA_VENDOR
    PCI_DEVICES, nvidia_gpus = hostfacts.PCI_DEVICES, hostfacts.nvidia_gpus

CHOICES = ("auto", "cpu", "cuda")  # what --variant accepts; every subcommand's default is auto
AUTO_HELP = "cpu or cuda; auto (default): cuda when this machine has an NVIDIA GPU, else cpu"


def auto_variant(sysfs: Path = PCI_DEVICES) -> str:
    """'cuda' when this machine has an NVIDIA GPU on its PCI bus, else 'cpu'."""
    return "cuda" if nvidia_gpus(sysfs) else "cpu"


def resolve(name: str, sysfs: Path = PCI_DEVICES) -> str:
    """A --variant value as an image variant: 'auto' follows this machine's hardware, cpu and cuda stay."""
    return auto_variant(sysfs) if name == "auto" else name


def add_argument(p: argparse.ArgumentParser, what: str = "") -> None:
    """--variant, one of CHOICES, auto by default; `what` names what the variant picks (the help's start)."""
    p.add_argument(
        "--variant",
        choices=CHOICES,
        default="auto",
        help=f"{what}: {AUTO_HELP}" if what else AUTO_HELP,
    )


def explain(sysfs: Path = PCI_DEVICES) -> str:
    gpus = nvidia_gpus(sysfs)
    if gpus:
        return f"cuda: NVIDIA GPU(s) on the PCI bus at {', '.join(gpus)}"
    return f"cpu: no NVIDIA display controller (vendor {NVIDIA_VENDOR}, class {DISPLAY_CLASS}xxxx) in {sysfs}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "variant",
        help="print the image variant for this machine (cuda with an NVIDIA GPU, else cpu)",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--explain", action="store_true", help="also say why")
    p.set_defaults(func=cmd_variant)


def cmd_variant(args: argparse.Namespace) -> int:
    print(explain() if args.explain else auto_variant())
    return 0


if __name__ == "__main__":  # python3 pufferlib/tank/variant.py [--explain], before the host venv exists
    parser = argparse.ArgumentParser(prog="variant.py", description="print cpu or cuda for this machine")
    parser.add_argument("--explain", action="store_true", help="also say why")
    sys.exit(cmd_variant(parser.parse_args()))
