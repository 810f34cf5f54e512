"""Re-runs repair what an interrupted run (Ctrl-C, a dropped SSH session, a reboot) left behind.

- apt stopped midway: packages unpacked but not configured make every `apt-get install` fail; the next run
  finishes them with `dpkg --configure -a` (a real half-installed package made with dpkg here).
- The NVIDIA toolkit step stopped between `nvidia-ctk runtime configure` and Docker's restart: daemon.json
  names the runtime, the running engine does not have it. The step decides from the engine's runtimes. A
  container has neither systemd nor a GPU engine, so stand-ins play them: `docker info` answers with the
  runtimes the stand-in engine loaded at its last (re)start, `systemctl restart docker` reloads daemon.json.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.docker

# A dpkg run killed in the middle of a maintainer script (as Ctrl-C or a reboot would): the stand-in's
# postinst hangs the first time it runs, and dpkg is killed then. Its journal stays behind, and apt refuses
# to install anything ("dpkg was interrupted, you must manually run 'dpkg --configure -a'").
HALF_INSTALLED = r"""
set -e
mkdir -p /tmp/pkg/DEBIAN
cat >/tmp/pkg/DEBIAN/control <<'EOF'
Package: docker.io
Version: 99.0-puffertank-test
Architecture: all
Maintainer: t <t@example.invalid>
Description: stand-in
EOF
cat >/tmp/pkg/DEBIAN/postinst <<'EOF'
#!/bin/sh
[ -e /root/postinst-ran ] && exit 0
touch /root/postinst-ran
sleep 300
EOF
chmod 755 /tmp/pkg/DEBIAN/postinst
dpkg-deb --build /tmp/pkg /tmp/stand-in.deb >/dev/null
setsid dpkg -i /tmp/stand-in.deb >/dev/null 2>&1 &
for i in $(seq 1 100); do [ -e /root/postinst-ran ] && break; sleep 0.1; done
kill -KILL -- "-$!"
sleep 0.5
dpkg --audit | grep -q docker.io
"""

STAND_INS = r"""
set -e
mkdir -p /fakebin /run/systemd/system /run/fake-dockerd
cat >/fakebin/docker <<'EOF'
#!/bin/sh
[ "$1" = info ] && [ -e /run/fake-dockerd/runtimes ] || { echo "Cannot connect" >&2; exit 1; }
cat /run/fake-dockerd/runtimes
EOF
cat >/fakebin/systemctl <<'EOF'
#!/bin/sh
echo "$*" >>/root/systemctl.log
case "$1" in
restart)
	if grep -q '"nvidia"' /etc/docker/daemon.json 2>/dev/null; then
		echo '{"nvidia":{"path":"nvidia-container-runtime"},"runc":{"path":"runc"}}'
	else
		echo '{"runc":{"path":"runc"}}'
	fi >/run/fake-dockerd/runtimes ;;
esac
EOF
cat >/fakebin/nvidia-ctk <<'EOF'
#!/bin/sh
echo "$*" >>/root/nvidia-ctk.log
mkdir -p /etc/docker
echo '{"runtimes":{"nvidia":{"args":[],"path":"nvidia-container-runtime"}}}' >/etc/docker/daemon.json
EOF
chmod 755 /fakebin/*
echo '{"runc":{"path":"runc"}}' >/run/fake-dockerd/runtimes
"""

CONFIGURE = r"""
PATH=/fakebin:$PATH
source /src/provision/setup-host.sh
install_traps
LOG_FILE=/root/setup.log
CURRENT_STEP=nvidia-toolkit
toolkit_configure_docker
echo "actions=$STEP_ACTIONS"
"""


def test_interrupted_apt_is_finished_before_installing(box) -> None:
    made = box.sh(HALF_INSTALLED)
    assert made.rc == 0, made
    res = box.setup("--only", "docker", "--docker", "debian", timeout=300)
    assert res.rc == 0, res
    assert "dpkg was interrupted earlier" in res.out and "+ dpkg --configure -a" in res.out, res
    assert "apt-get install" not in res.out, "the configured package should count as installed"
    status = box.sh("dpkg-query -W -f='${db:Status-Status}' docker.io; dpkg --audit")
    assert status.out == "installed", status
    again = box.setup("--only", "docker", "--docker", "debian", "--dry-run", timeout=120)
    assert again.rc == 0 and "dpkg --configure" not in again.out, again


def test_runtime_configured_but_engine_not_restarted_is_repaired(box) -> None:
    made = box.sh(
        STAND_INS + "mkdir -p /etc/docker && "
        'echo \'{"runtimes":{"nvidia":{"path":"nvidia-container-runtime"}}}\' >/etc/docker/daemon.json'
    )
    assert made.rc == 0, made
    res = box.sh(CONFIGURE)
    assert res.rc == 0, res
    assert "earlier run stopped before restarting Docker" in res.out and "actions=1" in res.out, res
    assert box.sh("cat /root/systemctl.log").out == "restart docker\n"
    assert box.sh("cat /root/nvidia-ctk.log").rc != 0, "daemon.json was right: no need to rewrite it"
    assert '"nvidia"' in box.sh("/fakebin/docker info").out
    again = box.sh(CONFIGURE)
    assert again.rc == 0 and "actions=0" in again.out, again


def test_fresh_engine_gets_the_runtime_and_a_restart(box) -> None:
    made = box.sh(STAND_INS)
    assert made.rc == 0, made
    res = box.sh(CONFIGURE)
    assert res.rc == 0 and "actions=2" in res.out, res
    assert box.sh("cat /root/nvidia-ctk.log").out == "runtime configure --runtime=docker\n"
    assert box.sh("cat /root/systemctl.log").out == "restart docker\n"
    again = box.sh(CONFIGURE)
    assert again.rc == 0 and "actions=0" in again.out, again
