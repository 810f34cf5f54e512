"""TrackedContainer: the containers one integration test starts, all removed when it ends (docker-stacks'
tracked_container.py is the model). conftest.py's `container` and `lib_container` fixtures hand one out;
every container carries puffertank.test=<this session's id>, which the session's finalizer sweeps too."""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass

import docker
import pytest

TEST_LABEL = "puffertank.test"
SESSION_ID = uuid.uuid4().hex[:12]


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"exit {self.exit_code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


class TrackedContainer:
    """Starts containers for one test and removes every one of them afterwards.

    `image` is the default image; keyword arguments go to docker's containers.run/create (user, environment,
    network_mode, shm_size, ...). Every container gets the labels puffertank.test=<session id> and
    puffertank.managed=1.
    """

    def __init__(self, client: docker.DockerClient, image: str | None = None) -> None:
        self.client = client
        self.image = image
        self.started: list[docker.models.containers.Container] = []

    def _kwargs(self, kwargs: dict) -> dict:
        labels = {TEST_LABEL: SESSION_ID, "puffertank.managed": "1", **kwargs.pop("labels", {})}
        image = kwargs.pop("image", None) or self.image
        if image is None:
            raise ValueError("TrackedContainer: no image given")
        return {"image": image, "labels": labels, **kwargs}

    def run_detached(
        self, command: list[str] | str | None = None, **kwargs
    ) -> docker.models.containers.Container:
        container = self.client.containers.run(command=command, detach=True, **self._kwargs(kwargs))
        self.started.append(container)
        return container

    def run_and_wait(
        self,
        command: list[str] | str | None = None,
        *,
        timeout: float = 120,
        expect: int | None = 0,
        **kwargs,
    ) -> Result:
        """Run to completion; fail the test on a timeout or (with expect set) another exit code."""
        container = self.run_detached(command, **kwargs)
        try:
            code = int(container.wait(timeout=timeout).get("StatusCode", -1))
        except Exception as exc:  # requests' ReadTimeout
            container.kill()
            pytest.fail(f"{command!r} in {container.image.tags or container.image.id} timed out ({exc})")
        result = Result(
            code,
            container.logs(stdout=True, stderr=False).decode(errors="replace"),
            container.logs(stdout=False, stderr=True).decode(errors="replace"),
        )
        if expect is not None:
            assert code == expect, f"{command!r} exited {code}, expected {expect}\n{result}"
        return result

    def remove_all(self) -> None:
        for container in self.started:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)
        self.started.clear()
