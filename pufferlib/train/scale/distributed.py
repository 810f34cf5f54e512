"""torch.distributed glue: `puffer train` as one process per rank under torchrun, the policy in
DistributedDataParallel, rank 0 alone logging, printing and saving.

torchrun (torch.distributed.run, torch's own launcher) starts the ranks and sets RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT; `puffer train --nproc-per-node N ...` runs it for you
(`launch`). Without those variables (or with WORLD_SIZE 1 outside torchrun) every seam here is a
no-op (`Solo`); a torchrun job of one rank is a process group of one, in DDP (NCCL on a GPU).

What the ranks share, and when:
- Seeds: rank r trains with train.seed + r * vec.num_envs, so its envs' seeds (seed + i) are
  disjoint from every other rank's: ranks never share a trajectory. DDP starts every replica from
  rank 0's weights.
- Once per update, after collecting, one gloo all_gather (`Ranks.sync`) brings every rank the
  others' new steps, finished episodes and rank 0's clock. Every rank then holds the same global
  step count, the same last train.solve_window episodes of the whole job (recorded in rank order)
  and the same time, so every rank takes the same decision to stop: the step budget, the time
  budget, SPS and "solved" are global.
- Gradients are averaged by DDP in the backward pass: over NCCL when every rank has a CUDA
  device, over gloo otherwise. The replicas stay identical; `annotate` checks it at the end.

Failures. Every collective has the explicit timeout train.dist_timeout. A rank that dies breaks
the others' next collective: at once when its process dies (its sockets close), at the timeout
when its node vanishes. Each rank runs a heartbeat thread that counts up a key in the rendezvous
store; a rank whose collective fails reads the counters twice and stops with `RankLost` naming
the ranks whose heartbeat stopped (or saying that the store's node is gone). Rank 0 saves its
checkpoint before stopping.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import hashlib
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from pufferlib.train.config import Config, ConfigError

HEARTBEAT_SECONDS = 0.5  # a rank's heartbeat period; diagnosing a failure watches 4 of them
STORE_TIMEOUT_SECONDS = 10  # the heartbeat's store calls: a store that does not answer by then is gone
DEFAULT_MASTER_PORT = 29500  # torchrun's


class DistributedError(RuntimeError):
    """The ranks could not start or go on together; the message says which rank and what to do."""


class RankLost(DistributedError):
    """Another rank died or its node became unreachable; the message names it. `checkpoint` is
    what this rank saved before stopping (rank 0 only)."""

    checkpoint: str | None = None


def under_torchrun() -> bool:
    """Started by torchrun (it sets TORCHELASTIC_RUN_ID), whatever the number of ranks: a job of one
    rank (`--nproc-per-node 1`) joins its process group and trains in DDP too, which is how one GPU
    proves the NCCL path (tests/gpu/run.sh). Or started by hand with env://'s variables as one of
    several ranks."""
    return "TORCHELASTIC_RUN_ID" in os.environ or int(os.environ.get("WORLD_SIZE") or 1) > 1


def is_main() -> bool:
    """Rank 0, or a single process: the one that prints (readable before the group is joined)."""
    return os.environ.get("RANK", "0") in ("", "0")


# ---------------------------------------------------------------------------------------------
# One process: every seam is a no-op


class Solo:
    """A single process: the seams of `Ranks`, doing nothing."""

    rank, world_size, local_rank, main, backend = 0, 1, None, True, None

    def rank_config(self, cfg: Config) -> Config:
        return cfg

    def wrap(self, policy: nn.Module, device: str) -> nn.Module:
        return policy

    def adopt(self, run: Any) -> None:
        pass

    def sync(self, run: Any, start: float) -> None:
        pass

    def elapsed(self, start: float) -> float:
        return time.perf_counter() - start

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        yield

    def annotate(self, summary: dict[str, Any], policy: nn.Module) -> dict[str, Any]:
        return summary


# ---------------------------------------------------------------------------------------------
# Several ranks


@contextlib.contextmanager
def join(timeout: float) -> Iterator[Solo]:
    """The job this process is a rank of (the default gloo process group, joined for the block
    and left afterwards), or Solo when it runs alone. `timeout` bounds every collective."""
    if not under_torchrun():
        yield Solo()
        return
    rank, world_size, local_rank = _environment()
    if timeout <= 0:
        raise ConfigError(f"train.dist_timeout must be > 0 seconds, got {timeout}")
    owned = not dist.is_initialized()
    if owned:
        try:
            dist.init_process_group("gloo", timeout=timedelta(seconds=timeout))
        except RuntimeError as error:  # the store never saw every rank
            where = f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"
            raise DistributedError(
                f"rank {rank}: not all {world_size} ranks joined at {where} within train.dist_timeout "
                f"({timeout:g} s): start every node with the same --nnodes, --master-addr and --master-port, "
                f"and open that port ({_first_line(error)})"
            ) from error
    ranks = Ranks(rank, world_size, local_rank, timeout)
    try:
        yield ranks
    finally:
        ranks.close()
        if owned:
            dist.destroy_process_group()


def _environment() -> tuple[int, int, int]:
    values = {}
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        text = os.environ.get(name, "0")
        try:
            values[name] = int(text)
        except ValueError:
            message = f"{name}={text!r} is not an integer (torchrun sets it; unset it to run alone)"
            raise ConfigError(message) from None
    if not 0 <= values["RANK"] < values["WORLD_SIZE"]:
        raise ConfigError(f"RANK={values['RANK']} is not in 0..WORLD_SIZE-1 ({values['WORLD_SIZE'] - 1})")
    return values["RANK"], values["WORLD_SIZE"], values["LOCAL_RANK"]


class DistributedPolicy(DistributedDataParallel):
    """DDP over a cleanrl Policy/RecurrentPolicy: get_action_and_value goes through DDP's forward,
    which is what makes the backward pass average the gradients across ranks."""

    def get_action_and_value(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)


class Ranks(Solo):
    """This process's place in a job of several ranks (the default process group is joined)."""

    def __init__(self, rank: int, world_size: int, local_rank: int, timeout: float) -> None:
        self.rank, self.world_size, self.local_rank = rank, world_size, local_rank
        self.main = rank == 0
        self.timeout = timeout
        self.backend = "gloo"
        self._steps = 0  # global steps as of the last sync
        self._elapsed = 0.0  # rank 0's clock as of the last sync
        self._heart = Heartbeat(rank, world_size)

    def close(self) -> None:
        """Stop the heartbeat and collect what still holds the process group (a DDP wrapper in a
        reference cycle) before it is destroyed: left to the interpreter's exit, its teardown
        can abort the rank ("terminate called without an active exception")."""
        self._heart.stop()
        gc.collect()

    def rank_config(self, cfg: Config) -> Config:
        """cfg with train.seed offset by rank * vec.num_envs: env i of rank r gets seed + r*num_envs + i."""
        if self.rank == 0:
            return cfg
        cfg = copy.deepcopy(cfg)
        cfg["train"]["seed"] += self.rank * cfg["vec"]["num_envs"]
        return cfg

    def wrap(self, policy: nn.Module, device: str) -> nn.Module:
        """`policy` in DDP (rank 0's weights broadcast to every rank). NCCL when every rank has a
        CUDA device, gloo otherwise: the ranks agree on it with an all_reduce over gloo."""
        with self.watch():
            on_cuda = torch.tensor([1 if device.startswith("cuda") else 0])
            dist.all_reduce(on_cuda, op=dist.ReduceOp.MIN)
            group = None
            if on_cuda.item():
                torch.cuda.set_device(device)  # NCCL's communicator on this rank's GPU, not GPU 0
                group = dist.new_group(backend="nccl", timeout=timedelta(seconds=self.timeout))
                self.backend = "nccl"
            ids = [torch.device(device)] if device.startswith("cuda") else None
            wrapped = DistributedPolicy(policy, device_ids=ids, process_group=group)
        _say(
            f"puffer train: rank {self.rank} of {self.world_size} (host {socket.gethostname()}, "
            f"local rank {self.local_rank}) on {device}, backend {self.backend}"
        )
        return wrapped

    def adopt(self, run: Any) -> None:
        """Episodes wait in run.deferred until the sync records every rank's, in rank order."""
        run.deferred = []

    def sync(self, run: Any, start: float) -> None:
        """After a rollout: global steps, every rank's new episodes, rank 0's clock (one all_gather)."""
        episodes, run.deferred = run.deferred, []
        mine = (run.steps - self._steps, [_numbers(info) for info in episodes], time.perf_counter() - start)
        gathered: list[Any] = [None] * self.world_size
        with self.watch():
            dist.all_gather_object(gathered, mine)
        run.deferred = None  # record every rank's episodes, in rank order: the same window on every rank
        for _, infos, _ in gathered:
            run.record(infos)
        run.deferred = []
        run.steps = self._steps = self._steps + sum(item[0] for item in gathered)
        self._elapsed = gathered[0][2]

    def elapsed(self, start: float) -> float:
        """Rank 0's seconds since its start, as of the last sync (0 before it): every rank agrees,
        so every rank stops at the same update when train.max_seconds runs out."""
        return self._elapsed

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        """Turn a collective broken by a lost rank into RankLost naming it."""
        try:
            yield
        except DistributedError:
            raise
        except RuntimeError as error:  # gloo and NCCL raise plain RuntimeErrors (or DistErrors)
            lost = self._heart.lost(error)
            if lost is None:
                raise
            raise lost from error

    def annotate(self, summary: dict[str, Any], policy: nn.Module) -> dict[str, Any]:
        """Say that the counts are global, and check that every replica ended with rank 0's weights."""
        summary["world_size"] = self.world_size
        summary["backend"] = self.backend
        summary["global"] = "steps, sps, episodes and mean_return count every rank"
        if summary.get("stop_reason") != "interrupted":  # after a signal the other ranks may be gone
            with self.watch():
                summary["replicas_identical"] = replicas_identical(policy)
        return summary


def _numbers(info: dict) -> dict:
    """The numeric entries of an episode's info (what Runner.record keeps): safe to send."""
    return {k: v for k, v in info.items() if isinstance(v, int | float) and not isinstance(v, bool)}


def replicas_identical(policy: nn.Module) -> bool:
    """Whether every rank holds bit-identical weights (one digest per rank, all_gathered)."""
    digest = hashlib.sha256()
    for tensor in policy.state_dict().values():
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    digests: list[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(digests, digest.hexdigest())
    return len(set(digests)) == 1


def agreed_mean(value: float) -> float:
    """`value` averaged over the ranks (itself in a single process): a decision every rank must
    take alike, such as PPO's early stop at train.target_kl, is taken on this."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return value
    tensor = torch.tensor([float(value)], dtype=torch.float64)
    dist.all_reduce(tensor)
    return float(tensor.item()) / dist.get_world_size()


def _first_line(error: BaseException) -> str:
    """The gist of a torch.distributed error (gloo's first sentence, without its advice)."""
    lines = str(error).strip().splitlines()
    return lines[0].split(" This is typically")[0][:300] if lines else type(error).__name__


def _say(line: str) -> None:
    """One line to stderr in one write: the ranks share the terminal."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# Heartbeats: which rank is gone


class Heartbeat:
    """Counts up puffer/beat/<rank> in the rendezvous store (at MASTER_ADDR:MASTER_PORT) every
    HEARTBEAT_SECONDS from a daemon thread, on a store connection of its own. Asked by `lost`, the
    same thread also reads every rank's count at each beat: counts that stop moving are lost ranks,
    and a store that stops answering is a lost node 0 (it hosts the store)."""

    CENSUSES = 5  # counts read 4 beats apart: a live rank has moved on by then

    def __init__(self, rank: int, world_size: int) -> None:
        self.rank, self.world_size = rank, world_size
        self.host = os.environ.get("MASTER_ADDR", "127.0.0.1")
        self.port = int(os.environ.get("MASTER_PORT") or DEFAULT_MASTER_PORT)
        self.store_error: BaseException | None = None
        self._censuses: list[list[int]] = []
        self._census = threading.Event()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="puffer-heartbeat", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        keys = [f"puffer/beat/{r}" for r in range(self.world_size)]
        try:
            store = dist.TCPStore(
                self.host,
                self.port,
                is_master=False,
                timeout=timedelta(seconds=STORE_TIMEOUT_SECONDS),
                wait_for_workers=False,
            )
            while not self._stopped.is_set():
                store.add(keys[self.rank], 1)
                if self._census.is_set():
                    self._censuses.append([store.add(key, 0) for key in keys])
                self._stopped.wait(HEARTBEAT_SECONDS)
        except RuntimeError as error:  # the store is gone (its node died) or unreachable
            self.store_error = error

    def stop(self) -> None:
        """Stop beating and wait for the thread: left running, it can be inside the store's C++ call
        when the interpreter exits, and a daemon thread ended there aborts the process ("terminate
        called without an active exception", SIGABRT: the likely cause of a rank 0 lost so in CI)."""
        self._stopped.set()
        self._thread.join(timeout=STORE_TIMEOUT_SECONDS + HEARTBEAT_SECONDS)

    def lost(self, error: BaseException) -> RankLost | None:
        """RankLost naming the ranks whose heartbeat stopped (None when every rank still beats)."""
        cause = _first_line(error)
        self._censuses.clear()
        self._census.set()
        deadline = time.monotonic() + (self.CENSUSES + 1) * HEARTBEAT_SECONDS + STORE_TIMEOUT_SECONDS + 2
        while len(self._censuses) < self.CENSUSES and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(HEARTBEAT_SECONDS / 5)
        self._census.clear()
        if self.store_error is not None or len(self._censuses) < 2:
            store = _first_line(self.store_error) if self.store_error else "no answer"
            return RankLost(
                f"rank {self.rank}: the rendezvous store at {self.host}:{self.port} is gone, so node 0 (with "
                f"rank 0, at --master-addr) died or became unreachable ({cause}; the store: {store})"
            )
        first, last = self._censuses[0], self._censuses[-1]
        gone = [r for r in range(self.world_size) if r != self.rank and last[r] == first[r]]
        if not gone:
            return None
        seconds = (len(self._censuses) - 1) * HEARTBEAT_SECONDS
        return RankLost(
            f"rank {', '.join(map(str, gone))} stopped (no heartbeat for {seconds:g} s): its process died "
            f"or its node became unreachable, so rank {self.rank} stops too ({cause})"
        )


# ---------------------------------------------------------------------------------------------
# Launching: torchrun, in this process


def torchrun_args(args: argparse.Namespace, worker: list[str]) -> list[str]:
    """torchrun's command line for the launch flags in `args`; the ranks run `puffer train WORKER...`."""
    if under_torchrun():
        raise ConfigError(
            "--nproc-per-node/--nnodes/--node-rank/--master-addr/--master-port given inside torchrun: "
            "drop them (torchrun already started this rank)"
        )
    nnodes = 1 if args.nnodes is None else args.nnodes
    node_rank = 0 if args.node_rank is None else args.node_rank
    if nnodes < 1:
        raise ConfigError(f"--nnodes must be >= 1, got {nnodes}")
    if not 0 <= node_rank < nnodes:
        raise ConfigError(f"--node-rank must be in 0..{nnodes - 1} (--nnodes {nnodes}), got {node_rank}")
    if nnodes > 1 and not args.master_addr:
        raise ConfigError(
            f"--nnodes {nnodes} needs --master-addr: node 0's address that every node reaches "
            "(e.g. its Tailscale MagicDNS name), the same on every node"
        )
    argv = ["--nproc-per-node", str(args.nproc_per_node or 1), "--nnodes", str(nnodes), "--max-restarts", "0"]
    if nnodes == 1 and args.master_addr is None and args.master_port is None:
        argv.append("--standalone")  # a free local port: several single-node jobs can share a box
    else:
        port = DEFAULT_MASTER_PORT if args.master_port is None else args.master_port
        argv += ["--node-rank", str(node_rank), "--master-addr", args.master_addr or "127.0.0.1"]
        argv += ["--master-port", str(port)]
    return [*argv, "-m", "pufferlib.cli", "train", *worker]


def launch(args: argparse.Namespace, worker: list[str]) -> int:
    """Run torchrun in this process for `puffer train WORKER...`; its exit status. A failed rank is
    reported by rank, host and cause; a signal (Ctrl-C, SIGTERM, SIGHUP) goes on to every rank of
    this node (rank 0 saves its checkpoint) and the status is 128 + its number."""
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    argv = torchrun_args(args, worker)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # torchrun's choice too (it warns when it makes it)
    try:
        torchrun.run(torchrun.parse_args(argv))
    except ChildFailedError as failed:
        first, _ = failed.get_first_failure()
        for rank, failure in sorted(failed.failures.items(), key=lambda item: item[0] != first):
            how = failure.signal_name() if failure.exitcode < 0 else f"exit code {failure.exitcode}"
            what = "failed" if rank == first else "stopped after it"
            said = failure.message.get("message", "") if isinstance(failure.message, dict) else ""
            _say(
                f"puffer train: rank {rank} (host {socket.gethostname()}, local rank {failure.local_rank}) "
                f"{what}: {how}{'; ' + said if said else ''}"
            )
        return 1
    except SignalException as stop:
        return 128 + int(stop.sigval)
    return 0


def record_failure(error: BaseException) -> None:
    """Write `error` (being handled) to torchrun's error file for this rank, so that the launcher's
    report shows it: a rank that stopped because another was lost says which."""
    if os.environ.get("TORCHELASTIC_ERROR_FILE"):
        from torch.distributed.elastic.multiprocessing.errors import ErrorHandler

        with contextlib.suppress(OSError):
            ErrorHandler().record_exception(error)
