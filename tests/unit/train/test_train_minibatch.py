"""Each epoch's minibatches (pufferlib/train/ppo/minibatch.py): equal sizes, every kept sample at most once,
the remainder left out; reset-only and padded rows never trained on; recurrent segments keep their
steps together with the LSTM state that began them."""

import torch

from pufferlib.train.ppo.loss import mean
from pufferlib.train.ppo.minibatch import minibatches, samples
from pufferlib.train.ppo.rollout import Experience


def rollout(rows: int, steps: int, hidden: int = 0) -> Experience:
    def zeros(*shape, dtype=torch.float32):
        return torch.zeros(*shape, dtype=dtype)

    exp = Experience(
        obs=torch.arange(rows * steps, dtype=torch.float32).reshape(rows, steps, 1),
        actions=zeros(rows, steps, dtype=torch.int64),
        logprobs=zeros(rows, steps),
        values=torch.arange(rows * steps, dtype=torch.float32).reshape(rows, steps),
        rewards=zeros(rows, steps),
        terminals=zeros(rows, steps),
        truncations=zeros(rows, steps),
        masks=torch.ones(rows, steps),
        valid=torch.ones(rows, steps, dtype=torch.bool),
        starts=zeros(rows, steps),
        next_values=zeros(rows),
        next_masks=torch.ones(rows),
        h0=torch.arange(rows * (steps // 4) * hidden, dtype=torch.float32).reshape(rows, steps // 4, hidden)
        if hidden
        else None,
        c0=zeros(rows, steps // 4, hidden) if hidden else None,
    )
    return exp


def test_an_epoch_is_equal_minibatches_of_distinct_valid_samples():
    exp = rollout(rows=3, steps=7)
    exp.valid[1, 2] = exp.valid[0, 5] = False  # reset-only or padding: never a sample
    adv = torch.zeros_like(exp.values)
    data = samples(exp, adv, adv, recurrent=False, bptt=1)
    assert len(data["values"]) == 19
    torch.manual_seed(0)
    batches = list(minibatches(data, 4))
    assert [len(b["values"]) for b in batches] == [4, 4, 4, 4]  # 19 // 4 each, the remainder (3) left out
    seen = torch.cat([b["values"] for b in batches]).tolist()
    assert len(set(seen)) == 16
    assert not {exp.values[1, 2].item(), exp.values[0, 5].item()} & set(seen)
    assert all(torch.equal(b["obs"][:, 0], b["values"]) for b in batches)  # fields stay aligned


def test_recurrent_samples_are_segments_with_their_state_and_weights():
    exp = rollout(rows=2, steps=8, hidden=3)
    exp.valid[0, 4:] = False  # the second segment of row 0 has no valid step: dropped
    exp.valid[1, 1] = False  # a padded step inside a kept segment weighs 0
    adv = torch.zeros_like(exp.values)
    data = samples(exp, adv, adv, recurrent=True, bptt=4)
    assert data["obs"].shape == (3, 4, 1) and data["h0"].shape == (3, 3)
    assert data["values"][:, 0].tolist() == [0.0, 8.0, 12.0]  # segments start at columns 0 and 4
    assert data["h0"][:, 0].tolist() == [0.0, 6.0, 9.0]  # the state that began each segment
    assert data["weights"][1].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert mean(torch.tensor([1.0, 100.0, 3.0, 5.0]), data["weights"][1]) == 3.0


def test_all_valid_samples_are_views_of_the_rollout():
    """A rollout whose every row trains (a native env's) is not copied before the minibatch gathers: the
    samples share the rollout's memory, and a minibatch still gathers its own copy."""
    exp = rollout(rows=4, steps=8)
    adv = torch.zeros_like(exp.values)
    data = samples(exp, adv, adv, recurrent=False, bptt=1)
    assert data["obs"].data_ptr() == exp.obs.data_ptr() and len(data["values"]) == 32
    batch = next(minibatches(data, 2))
    assert batch["obs"].data_ptr() != exp.obs.data_ptr()
    exp.valid[2, 3] = False  # one reset-only row: the kept samples are gathered, that row left out
    data = samples(exp, adv, adv, recurrent=False, bptt=1)
    assert len(data["values"]) == 31 and exp.values[2, 3].item() not in data["values"].tolist()
