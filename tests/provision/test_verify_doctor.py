"""verify reports `puffertank doctor --json`, the only host checks there are (a broken install is one FAIL
line saying how to reinstall it, not a second set of checks in bash). The host is the tooled_host fixture
(conftest.py): a lib-image container with the host tooling in /opt/puffertank/venv.
"""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def _report(out: str) -> list[tuple[str, str]]:
    """(STATUS, name) of each report line verify printed."""
    rows = []
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[0] in ("PASS", "WARN", "FAIL", "SKIP", "INFO"):
            rows.append((parts[0], parts[1]))
    return rows


def test_verify_reports_doctors_checks(tooled_host) -> None:
    doctor = tooled_host.sh("/opt/puffertank/venv/bin/puffertank doctor --json", timeout=600)
    assert doctor.rc in (0, 1), doctor
    checks = json.loads(doctor.out)["checks"]
    res = tooled_host.setup("--only", "verify", timeout=600)
    rows = _report(res.out)
    assert rows[0] == ("PASS", "os"), res
    assert rows[1 : 1 + len(checks)] == [(c["status"].upper(), c["name"]) for c in checks], res
    assert "secure-boot" not in res.out, "the bash checks ran although the host tooling is installed"
    assert "gave no report" not in res.out, res
    assert "Again later: puffertank doctor" in res.out, res
    failed = any(c["status"] == "fail" for c in checks)
    assert res.rc == (1 if failed else 0), res
    for check in checks:
        if check["fix"]:
            assert f"fix: {' '.join(check['fix'].split())}" in res.out, (check, res.out)


def test_a_broken_tooling_is_one_failure_with_its_fix(box) -> None:
    broken = box.sh(
        "mkdir -p /opt/puffertank/venv/bin && printf '#!/bin/sh\\necho Traceback >&2\\nexit 1\\n' "
        ">/opt/puffertank/venv/bin/puffertank && chmod 755 /opt/puffertank/venv/bin/puffertank"
    )
    assert broken.rc == 0, broken
    res = box.setup("--only", "verify", timeout=120)
    assert res.rc == 1, res
    assert "puffertank doctor --json gave no report" in res.out, res
    assert ("FAIL", "doctor") in _report(res.out) and "secure-boot" not in res.out, res
    assert "fix: reinstall the host tooling: sudo rm -rf /opt/puffertank/venv" in res.out, res


def test_dry_run_names_doctor_when_installed(tooled_host) -> None:
    res = tooled_host.setup("--dry-run", "--only", "verify", timeout=120)
    assert res.rc == 0, res
    assert "would run: /opt/puffertank/venv/bin/puffertank doctor --json" in res.out, res
