"""PPO (Schulman et al. 2017) as in CleanRL's ppo.py, over PufferLib vector envs.

One update is four small parts, one file each: `collect` (rollout.py: a rollout into preallocated
tensors, acting through act.Actor, one writer for every batch layout), `advantages` (gae.py),
`samples`/`minibatches` (minibatch.py) and `ppo_loss` (loss.py); `update` (update.py) runs the epochs.
train/loop.py's `learn` alternates them: it builds the envs, the policy and the device (train/setup.py),
saves checkpoints into the run directory (train/run/) and sends per-update metrics
to hooks (the dashboard, train/run/tracking.py).

Rollout layout: every tensor is (rows, steps): one row per agent slot of the vector env
(N = vecenv.num_agents), one column per step (T = train.num_steps). Row n, column t holds the
transition (obs, action) -> (reward, terminal, truncation, next obs = column t + 1).

Episode ends (see act.py). Emulated envs (pufferlib.emulation) deliver the episode's *final*
observation with terminal/truncation set, and reset on the next send, ignoring the action chosen for
it. That row is not a real transition ("reset-only"): it is excluded from the loss and the
statistics. Its value is still useful: on truncation (a time limit, not a true terminal) it
bootstraps the return of the last real transition. Native envs reset themselves (the observation
after a done already starts the next episode), so for them a truncation cannot be bootstrapped and
counts as a terminal.

Multi-agent padding: rows whose mask is False (agent absent) are excluded from the loss, the
statistics and the advantage chain.

Async (vec.batch_size < vec.num_envs): each recv returns some slots (env_ids) and each slot fills
its own row. A slot that completes its T steps before the others is still stepped (the vector env
needs actions for every slot it returns), but only its latest transition is kept, as column 0 of
the next rollout. In the synchronous case no transition is lost: the action chosen for the
observation after the last column is sent before the update, so envs in worker processes step
while the learner trains, and that transition becomes column 0 of the next rollout.
"""
