"""The library's exceptions, under the names PufferLib code imports (`pufferlib.exceptions`).

`pufferlib.APIUsageError` and `pufferlib.EnvironmentSetupError` are these same classes.
"""

from __future__ import annotations

from typing import Any


class APIUsageError(Exception):
    """The caller used an environment or vector env in a way its API does not allow."""


class EnvironmentSetupError(RuntimeError):
    """An environment could not be created (missing package, bad arguments)."""


class InvalidAgentError(APIUsageError, ValueError):
    """An agent key that is not one of the env's possible agents (PufferLib's signature)."""

    def __init__(self, agent_id: Any, agents: Any, where: str = "") -> None:
        self.agent_id = agent_id
        self.agents = list(agents)
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}agent {agent_id!r} is not in possible_agents {self.agents}")
