"""pl3/pt_rand.h: PufferLib 3.0's envs draw rand() from a stream per vector, of the C library's own generator.

Compiled with the real C compiler beside libc's rand(): the same numbers for every seed (so a single vector's
trace is the one upstream's build gives), and a second stream leaves the first untouched.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pufferlib.ocean.contracts import HERE

PROGRAM = r"""
#include <stdio.h>
static int libc_rand(void);
static void libc_srand(unsigned);
#include "pt_rand.h"
int main(void) {
    static const unsigned seeds[] = {0u, 1u, 2u, 42u, 12345u, 2147483647u, 2147483648u, 4000000000u,
                                     4294967295u};
    for (int k = 0; k < 9; k++) {
        libc_srand(seeds[k]);
        srand(seeds[k]);
        for (int i = 0; i < 20000; i++)
            if (libc_rand() != rand()) { printf("seed %u: draw %d differs\n", seeds[k], i); return 1; }
    }
    /* unseeded: the C library seeds with 1 */
    pt_rand_state fresh = {0};
    pt_rand_now = &fresh;
    libc_srand(1u);
    for (int i = 0; i < 1000; i++)
        if (libc_rand() != rand()) { printf("unseeded differs at %d\n", i); return 1; }
    /* two streams: drawing from B does not move A */
    pt_rand_state a = {0}, b = {0};
    pt_rand_now = &a; srand(7);
    int first = rand();
    pt_rand_now = &b; srand(7); rand(); rand();
    pt_rand_now = &a; srand(7);
    pt_rand_now = &b; rand();
    pt_rand_now = &a;
    if (rand() != first) { printf("stream B moved stream A\n"); return 1; }
    printf("ok\n");
    return 0;
}
#undef rand
#undef srand
static int libc_rand(void) { return rand(); }
static void libc_srand(unsigned s) { srand(s); }
"""


@pytest.fixture(scope="module")
def cc() -> str:
    found = shutil.which("cc") or shutil.which("gcc")
    assert found, "a C compiler is needed (gcc)"
    return found


def run(cc: str, tmp_path: Path, headers: Path) -> subprocess.CompletedProcess[str]:
    """PROGRAM compiled against the pt_rand.h in `headers`, and run."""
    (tmp_path / "t.c").write_text(PROGRAM)
    subprocess.run([cc, "-O2", f"-I{headers}", "t.c", "-o", "t"], cwd=tmp_path, check=True)
    return subprocess.run([str(tmp_path / "t")], capture_output=True, text=True)


def test_the_streams_are_the_c_librarys_generator(cc, tmp_path):
    done = run(cc, tmp_path, HERE / "pl3")
    assert done.returncode == 0 and done.stdout == "ok\n", done.stdout


def test_a_different_generator_is_caught(cc, tmp_path):
    """The comparison goes red when the generator differs: here one of its constants."""
    header = (HERE / "pl3" / "pt_rand.h").read_text().replace("16807 * lo", "16811 * lo")
    assert header != (HERE / "pl3" / "pt_rand.h").read_text()
    (tmp_path / "pt_rand.h").write_text(header)
    done = run(cc, tmp_path, tmp_path)
    assert done.returncode == 1 and "differs" in done.stdout, done.stdout


CLOCK_PROGRAM = r"""
#include <stdio.h>
#include "pt_rand.h"
/* as terraform and tower_climb seed their levels: from the clock and the process */
static int level(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srand((unsigned)(ts.tv_nsec ^ ts.tv_sec ^ getpid()));
    int a = rand();
    time_t t;
    srand((unsigned)time(&t) + 3u);
    return a ^ rand() ^ (int)time(NULL);
}
int main(int argc, char** argv) {
    (void)argv;
    pt_rand_state s = {0};
    pt_rand_now = &s;
    srand(argc == 2 ? 11u : 12u);   /* the vector's seed */
    printf("%d %d\n", level(), level());
    return 0;
}
"""


def test_the_clock_an_env_seeds_from_follows_the_seed(cc, tmp_path):
    """Wall-clock entropy (time, clock_gettime, getpid) in a 3.0 env's code is drawn from its vector's
    stream: a run gives the same levels for one seed, at any time, in any process, and others for another."""
    (tmp_path / "clock.c").write_text(CLOCK_PROGRAM)
    subprocess.run([cc, "-O2", f"-I{HERE / 'pl3'}", "clock.c", "-o", "clock"], cwd=tmp_path, check=True)
    first = subprocess.run([str(tmp_path / "clock"), "a"], capture_output=True, text=True, check=True).stdout
    time.sleep(1.1)  # another second and another process: upstream's levels would differ here
    again = subprocess.run([str(tmp_path / "clock"), "a"], capture_output=True, text=True, check=True).stdout
    other = subprocess.run([str(tmp_path / "clock")], capture_output=True, text=True, check=True).stdout
    levels = first.split()
    assert first == again and first != other and levels[0] != levels[1], (first, again, other)


def test_without_the_override_the_clock_breaks_the_seed(cc, tmp_path):
    """The check goes red when the clock is the real one (the override removed)."""
    header = (HERE / "pl3" / "pt_rand.h").read_text()
    cut = header.replace("#define time(out) pt_time(out)\n", "").replace("#define getpid() ((pid_t)1)\n", "")
    cut = cut.replace("#define clock_gettime(clock, now) pt_clock_gettime(clock, now)\n", "")
    assert cut != header
    (tmp_path / "pt_rand.h").write_text(cut)
    (tmp_path / "clock.c").write_text(CLOCK_PROGRAM)
    subprocess.run([cc, "-O2", f"-I{tmp_path}", "clock.c", "-o", "clock"], cwd=tmp_path, check=True)
    exe = [str(tmp_path / "clock"), "a"]
    runs = {subprocess.run(exe, capture_output=True, text=True).stdout for _ in range(3)}
    assert len(runs) > 1, runs
