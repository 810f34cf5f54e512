"""The "auto" variant is one rule (pufferlib/tank/variant.py, tested in test_doctor_rules.py); every shell
that picks a variant asks it instead of keeping a rule of its own."""

from __future__ import annotations

import re
import subprocess

from _repo import REPO

from pufferlib.tank.variant import auto_variant

SHELL_SIDES = ("provision/setup-host.sh", "provision/tank-up.sh", ".devcontainer/ensure-image.sh")


def test_setup_host_asks_the_same_rule() -> None:
    script = f"source {REPO / 'provision/setup-host.sh'}; auto_variant"
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == auto_variant()


def test_no_shell_side_has_a_rule_of_its_own() -> None:
    for rel in SHELL_SIDES:
        text = (REPO / rel).read_text()
        assert "pufferlib/tank/variant.py" in text, f"{rel} does not ask pufferlib/tank/variant.py"
        # The old second rule: "cuda when Docker lists the nvidia runtime".
        for line in text.splitlines():
            assert not re.search(r"Runtimes.*(variant|VARIANT)=cuda", line), f"{rel}: {line.strip()}"
