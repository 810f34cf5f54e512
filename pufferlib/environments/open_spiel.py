"""OpenSpiel (open_spiel/<game>): board, card and matrix games as multi-agent envs with legal-action masks.

Each player is one agent row of a `PettingZooPufferEnv` (`player_0`, `player_1`, ...), present for
the whole game. The observation is a Dict that the emulation flattens into one float32 row:

- `observation`: the game's information-state tensor where it has one (poker, goofspiel: the
  player's whole history, so a feed-forward policy plays as well as it can), else its observation
  tensor (board games), flattened;
- `player`: the row's seat, one-hot (many board tensors are not relative to the player who reads
  them: tic_tac_toe's planes are "empty, O, X" for both);
- `action_mask`: 1 for each action this row may send now. Actions are the game's
  `num_distinct_actions` ids plus one extra, PASS (the last id): the player to move may send any
  of its legal actions and not PASS; a player who waits may send only PASS. At simultaneous nodes
  every player has its own legal actions.

`pufferlib.frameworks.cleanrl.Policy` (and so `puffer train`) reads `action_mask` and never samples
an action it forbids; this family's default policy (`policies:OpenSpiel`) also masks its own
logits. A waiting row's only choice is PASS, so it has zero log-prob gradient: it still learns its
value, and the game's outcome reaches every player (rewards are `state.rewards()` at each step, for
every player, e.g. +1/-1 on the last move of tic_tac_toe).

Illegal actions (only a policy that ignores the mask sends them, e.g. uniform random actions):
`illegal="lose"` (default, as PettingZoo's classic games do) ends the game with the game's minimum
utility for the offender and 0 for everyone else, and the episode info `illegal_move` is 1;
a waiting player's non-PASS action is ignored. `illegal="raise"` raises APIUsageError instead (used
by the tests that prove masks are honoured).

Chance nodes (cards, dice) are resolved by the env with a generator seeded by `reset(seed)`, so
stochastic games are fully seeded; deterministic games play the same whatever the seed.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from pufferlib import APIUsageError, EnvironmentSetupError, PufferEnv
from pufferlib.emulation import PettingZooPufferEnv
from pufferlib.environments.registry import Binding, Members, SmokeSpec, register_catalog
from pufferlib.spaces import sample_allowed_action

Policy = "pufferlib.environments.support.policies:OpenSpiel"
ILLEGAL = ("lose", "raise")
OBSERVATIONS = ("auto", "information_state", "observation")

# Every game of open-spiel 2.0.2 that loads with its default parameters, is not a mean-field game,
# and gives tensors to observe (tests/unit/envs/test_env_open_spiel.py plays each one through the adapter).
GAMES = (
    "2048",
    "amazons",
    "antichess",
    "backgammon",
    "banqi",
    "bargaining",
    "battleship",
    "blackjack",
    "blotto",
    "breakthrough",
    "bridge",
    "bridge_uncontested_bidding",
    "capture_the_flag",
    "catch",
    "checkers",
    "chess",
    "chinese_checkers",
    "cliff_walking",
    "clobber",
    "colored_trails",
    "connect_four",
    "coop_box_pushing",
    "crazy_eights",
    "crazyhouse",
    "cursor_go",
    "dark_chess",
    "dark_hex",
    "dark_hex_ir",
    "deep_sea",
    "dots_and_boxes",
    "dou_dizhu",
    "einstein_wurfelt_nicht",
    "euchre",
    "first_sealed_auction",
    "gin_rummy",
    "go",
    "go_fish",
    "gomoku",
    "goofspiel",
    "hanabi",
    "havannah",
    "hearts",
    "hex",
    "hive",
    "kriegspiel",
    "kuhn_poker",
    "laser_tag",
    "latent_ttt",
    "leduc_poker",
    "lewis_signaling",
    "liars_dice",
    "lines_of_action",
    "maedn",
    "mancala",
    "markov_soccer",
    "matching_pennies_3p",
    "matrix_bos",
    "matrix_brps",
    "matrix_cd",
    "matrix_coordination",
    "matrix_mp",
    "matrix_pd",
    "matrix_rps",
    "matrix_rpsw",
    "matrix_sh",
    "matrix_shapleys_game",
    "mnk",
    "negotiation",
    "nim",
    "nine_mens_morris",
    "oh_hell",
    "oshi_zumo",
    "othello",
    "oware",
    "pathfinding",
    "pentago",
    "phantom_go",
    "phantom_ttt",
    "pig",
    "quoridor",
    "rbc",
    "repeated_leduc_poker",
    "sheriff",
    "shogi",
    "skat",
    "snake",
    "solitaire",
    "spades",
    "stones_and_gems",
    "tic_tac_toe",
    "tiny_bridge_2p",
    "tiny_bridge_4p",
    "tiny_hanabi",
    "trade_comm",
    "twixt",
    "ultimate_tic_tac_toe",
    "universal_poker",
    "xiangqi",
    "y",
    "yacht",
)


class OpenSpielParallel:
    """One OpenSpiel game as a PettingZoo ParallelEnv with a PASS action and legal-action masks."""

    metadata = {"name": "open_spiel", "render_modes": ["ansi"]}

    def __init__(
        self,
        name: str,
        params: dict | None = None,
        observation: str = "auto",
        illegal: str = "lose",
    ) -> None:
        import pyspiel

        if illegal not in ILLEGAL:
            raise ValueError(f"illegal must be one of {', '.join(ILLEGAL)}, got {illegal!r}")
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation must be one of {', '.join(OBSERVATIONS)}, got {observation!r}")
        try:
            self.game = pyspiel.load_game(name, dict(params or {}))
        except pyspiel.SpielError as e:
            raise ValueError(f"open_spiel/{name}: cannot load the game with params {params}: {e}") from e
        kind = self.game.get_type()
        if kind.dynamics == pyspiel.GameType.Dynamics.MEAN_FIELD:
            raise ValueError(f"open_spiel/{name} is a mean-field game, which has no per-player agents")
        if observation == "auto":
            observation = "information_state" if kind.provides_information_state_tensor else "observation"
        provides = (
            kind.provides_information_state_tensor
            if observation == "information_state"
            else kind.provides_observation_tensor
        )
        if not provides:
            raise ValueError(f"open_spiel/{name} has no {observation} tensor; try observation='auto'")
        self.name = name
        self.metadata = {**self.metadata, "name": f"open_spiel/{name}"}
        self.illegal = illegal
        self._info_state = observation == "information_state"
        self.num_players = self.game.num_players()
        self.num_actions = self.game.num_distinct_actions()
        self.PASS = self.num_actions
        shape = (
            self.game.information_state_tensor_shape()
            if self._info_state
            else self.game.observation_tensor_shape()
        )
        size = int(np.prod(shape))
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agents: list[str] = []
        self._observation_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(-np.inf, np.inf, (size,), np.float32),
                "player": gymnasium.spaces.Box(0, 1, (self.num_players,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (self.num_actions + 1,), np.float32),
            }
        )
        self._action_space = gymnasium.spaces.Discrete(self.num_actions + 1)
        self._seats = np.eye(self.num_players, dtype=np.float32)
        self._rng = np.random.default_rng()
        self.state = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._action_space

    # ---------------------------------------------------------------- game flow
    def _resolve_chance(self) -> None:
        while self.state.is_chance_node():
            outcomes, probs = zip(*self.state.chance_outcomes(), strict=True)
            p = np.asarray(probs, dtype=np.float64)
            self.state.apply_action(int(outcomes[self._rng.choice(len(outcomes), p=p / p.sum())]))
            self._rewards += self.state.rewards()

    def movers(self) -> list[int]:
        """The players who act now: the current player, or every player at a simultaneous node."""
        if self.state.is_terminal():
            return []
        if self.state.is_simultaneous_node():
            return [p for p in range(self.num_players) if self.state.legal_actions(p)]
        return [self.state.current_player()]

    def _observe(self) -> dict[str, dict[str, np.ndarray]]:
        movers = set(self.movers())
        out = {}
        for p, agent in enumerate(self.possible_agents):
            mask = np.zeros(self.num_actions + 1, np.float32)
            if p in movers:
                mask[self.state.legal_actions(p)] = 1
            else:
                mask[self.PASS] = 1
            tensor = (
                self.state.information_state_tensor(p)
                if self._info_state
                else self.state.observation_tensor(p)
            )
            out[agent] = {
                "observation": np.asarray(tensor, dtype=np.float32),
                "player": self._seats[p],
                "action_mask": mask,
            }
        return out

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state()
        self._rewards = np.zeros(self.num_players)
        self._resolve_chance()
        self.agents = list(self.possible_agents)
        return self._observe(), {agent: {} for agent in self.agents}

    def step(self, actions: dict):
        if self.state is None or not self.agents:
            raise APIUsageError(f"open_spiel/{self.name}: step() after the game ended; call reset()")
        self._rewards = np.zeros(self.num_players)
        movers = self.movers()
        chosen = {p: int(actions[self.possible_agents[p]]) for p in range(self.num_players)}
        offender = self._check(movers, chosen)
        if offender is None:
            if self.state.is_simultaneous_node():
                self.state.apply_actions([chosen[p] if p in movers else 0 for p in range(self.num_players)])
            else:
                self.state.apply_action(chosen[movers[0]])
            self._rewards += self.state.rewards()
            self._resolve_chance()
            over = self.state.is_terminal()
        else:
            self._rewards[:] = 0
            self._rewards[offender] = self.game.min_utility()
            over = True
        obs = self._observe() if offender is None else self._observe_last()
        rewards = {a: float(self._rewards[p]) for p, a in enumerate(self.possible_agents)}
        done = {a: over for a in self.possible_agents}
        truncated = {a: False for a in self.possible_agents}
        infos: dict[str, dict] = {a: {} for a in self.possible_agents}
        if over:
            returns = self._rewards if offender is not None else np.asarray(self.state.returns())
            for a in self.possible_agents:
                infos[a] = {
                    "illegal_move": float(offender is not None),
                    "draw": float(offender is None and bool(np.all(returns == returns[0]))),
                }
            self.agents = []
        return obs, rewards, done, truncated, infos

    def _observe_last(self) -> dict[str, dict[str, np.ndarray]]:
        """After an illegal move the state did not change: the last observations, nothing allowed."""
        obs = self._observe()
        for ob in obs.values():
            ob["action_mask"] = np.zeros_like(ob["action_mask"])
            ob["action_mask"][self.PASS] = 1
        return obs

    def _check(self, movers: list[int], chosen: dict[int, int]) -> int | None:
        """The first mover whose action is illegal (None if all are); raises in `illegal="raise"`."""
        for p in range(self.num_players):
            action = chosen[p]
            if p in movers:
                legal = action != self.PASS and action in self.state.legal_actions(p)
            else:
                legal = action == self.PASS or self.illegal == "lose"  # a waiting player's action is ignored
            if legal:
                continue
            if self.illegal == "raise":
                allowed = "PASS" if p not in movers else f"one of {self.state.legal_actions(p)}"
                raise APIUsageError(
                    f"open_spiel/{self.name}: player_{p} sent action {action}, but may send {allowed} now "
                    f"(PASS = {self.PASS}); sample with the observation's action_mask"
                )
            return p
        return None

    def render(self) -> str:
        return str(self.state)

    def close(self) -> None:
        self.state = None


def make_env(
    name: str,
    buf: Any = None,
    seed: int = 0,
    params: dict | None = None,
    observation: str = "auto",
    illegal: str = "lose",
) -> PufferEnv:
    """An OpenSpiel game by its short name; `params` go to pyspiel.load_game (e.g. {"board_size": 7})."""
    try:
        import pyspiel  # noqa: F401
    except ImportError as e:
        raise EnvironmentSetupError(
            f"open_spiel/{name} needs open-spiel: pip install 'pufferlib[open_spiel]'"
        ) from e
    env = OpenSpielParallel(name, params=params, observation=observation, illegal=illegal)
    return PettingZooPufferEnv(env=env, buf=buf, seed=seed)


members = Members("open_spiel", make_env, policy=Policy, multiagent=True, requires=("pyspiel",))
env_creator = members.env_creator  # PufferLib's env_creator(name)


def legal_random_actions(env: PufferEnv, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random allowed action per row of an open_spiel env (from its action masks)."""
    actions = sample_allowed_action(env.single_action_space, action_masks(env), rng)
    return actions.reshape(env.actions.shape)


def action_masks(env: PufferEnv, observations: np.ndarray | None = None) -> np.ndarray:
    """The (rows, actions) 0/1 masks inside an open_spiel env's flat observation rows."""
    obs = env.observations if observations is None else observations
    struct = np.ascontiguousarray(obs).view(env.emulated["observation_dtype"]).reshape(len(obs))
    return np.asarray(struct["action_mask"])


# The registered set (exercised by the integration matrix): two perfect-information board games,
# two poker games (chance nodes, information states) and a simultaneous-move card game. Every other
# game of GAMES is made the same way on demand.
REGISTERED = ("tic_tac_toe", "connect_four", "kuhn_poker", "leduc_poker", "goofspiel")
DESCRIPTIONS = {
    "tic_tac_toe": "3x3 noughts and crosses, 2 players",
    "connect_four": "connect four on a 6x7 board, 2 players",
    "kuhn_poker": "3-card poker, 2 players (chance: the deal; information states)",
    "leduc_poker": "6-card two-round poker, 2 players (chance: the deal; information states)",
    "goofspiel": "13-card bidding game with simultaneous moves, 2 players",
}


def _binding(game: str) -> Binding:
    return members.bind(
        game,
        # learn: self-play tic-tac-toe must beat a random opponent in 90% of games (train/versus.py)
        smoke=SmokeSpec(steps=256, seconds=120.0, learn=game == "tic_tac_toe"),
        description=DESCRIPTIONS.get(game, f"OpenSpiel {game}")
        + "; legal-action mask in the observation, PASS for waiting players",
    )


register_catalog(members.family, GAMES, _binding, registered=REGISTERED)
