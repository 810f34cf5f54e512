"""A native binding states each fact once: the observation dtype is OBS_T's, the log's field names are the
LOG_FIELDS list the Log struct is made from, and the game keywords are the keys my_init reads. Each way of
stating one twice, or wrongly, stops the build with a message that says what to write (tests/native/broken,
edited in a copy)."""

import shutil
import subprocess

import numpy as np
import pytest
from _native_ladder import Ladder, build_module
from _repo import REPO

from pufferlib.ocean.native import load

BROKEN = REPO / "tests" / "native" / "broken"
STRUCT = "float episode_return, episode_length, score, n;"
LIST = "#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(score) X(n)"


def build_edited(tmp_path, header=None, binding=None):
    """Build a copy of the broken env with (old, new) replaced in broken.h and/or binding.c."""
    src = tmp_path / "src"
    shutil.copytree(BROKEN, src)
    for name, edit in (("broken.h", header), ("binding.c", binding)):
        if edit:
            text = (src / name).read_text()
            assert edit[0] in text, f"{edit[0]!r} not in {name}: update this test"
            (src / name).write_text(text.replace(*edit))
    return build_module(src / "binding.c", tmp_path)


@pytest.mark.parametrize(
    ("header", "binding", "said"),
    [
        (  # the struct reordered: the stats would be mislabelled
            (STRUCT, "float episode_length, episode_return, score, n;"),
            None,
            "Log.episode_return is not where LOG_FIELDS lists it",
        ),
        (None, (LIST, LIST.replace("X(score)", "X(scored)")), "scored"),  # a name the struct lacks
        (None, (LIST, LIST.replace(" X(score)", "")), "one float per LOG_FIELDS name"),  # one left out
        (  # n not last
            (STRUCT, "float episode_return, episode_length, n, score;"),
            (LIST, "#define LOG_FIELDS(X) X(episode_return) X(episode_length) X(n) X(score)"),
            "LOG_FIELDS must end with n",
        ),
        (  # the old form, a list of strings
            None,
            (LIST, '#define LOG_FIELDS "episode_return", "episode_length", "score", "n"'),
            "not strings",
        ),
        (  # a second name for OBS_T
            None,
            ("#define OBS_T float", '#define OBS_T float\n#define OBS_DTYPE "float32"'),
            "OBS_DTYPE is read from OBS_T now",
        ),
        (  # a list of the keywords beside the code that reads them
            None,
            ("#define OBS_T float", '#define OBS_T float\n#define ENV_KWARGS "speed"'),
            "ENV_KWARGS is learnt from the keys my_init reads now",
        ),
    ],
    ids=["reordered", "unknown-name", "left-out", "n-not-last", "strings", "obs-dtype", "env-kwargs"],
)
def test_a_fact_stated_twice_or_wrongly_does_not_build(tmp_path, header, binding, said):
    with pytest.raises(subprocess.CalledProcessError) as failed:
        build_edited(tmp_path, header, binding)
    assert said in failed.value.stderr.decode(), failed.value.stderr.decode()[-3000:]


def test_the_unedited_copy_builds_and_reports_the_struct_names(tmp_path):
    module = build_edited(tmp_path)
    assert module.LOG_FIELDS == ("episode_return", "episode_length", "score", "n")
    assert module.OBS_DTYPE == "float32"
    Ladder("broken", module=module).every_element_written()


def test_the_dtype_is_read_from_obs_t():
    assert load("snake").OBS_DTYPE == "uint8" and load("squared_pl3").OBS_DTYPE == "uint8"
    assert load("breakout").OBS_DTYPE == "float32"
    assert load("connect4").LOG_FIELDS[3:5] == ("p0_wins", "p0_draws")


READS_SPEED = (
    "static int my_init(Broken* env, PyObject* kwargs) {\n    (void)kwargs;",
    "static int my_init(Broken* env, PyObject* kwargs) {\n"
    '    if (pn_kw_int(kwargs, "speed", 1, 1, 9, &env->speed) < 0) return -1;',
)


def test_the_keywords_are_the_keys_my_init_reads(tmp_path):
    header = ("int tick;", "int tick, speed;")
    module = build_edited(tmp_path, header=header, binding=READS_SPEED)
    assert module.KWARGS == ("speed",)
    buffers = [np.zeros((1, 2), np.float32), np.zeros(1, np.int32), np.zeros(1, np.float32)]
    buffers += [np.zeros(1, bool), np.zeros(1, bool), np.ones(1, bool)]
    module.vec_close(module.vec_init(*buffers, 1, 0, 1, {"speed": 3}))
    with pytest.raises(TypeError, match="unknown keyword 'sped'; the env takes speed"):
        module.vec_init(*buffers, 1, 0, 1, {"sped": 3})
    with pytest.raises(ValueError, match=r"speed must be in 1\.\.9, got 10"):
        module.vec_init(*buffers, 1, 0, 1, {"speed": 10})


def test_an_env_that_reads_no_keyword_refuses_every_one(tmp_path):
    module = build_edited(tmp_path)
    assert module.KWARGS == ()
    assert load("connect4").KWARGS == () and load("cartpole").KWARGS == ("max_steps",)


def test_more_keywords_than_the_glue_holds_fail_the_import(tmp_path):
    keys = ", ".join(f'"k{i}"' for i in range(65))
    reads = (
        f"    static const char* keys[] = {{{keys}}};\n"
        "    for (int i = 0; i < 65; i++)\n"
        "        if (pn_kw_int(kwargs, keys[i], 1, 1, 9, &env->speed) < 0) return -1;"
    )
    binding = (READS_SPEED[0], "static int my_init(Broken* env, PyObject* kwargs) {\n" + reads)
    with pytest.raises(ImportError, match="reads more than 64 game keywords; raise PN_MAX_KWARGS"):
        build_edited(tmp_path, header=("int tick;", "int tick, speed;"), binding=binding)
