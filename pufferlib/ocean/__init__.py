"""Ocean: first-party sanity environments, each catching one class of implementation bug.

Every env documents its reward, the score that counts as solved (mean episode return, the
`SOLVED` class attribute) and what a failure to solve it says about the learner. All draw their
randomness from the env's own generator (`self.np_random`, seeded through reset), never global state.
"""

from pufferlib.ocean.bandit import Bandit
from pufferlib.ocean.continuous import Continuous
from pufferlib.ocean.masked import Masked
from pufferlib.ocean.memory import Memory
from pufferlib.ocean.multiagent import Multiagent
from pufferlib.ocean.password import Password
from pufferlib.ocean.performance import Performance
from pufferlib.ocean.spaces import Spaces
from pufferlib.ocean.squared import Squared
from pufferlib.ocean.stochastic import Stochastic

__all__ = [
    "Bandit",
    "Continuous",
    "Masked",
    "Memory",
    "Multiagent",
    "Password",
    "Performance",
    "Spaces",
    "Squared",
    "Stochastic",
]
