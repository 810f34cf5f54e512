"""`puffertank push --host ssh://...` without a registry, through a real sshd on loopback (_sshd.py) into the
second Docker daemon (_daemons.py): the box gets the images it lacks under the usual names with the same ids,
a second push sends nothing, a lib edit sends lib alone and retires the box's superseded tag, and bad
hosts are clear errors.

The images are the tiny chain of _fleet.py (a few MB).
"""

from __future__ import annotations

import os
import subprocess

import pytest

docker = pytest.importorskip("docker")

from _daemons import free_port  # noqa: E402
from _fleet import build_tiny_chain, build_tiny_stage, puffertank, tags_of  # noqa: E402
from _sshd import sshd_to  # noqa: E402

from pufferlib.tank.names import HASH_LABEL, hash_ref, image_ref  # noqa: E402

pytestmark = pytest.mark.docker

SIZES = {"base": 3_000_000, "envs": 1_000_000, "lib": 200_000}


@pytest.fixture(scope="module")
def ssh_box(box2):
    with sshd_to(box2.unix) as box:
        yield box


@pytest.fixture(scope="module")
def chain(docker_client, ns):
    return build_tiny_chain(docker_client, ns, SIZES)


def push(ssh_box, ns: str, *extra: str, url: str | None = None) -> subprocess.CompletedProcess:
    argv = ["push", "--host", url or ssh_box.url, "--variant", "cpu", "--namespace", ns, *extra]
    return puffertank(*argv, env=ssh_box.env())


def new_lib(docker_client, ns: str) -> docker.models.images.Image:
    """A lib edit: a new lib image on the same envs."""
    envs = docker_client.images.get(image_ref("envs", "cpu", ns))
    parent = hash_ref("envs", "cpu", envs.labels[HASH_LABEL], ns)
    return build_tiny_stage(
        docker_client, "lib", os.urandom(SIZES["lib"]), ns, parent, envs.labels[HASH_LABEL]
    )


def test_push_over_ssh_sends_only_what_the_box_lacks(chain, box2, ssh_box, ns, docker_client):
    first = push(ssh_box, ns)
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"3 images (base, envs, lib) sent to {ssh_box.url}: " in first.stdout, first.stdout
    for stage, image in chain.items():
        assert f"  {stage} {image.id[:19]}: to send" in first.stderr, first.stderr
    # the same image ids (config digests) under the same names on both boxes
    assert tags_of(box2.client, ns) == tags_of(docker_client, ns) and len(tags_of(box2.client, ns)) == 6

    again = push(ssh_box, ns)
    assert again.returncode == 0, again.stderr
    assert "has every image already (base, envs, lib): nothing sent" in again.stdout, again.stdout

    old = hash_ref("lib", "cpu", chain["lib"].labels[HASH_LABEL], ns)
    lib = new_lib(docker_client, ns)
    edited = push(ssh_box, ns)
    assert edited.returncode == 0, edited.stderr
    assert "1 images (lib) sent" in edited.stdout and "already there: base, envs" in edited.stdout, (
        edited.stdout
    )
    # save/load moves whole images: lib's stream holds the layers under it too (docs/fleet.md says so)
    sent_mb = float(edited.stdout.split(" sent to ")[1].split(": ")[1].split(" MB")[0])
    assert sent_mb >= sum(SIZES.values()) / 1e6, edited.stdout
    assert f"removed superseded {old} on {ssh_box.url}" in edited.stderr, edited.stderr
    there = tags_of(box2.client, ns)
    assert there[image_ref("lib", "cpu", ns)] == lib.id and old not in there
    assert there == {t: i for t, i in tags_of(docker_client, ns).items() if t != old}
    print(f"\n{first.stdout.strip()}\n{again.stdout.strip()}\n{edited.stdout.strip()}")


def test_a_tls_engine_is_a_host_too(chain, box2, ns):
    tls = ["--tlsverify", "--tlscacert", str(box2.certs / "ca.pem")]
    tls += ["--tlscert", str(box2.certs / "cert.pem"), "--tlskey", str(box2.certs / "key.pem")]
    done = puffertank("push", "--host", box2.tcp, "--variant", "cpu", "--namespace", ns, *tls)
    assert done.returncode == 0, done.stderr
    assert f"puffertank push: {box2.tcp} " in done.stdout, done.stdout


@pytest.mark.parametrize(
    "url", ["unix:///var/run/docker.sock", "tcp://127.0.0.1:2375", "http://box2", "box2", "https://box2:2376"]
)
def test_a_host_that_is_not_ssh_or_tls_is_refused(url):
    done = puffertank("push", "--host", url, "--variant", "cpu")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"error: --host '{url}': push sends images to another box's engine over ssh:// or TLS only" in (
        done.stderr
    )
    assert "Fix: name the box as ssh://USER@HOST[:PORT]" in done.stderr and "--tlsverify" in done.stderr


def test_host_and_registry_do_not_mix():
    done = puffertank("push", "--host", "ssh://box2", "--registry", "box1:5000")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr, done.stderr


def test_an_unreachable_box_is_named(chain, ssh_box, ns):
    url = f"ssh://root@127.0.0.1:{free_port()}"
    done = push(ssh_box, ns, url=url)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"error: cannot reach the Docker engine at {url}" in done.stderr, done.stderr
    assert f"Fix: check the address, that dockerd runs there, and that `docker -H {url} info` works" in (
        done.stderr
    )
