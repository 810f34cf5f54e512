"""The host facts (tank/hostfacts.py): each read from a sample in the format the kernel and firmware write,
a broken file named instead of passing for "no driver" or "Secure Boot off", and the script that
provision/setup-host.sh runs by path with the standard library alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _repo import REPO

from pufferlib.tank import hostfacts

SCRIPT = REPO / "pufferlib" / "tank" / "hostfacts.py"
# /proc/driver/nvidia/version of the open modules on Debian 12 (NVIDIA's CUDA repository)
DRIVER_OPEN = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
    "(dvs-builder@U16-I2-C04-35-2)  Tue Sep 23 09:23:50 UTC 2025\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14+deb12u1)\n"
)


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-I", "-S", str(SCRIPT), *args], capture_output=True, text=True, timeout=60
    )


def _pci(root: Path, addr: str, vendor: str, klass: str) -> None:
    (root / addr).mkdir(parents=True)
    (root / addr / "vendor").write_text(vendor + "\n")
    (root / addr / "class").write_text(klass + "\n")


def _efi(root: Path, value: bytes | None) -> Path:
    """An EFI folder; with `value`, the SecureBoot variable as efivarfs shows it (attributes, then value)."""
    (root / "efivars").mkdir(parents=True)
    if value is not None:
        (root / hostfacts.SECURE_BOOT_VAR).write_bytes(value)
    return root


def test_gpus_from_sysfs(tmp_path) -> None:
    _pci(tmp_path, "0000:41:00.0", "0x10de", "0x030200")  # an H100: a 3D controller
    _pci(tmp_path, "0000:01:00.0", "0x10de", "0x030000")  # a 4090: a VGA controller
    _pci(tmp_path, "0000:01:00.1", "0x10de", "0x040300")  # its HDMI audio function
    _pci(tmp_path, "0000:00:02.0", "0x8086", "0x030000")  # an Intel iGPU
    (tmp_path / "0000:00:1f.0").mkdir()  # a device whose files cannot be read
    assert hostfacts.nvidia_gpus(tmp_path) == ["0000:01:00.0", "0000:41:00.0"]
    assert hostfacts.nvidia_gpus(tmp_path / "absent") == []


def test_driver_from_proc(tmp_path) -> None:
    proc = tmp_path / "version"
    proc.write_text(DRIVER_OPEN)
    assert hostfacts.loaded_driver(proc) == "580.95.05"
    proc.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.309.01  Sat Jan  3 2026\n")
    assert hostfacts.loaded_driver(proc) == "535.309.01"
    assert hostfacts.loaded_driver(tmp_path / "missing") is None  # no module loaded


def test_a_driver_file_without_a_version_is_named(tmp_path) -> None:
    proc = tmp_path / "version"
    proc.write_text("NVRM version: something new\n")
    with pytest.raises(hostfacts.FactError, match="names no 'Kernel Module"):
        hostfacts.loaded_driver(proc)


@pytest.mark.parametrize(
    ("value", "state", "enabled"),
    [(b"\x06\x00\x00\x00\x01", "enabled", True), (b"\x06\x00\x00\x00\x00", "disabled", False)],
)
def test_secure_boot_from_efivars(tmp_path, value: bytes, state: str, enabled: bool) -> None:
    efi = _efi(tmp_path / "efi", value)
    assert hostfacts.secure_boot(efi) == state
    assert hostfacts.secure_boot_enabled(efi) is enabled


def test_secure_boot_without_the_variable_or_uefi(tmp_path) -> None:
    assert hostfacts.secure_boot(_efi(tmp_path / "efi", None)) == "unknown"
    assert hostfacts.secure_boot(tmp_path / "no-efi") == "off (legacy BIOS boot)"
    assert hostfacts.secure_boot_enabled(tmp_path / "no-efi") is None


def test_a_truncated_secure_boot_variable_is_named(tmp_path) -> None:
    efi = _efi(tmp_path / "efi", b"\x06\x00\x00\x00")  # attributes only, no value
    with pytest.raises(hostfacts.FactError, match="holds 4 bytes"):
        hostfacts.secure_boot(efi)
    assert hostfacts.secure_boot_enabled(efi) is None


def test_the_script_prints_each_fact(tmp_path) -> None:
    _pci(tmp_path / "pci", "0000:01:00.0", "0x10de", "0x030000")
    (tmp_path / "version").write_text(DRIVER_OPEN)
    efi = _efi(tmp_path / "efi", b"\x06\x00\x00\x00\x01")
    assert _script("gpus", "--sysfs", str(tmp_path / "pci")).stdout == "0000:01:00.0\n"
    assert _script("driver", "--proc", str(tmp_path / "version")).stdout == "580.95.05\n"
    assert _script("driver", "--proc", str(tmp_path / "missing")).stdout == ""
    assert _script("secure-boot", "--efi", str(efi)).stdout == "enabled\n"
    assert _script("mok-advice").stdout == hostfacts.MOK_ADVICE + "\n"
    assert "mokutil --import /var/lib/dkms/mok.pub" in hostfacts.MOK_ADVICE


def test_the_script_fails_on_a_broken_file(tmp_path) -> None:
    (tmp_path / "version").write_text("garbage\n")
    res = _script("driver", "--proc", str(tmp_path / "version"))
    assert res.returncode == 1 and res.stdout == "", res
    assert str(tmp_path / "version") in res.stderr, res
    assert _script("firmware").returncode == 2  # an unknown fact is a usage error


def test_doctor_gives_the_one_mok_advice(monkeypatch) -> None:
    from pufferlib.tank import doctor

    monkeypatch.setattr(hostfacts, "secure_boot_enabled", lambda: True)
    check = doctor.check_driver(doctor.Host(gpus=["0000:01:00.0"], driver=None))
    assert (check.status, check.fix) == (doctor.FAIL, hostfacts.MOK_ADVICE)
    unreadable = doctor.Host(gpus=["0000:01:00.0"], driver_error="/proc/driver/nvidia/version names no ...")
    assert doctor.check_driver(unreadable).status == doctor.WARN
