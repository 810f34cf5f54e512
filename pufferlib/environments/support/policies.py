"""Default policies of the environment families whose observations need more than pufferlib.models.

Bindings name these as "pufferlib.environments.support.policies:<Class>" and the registry imports this
module only when a policy is built, so registering the families never imports torch. Each policy
has the pufferlib.models interface: forward(obs) -> (logits, value), split into
encode_observations and decode_actions so that LSTMWrapper can sit in between.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from pufferlib.models import ActionHead, Convolutional, decode, nature_cnn
from pufferlib.pytorch import layer_init, nativize_dtype, nativize_tensor, torch_dtype


class ByteText(nn.Module):
    """Fixed-length byte strings (0 = padding): byte embeddings, a 1-D conv, max over positions.

    Encodes NetHack's message line and MiniGrid's mission. The conv sees a few characters at a time
    (parts of words), so "red ball" and "blue ball" differ, and the max keeps what was seen anywhere.
    """

    def __init__(self, out_size: int = 64, embed_dim: int = 16, kernel: int = 5) -> None:
        super().__init__()
        self.out_size = out_size
        self.embed = nn.Embedding(256, embed_dim, padding_idx=0)
        self.conv = layer_init(nn.Conv1d(embed_dim, out_size, kernel, padding=kernel // 2))

    def forward(self, text: torch.Tensor) -> torch.Tensor:
        x = self.embed(text.long()).transpose(1, 2)
        return torch.relu(self.conv(x)).amax(dim=2)


def _structured(env, required: tuple[str, ...], policy: str) -> dict:
    native = nativize_dtype(env.emulated)
    missing = [key for key in required if native is None or key not in native]
    if missing:
        have = sorted(native) if native else "a flat Box"
        raise ValueError(f"{policy} needs the observation keys {list(required)}; this env has {have}")
    return native


def _zeros(env) -> torch.Tensor:
    """One all-zero observation in the env's flat dtype (to size layers by a dry run)."""
    space = env.single_observation_space
    return torch.zeros(1, *space.shape, dtype=torch_dtype(space.dtype))


class _Policy(nn.Module):
    def forward(self, observations: torch.Tensor):
        return self.decode_actions(self.encode_observations(observations))

    def decode_actions(self, hidden: torch.Tensor):
        return decode(self.actor, self.value, hidden)

    def _heads(self, env, hidden_size: int) -> None:
        self.hidden_size = hidden_size
        self.actor = ActionHead(env.single_action_space, hidden_size)
        self.value = layer_init(nn.Linear(hidden_size, 1), std=1.0)


class _Features(_Policy):
    """A policy whose subclass concatenates its sub-networks' outputs in `_features(observations)`;
    one Linear+ReLU projects them to hidden_size, sized by a dry run on a zero observation."""

    def _project(self, env, hidden_size: int) -> None:
        with torch.no_grad():
            width = self._features(_zeros(env)).shape[1]
        self.proj = nn.Sequential(layer_init(nn.Linear(width, hidden_size)), nn.ReLU())
        self._heads(env, hidden_size)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        return self.proj(self._features(observations))


class NetHack(_Features):
    """NLE and MiniHack: glyphs, blstats and (if present) the message.

    Glyph ids are embedded and read by two small convnets: one over the whole 21x79 map (strided,
    cheap) and one over a crop centred on the hero, whose position is blstats[0:2] (x, y). The
    bottom-line stats go through sign(x)*log(1+|x|), since they range from 0/1 flags to scores in
    the thousands, then an MLP.
    """

    def __init__(self, env, hidden_size: int = 256, embed_dim: int = 32, crop: int = 9) -> None:
        super().__init__()
        self.native = _structured(env, ("glyphs", "blstats"), "NetHack policy")
        space = env.emulated["emulated_observation_space"]
        self.num_glyphs = int(space["glyphs"].high.max()) + 1
        self.crop = crop
        # One extra id pads the map edges for the crop, so it never reads as a real glyph.
        self.glyph_embed = nn.Embedding(self.num_glyphs + 1, embed_dim, padding_idx=self.num_glyphs)
        self.map_net = nn.Sequential(
            layer_init(nn.Conv2d(embed_dim, 32, 3, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 64, 3, stride=2)),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.crop_net = nn.Sequential(
            layer_init(nn.Conv2d(embed_dim, 32, 3, padding=1)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 32, 3)),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.blstats_net = nn.Sequential(layer_init(nn.Linear(space["blstats"].shape[0], 64)), nn.ReLU())
        self.message_net = ByteText(64) if "message" in self.native else None
        self._project(env, hidden_size)

    def _crop(self, glyphs: torch.Tensor, blstats: torch.Tensor) -> torch.Tensor:
        batch, rows, cols = glyphs.shape
        half = self.crop // 2
        padded = nn.functional.pad(glyphs, (half, half, half, half), value=self.num_glyphs)
        x = blstats[:, 0].clamp(0, cols - 1)
        y = blstats[:, 1].clamp(0, rows - 1)
        offsets = torch.arange(self.crop, device=glyphs.device)
        ys = (y[:, None] + offsets)[:, :, None]
        xs = (x[:, None] + offsets)[:, None, :]
        return padded[torch.arange(batch, device=glyphs.device)[:, None, None], ys, xs]

    def _features(self, observations: torch.Tensor) -> torch.Tensor:
        x = nativize_tensor(observations, self.native)
        glyphs = x["glyphs"].long()
        blstats = x["blstats"].long()
        full = self.glyph_embed(glyphs).permute(0, 3, 1, 2)
        local = self.glyph_embed(self._crop(glyphs, blstats)).permute(0, 3, 1, 2)
        stats = blstats.float()
        parts = [
            self.map_net(full),
            self.crop_net(local),
            self.blstats_net(stats.sign() * torch.log1p(stats.abs())),
        ]
        if self.message_net is not None:
            parts.append(self.message_net(x["message"]))
        return torch.cat(parts, dim=1)


class MiniGrid(_Features):
    """MiniGrid: the egocentric image (object, colour and state ids), direction and mission bytes."""

    def __init__(self, env, hidden_size: int = 128) -> None:
        super().__init__()
        self.native = _structured(env, ("image", "direction"), "MiniGrid policy")
        self.image_net = nn.Sequential(
            layer_init(nn.Conv2d(3, 16, 3, padding=1)),
            nn.ReLU(),
            layer_init(nn.Conv2d(16, 32, 3, padding=1)),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.direction_embed = nn.Embedding(4, 8)
        self.mission_net = ByteText(64) if "mission" in self.native else None
        self._project(env, hidden_size)

    def _features(self, observations: torch.Tensor) -> torch.Tensor:
        x = nativize_tensor(observations, self.native)
        image = x["image"].float().permute(0, 3, 1, 2)
        parts = [self.image_net(image), self.direction_embed(x["direction"].long().reshape(-1))]
        if self.mission_net is not None:
            parts.append(self.mission_net(x["mission"]))
        return torch.cat(parts, dim=1)


class Tiles(_Policy):
    """Observations of small tile ids, one per cell (native ocean/snake's egocentric crop): each
    (cell, tile) pair gets a learned vector and a row's features are their sum, the first layer of
    an MLP over the one-hot encoding computed as an embedding lookup (cells lookups instead of a
    cells x tiles matmul). The tile count is the observation Box's high + 1."""

    def __init__(self, env, hidden_size: int = 128) -> None:
        super().__init__()
        space = env.single_observation_space
        self.cells = int(math.prod(space.shape))
        self.tiles = int(space.high.max()) + 1
        self.embed = nn.EmbeddingBag(self.cells * self.tiles, hidden_size, mode="sum")
        self.bias = nn.Parameter(torch.zeros(hidden_size))
        self.register_buffer("offsets", torch.arange(self.cells) * self.tiles, persistent=False)
        self.proj = nn.Sequential(nn.ReLU(), layer_init(nn.Linear(hidden_size, hidden_size)), nn.ReLU())
        self._heads(env, hidden_size)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        ids = observations.reshape(-1, self.cells).long().clamp(0, self.tiles - 1) + self.offsets
        return self.proj(self.embed(ids) + self.bias)


class Atari(Convolutional):
    """NatureCNN over ALE's channels-first frame stack (stack, 84, 84)."""

    def __init__(self, env, hidden_size: int = 512) -> None:
        super().__init__(env, hidden_size=hidden_size, channels_last=False)


def _mask_logits(logits, mask: torch.Tensor):
    """Logits (a tensor, or a list for MultiDiscrete) with the actions that `mask` forbids (0) at the
    dtype's minimum: zero probability under softmax, and no NaN where a row allows one action."""
    if isinstance(logits, torch.Tensor):
        return logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min)
    parts = mask.split([lg.shape[-1] for lg in logits], -1)
    return [lg.masked_fill(m == 0, torch.finfo(lg.dtype).min) for lg, m in zip(logits, parts, strict=True)]


class OpenSpiel(_Policy):
    """OpenSpiel games: an MLP over the game tensor, the seat and the legal-action mask.

    The logits of forbidden actions are masked here as well as in the CleanRL wrapper, so even a
    caller that samples from the raw logits never picks an illegal move.
    """

    def __init__(self, env, hidden_size: int = 128) -> None:
        super().__init__()
        self.native = _structured(env, ("observation", "player", "action_mask"), "OpenSpiel policy")
        width = sum(math.prod(self.native[k][1]) for k in ("observation", "player", "action_mask"))
        self.encoder = nn.Sequential(
            layer_init(nn.Linear(width, hidden_size)),
            nn.ReLU(),
            layer_init(nn.Linear(hidden_size, hidden_size)),
            nn.ReLU(),
        )
        self._heads(env, hidden_size)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        x = nativize_tensor(observations, self.native)
        batch = observations.shape[0]
        parts = [x[k].reshape(batch, -1).float() for k in ("observation", "player", "action_mask")]
        return self.encoder(torch.cat(parts, dim=1))

    def forward(self, observations: torch.Tensor):
        logits, value = self.decode_actions(self.encode_observations(observations))
        mask = nativize_tensor(observations, self.native)["action_mask"]
        return _mask_logits(logits, mask.reshape(observations.shape[0], -1)), value


class Doom(_Features):
    """ViZDoom: NatureCNN over the screen (grey or RGB, channels last) and, where the scenario has
    them, the game variables through sign(x)*log(1+|x|) (health 0-100, ammo, kill counts) and an MLP."""

    def __init__(self, env, hidden_size: int = 512) -> None:
        super().__init__()
        self.native = _structured(env, ("screen",), "Doom policy")
        self.screen_net = nature_cnn(self.native["screen"][1][2])
        variables = self.native.get("gamevariables")
        self.variables_net = (
            nn.Sequential(layer_init(nn.Linear(variables[1][0], 64)), nn.ReLU()) if variables else None
        )
        self._project(env, hidden_size)

    def _features(self, observations: torch.Tensor) -> torch.Tensor:
        x = nativize_tensor(observations, self.native)
        parts = [self.screen_net(x["screen"].permute(0, 3, 1, 2).float() / 255.0)]
        if self.variables_net is not None:
            v = x["gamevariables"].float()
            parts.append(self.variables_net(v.sign() * torch.log1p(v.abs())))
        return torch.cat(parts, dim=1)


class MAgent(_Policy):
    """MAgent2: a small convnet over the agent's local view (H, W, C), channels last.

    Reads a plain Box view, or the `observation` of the Dict that mixed-type envs (tiger_deer,
    adversarial_pursuit, combined_arms) use to carry their `action_mask`.
    """

    def __init__(self, env, hidden_size: int = 256) -> None:
        super().__init__()
        self.native = nativize_dtype(env.emulated)
        if self.native is not None and "observation" not in self.native:
            raise ValueError(
                f"MAgent policy needs a view or an 'observation' key; this env has {sorted(self.native)}"
            )
        shape = env.single_observation_space.shape if self.native is None else self.native["observation"][1]
        self.view_net = nn.Sequential(
            layer_init(nn.Conv2d(shape[2], 32, 3)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 32, 3)),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            width = self.view_net(torch.zeros(1, shape[2], shape[0], shape[1])).shape[1]
        self.proj = nn.Sequential(layer_init(nn.Linear(width, hidden_size)), nn.ReLU())
        self._heads(env, hidden_size)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        view = (
            observations if self.native is None else nativize_tensor(observations, self.native)["observation"]
        )
        return self.proj(self.view_net(view.float().permute(0, 3, 1, 2)))


def _signed_log(x: torch.Tensor) -> torch.Tensor:
    """sign(x) * log(1 + |x|): game counters (hit points, gold, levels, ids) on one small scale."""
    x = x.float()
    return x.sign() * torch.log1p(x.abs())


class NMMO(_Policy):
    """Neural MMO: the 15x15 tiles through a convnet over their materials, each set of rows (entities in
    sight, inventory, market, messages) through a shared per-row MLP and a max over rows, the task
    embedding through a Linear; the logits of every action argument are masked with the observation's
    `ActionTargets` (which targets, items, prices and directions are legal now).
    """

    SETS = {"Entity": 64, "Inventory": 32, "Market": 32, "Communication": 16}  # name -> per-row width

    def __init__(self, env, hidden_size: int = 256, materials: int = 32) -> None:
        super().__init__()
        self.native = _structured(env, ("Tile", "Entity", "Task", "ActionTargets"), "NMMO policy")
        self.materials = materials
        tiles = self.native["Tile"][1][0]
        self.side = math.isqrt(tiles)
        if self.side * self.side != tiles:
            raise ValueError(f"NMMO policy needs a square tile view; this env has {tiles} tiles")
        self.tile_embed = nn.Embedding(materials, 8)
        self.tile_net = nn.Sequential(
            layer_init(nn.Conv2d(8, 32, 3, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 32, 3, stride=2)),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.sets = nn.ModuleDict(
            {
                name: nn.Sequential(layer_init(nn.Linear(self.native[name][1][1], width)), nn.ReLU())
                for name, width in self.SETS.items()
                if name in self.native
            }
        )
        self.task_net = nn.Sequential(layer_init(nn.Linear(self.native["Task"][1][0], 32)), nn.ReLU())
        self.mask_keys = self._leaves(self.native["ActionTargets"])
        nvec = getattr(env.single_action_space, "nvec", None)
        width = sum(math.prod(spec[1]) for spec in self.mask_keys)
        if nvec is None or int(sum(nvec)) != width:
            raise ValueError(
                f"NMMO policy: the action space {env.single_action_space} does not match ActionTargets "
                f"({width} mask entries)"
            )
        with torch.no_grad():
            features = self._features(_zeros(env)).shape[1]
        self.proj = nn.Sequential(layer_init(nn.Linear(features, hidden_size)), nn.ReLU())
        self._heads(env, hidden_size)

    @staticmethod
    def _leaves(tree: dict) -> list:
        out = []
        for spec in tree.values():
            out += NMMO._leaves(spec) if isinstance(spec, dict) else [spec]
        return out

    def _mask(self, observations: torch.Tensor) -> torch.Tensor:
        """ActionTargets as one (batch, sum(nvec)) tensor, in the action space's order."""
        x = nativize_tensor(observations, self.native)["ActionTargets"]
        leaves: list[torch.Tensor] = []

        def walk(tree):
            for value in tree.values():
                walk(value) if isinstance(value, dict) else leaves.append(value.reshape(value.shape[0], -1))

        walk(x)
        return torch.cat(leaves, dim=1)

    def _features(self, observations: torch.Tensor) -> torch.Tensor:
        x = nativize_tensor(observations, self.native)
        batch = observations.shape[0]
        material = x["Tile"][..., -1].long().clamp(0, self.materials - 1)
        tiles = self.tile_embed(material).reshape(batch, self.side, self.side, -1).permute(0, 3, 1, 2)
        parts = [self.tile_net(tiles)]
        parts += [net(_signed_log(x[name])).amax(dim=1) for name, net in self.sets.items()]
        parts.append(self.task_net(torch.nan_to_num(x["Task"].float())))
        return torch.cat(parts, dim=1)

    def encode_observations(self, observations: torch.Tensor) -> torch.Tensor:
        return self.proj(self._features(observations))

    def forward(self, observations: torch.Tensor):
        logits, value = self.decode_actions(self.encode_observations(observations))
        return _mask_logits(logits, self._mask(observations)), value
