"""How a run that fails ends: one line saying what happened, and what to resume it with.

Anything that goes wrong inside the training loop (a worker that died or hung, pufferlib.vector's
WorkerError and WorkerHung; the run directory deleted, when nothing can be saved or resumed; a full
disk; a loss that is NaN or infinite) stops the loop the way Ctrl-C does: the final checkpoint is
saved where that is possible, summary.json says stop_reason "error" and the message, and `learn`
raises TrainingError with that summary, which `puffer train` prints as one line (with the `puffer
train --resume RUN_DIR` command) before it exits with 1; `--debug` shows the traceback too.
"""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path
from typing import Any

from pufferlib.vector.base import WorkerHung

EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)(: |$)")


class TrainingError(RuntimeError):
    """The training loop failed; `summary` is what the run reported (stop_reason "error")."""

    def __init__(self, message: str, summary: dict[str, Any]) -> None:
        super().__init__(message)
        self.summary = summary


class NonFiniteLoss(ArithmeticError):
    """An update's loss is NaN or infinite: the weights it produced are not worth keeping."""


def check_losses(update: int, losses: dict[str, float]) -> None:
    """NonFiniteLoss naming the update and the losses that are not finite."""
    bad = {
        name: value
        for name, value in losses.items()
        if name != "explained_variance" and not math.isfinite(value)  # nan for constant returns
    }
    if bad:
        named = ", ".join(f"{name} = {value}" for name, value in bad.items())
        raise NonFiniteLoss(
            f"update {update}: the loss is not finite ({named}); its weights are not saved. Lower "
            "--train.learning-rate, or check the env's rewards and observations for NaN or inf"
        )


def describe(error: BaseException, update: int, run_dir: Path | None) -> str:
    """One line: what stopped the loop, at which update."""
    if run_dir is not None and not run_dir.is_dir():
        return (
            f"update {update}: the run directory {run_dir} was deleted while the run went on, its "
            "checkpoints with it: nothing could be saved and there is nothing to resume; run the same "
            "command again to start over"
        )
    if isinstance(error, NonFiniteLoss):
        return str(error)
    if isinstance(error, WorkerHung):
        return f"update {update}: WorkerHung: {error}; if it is only slow, raise --vec.worker-timeout"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if len(lines) > 1:  # a worker's error carries the remote traceback: its first line says where,
        raised = [line for line in lines[1:] if EXCEPTION_LINE.match(line)]  # its exception what
        text += " " + (raised[-1] if raised else lines[-1])
    return f"update {update}: {type(error).__name__}" + (f": {text}" if text else "")


def resume_command(run_dir: str | Path | None) -> str | None:
    """The command that continues the run, or None when it has no run directory."""
    return f"puffer train --resume {shlex.quote(str(run_dir))}" if run_dir else None
