"""Every peer of `puffer bench` steps the same env: for each Performance workload, the raw env
(gymnasium's peers and PufferLib 2.0.2's, which builds it from the same keyword arguments) and our
binding have the same observation and action spaces."""

import pytest

from pufferlib.bench.workloads import workloads
from pufferlib.ocean import Performance

PERFORMANCE = [w for w in workloads() if w.performance is not None]


def test_issue_18s_cheap_env_is_a_workload():
    obs64 = next(w for w in PERFORMANCE if w.name == "perf-0-obs64")
    assert obs64.performance == {"delay_mean": 0.0, "delay_std": 0.0, "bandwidth": 64}


@pytest.mark.parametrize("work", PERFORMANCE, ids=lambda w: w.name)
def test_every_peer_sees_the_same_env(work):
    raw = work.raw()
    theirs = Performance(**work.performance)  # what peer202.py builds in PufferLib 2.0.2's interpreter
    ours = work.creator()(seed=0)
    try:
        want = (64,) if work.name.endswith("obs64") else (1,)
        assert raw.observation_space.shape == theirs.observation_space.shape == want
        assert ours.single_observation_space.shape == want
        assert raw.action_space == theirs.action_space == ours.single_action_space
        assert raw.delay_mean == theirs.delay_mean == work.performance["delay_mean"]
    finally:
        ours.close()
