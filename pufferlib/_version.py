"""The version, in one place: pyproject.toml reads it (`[tool.setuptools.dynamic]`), `pufferlib.__version__`
is it, and `puffer --version` / `puffertank --version` print it. The bump rule is in DEVELOPERS.md."""

__version__ = "0.13.0"
