"""Monte Carlo estimate of the Report Noisy Max bound (LPB Thm. 12) in torch, CPU or GPU.

The paper's estimator (Sec. 3.4, Fig. 3): with z ~ N(0, 1) i.i.d.,

    eps_hat = log mean_j Phi(z_j - (c - 2 Delta)/sigma)^(d-1) - log mean_j Phi(z_j - c/sigma)^(d-1),

accumulated in log space (log_ndtr, logsumexp) over batches so that 1e10 samples fit in
memory. The same code runs on CPU and CUDA; ``resolve_device("auto")`` picks CUDA when torch
sees a GPU. float64 throughout: the summands span hundreds of orders of magnitude.
"""

from __future__ import annotations

import math

import torch


def resolve_device(device: str) -> torch.device:
    """ "auto" -> CUDA if available else CPU; otherwise the named device (must be usable)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} requested but torch sees no CUDA device")
    if device != "cpu" and not device.startswith("cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:n]', got {device!r}")
    return torch.device(device)


def rnm_eps_monte_carlo(
    sigma: float,
    sensitivity: float,
    d: int,
    n_samples: int,
    batch: int,
    generator: torch.Generator,
    device: torch.device,
    lower: float = 0.0,
    upper: float = 1.0,
) -> float:
    """One Monte Carlo estimate of the log-ratio of LPB eq. (1) from ``n_samples`` draws.

    Returns +inf or nan (the estimator's own failure when every draw of the denominator
    underflows) as a value to be reported, not hidden: Fig. 3 shows exactly this instability.
    """
    if not (sigma > 0 and sensitivity > 0 and d >= 2 and n_samples >= 1 and batch >= 1):
        raise ValueError(
            "need sigma > 0, sensitivity > 0, d >= 2, n_samples >= 1, batch >= 1; got "
            f"sigma={sigma!r}, sensitivity={sensitivity!r}, d={d!r}, n_samples={n_samples!r}, "
            f"batch={batch!r}"
        )
    c = upper - lower
    shifts = torch.tensor(
        [-(c - 2.0 * sensitivity) / sigma, -c / sigma], dtype=torch.float64, device=device
    )
    acc = torch.full((2,), -math.inf, dtype=torch.float64, device=device)
    done = 0
    while done < n_samples:
        size = min(batch, n_samples - done)
        z = torch.randn(size, 1, dtype=torch.float64, device=device, generator=generator)
        logs = (d - 1) * torch.special.log_ndtr(z + shifts)  # (size, 2)
        acc = torch.logaddexp(acc, torch.logsumexp(logs, dim=0))
        done += size
    return float(acc[0] - acc[1])
