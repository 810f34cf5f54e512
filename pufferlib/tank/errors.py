"""TankError: a failure the user can fix, with the fix kept apart from the message.

Only `tank/cli.py` prints these (no traceback); doctor turns them into checks. Keeping `fix` as a field means
nobody parses it back out of a sentence.
"""

from __future__ import annotations


class TankError(RuntimeError):
    """A failure the user can fix: `message` names the thing, `fix` says what to do (may be empty)."""

    exit_code = 1

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\nFix: {self.fix}" if self.fix else self.message


class UsageError(TankError):
    """The command line itself is wrong (exit status 2, like argparse's own usage errors)."""

    exit_code = 2
