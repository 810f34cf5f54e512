"""What this machine is, read from /sys and /proc: its NVIDIA GPUs, the loaded NVIDIA driver, Secure Boot.

The one place these facts are read. doctor's checks use them, the auto variant rule (variant.py) uses the
GPU list, and provision/setup-host.sh asks for them before the host venv exists, so this file needs only
the standard library and runs by path:

    python3 pufferlib/tank/hostfacts.py gpus         # one PCI address per line (none: no output)
    python3 pufferlib/tank/hostfacts.py driver       # the loaded kernel module's version (none: no output)
    python3 pufferlib/tank/hostfacts.py secure-boot  # enabled, disabled, unknown or off (legacy BIOS boot)
    python3 pufferlib/tank/hostfacts.py mok-advice   # what to do when Secure Boot blocks the module

A file that is there but not in the format these readers know exits 1 naming it, instead of passing for
"no driver" or "Secure Boot off".
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

NVIDIA_VENDOR = "0x10de"
DISPLAY_CLASS = "0x03"  # PCI base class 03: display controllers (VGA, 3D); 0x0403 is a GPU's HDMI audio
PCI_DEVICES = Path("/sys/bus/pci/devices")
DRIVER_VERSION_FILE = Path("/proc/driver/nvidia/version")
EFI_DIR = Path("/sys/firmware/efi")
# The UEFI global variable GUID: SecureBoot-<EFI_GLOBAL_VARIABLE> holds 4 bytes of attributes, then 1 or 0.
SECURE_BOOT_VAR = "efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"
# "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  BRANCH.MINOR.PATCH  Release Build ..."
DRIVER_LINE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+(\d+\.\d+(?:\.\d+)?)")
MOK_ADVICE = (
    "Secure Boot is on: the NVIDIA module DKMS builds must be signed with a key the firmware trusts. Enroll "
    "DKMS's key once (sudo mokutil --import /var/lib/dkms/mok.pub), reboot and confirm in the blue MOK "
    "manager screen; or turn Secure Boot off in the firmware"
)


class FactError(ValueError):
    """A fact's file exists but does not read as the format it should have."""


def nvidia_gpus(sysfs: Path = PCI_DEVICES) -> list[str]:
    """PCI addresses of NVIDIA display/3D controllers, whether or not a driver is loaded."""
    found = []
    for dev in sorted(sysfs.glob("*")) if sysfs.is_dir() else []:
        try:
            vendor = (dev / "vendor").read_text().strip()
            klass = (dev / "class").read_text().strip()
        except OSError:
            continue  # a device without these files is no PCI function we can classify
        if vendor == NVIDIA_VENDOR and klass.startswith(DISPLAY_CLASS):
            found.append(dev.name)
    return found


def loaded_driver(proc: Path = DRIVER_VERSION_FILE) -> str | None:
    """The NVIDIA kernel module's version, read from /proc (no nvidia-smi needed); None when none is loaded.
    Raises FactError when the file is there but names no version."""
    try:
        text = proc.read_text()
    except OSError:
        return None
    match = DRIVER_LINE.search(text)
    if match is None:
        raise FactError(f"{proc} names no 'Kernel Module BRANCH.MINOR' version: {text[:120]!r}")
    return match.group(1)


def secure_boot(efi: Path = EFI_DIR) -> str:
    """'enabled' or 'disabled' from the firmware's variable, 'unknown' on UEFI without it (or unreadable),
    'off (legacy BIOS boot)' without UEFI. Raises FactError on a variable too short to hold the value."""
    var = efi / SECURE_BOOT_VAR
    try:
        data = var.read_bytes()
    except OSError:
        return "unknown" if efi.is_dir() else "off (legacy BIOS boot)"
    if len(data) < 5:
        raise FactError(f"{var} holds {len(data)} bytes; a UEFI variable has 4 of attributes, then the value")
    return "enabled" if data[4] == 1 else "disabled"


def secure_boot_enabled(efi: Path = EFI_DIR) -> bool | None:
    """True or False where the firmware says, None where it cannot be told."""
    try:
        state = secure_boot(efi)
    except FactError:
        return None
    return {"enabled": True, "disabled": False}.get(state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hostfacts.py", description="print one fact about this machine")
    parser.add_argument("fact", choices=("gpus", "driver", "secure-boot", "mok-advice"))
    parser.add_argument("--sysfs", type=Path, default=PCI_DEVICES, help="PCI devices folder (for tests)")
    parser.add_argument("--proc", type=Path, default=DRIVER_VERSION_FILE, help="driver version file")
    parser.add_argument("--efi", type=Path, default=EFI_DIR, help="the firmware's EFI folder")
    args = parser.parse_args(argv)
    try:
        if args.fact == "gpus":
            lines = nvidia_gpus(args.sysfs)
        elif args.fact == "driver":
            lines = [v for v in [loaded_driver(args.proc)] if v]
        elif args.fact == "secure-boot":
            lines = [secure_boot(args.efi)]
        else:
            lines = [MOK_ADVICE]
    except FactError as exc:
        print(f"hostfacts.py: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":  # python3 pufferlib/tank/hostfacts.py FACT, before the host venv exists
    sys.exit(main())
