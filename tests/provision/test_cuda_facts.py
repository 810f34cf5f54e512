"""docker/cuda.toml is the one copy of the CUDA facts: setup-host.sh reads the same values tomllib does, a
missing or malformed file stops it with the file named, and no script under provision/ spells them out."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from _repo import REPO

FACTS = REPO / "docker" / "cuda.toml"
BASE_CONSTRAINTS = REPO / "docker" / "constraints" / "base.txt"

# Source the script (which then only defines its functions), load the facts and print what bash holds.
DUMP = r"""
source provision/setup-host.sh
load_cuda_facts
for key in "${!CUDA_FACT[@]}"; do printf 'fact\t%s\t%s\n' "$key" "${CUDA_FACT[$key]}"; done
for var in IMAGE_DEFAULT_CUDA NVIDIA_DEFAULT_BRANCH DEBIAN_BRANCH CU12_TORCH_INDEX; do
	printf 'var\t%s\t%s\n' "$var" "${!var}"
done
"""


def _bash(script: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=60)


def _shell_view() -> tuple[dict[str, str], dict[str, str]]:
    res = _bash(DUMP)
    assert res.returncode == 0, res.stdout + res.stderr
    facts, derived = {}, {}
    for line in res.stdout.splitlines():
        kind, key, value = line.split("\t")
        (facts if kind == "fact" else derived)[key] = value
    return facts, derived


def test_bash_reads_what_tomllib_reads() -> None:
    data = tomllib.loads(FACTS.read_text())
    expected = {f"{table}.{key}": value for table, rows in data.items() for key, value in rows.items()}
    facts, _ = _shell_view()
    assert facts == expected


def test_derived_values_follow_the_file_and_the_torch_pin() -> None:
    data = tomllib.loads(FACTS.read_text())
    torch = re.search(r"^torch==(\S+)", BASE_CONSTRAINTS.read_text(), re.M).group(1)
    _, derived = _shell_view()
    assert derived == {
        "IMAGE_DEFAULT_CUDA": data["pypi_torch_cuda"][torch],
        "NVIDIA_DEFAULT_BRANCH": data["driver_branch"]["nvidia_default"],
        "DEBIAN_BRANCH": data["driver_branch"]["debian"],
        "CU12_TORCH_INDEX": data["torch_index"]["cuda12"],
    }


def _checkout_copy(tmp_path: Path, facts: str | None) -> Path:
    """provision/ and the constraints, with docker/cuda.toml holding FACTS (absent when None)."""
    shutil.copytree(REPO / "provision", tmp_path / "provision")
    (tmp_path / "docker" / "constraints").mkdir(parents=True)
    shutil.copy2(BASE_CONSTRAINTS, tmp_path / "docker" / "constraints")
    if facts is not None:
        (tmp_path / "docker" / "cuda.toml").write_text(facts)
    return tmp_path


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    copy = _checkout_copy(tmp_path, None)
    res = _bash("bash provision/setup-host.sh --help", cwd=copy)
    assert res.returncode == 1, res.stdout
    assert "cannot read " in res.stderr and "docker/cuda.toml" in res.stderr, res.stderr
    assert "complete PufferTank checkout" in res.stderr, res.stderr


def test_a_malformed_line_is_named(tmp_path: Path) -> None:
    broken = FACTS.read_text().replace('"12.6" = "560.28.03"', '"12.6" = 560.28.03')
    assert broken != FACTS.read_text()
    copy = _checkout_copy(tmp_path, broken)
    res = _bash("bash provision/setup-host.sh --help", cwd=copy)
    assert res.returncode == 1, res.stdout
    assert "cuda.toml line " in res.stderr and '"12.6" = 560.28.03' in res.stderr, res.stderr


def test_a_torch_pin_the_file_does_not_know_is_named(tmp_path: Path) -> None:
    copy = _checkout_copy(tmp_path, FACTS.read_text())
    pins = copy / "docker" / "constraints" / "base.txt"
    pins.write_text(re.sub(r"^torch==\S+", "torch==9.9.9", pins.read_text(), flags=re.M))
    res = _bash("bash provision/setup-host.sh --help", cwd=copy)
    assert res.returncode == 1, res.stdout
    assert 'no "9.9.9" in [pypi_torch_cuda]' in res.stderr, res.stderr


def _fact_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """Each CUDA version, driver version and branch, and index URL of cuda.toml, as a whole-number regex."""
    data = tomllib.loads(FACTS.read_text())
    literals = set()
    for table in ("min_driver", "compat_floor", "pypi_torch_cuda"):
        for key, value in data[table].items():
            literals |= {value, value.split(".")[0]} if table != "pypi_torch_cuda" else {value}
            if table == "min_driver":
                literals.add(key)
    literals |= set(data["driver_branch"].values())
    urls = set(data["torch_index"].values())
    patterns = [(text, re.compile(rf"(?<![\d.]){re.escape(text)}(?!\d)")) for text in sorted(literals)]
    patterns += [(url.rsplit("/", 1)[-1], re.compile(re.escape(url.rsplit("/", 1)[-1]))) for url in urls]
    return patterns


def test_provision_scripts_hold_no_second_copy() -> None:
    """The scripts ask docker/cuda.toml; provision/README.md may quote today's values for readers."""
    scripts = sorted((REPO / "provision").glob("*.sh"))
    assert scripts
    found = []
    for script in scripts:
        for number, line in enumerate(script.read_text().splitlines(), 1):
            for text, pattern in _fact_patterns():
                if pattern.search(line):
                    found.append(f"{script.relative_to(REPO)}:{number}: {text!r} in {line.strip()!r}")
    assert not found, "CUDA facts copied out of docker/cuda.toml:\n" + "\n".join(found)
