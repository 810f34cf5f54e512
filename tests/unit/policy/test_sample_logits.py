"""sample_logits' categorical math (a few tensor ops instead of torch's Categorical, for speed) gives
what torch's Categorical gives: the same log-probabilities and entropies, masked actions never
sampled, and samples distributed as the probabilities say."""

import torch
from torch.distributions import Categorical

from pufferlib.frameworks.cleanrl import sample_logits


def test_log_prob_and_entropy_match_torch_categorical():
    torch.manual_seed(0)
    logits = torch.randn(256, 5) * 3
    action = torch.randint(0, 5, (256,))
    _, log_prob, entropy = sample_logits(logits, action)
    reference = Categorical(logits=logits)
    torch.testing.assert_close(log_prob, reference.log_prob(action))
    torch.testing.assert_close(entropy, reference.entropy())


def test_multidiscrete_sums_its_branches():
    torch.manual_seed(1)
    logits = [torch.randn(64, 3), torch.randn(64, 4)]
    action = torch.stack([torch.randint(0, 3, (64,)), torch.randint(0, 4, (64,))], -1)
    _, log_prob, entropy = sample_logits(logits, action)
    branches = [Categorical(logits=lg) for lg in logits]
    torch.testing.assert_close(
        log_prob, sum(d.log_prob(a) for d, a in zip(branches, action.unbind(-1), strict=True))
    )
    torch.testing.assert_close(entropy, sum(d.entropy() for d in branches))


def test_masked_actions_have_no_probability_and_no_nan():
    logits = torch.randn(128, 4)
    mask = torch.tensor([1, 0, 1, 0]).repeat(128, 1)
    action, log_prob, entropy = sample_logits(logits, None, mask)
    assert set(action.tolist()) <= {0, 2}
    reference = Categorical(logits=logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min))
    torch.testing.assert_close(log_prob, reference.log_prob(action))
    torch.testing.assert_close(entropy, reference.entropy())
    assert torch.isfinite(entropy).all()


def test_samples_follow_the_probabilities():
    torch.manual_seed(2)
    probs = torch.tensor([0.1, 0.2, 0.3, 0.4])
    logits = probs.log().repeat(40_000, 1)
    action, _, _ = sample_logits(logits)
    freq = torch.bincount(action, minlength=4).float() / len(action)
    torch.testing.assert_close(freq, probs, atol=0.01, rtol=0)  # 4+ standard errors at n = 40k


def test_multidiscrete_of_many_widths_masks_every_branch():
    """Branches are computed a width at a time: a branch whose mask allows nothing but
    action 0 (a gridnet cell with no unit) samples 0, no sample is masked or past its branch's width, the
    log-probs, entropies and their gradients match per-branch Categoricals (finite, no NaN)."""
    torch.manual_seed(3)
    sizes = (6, 4, 49, 2)
    logits = [torch.randn(512, n, requires_grad=True) for n in sizes]
    mask = torch.ones(512, sum(sizes))
    mask[:, 6 + 1 : 6 + 4] = 0  # branch 1: only action 0 allowed
    mask[:, 10 + 7 :] = 0  # branch 2: its first 7 of 49; branch 3: nothing allowed at all
    action, log_prob, entropy = sample_logits(logits, None, mask)
    assert action.shape == (512, 4)
    assert (action[:, 1] == 0).all() and (action[:, 2] < 7).all() and (action[:, 3] < 2).all()
    low = torch.finfo(torch.float32).min
    # Per branch, as the single-branch path computes it (log_softmax: Categorical's own normalisation
    # loses the all-masked branch's log 2 to float32 rounding next to finfo.min)
    logps = [
        lg.masked_fill(m == 0, low).log_softmax(-1)
        for lg, m in zip(logits, mask.split(sizes, -1), strict=True)
    ]
    picked = sum(
        lp.gather(-1, a.unsqueeze(-1)).squeeze(-1) for lp, a in zip(logps, action.unbind(-1), strict=True)
    )
    torch.testing.assert_close(log_prob, picked)
    torch.testing.assert_close(entropy, sum(-(lp.exp() * lp).sum(-1) for lp in logps))
    (log_prob.sum() + entropy.sum()).backward()
    assert all(torch.isfinite(lg.grad).all() for lg in logits)


def test_a_rollout_step_can_leave_the_entropy_out():
    """entropy=False (what a rollout step asks: it stores only the log-prob) returns None for the
    entropy and the same action and log-prob as a full call with the same noise, on every head."""
    heads = [
        torch.randn(64, 5),
        [torch.randn(64, 3), torch.randn(64, 4)],
        torch.distributions.Normal(torch.randn(64, 2), torch.ones(64, 2)),
    ]
    for logits in heads:
        torch.manual_seed(4)
        full = sample_logits(logits)
        torch.manual_seed(4)
        action, log_prob, entropy = sample_logits(logits, entropy=False)
        assert entropy is None and full[2] is not None
        torch.testing.assert_close(action, full[0])
        torch.testing.assert_close(log_prob, full[1])
