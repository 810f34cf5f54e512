"""The locally made Debian base is bootstrapped over http only with the archive keyring to check it.

Without the keyring debootstrap merely warns "Cannot check Release signature" and goes on; the build
refuses instead, before it runs anything, naming the missing file and the fix.
"""

import pytest

from pufferlib.tank.build import debian
from pufferlib.tank.errors import TankError


def test_a_missing_keyring_stops_the_build_naming_it(tmp_path, monkeypatch):
    missing = tmp_path / "no-keyring.gpg"
    monkeypatch.setenv(debian.KEYRING_ENV, str(missing))
    said: list[str] = []
    with pytest.raises(TankError) as info:
        debian.make_debian_base(None, "puffertank-test/keyring:never", debian.DEBIAN_MIRROR, said.append)
    assert str(missing) in info.value.message and "signatures" in info.value.message
    assert debian.KEYRING_ENV in info.value.fix and "apt-get install debian-archive-keyring" in info.value.fix
    assert said == [], "it started making the image"
    assert not list(tmp_path.iterdir())


def test_the_default_keyring_is_debians_and_its_fix_installs_the_package(monkeypatch):
    monkeypatch.delenv(debian.KEYRING_ENV, raising=False)
    if not debian.DEBIAN_KEYRING.is_file():
        with pytest.raises(TankError, match=r"debian-archive-keyring\.gpg is missing") as info:
            debian.debian_keyring()
        assert info.value.fix == "sudo apt-get install debian-archive-keyring"
    else:
        assert debian.debian_keyring() == debian.DEBIAN_KEYRING


def test_a_keyring_named_in_the_environment_is_used(tmp_path, monkeypatch):
    keyring = tmp_path / "mirror.gpg"
    keyring.write_bytes(b"")
    monkeypatch.setenv(debian.KEYRING_ENV, str(keyring))
    assert debian.debian_keyring() == keyring
