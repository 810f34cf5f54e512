"""`puffertank push` on this box and `puffertank pull` on a second one, through a real registry (Debian's
docker-registry on loopback): the second box gets the same images under the usual names, a lib edit moves
only lib's layer (measured in the registry's storage and in what the pull fetched), and a registry that is
down or a tampered blob is a clear error that leaves the local names as they were.

The images are the tiny chain of _fleet.py (a few MB); the second daemon is _daemons.py's.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

docker = pytest.importorskip("docker")

from _daemons import free_port  # noqa: E402
from _fleet import (  # noqa: E402
    PUFFERTANK,
    build_tiny_chain,
    build_tiny_stage,
    puffertank,
    registry_on_loopback,
    tags_of,
)

from pufferlib.tank.doctor import Host as DoctorHost  # noqa: E402
from pufferlib.tank.doctor import check_registry  # noqa: E402
from pufferlib.tank.names import HASH_LABEL, STAGES, hash_ref, image_ref  # noqa: E402
from pufferlib.tank.registry import Registry  # noqa: E402
from pufferlib.tank.variant import auto_variant  # noqa: E402

pytestmark = pytest.mark.docker

SIZES = {"base": 4_000_000, "envs": 2_000_000, "lib": 300_000}
MB = 1e6


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    with registry_on_loopback(tmp_path_factory.mktemp("registry")) as served:
        yield served


@pytest.fixture(scope="module")
def first_push(docker_client, registry, box2, ns):
    chain = build_tiny_chain(docker_client, ns, SIZES)
    pushed = puffertank("push", "--registry", registry.address, "--variant", "cpu", "--namespace", ns)
    assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    pulled = puffertank(
        "pull", "--registry", registry.address, "--variant", "cpu", "--namespace", ns, docker_host=box2.unix
    )
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    return chain, pushed, pulled


def test_the_second_box_gets_the_same_images_under_the_usual_names(first_push, box2, ns, docker_client):
    chain, _, _ = first_push
    expected = {}
    for stage, image in chain.items():
        expected[image_ref(stage, "cpu", ns)] = image.id
        expected[hash_ref(stage, "cpu", image.labels[HASH_LABEL], ns)] = image.id
    assert tags_of(box2.client, ns) == expected
    # the registry's names are not left behind on either box
    for client in (docker_client, box2.client):
        assert [t for i in client.images.list() for t in i.tags if "127.0.0.1:" in t and ns in t] == []


def test_push_and_pull_say_what_moved(first_push, registry, ns):
    _, pushed, pulled = first_push
    for done, verb in ((pushed, "pushed"), (pulled, "pulled")):
        for stage in STAGES:  # each stage adds one layer: it moves, the ones below are there already
            below = STAGES.index(stage)
            assert f"{verb} {registry.address}/{ns}/{stage}:cpu-" in done.stderr, done.stderr
            line = next(x for x in done.stderr.splitlines() if f"/{ns}/{stage}:cpu-" in x)
            moved = f": 1 of {below + 1} layers moved ({SIZES[stage] / MB:.1f} MB), {below} already"
            assert moved in line, line
    total = sum(SIZES.values()) / MB
    assert f"3 images, 3 layers ({total:.1f} MB) moved to {registry.address}" in pushed.stdout, pushed.stdout
    assert f"3 images, 3 layers ({total:.1f} MB) moved from {registry.address}" in pulled.stdout


def test_a_lib_edit_moves_only_the_lib_layer(first_push, registry, box2, ns, docker_client):
    chain, _, _ = first_push
    envs = chain["envs"]
    before = registry.blob_bytes()
    lib = build_tiny_stage(
        docker_client,
        "lib",
        os.urandom(SIZES["lib"]),
        ns,
        hash_ref("envs", "cpu", envs.labels[HASH_LABEL], ns),
        envs.labels[HASH_LABEL],
    )
    pushed = puffertank("push", "--registry", registry.address, "--variant", "cpu", "--namespace", ns)
    assert pushed.returncode == 0, pushed.stderr
    grown = registry.blob_bytes() - before
    # the new layer, its config and two small manifests: far from the 6 MB below it
    assert SIZES["lib"] <= grown < SIZES["lib"] + 64_000, grown
    assert f"1 layers ({SIZES['lib'] / MB:.1f} MB) moved" in pushed.stdout, pushed.stdout
    pulled = puffertank(
        "pull", "--registry", registry.address, "--variant", "cpu", "--namespace", ns, docker_host=box2.unix
    )
    assert pulled.returncode == 0, pulled.stderr
    assert f"1 layers ({SIZES['lib'] / MB:.1f} MB) moved" in pulled.stdout, pulled.stdout
    assert box2.client.images.get(image_ref("lib", "cpu", ns)).id == lib.id
    old = hash_ref("lib", "cpu", chain["lib"].labels[HASH_LABEL], ns)  # superseded: untagged by default
    assert f"removed superseded {old}" in pulled.stderr and old not in tags_of(box2.client, ns), pulled.stderr
    print(f"\nlib edit: registry grew {grown} B; {pushed.stdout.strip()}; {pulled.stdout.splitlines()[0]}")


def test_pull_keeps_superseded_tags_in_use_or_asked_for(first_push, registry, box2, ns, docker_client):
    """A container on the old lib keeps its tag (said so); --keep-old keeps every old tag."""
    args = ["pull", "--registry", registry.address, "--variant", "cpu", "--namespace", ns]
    push = ["push", "--registry", registry.address, "--variant", "cpu", "--namespace", ns]
    envs = docker_client.images.get(image_ref("envs", "cpu", ns))
    parent = hash_ref("envs", "cpu", envs.labels[HASH_LABEL], ns)
    for keep in (False, True):
        old = box2.client.images.get(image_ref("lib", "cpu", ns))
        old_tag = hash_ref("lib", "cpu", old.labels[HASH_LABEL], ns)
        used = box2.client.containers.create(old.id, command=["none"]) if not keep else None
        build_tiny_stage(docker_client, "lib", os.urandom(1000), ns, parent, envs.labels[HASH_LABEL])
        assert puffertank(*push).returncode == 0
        pulled = puffertank(*args, *(["--keep-old"] if keep else []), docker_host=box2.unix)
        assert pulled.returncode == 0, pulled.stderr
        assert old_tag in tags_of(box2.client, ns) and "removed superseded" not in pulled.stderr, (
            pulled.stderr
        )
        if used is not None:
            assert f"kept superseded {old_tag}: a container uses it" in pulled.stderr, pulled.stderr
            used.remove()


def test_a_registry_that_is_down_is_named_and_nothing_changes(first_push, box2, ns, docker_client):
    before = tags_of(box2.client, ns), tags_of(docker_client, ns)
    down = f"127.0.0.1:{free_port()}"
    pulled = puffertank(
        "pull", "--registry", down, "--variant", "cpu", "--namespace", ns, docker_host=box2.unix
    )
    pushed = puffertank("push", "--registry", down, "--variant", "cpu", "--namespace", ns)
    for done in (pulled, pushed):
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"registry {down} is not reachable" in done.stderr and "\nFix: " in done.stderr, done.stderr
    assert (tags_of(box2.client, ns), tags_of(docker_client, ns)) == before


def test_a_tampered_blob_is_refused_and_nothing_is_half_tagged(first_push, registry, box2, ns, docker_client):
    base_ids = {s: box2.client.images.get(image_ref(s, "cpu", ns)).id for s in STAGES}
    envs = docker_client.images.get(image_ref("envs", "cpu", ns))
    lib = build_tiny_stage(
        docker_client,
        "lib",
        os.urandom(SIZES["lib"]),
        ns,
        hash_ref("envs", "cpu", envs.labels[HASH_LABEL], ns),
        envs.labels[HASH_LABEL],
    )
    pushed = puffertank("push", "--registry", registry.address, "--variant", "cpu", "--namespace", ns)
    assert pushed.returncode == 0, pushed.stderr
    there = Registry(registry.address).remote(f"{ns}/lib", "cpu")
    assert there is not None and there.config_digest == lib.id
    blob = registry.blob_file(there.layers[-1][0])  # lib's own layer
    blob.write_bytes(os.urandom(blob.stat().st_size))
    pulled = puffertank(
        "pull", "--registry", registry.address, "--variant", "cpu", "--namespace", ns, docker_host=box2.unix
    )
    assert pulled.returncode == 1 and "Traceback" not in pulled.stderr, pulled.stderr
    assert "failed: filesystem layer verification failed" in pulled.stderr, pulled.stderr
    assert "does not match its digest" in pulled.stderr and "puffertank push --registry" in pulled.stderr
    assert {s: box2.client.images.get(image_ref(s, "cpu", ns)).id for s in STAGES} == base_ids
    with pytest.raises(docker.errors.ImageNotFound):
        box2.client.images.get(lib.id)


def test_the_matrix_refuses_hosts_with_different_images(first_push, box2, ns, docker_client):
    envs = docker_client.images.get(image_ref("envs", "cpu", ns))
    parent = hash_ref("envs", "cpu", envs.labels[HASH_LABEL], ns)
    here = build_tiny_stage(docker_client, "lib", os.urandom(1000), ns, parent, envs.labels[HASH_LABEL])
    there = box2.client.images.get(image_ref("lib", "cpu", ns))
    assert here.id != there.id
    matrix = ["matrix", "--variant", "cpu", "--image", image_ref("lib", "cpu", ns), "--jobs", "1"]
    matrix += ["--host", "local", "--host", box2.unix]
    refused = puffertank(*matrix)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert f"different images under {image_ref('lib', 'cpu', ns)}" in refused.stderr
    assert f"local {here.id[:19]}" in refused.stderr and f"{box2.unix} {there.id[:19]}" in refused.stderr
    assert f"DOCKER_HOST={box2.unix} puffertank pull --registry" in refused.stderr
    allowed = puffertank(*matrix, "--allow-different-images")
    assert "different images under" in allowed.stderr and "as allowed" in allowed.stderr, allowed.stderr
    # past the refusal, to the image itself: the tiny one has no `puffer` (a named error, no traceback)
    assert allowed.returncode == 1 and "Traceback" not in allowed.stderr, allowed.stderr
    assert "cannot start puffer in" in allowed.stderr and "executable file not found" in allowed.stderr


def test_doctor_says_whether_the_local_image_is_the_registrys(first_push, registry, box2, ns, monkeypatch):
    """On the second box (its engine is ours to tag in): puffertank/lib:<this machine's variant> against the
    registry's, through `doctor --json` and the check itself."""
    wanted = auto_variant()
    ref = image_ref("lib", wanted)
    mine, other = (box2.client.images.get(image_ref(s, "cpu", ns)) for s in ("lib", "envs"))
    mine.tag(*ref.rsplit(":", 1))
    remote = f"{registry.address}/{ref}"

    def publish(image) -> None:
        image.tag(*remote.rsplit(":", 1))
        for event in box2.client.api.push(remote.rsplit(":", 1)[0], tag=wanted, stream=True, decode=True):
            assert "error" not in event, event
        box2.client.images.remove(remote)

    monkeypatch.setenv("PUFFERTANK_CONFIG", "/nonexistent/puffertank.conf")
    monkeypatch.delenv("PUFFERTANK_REGISTRY", raising=False)
    host = DoctorHost(client=box2.client)
    assert check_registry(host).status == "skip" and "no fleet registry set" in check_registry(host).detail
    monkeypatch.setenv("PUFFERTANK_REGISTRY", registry.address)
    missing = check_registry(host)
    assert missing.status == "warn" and f"has no {ref}" in missing.detail and "puffertank push" in missing.fix
    publish(mine)
    done = subprocess.run(
        [*PUFFERTANK, "doctor", "--json", "--no-probe"],
        env={**os.environ, "DOCKER_HOST": box2.unix},
        capture_output=True,
        text=True,
        timeout=300,
    )
    check = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "registry")
    assert check["status"] == "pass", check
    assert f"{ref} matches {registry.address}'s ({mine.id[:19]})" in check["detail"], check
    publish(other)  # the fleet moved on: the registry's image is another one
    differs = check_registry(host)
    assert differs.status == "warn" and mine.id[:19] in differs.detail and other.id[:19] in differs.detail
    assert f"puffertank pull --registry {registry.address}" in differs.fix, differs
    assert "puffertank push" in differs.fix, differs
    monkeypatch.setenv("PUFFERTANK_REGISTRY", f"127.0.0.1:{free_port()}")
    down = check_registry(host)
    assert down.status == "warn" and "is not reachable" in down.detail and down.fix
    monkeypatch.setenv("PUFFERTANK_REGISTRY", "http://box1")
    assert check_registry(host).status == "fail"


TINY_DOCKERFILES = {  # the real stages' build arguments and contexts, one small COPY each
    "base": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY docker/check_base.py /opt/tank/check_base.py\n",
    "envs": "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY docker/check_envs.py /opt/tank/check_envs.py\n",
    "lib": "ARG ENVS_IMAGE\nFROM ${ENVS_IMAGE}\nCOPY pufferlib/tank/names.py /opt/tank/names.py\n",
}


def test_build_pull_from_takes_the_stages_the_registry_has(
    registry, box2, source_copy, namespace, docker_client
):
    """`puffertank build` on this box (the real chain code, with small Dockerfiles), push, then `puffertank
    build --pull-from` on the second box: nothing built there, the same images; after a lib edit, box 1
    builds lib alone and box 2 pulls lib alone."""
    for stage, text in TINY_DOCKERFILES.items():
        (source_copy / f"Dockerfile.{stage}").write_text(text)
    build = ["build", "--variant", "cpu", "--source", str(source_copy), "--namespace", namespace]
    push = ["push", "--registry", registry.address, "--variant", "cpu", "--namespace", namespace]
    on_box2 = [*build, "--pull-from", registry.address]

    def ids(client) -> dict[str, str]:
        return {s: client.images.get(image_ref(s, "cpu", namespace)).id for s in STAGES}

    built = puffertank(*build)
    assert built.returncode == 0, built.stderr
    pushed = puffertank(*push)
    assert pushed.returncode == 0, pushed.stderr
    first = puffertank(*on_box2, docker_host=box2.unix)
    assert first.returncode == 0, first.stderr
    assert f"(built: nothing; pulled from {registry.address}: base, envs, lib)" in first.stdout, first.stdout
    assert "is now the fleet's" in first.stderr  # the Debian base under base, so base's hash matched
    assert ids(box2.client) == ids(docker_client)

    names = source_copy / "pufferlib" / "tank" / "names.py"
    names.write_text(names.read_text() + "# a one-line lib edit\n")
    rebuilt = puffertank(*build)
    assert rebuilt.returncode == 0 and "(built: lib)" in rebuilt.stdout, rebuilt.stdout + rebuilt.stderr
    pushed = puffertank(*push)
    assert pushed.returncode == 0 and "3 images, 1 layers" in pushed.stdout, pushed.stdout + pushed.stderr
    second = puffertank(*on_box2, docker_host=box2.unix)
    assert second.returncode == 0, second.stderr
    assert f"(built: nothing; pulled from {registry.address}: lib)" in second.stdout, second.stdout
    assert ids(box2.client) == ids(docker_client)
    print(f"\n{first.stdout.strip()}\n{pushed.stdout.strip()}\n{second.stdout.strip()}")


def test_build_pull_from_refuses_a_bad_address_or_a_registry_that_is_down(namespace):
    bad = puffertank("build", "--variant", "cpu", "--namespace", namespace, "--pull-from", "http://box1")
    assert bad.returncode == 2 and "--pull-from 'http://box1' is not HOST:PORT" in bad.stderr, bad.stderr
    down = f"127.0.0.1:{free_port()}"
    done = puffertank("build", "--variant", "cpu", "--namespace", namespace, "--pull-from", down)
    assert done.returncode == 1 and f"registry {down} is not reachable" in done.stderr, done.stderr
    assert "Traceback" not in bad.stderr + done.stderr
