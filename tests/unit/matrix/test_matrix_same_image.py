"""Same image everywhere: a matrix over several hosts whose images differ is refused with each host's image id
and the commands that make them one; matrix.json (schema 4) records every host's id, and older files still
read."""

from __future__ import annotations

import json

import pytest

from pufferlib.tank.errors import UsageError
from pufferlib.tank.matrix.hosts import require_same_image
from pufferlib.tank.matrix.report import Report, load, render_html
from pufferlib.tank.matrix.schema import READS, SCHEMA, check_schema

A = "sha256:" + "a" * 64
B = "sha256:" + "b" * 64


@pytest.fixture(autouse=True)
def no_registry_configured(monkeypatch, tmp_path):
    monkeypatch.setenv("PUFFERTANK_CONFIG", str(tmp_path / "none.conf"))
    monkeypatch.delenv("PUFFERTANK_REGISTRY", raising=False)


def test_one_image_on_every_host_passes():
    require_same_image({"local": A, "ssh://box2": A, "ssh://box3": A}, "puffertank/lib:cuda", "cuda")
    require_same_image({"local": A}, "puffertank/lib:cuda", "cuda")


def test_different_images_are_refused_naming_each_host_its_id_and_the_fix():
    with pytest.raises(UsageError) as caught:
        require_same_image({"local": A, "ssh://box2": A, "ssh://box3": B}, "puffertank/lib:cuda", "cuda")
    err = caught.value
    assert err.exit_code == 2
    assert "different images under puffertank/lib:cuda" in err.message
    for host, digest in (("local", A), ("ssh://box2", A), ("ssh://box3", B)):
        assert f"{host} {digest[:19]}" in err.message
    assert "puffertank push --registry HOST:PORT --variant cuda" in err.fix
    assert "DOCKER_HOST=ssh://box3 puffertank pull --registry HOST:PORT --variant cuda" in err.fix
    assert "DOCKER_HOST=ssh://box2" not in err.fix  # box2 already has the first host's image
    assert "--allow-different-images" in err.fix


def test_the_fix_names_the_configured_registry(monkeypatch):
    monkeypatch.setenv("PUFFERTANK_REGISTRY", "box1.tail1234.ts.net:5000")
    with pytest.raises(UsageError) as caught:
        require_same_image({"local": A, "ssh://box2": B}, "puffertank/lib:cpu", "cpu")
    assert "puffertank push --registry box1.tail1234.ts.net:5000 --variant cpu" in caught.value.fix


def _report(digests: dict[str, str]) -> Report:
    return Report("puffertank/lib:cpu", A, "cpu", hosts=list(digests), digests=digests)


def test_matrix_json_records_every_hosts_image_and_reads_back(tmp_path):
    doc = _report({"local": A, "ssh://box2": A}).to_json()
    assert doc["schema"] == SCHEMA == 5 and doc["digests"] == {"local": A, "ssh://box2": A}
    (tmp_path / "matrix.json").write_text(json.dumps(doc))
    assert load(tmp_path / "matrix.json").digests == {"local": A, "ssh://box2": A}


def test_a_schema_3_file_without_digests_still_reads(tmp_path):
    doc = _report({}).to_json()
    doc["schema"] = 3
    doc.pop("digests")
    assert 3 in READS
    check_schema(doc, "old.json")
    (tmp_path / "matrix.json").write_text(json.dumps(doc))
    assert load(tmp_path / "matrix.json").digests == {}


def test_the_page_says_whether_the_hosts_ran_one_image():
    assert "the same image on all 2 hosts" in render_html(_report({"local": A, "ssh://box2": A}))
    page = render_html(_report({"local": A, "ssh://box2": B}))
    assert "different images" in page and A[:19] in page and B[:19] in page
    assert "different images" not in render_html(_report({"local": A}))
