"""How many members of a configuration one stacked model holds on a GPU, measured, not guessed: one training step
and one evaluation of a pack of one member and of two (eager, under the trial's precision), their peak memory
above what was allocated before; the difference is a member's bytes, the rest the pack's fixed cost. The largest K
whose step fits ``SAFETY`` of the trial's share of the device (``trainables.gpu_share``) is the pack size; a trial
with more members trains them in further packs (``loop.train_members``). The compiled step needs no more memory than
the eager one it was measured as (its fused kernels keep fewer intermediates).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from trainables.gpu_share import current_gpu_share

#: The part of the trial's share a pack may fill: the rest for the allocator's fragmentation and cuBLAS workspaces.
SAFETY = 0.8


def members_that_fit(step_bytes: Callable[[int], int], budget: int) -> int:
    """The largest K whose step fits ``budget`` bytes, from ``step_bytes(1)`` and ``step_bytes(2)`` (a step's peak
    bytes at K members: linear in K, as every activation and parameter of a stacked model is); at least 1."""
    one, two = step_bytes(1), step_bytes(2)
    per_member = max(two - one, 1)
    fixed = max(one - per_member, 0)
    return max(1, (budget - fixed) // per_member)


def gpu_budget(device: str | torch.device) -> int:
    """Bytes a pack may fill on the CUDA ``device``: ``SAFETY`` of the trial's share of its memory."""
    return int(torch.cuda.get_device_properties(device).total_memory * current_gpu_share() * SAFETY)


def peak_bytes(work: Callable[[], None], device: str | torch.device) -> int:
    """Peak bytes ``work`` allocates on the CUDA ``device`` above what was allocated before it (what it leaves is
    freed when it returns: a pack built and dropped inside it)."""
    torch.cuda.synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    work()
    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) - before
    torch.cuda.empty_cache()
    return int(peak)
