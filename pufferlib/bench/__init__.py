"""`puffer bench`: agent steps per second of pufferlib.vector beside its peers, in one run.

    puffer bench                                    # the full table (about 25 minutes on 2 cores)
    puffer bench --quick                            # one repeat of fewer workloads, to try things
    puffer bench --puffer202                        # with PufferLib 2.0.2 from the cache dir's peer venv
    puffer bench --workloads perf-0,perf-1000 --num-envs 2 --repeats 5 --json out.json
    puffer bench --pufferlib3                       # native Ocean and puffer train beside PufferLib 3.0's
    puffer bench --pufferlib3 --to-score --target 195 --train-envs cartpole   # time to a score, 3 seeds

What is timed: only step calls (send/recv or step) with random actions drawn beforehand, for a
fixed number of agent steps per workload, after a separate warm-up; a measurement still running
after 10 s stops there and reports the rate of the steps it made. Not timed: construction, reset,
warm-up, close. No policy, no learning: this is simulation throughput, not training SPS.
Every repeat builds every vector env anew, and peers are interleaved within a repeat so that a
change of machine load hits them alike. Reported: for each peer its best configuration (the
highest median over repeats), the spread ((max - min) / 2 as a percentage of the median) and
every sample in the JSON.

The modules: workloads (the envs timed), peers (one runner per peer and its configurations),
peer202 (the script PufferLib 2.0.2's interpreter runs), interpreter (finding and trusting that
interpreter), report (tables), cli (`puffer bench`); for `--pufferlib3` (pufferlib3.py's docstring):
pufferlib3 (the rows, both sides), pl3_matched (`--matched`: one policy and geometry) with pl3_targets
(its envs, ours or PufferLib 3.0's own as pufferlib3/NAME, and the geometry of each), pl3_to_score
(`--to-score`: wall time to a score over seeds), pl3_driver (the script both interpreters run),
pl3_dashboard (PufferLib 3.0's dashboard and logs read back), pufferlib3_peer (building its venv).
"""
