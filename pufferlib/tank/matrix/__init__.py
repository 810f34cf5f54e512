"""`puffertank matrix`: every registered binding exercised inside the container, with reports.

The image is asked which bindings it has (`puffer envs --json`); each binding then runs
`python -m pufferlib.smoke NAME --json` in a fresh container, which prints one JSON line per check.
A binding that crashes or outlives its time budget fails its own remaining cells; the others go on. A
container the Docker engine could not run is retried (--retries) and, failing still, its cells are
engine-error, apart from the envs' failures (exit 3 when only the engine failed).
Bindings are spread over `--jobs` containers per host and over every `--host` (Docker daemons over
ssh://, TLS tcp:// or unix://; see tank/engine.py), taken from one queue so a fast host takes more; with
`--every-host` each host runs every binding, to compare the boxes.
Every container carries the run's label and is removed at the end, on errors, on Ctrl-C, SIGTERM and
SIGHUP. When GPUs are requested (the cuda variant, or --gpus all) the containers are told so, and the
`gpu` check fails where no GPU is visible, naming the driver and CUDA it found.

What the host and the container agree on (the check names, a result's JSON line, the GPU-requested
variable) is pufferlib.matrix_protocol, which imports the standard library only; the host never imports
pufferlib.smoke. One idea per module:

hosts.py       Host (one Docker daemon), the image check on it, cleanup() of a run's containers
plan.py        Plan: the image, hosts, bindings, jobs, GPU request; select() by glob
commands.py    the containers' spec and the short commands (registered bindings, versions)
binding.py     run_binding(): one binding in one container, its cells as they land, the missing ones failed
run.py         run_matrix(): the workers over every host, the report, the cleanup
provenance.py  what ran, where and how, for the report
progress.py    the live view (a rich table in a terminal, a line per binding otherwise)
baseline.py    --baseline: a run compared with a previous one (a tolerance band, moved pins, --fail-on)
history.py     --history: a series of reports side by side (HTML, CSV, PNG), by image revision
hostdiff.py    --every-host: every binding on every host, and the cells that differ between the hosts
report.py      matrix.json, JUnit XML, HTML (report_since.py: its "since baseline" section;
               report_hosts.py: --every-host's column groups and "differs between hosts")
schema.py      matrix.json's format version, checked before a report is read back
cli.py         the `puffertank matrix` subcommand
"""

from pufferlib.tank.matrix.binding import run_binding
from pufferlib.tank.matrix.cli import main, register
from pufferlib.tank.matrix.commands import PLUGIN_DIR, TAIL_LINES, registered_bindings, versions
from pufferlib.tank.matrix.hosts import LABEL, Host, cleanup, require_host_image
from pufferlib.tank.matrix.plan import Plan, select
from pufferlib.tank.matrix.progress import GLYPHS, Progress
from pufferlib.tank.matrix.provenance import provenance
from pufferlib.tank.matrix.run import run_matrix

__all__ = [
    "GLYPHS",
    "LABEL",
    "PLUGIN_DIR",
    "TAIL_LINES",
    "Host",
    "Plan",
    "Progress",
    "cleanup",
    "main",
    "provenance",
    "register",
    "registered_bindings",
    "require_host_image",
    "run_binding",
    "run_matrix",
    "select",
    "versions",
]
