"""Parameter validation shared by every public function.

Each check raises ``ValueError`` naming the parameter and its valid range, so that a
wrong call fails loudly instead of returning a silently wrong privacy bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

_SHOWN = 40
"""Longest repr an error message prints; a longer or non-scalar value is named by its type."""


def shown(value: object) -> str:
    """``value`` for an error message: the repr of a short scalar or string, else its type
    (``a RenyiCurve``), so that a wrong object never prints in full."""
    if isinstance(value, int | float | complex | np.generic | str | bytes | None):
        text = repr(value)
        if len(text) <= _SHOWN:
            return text
    return f"a {type(value).__name__}"


def real(name: str, value: float) -> float:
    """Return ``value`` as float if it is a real number, inf and NaN included (not a bool or
    a string, which ``float`` would convert silently)."""
    if isinstance(value, bool | np.bool_ | str | bytes):
        raise ValueError(f"{name} must be a real number, got {shown(value)}")
    try:
        return float(value)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be a real number, got {shown(value)}") from err


def finite(name: str, value: float) -> float:
    """Return ``value`` as float if it is a finite real number (not a bool or a string)."""
    try:
        x = real(name, value)
    except ValueError:
        raise ValueError(f"{name} must be a finite real number, got {shown(value)}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite real number, got {shown(value)}")
    return x


def positive(name: str, value: float) -> float:
    """A finite number in (0, inf)."""
    x = finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be in (0, inf), got {shown(value)}")
    return x


def nonnegative(name: str, value: float) -> float:
    """A finite number in [0, inf)."""
    x = finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be in [0, inf), got {shown(value)}")
    return x


def sensitivity_ratio(sensitivity: float, scale_name: str, scale: float) -> float:
    """sensitivity / scale for a noise mechanism: both positive, the ratio finite and > 0."""
    ratio = positive("sensitivity", sensitivity) / positive(scale_name, scale)
    if not math.isfinite(ratio) or ratio == 0.0:
        raise ValueError(f"sensitivity/{scale_name} must be a finite positive ratio, got {ratio!r}")
    return ratio


def delta(name: str, value: float) -> float:
    """A failure probability in [0, 1)."""
    x = finite(name, value)
    if not 0.0 <= x < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {shown(value)}")
    return x


def open_unit(name: str, value: float) -> float:
    """A probability in (0, 1)."""
    x = finite(name, value)
    if not 0.0 < x < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {shown(value)}")
    return x


def order(name: str, value: float) -> float:
    """A Rényi order in (1, inf)."""
    x = finite(name, value)
    if x <= 1.0:
        raise ValueError(f"{name} must be in (1, inf), got {shown(value)}")
    return x


def integer(name: str, value: int, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (an integral float such as 3.0 counts; a string does not)."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        n = int(value)
    else:
        try:
            x = real(name, value)
        except ValueError:
            x = math.nan
        if not x.is_integer():
            raise ValueError(f"{name} must be an integer >= {minimum}, got {shown(value)}")
        n = int(x)
    if n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {shown(value)}")
    return n


def finite_array(name: str, values: float | Iterable[float] | np.ndarray) -> np.ndarray:
    """A float64 array with only finite real entries (strings and bools are refused, as by
    :func:`finite`, not converted)."""
    try:
        raw = np.asarray(values)
    except ValueError as err:  # a ragged nesting
        raise ValueError(f"{name} must be an array of finite real numbers: {err}") from None
    if raw.dtype.kind == "O":
        flat = [finite(f"{name} entry", v) for v in raw.ravel()]
        raw = np.asarray(flat, dtype=np.float64).reshape(raw.shape)
    elif raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must contain only finite real numbers, got dtype {raw.dtype}")
    arr = np.asarray(raw, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite real numbers")
    return arr


def score_vector(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    """A non-empty 1-d float64 array of finite real numbers (one score per candidate)."""
    arr = finite_array(name, values)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d sequence, got shape {arr.shape}")
    return arr


def generator(name: str, value: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` (seeded by the caller: no hidden global randomness)."""
    if not isinstance(value, np.random.Generator):
        raise ValueError(
            f"{name} must be a numpy.random.Generator (numpy.random.default_rng(seed)), "
            f"got {type(value).__name__}"
        )
    return value


def not_nan(name: str, value: float) -> float:
    """Any float in [-inf, inf] (a threshold or a loss may be infinite), never NaN."""
    x = float(value)
    if math.isnan(x):
        raise ValueError(f"{name} must not be NaN")
    return x


def finite_result(name: str, value: float) -> float:
    """Guard a computed bound: raise instead of returning inf or NaN."""
    if not math.isfinite(value):
        raise ValueError(
            f"{name} is not finite ({shown(value)}): inputs outside the numerical range"
        )
    return value


def result(name: str, value: float) -> float:
    """Guard a computed result: never hand back NaN silently."""
    if math.isnan(value):
        raise ValueError(
            f"{name} evaluated to NaN; the inputs are outside the numerically valid range"
        )
    return value
