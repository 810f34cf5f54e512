"""Repository signing keys are pinned: setup-host.sh installs a fetched key only when its fingerprint is the
pinned one, and a mismatch (or a key already on disk that is not the pinned one) stops the run naming the
expected and the found fingerprint.

The script is sourced (it then only defines its functions) and `ensure_keyring` is called with a key served
over loopback HTTP. keys/docker.asc is Docker's real public repository key (as served by
download.docker.com/linux/debian/gpg), so the real pin is checked against the real key; wrong keys are made
here with gpg.
"""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from _repo import REPO

DOCKER_KEY = Path(__file__).parent / "keys" / "docker.asc"


@pytest.fixture(scope="module", autouse=True)
def _tools() -> None:
    for tool, package in (("gpg", "gnupg"), ("curl", "curl")):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed to check signing keys: apt-get install {package}")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server for the files put in the returned folder."""
    root = tmp_path_factory.mktemp("served")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args) -> None:  # keep pytest's output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def stranger_key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An armored public key that is nobody's repository key, and its fingerprint."""
    home = tmp_path_factory.mktemp("gnupg")
    home.chmod(0o700)
    gpg = ["gpg", "--homedir", str(home), "--batch", "--quiet"]
    uid = "Not Docker <not-docker@example.invalid>"
    subprocess.run(
        [*gpg, "--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign", "never"], check=True, timeout=60
    )
    listed = subprocess.run(
        [*gpg, "--with-colons", "--list-keys", uid], capture_output=True, text=True, check=True
    )
    fpr = next(line.split(":")[9] for line in listed.stdout.splitlines() if line.startswith("fpr:"))
    key = home / "stranger.asc"
    key.write_bytes(
        subprocess.run([*gpg, "--armor", "--export", uid], capture_output=True, check=True).stdout
    )
    # generating the key started a gpg-agent for this homedir: stop it, or it outlives the tests
    subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False, timeout=30)
    return key, fpr


def ensure_keyring(url: str, dest: Path, pin: str = "$DOCKER_KEY_FPR") -> subprocess.CompletedProcess:
    """Call the script's ensure_keyring URL DEST PIN in a fresh bash (PIN: a pin variable or a literal)."""
    log = dest.parent.parent / "setup.log"
    script = (
        "source provision/setup-host.sh; trap cleanup EXIT; "
        f"LOG_FILE='{log}'; ensure_keyring '{url}' '{dest}' \"{pin}\""
    )
    return subprocess.run(["bash", "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)


def pin_of(name: str) -> str:
    res = subprocess.run(
        ["bash", "-c", f'source provision/setup-host.sh; printf %s "${name}"'],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return res.stdout


def test_the_real_docker_key_matches_its_pin_and_is_installed(served, tmp_path) -> None:
    base, root = served
    shutil.copy2(DOCKER_KEY, root / "docker.asc")
    dest = tmp_path / "keyrings" / "docker.asc"
    res = ensure_keyring(f"{base}/docker.asc", dest)
    assert res.returncode == 0, res.stdout + res.stderr
    assert dest.read_bytes() == DOCKER_KEY.read_bytes()
    assert oct(dest.stat().st_mode & 0o777) == "0o644"
    again = ensure_keyring(f"{base}/docker.asc", dest)  # already there: checked, kept, nothing fetched
    assert again.returncode == 0 and "fetch" not in again.stdout, again.stdout + again.stderr


def test_a_served_wrong_key_stops_the_run_naming_both(served, stranger_key, tmp_path) -> None:
    base, root = served
    key, fpr = stranger_key
    shutil.copy2(key, root / "wrong.asc")
    dest = tmp_path / "keyrings" / "docker.asc"
    res = ensure_keyring(f"{base}/wrong.asc", dest)
    assert res.returncode == 1, res.stdout + res.stderr
    expected = pin_of("DOCKER_KEY_FPR")
    assert f"expected fingerprint {expected}, found {fpr}" in res.stderr, res.stderr
    assert "Nothing was installed" in res.stderr, res.stderr
    assert not dest.exists(), "a key that failed its pin was installed"


def test_an_extra_key_beside_the_right_one_is_refused(served, stranger_key, tmp_path) -> None:
    """apt would trust every key in the file: the pinned one plus a stranger is a mismatch."""
    base, root = served
    (root / "both.asc").write_bytes(DOCKER_KEY.read_bytes() + stranger_key[0].read_bytes())
    dest = tmp_path / "keyrings" / "docker.asc"
    res = ensure_keyring(f"{base}/both.asc", dest)
    assert res.returncode == 1, res.stdout + res.stderr
    assert pin_of("DOCKER_KEY_FPR") in res.stderr and stranger_key[1] in res.stderr, res.stderr
    assert not dest.exists()


def test_a_page_that_is_no_key_is_refused(served, tmp_path) -> None:
    base, root = served
    (root / "portal.html").write_text("<html>Please log in to the proxy</html>\n")
    dest = tmp_path / "keyrings" / "docker.asc"
    res = ensure_keyring(f"{base}/portal.html", dest)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "found no OpenPGP key" in res.stderr, res.stderr
    assert not dest.exists()


def test_a_wrong_key_already_on_disk_stops_the_run(stranger_key, tmp_path) -> None:
    dest = tmp_path / "keyrings" / "tailscale.gpg"
    dest.parent.mkdir()
    shutil.copy2(stranger_key[0], dest)
    res = ensure_keyring("http://127.0.0.1:9/never-fetched", dest, pin="$TAILSCALE_KEY_FPR")
    assert res.returncode == 1, res.stdout + res.stderr
    assert f"expected fingerprint {pin_of('TAILSCALE_KEY_FPR')}, found {stranger_key[1]}" in res.stderr, (
        res.stderr
    )
    assert f"delete {dest}" in res.stderr, res.stderr


def test_every_pin_is_a_full_fingerprint() -> None:
    for name in ("DOCKER_KEY_FPR", "CUDA_REPO_KEY_FPR", "TOOLKIT_KEY_FPR", "TAILSCALE_KEY_FPR"):
        value = pin_of(name)
        assert len(value) == 40 and all(c in "0123456789ABCDEF" for c in value), (name, value)
