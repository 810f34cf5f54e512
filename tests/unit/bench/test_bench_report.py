"""`puffer bench` reports each peer in its best configuration, says how many samples errored, and
exits non-zero when a row has no measurement at all."""

import shutil
import subprocess
import sys

from pufferlib.bench import report
from pufferlib.bench.peers import Setup, setups


def sample(peer, setup, sps=None, error=None, skip=None):
    row = {"repeat": 0, "workload": "perf-0", "description": "Performance 0 us", "num_envs": 8, "peer": peer}
    row["setup"] = setup
    if sps is not None:
        row["sps"] = sps
    if error:
        row["error"] = error
    if skip:
        row["skip"] = skip
    return row


def test_every_peer_is_tried_with_one_and_two_workers_sync_and_async():
    for peer in ("mp", "pl202-mp"):
        assert setups(peer, 8, [1, 2]) == [Setup(1, 8), Setup(2, 8)]
    for peer in ("mp-async", "pl202-mp-async"):
        assert setups(peer, 8, [1, 2]) == [Setup(2, 4)]  # 1 worker cannot split 8 envs into 2 batches
    assert setups("pl202-serial", 8, [1, 2]) == [Setup(None, 8)]


def test_the_best_configuration_is_reported_with_its_name():
    rows = [sample("pl202-mp", "1w", s) for s in (150_000, 160_000, 158_000)]
    rows += [sample("pl202-mp", "2w", s) for s in (9_000, 8_000, 12_000)]
    text = report.table(rows, ["pl202-mp"])
    assert "158.0k ±3% 1w" in text


def test_errored_samples_are_counted_not_hidden():
    rows = [
        sample("mp", "2w", 80_000),
        sample("mp", "2w", 82_000),
        sample("mp", "2w", error="WorkerError: x"),
    ]
    rows += [sample("gym-async", "", error="RuntimeError: y") for _ in range(3)]
    rows += [sample("pl202-mp", "", skip="runs the Performance env only")]
    line = report.table(rows, ["mp", "gym-async", "pl202-mp"]).splitlines()[-1]
    assert "81.0k ±1% 2w, error (1/3 samples)" in line
    assert "error (3/3 samples)" in line
    assert "n/a" in line
    assert report.failed_rows(rows, ["mp", "gym-async", "pl202-mp"]) == []
    errored = [r for r in rows if r["peer"] == "gym-async"]
    assert report.failed_rows(errored, ["gym-async"]) == ["perf-0 envs=8"]


def test_a_row_where_every_measurement_errored_exits_non_zero():
    python = shutil.which("python3", path="/usr/bin")  # a trusted interpreter without PufferLib 2.0.2
    assert python, "Debian's /usr/bin/python3 is the interpreter this test hands to the bench"
    bench = [sys.executable, "-m", "pufferlib.cli", "bench", "--quick", "--workloads", "perf-0"]
    out = subprocess.run(
        [*bench, "--num-envs", "2", "--peers", "pl202-serial,pl202-mp", "--puffer202", python],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith("| Performance 0 us"))
    assert row.count("error (1/1 samples)") == 1 and row.count("error (2/2 samples)") == 1, row
    assert "every measurement errored in perf-0 envs=2" in out.stderr


def test_the_share_of_the_machine_is_best_mp_over_cores_times_serial():
    rows = [sample("serial", "", 9_000), sample("mp", "2w", 16_000), sample("mp-async", "2w async", 17_100)]
    head, _, line = report.table(rows, ["serial", "mp", "mp-async"], cores=2).splitlines()
    assert head.endswith("best MP / (2 x Serial) |") and line.endswith("| 95% |")
    assert "x Serial" not in report.table(rows, ["serial", "mp", "mp-async"])  # cores unknown: no column
