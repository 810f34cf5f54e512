"""The layout rules: how num_envs envs split over workers and batches, checked before anything is built.

Every refusal names numbers that work (the divisors of num_envs, the multiples a batch may hold).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from pufferlib import APIUsageError

LAYOUT_KWARGS = ("num_workers", "batch_size", "zero_copy", "overwork")


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise APIUsageError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


class Layout(NamedTuple):
    """How num_envs envs are split over workers and batches (validated by check_layout)."""

    num_envs: int
    num_workers: int
    batch_size: int  # envs per recv()
    zero_copy: bool

    @property
    def envs_per_worker(self) -> int:
        return self.num_envs // self.num_workers

    @property
    def workers_per_batch(self) -> int:
        return self.batch_size // self.envs_per_worker

    @property
    def num_batches(self) -> int:
        return self.num_envs // self.batch_size

    def worker_envs(self, w: int) -> range:
        """The env ids that worker `w` runs."""
        return range(w * self.envs_per_worker, (w + 1) * self.envs_per_worker)


def check_layout(
    num_envs: int,
    num_workers: int | None,
    batch_size: int | None,
    zero_copy: bool,
    overwork: bool,
    cores: int | None = None,
    what: str = "physical CPU cores",
) -> Layout:
    """Validate (and default) num_workers and batch_size; every message names numbers that work.

    The rules: num_envs divisible by num_workers; batch_size (default num_envs) a multiple of
    num_envs / num_workers; with zero_copy, num_envs divisible by batch_size; and num_workers at
    most `cores` physical cores unless overwork=True. `cores=None` skips the last rule.
    """
    if batch_size is not None:
        batch_size = _positive_int("batch_size", batch_size)
        if batch_size > num_envs:
            raise APIUsageError(
                f"batch_size={batch_size} > num_envs={num_envs}: a batch holds at most every env once; "
                f"use batch_size <= {num_envs} or raise num_envs"
            )
    if num_workers is None:
        limit = cores or 1
        fits = [
            w
            for w in divisors(num_envs)
            if w <= limit and (batch_size is None or batch_size % (num_envs // w) == 0)
        ]
        if not fits:
            w = max(d for d in divisors(num_envs) if d <= limit)
            per = num_envs // w
            need = [d for d in divisors(num_envs) if batch_size % (num_envs // d) == 0]
            raise APIUsageError(
                f"batch_size={batch_size} does not fit: with at most {limit} workers ({what}) each worker "
                f"runs {per}+ of num_envs={num_envs} envs and a batch is made of whole workers. Use "
                f"batch_size in {list(range(per, num_envs + 1, per))}, or num_workers={min(need)} "
                "(with overwork=True if that exceeds the cores)"
            )
        num_workers = max(fits)
    num_workers = _positive_int("num_workers", num_workers)
    if num_workers > num_envs:
        raise APIUsageError(
            f"num_workers={num_workers} > num_envs={num_envs}: every worker needs at least one env; "
            f"use num_workers in {divisors(num_envs)} or num_envs >= {num_workers}"
        )
    if num_envs % num_workers:
        multiples = [num_workers * k for k in range(1, 4)]
        raise APIUsageError(
            f"num_envs={num_envs} must be divisible by num_workers={num_workers} (every worker runs the "
            f"same number of envs): use num_workers in {divisors(num_envs)} or num_envs in {multiples}"
        )
    per_worker = num_envs // num_workers
    if batch_size is None:
        batch_size = num_envs
    if batch_size % per_worker:
        good = list(range(per_worker, num_envs + 1, per_worker))
        raise APIUsageError(
            f"batch_size={batch_size} must be a multiple of num_envs/num_workers={per_worker} "
            f"(a batch is made of whole workers): use batch_size in {good}"
        )
    if zero_copy and num_envs % batch_size:
        good = [b for b in range(per_worker, num_envs + 1, per_worker) if num_envs % b == 0]
        raise APIUsageError(
            f"zero_copy=True needs num_envs={num_envs} divisible by batch_size={batch_size} (batches are "
            f"equal contiguous blocks of the shared buffer): use batch_size in {good} or zero_copy=False"
        )
    if cores is not None and num_workers > cores and not overwork:
        good = [w for w in divisors(num_envs) if w <= cores]
        raise APIUsageError(
            f"num_workers={num_workers} > {cores} {what}: oversubscribed workers time-slice "
            f"and slow every step. Use num_workers in {good} (divisors of num_envs={num_envs} up to "
            f"{cores}), or pass overwork=True to run {num_workers} workers anyway"
        )
    return Layout(num_envs, num_workers, batch_size, bool(zero_copy))
