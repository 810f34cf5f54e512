"""`puffer smoke --checks`: a selected check runs its prerequisites too (it never passes while
checking nothing), and a step count below 1 is refused."""

from __future__ import annotations

import json

import pytest

from pufferlib import smoke
from pufferlib.cli import main


def test_prerequisites_are_added_in_order():
    assert smoke.with_prerequisites(("step", "make")) == ("import", "make", "spaces", "reset", "step")
    assert smoke.with_prerequisites(("import",)) == ("import",)
    for check in smoke.CHECKS:  # every check's needs come before it
        ordered = smoke.with_prerequisites((check,))
        assert ordered[-1] == check and set(smoke.NEEDS.get(check, ())) <= set(ordered)


def test_make_and_step_alone_run_what_they_need(capsys):
    assert main(["smoke", "ocean/squared", "--checks", "make,step", "--steps", "16", "--json"]) == 0
    results = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["check"] for r in results] == ["import", "make", "spaces", "reset", "step"]
    assert all(r["status"] == "pass" for r in results), results
    assert results[-1]["detail"].startswith("16 steps")


@pytest.mark.parametrize("steps", ["0", "-3"])
def test_steps_below_one_are_refused(steps, capsys):
    assert main(["smoke", "ocean/squared", "--checks", "step", "--steps", steps]) == 2
    err = capsys.readouterr().err
    assert f"smoke: error: --steps must be >= 1, got {steps}" in err
    with pytest.raises(ValueError, match="steps must be >= 1"):
        smoke.Smoke("ocean/squared", steps=int(steps))


def test_no_check_named_is_refused(capsys):
    assert main(["smoke", "ocean/squared", "--checks", ","]) == 2
    assert "unknown check(s) (none given)" in capsys.readouterr().err
