"""`puffertank run/shell -p`: ports as `docker run -p` reads them, on the host's loopback unless an
address is given (TensorBoard has no login); bad values and impossible combinations are named.
The port reaching the host for real: tests/integration/test_run_publish.py."""

from __future__ import annotations

import pytest

from pufferlib.tank.errors import UsageError
from pufferlib.tank.shell import parse_publish


@pytest.mark.parametrize(
    "given, ports",
    [
        (["6006"], {"6006/tcp": ("127.0.0.1", 6006)}),
        (["8080:6006"], {"6006/tcp": ("127.0.0.1", 8080)}),
        (["0.0.0.0:6006"], {"6006/tcp": ("0.0.0.0", 6006)}),
        (
            ["100.64.0.7:8080:6006", "8888"],
            {"6006/tcp": ("100.64.0.7", 8080), "8888/tcp": ("127.0.0.1", 8888)},
        ),
    ],
)
def test_publish_values(given, ports):
    assert parse_publish(given) == ports


@pytest.mark.parametrize("bad", ["tensorboard", "70000", "0", ":6006", "1.2.3.4:x"])
def test_bad_publish_values_are_named(bad):
    with pytest.raises(UsageError, match=f"--publish {bad!r}"):
        parse_publish([bad])
