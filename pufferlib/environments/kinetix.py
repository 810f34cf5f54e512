"""Kinetix (kinetix/<id>): catalogued, unavailable in this image for now, and why.

kinetix-env 3.0.2 (a pure wheel) resolves beside our jax/jaxlib 0.7.1 and flax 0.12, but it cannot
be installed as craftax is (--no-deps plus the few modules the env needs), because importing
`kinetix.environment` imports its training utilities (kinetix/environment/ued -> kinetix.util), and
those import wandb, omegaconf, safetensors, seaborn, grain (array_record, portpicker), zarr
(numcodecs, donfig, google-crc32c) and distrax. distrax 0.1.9 requires `tfp-nightly` (a nightly
pre-release; the last TensorFlow Probability release, 0.25.0, fails on JAX 0.7: "jax.interpreters.xla.
pytype_aval_mappings was deprecated in JAX v0.5.0 and removed in JAX v0.7.0"). Its declared
requirements add plain `pygame` (which would replace the pygame-ce the other families draw with),
pygame_widgets, moviepy 1.0.3 (imageio-ffmpeg, which the envs stage removes) and hydra-core. Shipping
a nightly and a training stack for an env's import is a decision for the image's owners
(docs/environments.md, "Kinetix"); until then `puffer envs --all` lists these ids with this reason.

The ids name Kinetix's observation and action types as Kinetix's own config does
(`Kinetix-<ObservationType>-<ActionType>`), on its random-level distribution.
"""

from __future__ import annotations

from pufferlib.environments.registry import register_unavailable

REASON = (
    "kinetix-env 3.0.2's env module imports its training stack (wandb, grain, zarr, distrax), and distrax "
    "needs tfp-nightly, a nightly build, on JAX 0.7; its requirements add plain pygame, which clashes "
    "with pygame-ce (docs/environments.md, Kinetix)"
)
ENVS = (
    "Kinetix-SymbolicFlat-MultiDiscrete",
    "Kinetix-SymbolicFlat-Continuous",
    "Kinetix-Pixels-MultiDiscrete",
    "Kinetix-Pixels-Continuous",
)


make_env, env_creator = register_unavailable(
    "kinetix",
    ENVS,
    REASON,
    requires=("kinetix",),
    describe=lambda name: f"Kinetix 2-D physics tasks, {name.split('-', 1)[1]} (JAX; unavailable here)",
)
