"""How many NVIDIA GPUs this host shows its jobs, without importing torch (the Snakefile asks).

The local profile limits jobs that may use a GPU (``resources: gpu=1``) to one at a time, the
right rule for one GPU. On a host with none, those jobs run on the CPU and the same limit only
serialises them: the MNIST default's twelve single-thread jobs would run one after another on
an otherwise idle machine. The Snakefile lifts the limit to the core count there.
"""

from __future__ import annotations

import os
from pathlib import Path

#: One entry per GPU the NVIDIA driver knows (a folder per PCI address).
DRIVER_GPUS = Path("/proc/driver/nvidia/gpus")
#: Device nodes /dev/nvidia0, /dev/nvidia1, ...: what a container with GPUs passed in shows.
DEVICE_NODES = Path("/dev")


def _count(folder: Path, pattern: str) -> int:
    try:
        return sum(1 for _ in folder.glob(pattern))
    except OSError:
        return 0


def visible_nvidia_gpus(driver_gpus: Path = DRIVER_GPUS, device_nodes: Path = DEVICE_NODES) -> int:
    """NVIDIA GPUs the driver or the device nodes show, capped by ``CUDA_VISIBLE_DEVICES``
    (0 where it hides them all)."""
    hidden = os.environ.get("CUDA_VISIBLE_DEVICES")
    if hidden is not None and hidden.strip() in ("", "-1"):
        return 0
    found = max(_count(driver_gpus, "*"), _count(device_nodes, "nvidia[0-9]*"))
    if hidden is None:
        return found
    return min(found, len([d for d in hidden.split(",") if d.strip()]))
