"""`--only verify` on a bare Debian (no python3 yet, so no doctor to run): a readable report, each problem
with its fix, exit 1."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker


def test_verify_reports_failures_with_fixes(box) -> None:
    res = box.setup("--only", "verify", timeout=120)
    assert res.rc == 1, res
    lines = res.out.splitlines()
    tooling = next((i for i, line in enumerate(lines) if line.split()[:2] == ["FAIL", "host-tooling"]), None)
    assert tooling is not None, res
    assert "fix: sudo /src/provision/setup-host.sh --only base-tools,verify" in lines[tooling + 1], res
    assert any(line.split()[:2] == ["PASS", "os"] and "bookworm" in line for line in lines), res
    assert "verify          failed (see the report above)" in res.out, res
    assert "==> verify" in res.out and "==> docker\n" not in res.out, res  # only the step asked for
    assert "verify found problems" in res.out, res
