"""The re-exported public API resolves, drives a filter end to end, keeps its layers, and
takes every noise scale by keyword."""

import ast
import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import accounting
import accounting.analysis as analysis
import accounting.audit as audit
import accounting.curves as curves
import accounting.filters as filters
import accounting.mechanisms as mechanisms

#: Each layer of the library may import only the layers listed for it (and itself). "base"
#: is accounting's own modules (numerics, costs, exact_sum, _checks): below every layer.
LAYERS = {
    "base": set(),
    "curves": {"curves"},
    "mechanisms": {"curves", "mechanisms"},
    "filters": {"curves", "mechanisms", "filters"},
    "analysis": {"curves", "mechanisms", "filters", "analysis"},
    "audit": {"curves", "mechanisms", "filters", "audit"},
}

#: A parameter named like a noise scale (issue 22: sensitivity, sigma*, scale, noise_multiplier).
SCALE = re.compile(r"^(sensitivity|scale|scale_\w+|\w+_scale|sigma\w*|\w+_sigma|noise_\w+)$")


def layer_modules(layer: str) -> list[Path]:
    root = Path(accounting.__file__).parent
    if layer == "base":
        return sorted(p for p in root.glob("*.py") if p.name != "__init__.py")
    return sorted((root / layer).glob("*.py"))


def test_every_exported_name_resolves() -> None:
    for module in (accounting, filters, curves, mechanisms, analysis, audit):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == []


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_no_upward_imports(layer: str) -> None:
    modules = layer_modules(layer)
    assert modules, f"no modules found for layer {layer}"
    upward = []
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "accounting" and len(parts) > 1 and parts[1] in LAYERS:
                    if parts[1] not in LAYERS[layer]:
                        upward.append(f"{path.name}: {node.module}")
    assert upward == []


def test_top_level_names_drive_an_interaction() -> None:
    sigma = accounting.gaussian_sigma(0.5, delta=1e-6, sensitivity=1.0)
    cost = accounting.EpsDelta(0.5, delta=1e-6)
    filt = filters.AdditiveFilter(2.0, delta=1e-5)

    def analyst(outputs: list) -> filters.Query | None:
        return filters.Query(cost, lambda data, rng: data + rng.normal(0.0, sigma))

    transcript = filters.run_interaction(filt, analyst, 3.0, np.random.default_rng(0))
    assert transcript.halted
    assert transcript.stopping_time == 4
    assert accounting.gaussian_delta(0.5, sensitivity=1.0, sigma=sigma) <= 1e-6


def test_package_names_audit_a_finite_mechanism() -> None:
    """An additive filter with budget 1.0 admits two RR_0.5 queries and stays 1.0-DP."""
    mech = mechanisms.FiniteMechanism(*mechanisms.randomized_response_laws(0.5))
    assert curves.is_dominated(mech.pld(), curves.Pld.pure_dp(0.5 + 1e-9))  # certified: strict
    query = audit.DiscreteQuery(accounting.EpsDelta(0.5), mech.p, mech.q)
    result = audit.exact_audit(
        lambda: filters.AdditiveFilter(1.0, delta=0.0),
        lambda history: query if len(history) < 3 else None,
        audit.Promise.of(accounting.EpsDelta(1.0, delta=0.0)),
    )
    assert result.passed
    assert result.detail["halt_probability"] == pytest.approx(1.0)


def _public_modules() -> list:
    """``accounting``, its sub-packages and every module of it that declares ``__all__``."""
    found = [accounting, audit, curves, filters, mechanisms]
    for info in pkgutil.walk_packages(accounting.__path__, "accounting."):
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__") and module not in found:
            found.append(module)
    return found


def _public_callables() -> Iterator[tuple[str, Callable]]:
    """Every exported function, and every exported class's constructor and public methods."""
    for module in _public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj):
                if "__init__" in vars(obj) or hasattr(obj, "__dataclass_fields__"):
                    yield f"{name}.__init__", obj.__init__
                for attr, value in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(value, classmethod | staticmethod):
                        yield f"{name}.{attr}", value.__func__
                    elif inspect.isfunction(value):
                        yield f"{name}.{attr}", value
            elif callable(obj):
                yield name, obj


def _scale_parameters() -> list[tuple[str, inspect.Parameter]]:
    out = []
    for name, fn in _public_callables():
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):  # a builtin without a signature
            continue
        out += [(name, p) for p in params if SCALE.match(p.name)]
    return out


def test_every_scale_parameter_is_keyword_only() -> None:
    """A swapped (sigma, sensitivity) pair must fail loudly, never give a wrong number
    (issue 22: ``gaussian_eps(1e-5, 1.1, 1.0)`` returned 4.89 with the two swapped)."""
    found = _scale_parameters()
    positional = sorted({f"{name}({p.name})" for name, p in found if p.kind != p.KEYWORD_ONLY})
    assert positional == []
    assert len({name for name, _ in found}) >= 40  # the walk sees the mechanisms


def test_one_spelling_per_scale() -> None:
    """sensitivity, sigma, scale (Laplace), sigma_threshold, sigma_query, noise_multiplier
    (sigma / sensitivity); a Laplace query scale is scale_query."""
    allowed = {
        "sensitivity",
        "sigma",
        "scale",
        "sigma_threshold",
        "sigma_query",
        "scale_query",
        "noise_multiplier",
    }
    assert sorted({p.name for _, p in _scale_parameters()} - allowed) == []


def test_swapped_scales_fail_loudly() -> None:
    with pytest.raises(TypeError):
        accounting.gaussian_eps(1e-5, 1.1, 1.0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        mechanisms.gaussian_report_noisy_max_eps(1.0, 0.01, 10)  # type: ignore[misc]
