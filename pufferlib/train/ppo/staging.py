"""Host-to-device copies of each step's arrays: on CUDA through page-locked buffers, non-blocking.

A step's observation batch arrives in the vector env's numpy buffer (pageable memory). Copying
pageable memory to a GPU is synchronous and goes through a driver bounce buffer; copying from
page-locked ("pinned") memory is a DMA the host does not wait for. So on CUDA each array is first
copied into a pinned host buffer kept for its shape and dtype, then sent with `non_blocking=True`:
one copy per array per step, and the host goes on (building the next batch's flags, the optimizer's
bookkeeping) while it travels. A buffer is reused only after the copy that read it has finished
(a CUDA event per buffer): the next step may not overwrite bytes still on their way.

On the CPU there is nothing to copy: `Staging.tensor` is `torch.from_numpy` (the tensor shares the
numpy buffer), so the CPU path is exactly as before. What a GPU run should show: the H2D copies in
a torch.profiler trace as `Memcpy HtoD (Pinned -> Device)`, overlapping the policy's kernels.
"""

from __future__ import annotations

import numpy as np
import torch


class Staging:
    """Per device: numpy arrays to tensors on it, through reused pinned buffers on CUDA."""

    def __init__(self, device: str | torch.device) -> None:
        self.device = torch.device(device)
        self.pinned = self.device.type == "cuda"
        self._buffers: dict[tuple, tuple[torch.Tensor, torch.cuda.Event | None]] = {}

    def tensor(self, array: np.ndarray, dtype: torch.dtype | None = None) -> torch.Tensor:
        """`array` as a tensor on the device (cast to `dtype` there, if given)."""
        host = torch.from_numpy(np.ascontiguousarray(array))
        if not self.pinned:
            return host if dtype is None or host.dtype == dtype else host.to(dtype)
        buffer = self._buffer(host)
        buffer.copy_(host)
        out = buffer.to(self.device, non_blocking=True)
        self._mark(host)
        return out if dtype is None else out.to(dtype)

    def stack(self, arrays: list[np.ndarray], dtype: torch.dtype = torch.float32) -> list:
        """Several same-length arrays in ONE copy (as `dtype`): the rows of one (k, n) tensor on the
        device. On the CPU, the arrays themselves (rollout.put stores numpy through numpy)."""
        if not self.pinned:
            return list(arrays)
        host = np.stack([np.asarray(a, dtype=torch.empty((), dtype=dtype).numpy().dtype) for a in arrays])
        return list(self.tensor(host).unbind(0))

    def _buffer(self, host: torch.Tensor) -> torch.Tensor:
        key = (tuple(host.shape), host.dtype)
        entry = self._buffers.get(key)
        if entry is None:
            entry = self._buffers[key] = (torch.empty(host.shape, dtype=host.dtype, pin_memory=True), None)
        buffer, event = entry
        if event is not None:
            event.synchronize()  # the previous copy out of this buffer has finished
        return buffer

    def _mark(self, host: torch.Tensor) -> None:
        key = (tuple(host.shape), host.dtype)
        event = torch.cuda.Event()
        event.record(torch.cuda.current_stream(self.device))
        self._buffers[key] = (self._buffers[key][0], event)
