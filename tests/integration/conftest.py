"""Integration tests on the real Docker engine and the real image chain. Shared fixtures:

docker_client  (session) a connected Docker SDK client; the session fails with the fix when no engine answers.
image_chain    (session) builds the cpu chain base -> envs -> lib once per session with `puffertank build`'s
               own code (pufferlib.tank.build.chain.build_chain), or reuses it when its inputs are unchanged
               (a few seconds); returns a SessionChain: .result (the ChainResult: tags, content-hash tags,
               image ids, what was built) and .image(stage), a session tag. Cold, on 2 cores: about 4
               minutes; it takes the machine-wide build lock, so concurrent sessions wait instead of building
               twice.
lib_image      (session) a tag of the cpu lib image that stays valid for the whole session
               (puffertank-session/lib:<session id>), even if someone rebuilds puffertank/lib:cpu meanwhile.
container      (function) a TrackedContainer (tracked_container.py, docker-stacks style): run_and_wait(...) /
               run_detached(...) start containers labelled puffertank.test=<session id>; all of them are
               removed when the test ends, pass or fail. A session finalizer removes any container with the
               session's label. Pass image=... per call, or use:
lib_container  (function) the same, with lib_image as the default image.
source_copy    (function) a copy of exactly what the stages read, for tests that edit or break the source.
namespace      (function) a throwaway image namespace (puffertank-test-<id>); its tags are removed afterwards.
chromium       (session) headless Chromium (Debian's package, driven by Playwright): .new_page(...).
watched_page   (function) open(url) -> a 1280x900 Chromium page that records .requests and .errors (console
               errors and page errors), for "nothing fetched, no error" checks.

Tests that use image_chain / lib_image get a longer pytest timeout (the first one may build the chain).
"""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _repo import REPO

docker = pytest.importorskip("docker", reason="the Docker SDK is needed: pip install 'pufferlib[tank]'")

from _daemons import second_dockerd  # noqa: E402
from _fleet import remove_namespace  # noqa: E402
from tracked_container import SESSION_ID, TEST_LABEL, TrackedContainer  # noqa: E402

from pufferlib.tank.build.chain import ChainResult, build_chain  # noqa: E402
from pufferlib.tank.build.options import BuildOptions  # noqa: E402
from pufferlib.tank.build.plan import STAGE_SPECS  # noqa: E402
from pufferlib.tank.names import STAGES  # noqa: E402

CHAIN_TIMEOUT = 1800  # seconds: a cold chain build on a busy 2-core machine, plus the test itself


# Tests that use the engine without carrying the `docker` marker: deselected by -m "not docker" all the same
# (so that really is the no-engine suite), and failed when they run, saying to add the marker.
UNMARKED: set[str] = set()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if {"image_chain", "lib_image", "lib_container"} & fixtures:
            item.add_marker(pytest.mark.timeout(CHAIN_TIMEOUT))
        if "docker_client" in fixtures and item.get_closest_marker("docker") is None:
            item.add_marker(pytest.mark.docker)
            UNMARKED.add(item.nodeid)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in UNMARKED:
        pytest.fail(
            f"{item.nodeid} uses the Docker engine (fixture docker_client) but has no docker marker. "
            "Fix: pytestmark = pytest.mark.docker in its file"
        )


@pytest.fixture(scope="session")
def docker_client() -> Iterator[docker.DockerClient]:
    try:
        client = docker.from_env(timeout=900)
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.fail(
            f"integration tests need a running Docker engine ({exc}). Fix: start dockerd "
            "(bash tests/run.sh does) or set DOCKER_HOST."
        )
    yield client
    for leftover in client.containers.list(all=True, filters={"label": f"{TEST_LABEL}={SESSION_ID}"}):
        with contextlib.suppress(docker.errors.APIError):
            leftover.remove(force=True)
    client.close()


@dataclass
class SessionChain:
    """The cpu chain as this session built or found it. `images` are session tags
    (puffertank-session/<stage>:<session id>): they keep the images alive for the session even when someone
    rebuilds the chain meanwhile (other people edit pufferlib/ in the same tree, and a rebuild untags the
    superseded content-hash tags)."""

    result: ChainResult
    images: dict[str, str]
    tags_at_build: dict[str, list[str]]

    def image(self, stage: str = "lib") -> str:
        return self.images[stage]


@pytest.fixture(scope="session")
def image_chain(docker_client: docker.DockerClient) -> Iterator[SessionChain]:
    start = time.monotonic()
    result = build_chain(BuildOptions(variant="cpu"), docker_client)
    images, tags = {}, {}
    for stage, built in result.stages.items():
        image = docker_client.images.get(built.image_id)
        tags[stage] = list(image.tags)
        images[stage] = f"puffertank-session/{stage}:{SESSION_ID}"
        image.tag(f"puffertank-session/{stage}", SESSION_ID)
    built = [n for n, r in result.stages.items() if r.status == "built"]
    print(f"\nimage_chain: cpu chain ready in {time.monotonic() - start:.1f} s (built: {built or 'nothing'})")
    yield SessionChain(result, images, tags)
    for tag in images.values():
        with contextlib.suppress(docker.errors.APIError):
            docker_client.images.remove(tag)


@pytest.fixture(scope="session")
def lib_image(image_chain: SessionChain) -> str:
    return image_chain.image("lib")


@pytest.fixture
def container(docker_client: docker.DockerClient) -> Iterator[TrackedContainer]:
    tracked = TrackedContainer(docker_client)
    yield tracked
    tracked.remove_all()


@pytest.fixture
def lib_container(docker_client: docker.DockerClient, lib_image: str) -> Iterator[TrackedContainer]:
    tracked = TrackedContainer(docker_client, lib_image)
    yield tracked
    tracked.remove_all()


@pytest.fixture
def network(docker_client: docker.DockerClient) -> Iterator[str]:
    """A bridge network made for the test (its containers reach each other by name), removed after it
    with any container still on it."""
    name = f"puffertank-test-{uuid.uuid4().hex[:8]}"
    net = docker_client.networks.create(name, driver="bridge", labels={"puffertank.test": "1"})
    try:
        yield name
    finally:
        net.reload()
        for container in net.containers:  # the tracked containers are removed first; this is a backstop
            container.remove(force=True)
        net.remove()


@pytest.fixture
def source_copy(tmp_path: Path) -> Path:
    """What the stages read: the Dockerfiles, docker/, pufferlib/, pyproject.toml, README.md."""
    copy = tmp_path / "src"
    copy.mkdir()
    for stage in STAGES:
        shutil.copy2(REPO / STAGE_SPECS[stage].dockerfile, copy)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "*.whl", "*.so")
    for folder in ("docker", "pufferlib"):
        shutil.copytree(REPO / folder, copy / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, copy)
    return copy


@pytest.fixture
def namespace(docker_client):
    name = f"puffertank-test-{uuid.uuid4().hex[:8]}"
    yield name
    for image in docker_client.images.list():
        for tag in image.tags:
            if tag.startswith(f"{name}/"):
                docker_client.images.remove(tag)


@pytest.fixture(scope="module")
def box2(docker_client):
    """A second Docker daemon (_daemons.py), one per test module: the fleet's other box."""
    with second_dockerd() as daemon:
        yield daemon


@pytest.fixture(scope="module")
def ns(docker_client):
    """A namespace of the module's own for the fleet tests' images; its tags here go with it."""
    name = f"puffertank-test-{uuid.uuid4().hex[:8]}"
    yield name
    remove_namespace(docker_client, name)


CHROMIUM = Path("/usr/bin/chromium")  # Debian's; Playwright's own browser download is unreachable here
CHROMIUM_ARGS = [
    "--no-sandbox",  # as root (CI) Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def chromium():
    """A headless Chromium for the pages we serve or write (the matrix report, its history, the lab)."""
    from _strict import skip_or_fail  # here, not at the top: test_markers runs a copy of this file alone

    if shutil.which(str(CHROMIUM)) is None:
        skip_or_fail(f"{CHROMIUM} is missing: apt-get install chromium (tests/run.sh does)")
    try:
        from playwright.sync_api import sync_playwright
    except ModuleNotFoundError:
        skip_or_fail("playwright is not installed: pip install 'pufferlib[dev]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class WatchedPage:
    page: Any
    requests: list[str]
    errors: list[str]


@pytest.fixture
def watched_page(chromium):
    """open(url): a page whose requests and console/page errors are recorded from the first load."""
    pages = []

    def open_(url: str) -> WatchedPage:
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        watched = WatchedPage(page, [], [])
        page.on("request", lambda request: watched.requests.append(request.url))
        page.on(
            "console",
            lambda message: watched.errors.append(message.text) if message.type == "error" else None,
        )
        page.on("pageerror", lambda error: watched.errors.append(str(error)))
        pages.append(page)
        page.goto(url)
        return watched

    yield open_
    for page in pages:
        page.close()
