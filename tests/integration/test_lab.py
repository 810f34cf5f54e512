"""`puffertank lab` as a researcher runs it: started as a subprocess, its URL (with the token) loads
JupyterLab in headless Chromium with no console error, the same address without the token gets the login
page (and the API a 403), Ctrl-C stops it with no container left; a busy port is refused (exit 2, naming
--port). And a notebook that imports pufferlib, steps an env and draws its frame inline runs headless in the
image (`jupyter execute`), its output holding a PNG that is not blank."""

from __future__ import annotations

import base64
import io
import json
import shutil
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

NOTEBOOK = Path(__file__).parent / "data" / "first_look.ipynb"
LAB_LABEL = "puffertank.command=lab"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def puffertank(*argv: str) -> list[str]:
    return [sys.executable, "-m", "pufferlib.tank.cli", *argv]


@pytest.fixture
def lab(docker_client, lib_image, tmp_path, request):
    """A running `puffertank lab` on a free port: (process, URL with token, port). Stopped with SIGINT.
    Parametrized indirectly with extra flags (e.g. ["--bind-all"])."""
    (tmp_path / "hello.txt").write_text("from the workspace\n")
    port = free_port()
    cmd = puffertank("lab", "--image", lib_image, "--gpus", "none", "--port", str(port))
    cmd += getattr(request, "param", [])
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()  # printed once the server answers; blocks until then
        host = socket.gethostname() if "--bind-all" in cmd else "127.0.0.1"
        assert url.startswith(f"http://{host}:{port}/lab?token="), (url, proc.poll())
        yield proc, url, port
    finally:
        if proc.returncode is None:  # the test did not stop it (it failed first)
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=90)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_lab_loads_with_the_token_and_not_without(docker_client, lab, chromium):
    proc, url, port = lab
    (published,) = [
        c.ports.get("8888/tcp") for c in docker_client.containers.list(filters={"label": LAB_LABEL})
    ]
    assert published == [{"HostIp": "127.0.0.1", "HostPort": str(port)}]  # loopback only, by default
    token = url.split("token=", 1)[1]
    (container,) = docker_client.containers.list(filters={"label": LAB_LABEL})
    assert token not in json.dumps(container.attrs)  # not in argv, env or anything `docker inspect` shows

    page = chromium.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#jp-main-dock-panel", timeout=120_000)  # JupyterLab's shell rendered
    page.wait_for_selector("text=hello.txt", timeout=60_000)  # the file browser shows /workspace
    assert errors == [], errors
    page.close()

    bare = chromium.new_page()
    bare.goto(f"http://127.0.0.1:{port}/lab")
    bare.wait_for_selector("input[name=password]", timeout=60_000)  # the login page asks for the token
    assert "/login" in bare.url
    bare.close()
    assert status(f"http://127.0.0.1:{port}/api/contents") == 403
    assert status(f"http://127.0.0.1:{port}/api/contents?token={token}") == 200

    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 130, err
    assert token not in err  # the server's log shows `?token=...` in its place
    assert docker_client.containers.list(all=True, filters={"label": LAB_LABEL}) == []


@pytest.mark.parametrize("lab", [["--bind-all"]], indirect=True)
def test_bind_all_publishes_on_every_address_and_a_hangup_stops_it(docker_client, lab):
    """Over Tailscale the box's other addresses must reach the lab (the token still guards it); a closing
    ssh session (SIGHUP) stops it and leaves no container."""
    proc, url, port = lab
    (container,) = docker_client.containers.list(filters={"label": LAB_LABEL})
    assert {p["HostIp"] for p in container.ports["8888/tcp"]} <= {"0.0.0.0", "::"}, container.ports
    token = url.split("token=", 1)[1]
    assert status(f"http://127.0.0.1:{port}/api/contents?token={token}") == 200
    assert status(f"http://127.0.0.1:{port}/api/contents") == 403
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=90)
    assert proc.returncode == 128 + signal.SIGHUP, err
    assert docker_client.containers.list(all=True, filters={"label": LAB_LABEL}) == []


def test_a_busy_port_is_refused(lib_image, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cmd = puffertank("lab", "--image", lib_image, "--port", str(port))
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and f"port {port}" in done.stderr and "--port" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_notebook_runs_headless_and_draws_a_frame(lib_container, tmp_path):
    shutil.copy(NOTEBOOK, tmp_path / NOTEBOOK.name)
    tmp_path.chmod(0o777)  # the image's user writes the executed notebook back
    (tmp_path / NOTEBOOK.name).chmod(0o666)
    lib_container.run_and_wait(
        ["bash", "-lc", f"jupyter execute --inplace {NOTEBOOK.name}"],
        volumes={str(tmp_path): {"bind": "/workspace", "mode": "rw"}},
        working_dir="/workspace",
        timeout=300,
    )
    executed = json.loads((tmp_path / NOTEBOOK.name).read_text())
    outputs = [o for cell in executed["cells"] for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"], outputs
    assert any("/opt/venv/" in "".join(o.get("text", "")) for o in outputs), outputs  # the image's pufferlib
    pngs = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) == 1, outputs
    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(pngs[0]))).convert("L")
    low, high = image.getextrema()
    assert high - low > 50, "the inline frame is blank"
