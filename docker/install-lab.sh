#!/usr/bin/env bash
# Lib stage, run as the venv's owner: JupyterLab and ipykernel from the pins in constraints/lib.txt (with the
# layers' pins below, which they must not move), the image's venv registered as the notebook kernel,
# JupyterLab's online news check turned off (the tank may have no internet; the check would log errors), and
# ffmpeg: the static build inside the imageio-ffmpeg wheel lib.txt's "# ffmpeg-wheel:" line pins by version
# and hash, its binary alone copied to the venv's bin (on PATH). Not the package: gym3 pins imageio-ffmpeg<0.4,
# whose ffmpeg is 4.1 (2018); and not Debian's ffmpeg, 228 MB with every codec library it links.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CONSTRAINTS="$here/constraints"

install_lab() {
  pip install --no-cache-dir --progress-bar off \
    -c "$CONSTRAINTS/base.txt" -c "$CONSTRAINTS/envs.txt" -c "$CONSTRAINTS/lib.txt" \
    jupyterlab ipykernel
  python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (PufferTank)"
  jupyter labextension disable --level=sys_prefix "@jupyterlab/apputils-extension:announcements"
}

# The wheel lib.txt pins (version and hash: a wheel that does not match is refused), its ffmpeg binary
# alone to $VIRTUAL_ENV/bin/ffmpeg, which must encode H.264.
install_ffmpeg() {
  local pin wheels encoders
  pin=$(sed -n 's/^# ffmpeg-wheel: //p' "$CONSTRAINTS/lib.txt")
  if [ -z "$pin" ]; then
    echo "install-lab: no '# ffmpeg-wheel:' line in $CONSTRAINTS/lib.txt: restore it (NAME==VERSION --hash=sha256:...)" >&2
    return 1
  fi
  wheels=$(mktemp -d)
  pip download --no-cache-dir --progress-bar off --no-deps --only-binary :all: --require-hashes \
    -d "$wheels" -r <(echo "$pin")
  python - "$wheels"/imageio_ffmpeg-*.whl "$VIRTUAL_ENV/bin/ffmpeg" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    [name] = [n for n in wheel.namelist() if n.startswith("imageio_ffmpeg/binaries/ffmpeg-")]
    with wheel.open(name) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
PY
  chmod 0755 "$VIRTUAL_ENV/bin/ffmpeg"
  rm -rf "$wheels"
  # `puffer eval --video` encodes H.264 (captured, not `| grep -q`: under pipefail ffmpeg would get SIGPIPE)
  encoders=$("$VIRTUAL_ENV/bin/ffmpeg" -hide_banner -encoders)
  if ! grep -q libx264 <<<"$encoders"; then
    echo "install-lab: $VIRTUAL_ENV/bin/ffmpeg has no libx264 encoder: pin a wheel whose ffmpeg has it" >&2
    return 1
  fi
}

main() {
  if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi
  install_lab
  install_ffmpeg
  # `pip check`, less the lines the layers' constraints accept on purpose: install-envs.sh's own filter.
  # shellcheck source=docker/install-envs.sh
  source "$here/install-envs.sh"
  check_requirements
  jupyter kernelspec list
}

# Sourcing defines the functions without running (tests/unit/images/test_install_lab.py calls install_ffmpeg).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
