"""The host's settings file (tank/settings.py): the registry default push and pull read, the checks of its
value (run by path, as provision/setup-host.sh runs it), and bad input to push/pull as exit 2 with the fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pufferlib
from pufferlib.tank import registry, settings
from pufferlib.tank.errors import UsageError

ROOT = Path(pufferlib.__file__).resolve().parents[1]
SCRIPT = ROOT / "pufferlib" / "tank" / "settings.py"


@pytest.fixture
def conf(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "etc" / "puffertank.conf"
    monkeypatch.setenv(settings.FILE_ENV, str(path))
    monkeypatch.delenv("PUFFERTANK_REGISTRY", raising=False)
    return path


def by_path(*argv: str, conf: Path) -> subprocess.CompletedProcess:
    """settings.py run by path with the system's python3, as setup-host.sh runs it (no venv, no package)."""
    env = {**os.environ, settings.FILE_ENV: str(conf)}
    env.pop("PUFFERTANK_REGISTRY", None)
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        ["python3", str(SCRIPT), *argv], env=env, capture_output=True, text=True, timeout=60, cwd="/"
    )


@pytest.mark.parametrize("good", ["127.0.0.1:5000", "box1.tail1234.ts.net:5000", "localhost:1"])
def test_registry_addresses_of_the_form_host_port_pass(good):
    assert settings.check_registry(good) == good


@pytest.mark.parametrize(
    "bad",
    ["box1", "http://box1:5000", "box1:5000/puffertank", "box1:0", "box1:70000", ":5000", "a b:5000", ""],
)
def test_other_registry_values_are_refused_with_the_form(bad):
    with pytest.raises(settings.SettingError, match="is not HOST:PORT") as caught:
        settings.check_registry(bad, "--registry")
    assert "HOST:PORT" in caught.value.fix and "127.0.0.1:5000" in caught.value.fix


def test_set_by_path_writes_the_file_that_get_and_python_read(conf):
    done = by_path("set", "registry", "box1.tail1234.ts.net:5000", conf=conf)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(conf)
    assert by_path("get", "registry", conf=conf).stdout.strip() == "box1.tail1234.ts.net:5000"
    assert registry.resolve(None) == "box1.tail1234.ts.net:5000"
    assert by_path("path", conf=conf).stdout.strip() == str(conf)


def test_set_by_path_refuses_a_bad_value_and_writes_nothing(conf):
    done = by_path("set", "registry", "http://box1", conf=conf)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "registry 'http://box1' is not HOST:PORT" in done.stderr and "Fix: " in done.stderr
    assert not conf.exists()


def test_the_flag_wins_over_the_environment_which_wins_over_the_file(conf, monkeypatch):
    settings.put("registry", "file-box:5000")
    assert registry.resolve(None) == "file-box:5000"
    monkeypatch.setenv("PUFFERTANK_REGISTRY", "env-box:5000")
    assert registry.resolve(None) == "env-box:5000"
    assert registry.resolve("flag-box:5000") == "flag-box:5000"


def test_no_registry_anywhere_is_a_usage_error_naming_every_place(conf):
    with pytest.raises(UsageError, match="no registry given") as caught:
        registry.resolve(None)
    assert str(conf) in caught.value.message and "--registry-url" in caught.value.fix


def test_a_malformed_settings_file_is_named_with_its_line(conf):
    conf.parent.mkdir(parents=True)
    conf.write_text("# fleet\nregistry=box1:5000\nregistyr=box2:5000\n")
    with pytest.raises(settings.SettingError, match=r"line 3: 'registyr=box2:5000' is not KEY=VALUE"):
        settings.read_file()
    conf.write_text("registry=http://box1:5000\n")
    with pytest.raises(UsageError, match="registry 'http://box1:5000' is not HOST:PORT"):
        registry.resolve(None)


def test_put_keeps_the_other_lines_and_a_comment_says_who_writes_it(conf):
    settings.put("registry", "a:1")
    settings.put("registry", "b:2")
    text = conf.read_text()
    assert text.count("registry=") == 1 and "registry=b:2" in text and text.startswith("# ")


@pytest.mark.parametrize("command", ["push", "pull"])
def test_push_and_pull_refuse_a_bad_registry_with_exit_2(command, conf):
    env = {**os.environ, settings.FILE_ENV: str(conf), "PYTHONPATH": str(ROOT)}
    env.pop("PUFFERTANK_REGISTRY", None)
    for argv, says in (
        (["--registry", "box1"], "--registry 'box1' is not HOST:PORT"),
        ([], "no registry given"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "pufferlib.tank.cli", command, "--variant", "cpu", *argv],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        lines = done.stderr.strip().splitlines()
        assert lines[0] == f"puffertank {command}: error: " + lines[0].split("error: ", 1)[1]
        assert says in lines[0] and len(lines) == 2 and lines[1].startswith("Fix: "), done.stderr
