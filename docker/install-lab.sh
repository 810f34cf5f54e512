#!/usr/bin/env bash
# Lib stage, run as the venv's owner: JupyterLab and ipykernel from the pins in constraints/lib.txt (with the
# layers' pins below, which they must not move), the image's venv registered as the notebook kernel, and
# JupyterLab's online news check turned off (the tank may have no internet; the check would log errors).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ -s /run/secrets/pip_ca ]; then export PIP_CERT=/run/secrets/pip_ca; fi

pip install --no-cache-dir --progress-bar off \
  -c "$here/constraints/base.txt" -c "$here/constraints/envs.txt" -c "$here/constraints/lib.txt" \
  jupyterlab ipykernel
python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (PufferTank)"
jupyter labextension disable --level=sys_prefix "@jupyterlab/apputils-extension:announcements"
# `pip check`, less the lines the layers' constraints accept on purpose: install-envs.sh's own filter.
# shellcheck source=docker/install-envs.sh
source "$here/install-envs.sh"
check_requirements
jupyter kernelspec list
