"""Default policies. Vanilla torch modules: forward(obs) -> (logits, value).

Each splits its forward pass into `encode_observations` (obs -> hidden) and `decode_actions`
(hidden -> logits, value) so that `LSTMWrapper` can put a recurrent cell in between.

Logits follow the flat action space: a list of tensors for MultiDiscrete (one per branch), a
tensor for Discrete, a torch Normal for Box (CleanRL's ppo_continuous_action head: a linear mean
and a state-independent log-std, a learned parameter starting at 0, i.e. std 1).
"""

from __future__ import annotations

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from pufferlib.pytorch import flatten_structure, layer_init, nativize_dtype, nativize_tensor


def observation_size(env) -> int:
    """Number of scalar features the env's observations expand to (all leaves, as floats)."""
    native = nativize_dtype(env.emulated)
    if native is None:
        return int(np.prod(env.single_observation_space.shape))
    return sum(int(np.prod(leaf[1])) for leaf in _leaves(native))


def _leaves(native: dict):
    for spec in native.values():
        if isinstance(spec, dict):
            yield from _leaves(spec)
        else:
            yield spec


class ActionHead(nn.Module):
    """hidden -> logits for the env's (flat) action space."""

    def __init__(self, action_space, hidden_size: int) -> None:
        super().__init__()
        self.space = action_space
        if isinstance(action_space, spaces.Discrete):
            self.sizes = [int(action_space.n)]
        elif isinstance(action_space, spaces.MultiDiscrete):
            self.sizes = [int(n) for n in action_space.nvec.reshape(-1)]
        elif isinstance(action_space, spaces.Box):
            self.sizes = []
            self.shape = tuple(action_space.shape)
            dim = int(np.prod(self.shape))
            self.mean = layer_init(nn.Linear(hidden_size, dim), std=0.01)
            self.logstd = nn.Parameter(torch.zeros(1, dim))  # state-independent, as in CleanRL
            return
        else:
            raise TypeError(f"Unsupported action space {action_space}")
        self.linear = layer_init(nn.Linear(hidden_size, sum(self.sizes)), std=0.01)

    def forward(self, hidden: torch.Tensor):
        if not self.sizes:
            mean = self.mean(hidden)
            std = self.logstd.expand_as(mean).exp()
            shape = (hidden.shape[0], *self.shape)  # a multi-dimensional Box keeps its shape
            return torch.distributions.Normal(mean.reshape(shape), std.reshape(shape))
        return self.branches(self.linear(hidden))

    def branches(self, logits: torch.Tensor):
        """A Discrete head's logits as they are; a MultiDiscrete's split into its branches."""
        if isinstance(self.space, spaces.Discrete):
            return logits
        return list(logits.split(self.sizes, dim=-1))


def decode(actor: ActionHead, value: nn.Linear, hidden: torch.Tensor):
    """(logits, value) of an action head and a value head that read the same hidden features.

    A Discrete or MultiDiscrete head is linear like the value's: both run as one matrix product over
    their stacked weights, the same function and the same parameters. Two products of a few columns
    each read the hidden features twice forward and twice backward, and at a training minibatch
    (32k rows x 128) those passes are memory-bound: one product makes a 121-128-5 MLP's forward and
    backward ~23 % cheaper on a 2-core CPU, and a 1024-row rollout step's heads ~30 %."""
    if not actor.sizes:
        return actor(hidden), value(hidden)
    weight = torch.cat([actor.linear.weight, value.weight])
    bias = torch.cat([actor.linear.bias, value.bias])
    out = nn.functional.linear(hidden, weight, bias)
    return actor.branches(out[:, :-1]), out[:, -1:]


ACTIVATIONS = {"gelu": nn.GELU, "tanh": nn.Tanh, "relu": nn.ReLU}


def mlp(inputs: int, hidden_size: int, activation: str = "gelu", num_layers: int = 2) -> nn.Sequential:
    """`num_layers` hidden layers of `hidden_size`, each linear then `activation`, with orthogonal
    initialisation (CleanRL's layer_init)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, got {activation!r}")
    if num_layers < 1:
        raise ValueError(f"num_layers must be at least 1, got {num_layers}")
    layers: list[nn.Module] = []
    for i in range(num_layers):
        layers += [
            layer_init(nn.Linear(inputs if i == 0 else hidden_size, hidden_size)),
            ACTIVATIONS[activation](),
        ]
    return nn.Sequential(*layers)


class Default(nn.Module):
    """Flatten every observation leaf to floats -> MLP -> action heads + value.

    `separate_critic`: the value gets an MLP of its own, as in CleanRL's agent, instead of reading
    the actor's. A shared trunk learns far slower at CleanRL's learning rate of 2.5e-4 (CartPole:
    mean return ~40 against ~220 after 60k steps, docs/training.md): set it (`--policy.separate-critic
    true`) when you bring CleanRL's settings; the tuned classic_control config keeps the shared trunk. With
    an LSTM (rnn.enabled) the value reads the LSTM's output and the critic MLP is not used.
    `activation`: "gelu", "tanh" (CleanRL's) or "relu". `num_layers`: hidden layers in each MLP (1 is
    PufferLib 3.0's Default policy: one linear layer and GELU before the heads).
    """

    def __init__(
        self,
        env,
        hidden_size: int = 128,
        separate_critic: bool = False,
        activation: str = "gelu",
        num_layers: int = 2,
    ) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.native = nativize_dtype(env.emulated)
        inputs = observation_size(env)
        self.encoder = mlp(inputs, hidden_size, activation, num_layers)
        self.critic = mlp(inputs, hidden_size, activation, num_layers) if separate_critic else None
        self.actor = ActionHead(env.single_action_space, hidden_size)
        self.value = layer_init(nn.Linear(hidden_size, 1), std=1.0)

    def forward(self, observations: torch.Tensor):
        x = self.features(observations)
        hidden = self.encoder(x)
        if self.critic is None:
            return decode(self.actor, self.value, hidden)
        return self.actor(hidden), self.value(self.critic(x))

    def features(self, observations: torch.Tensor) -> torch.Tensor:
        """Every observation leaf as floats, one row per observation."""
        batch = observations.shape[0]
        if self.native is None:
            return observations.reshape(batch, -1).float()
        leaves = flatten_structure(nativize_tensor(observations, self.native))
        return torch.cat([leaf.reshape(batch, -1).float() for leaf in leaves], dim=1)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        return self.encoder(self.features(observations))

    def decode_actions(self, hidden: torch.Tensor):
        return decode(self.actor, self.value, hidden)


def nature_cnn(channels: int) -> nn.Sequential:
    """The convolutional torso of the DQN Nature paper (Mnih et al. 2015): three strided convs, flattened."""
    return nn.Sequential(
        layer_init(nn.Conv2d(channels, 32, 8, stride=4)),
        nn.ReLU(),
        layer_init(nn.Conv2d(32, 64, 4, stride=2)),
        nn.ReLU(),
        layer_init(nn.Conv2d(64, 64, 3, stride=1)),
        nn.ReLU(),
        nn.Flatten(),
    )


class Convolutional(nn.Module):
    """NatureCNN over channels-last images (H, W, C), uint8 or float; C may be stacked frames."""

    def __init__(self, env, hidden_size: int = 512, channels_last: bool = True, downsample: int = 1) -> None:
        super().__init__()
        shape = env.single_observation_space.shape
        if len(shape) != 3:
            raise ValueError(f"Convolutional expects (H, W, C) observations, got shape {shape}")
        self.channels_last = channels_last
        self.downsample = downsample
        in_channels = shape[2] if channels_last else shape[0]
        self.scale = 255.0 if env.single_observation_space.dtype == np.uint8 else 1.0
        self.network = nature_cnn(in_channels)
        with torch.no_grad():
            flat = self.network(self._prepare(torch.zeros(1, *shape))).shape[1]
        self.network.append(layer_init(nn.Linear(flat, hidden_size)))
        self.network.append(nn.ReLU())
        self.hidden_size = hidden_size
        self.actor = ActionHead(env.single_action_space, hidden_size)
        self.value = layer_init(nn.Linear(hidden_size, 1), std=1.0)

    def _prepare(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float() / self.scale
        if self.channels_last:
            x = x.permute(0, 3, 1, 2)
        if self.downsample > 1:
            x = x[:, :, :: self.downsample, :: self.downsample]
        return x

    def forward(self, observations: torch.Tensor):
        return self.decode_actions(self.encode_observations(observations))

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        return self.network(self._prepare(observations))

    def decode_actions(self, hidden: torch.Tensor):
        return decode(self.actor, self.value, hidden)


class _ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


class _ConvSequence(nn.Module):
    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.res0 = _ResidualBlock(out_channels)
        self.res1 = _ResidualBlock(out_channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.res1(self.res0(self.pool(self.conv(x))))


class ProcgenResnet(nn.Module):
    """The IMPALA ResNet (Espeholt et al. 2018) used for Procgen: 64x64x3 channels-last images."""

    def __init__(self, env, cnn_width: int = 16, mlp_width: int = 256) -> None:
        super().__init__()
        h, w, c = env.single_observation_space.shape
        layers: list[nn.Module] = []
        for out in (cnn_width, 2 * cnn_width, 2 * cnn_width):
            layers.append(_ConvSequence(c, out))
            c, h, w = out, (h + 1) // 2, (w + 1) // 2
        self.convs = nn.Sequential(*layers, nn.Flatten(), nn.ReLU())
        self.linear = nn.Sequential(nn.Linear(c * h * w, mlp_width), nn.ReLU())
        self.hidden_size = mlp_width
        self.actor = ActionHead(env.single_action_space, mlp_width)
        self.value = layer_init(nn.Linear(mlp_width, 1), std=1.0)

    def forward(self, observations: torch.Tensor):
        return self.decode_actions(self.encode_observations(observations))

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        x = observations.float().permute(0, 3, 1, 2) / 255.0
        return self.linear(self.convs(x))

    def decode_actions(self, hidden: torch.Tensor):
        return decode(self.actor, self.value, hidden)


class LSTMWrapper(nn.Module):
    """Puts an LSTM between a policy's encode_observations and decode_actions.

    forward(obs, state=None, starts=None): obs is (B, *obs_shape) for one step or (B, T, *obs_shape) for
    BPTT over T steps; state is (h, c), each (B, hidden) (None = zeros); `starts` (B, T) is 1 where
    the observation begins a new episode, which zeroes that row's state before the step (CleanRL's
    `next_done`). Returns ((logits, value), (h, c)) with logits and value flattened over B*T.
    """

    def __init__(self, env, policy: nn.Module, input_size: int | None = None, hidden_size: int = 128) -> None:
        super().__init__()
        self.policy = policy
        self.obs_shape = tuple(env.single_observation_space.shape)
        self.input_size = input_size or getattr(policy, "hidden_size", 128)
        self.hidden_size = hidden_size
        self.cell = nn.LSTM(self.input_size, hidden_size, batch_first=True)
        for name, param in self.cell.named_parameters():
            if "bias" in name:
                nn.init.constant_(param, 0)
            elif "weight" in name:
                nn.init.orthogonal_(param, 1.0)
        if hidden_size != getattr(policy, "hidden_size", hidden_size):
            raise ValueError("LSTMWrapper hidden_size must match the wrapped policy's decoder input")

    def initial_state(self, batch: int, device: torch.device | str = "cpu"):
        zeros = torch.zeros(1, batch, self.hidden_size, device=device)
        return zeros, zeros.clone()

    def forward(self, observations: torch.Tensor, state=None, starts: torch.Tensor | None = None):
        sequence = observations.dim() == len(self.obs_shape) + 2
        batch = observations.shape[0]
        steps = observations.shape[1] if sequence else 1
        flat_obs = observations.reshape(batch * steps, *self.obs_shape)
        hidden = self.policy.encode_observations(flat_obs).reshape(batch, steps, -1)
        if state is None:
            h, c = self.initial_state(batch, observations.device)
        else:
            h, c = (s.reshape(1, batch, self.hidden_size) for s in state)
        if starts is None:
            out, (h, c) = self.cell(hidden, (h, c))
        else:
            keep = 1.0 - starts.reshape(batch, steps).float()
            outs = []
            for t in range(steps):
                h = h * keep[:, t].view(1, -1, 1)
                c = c * keep[:, t].view(1, -1, 1)
                o, (h, c) = self.cell(hidden[:, t : t + 1], (h, c))
                outs.append(o)
            out = torch.cat(outs, dim=1)
        logits, value = self.policy.decode_actions(out.reshape(batch * steps, self.hidden_size))
        return (logits, value), (h.reshape(batch, -1), c.reshape(batch, -1))
