"""The re-exported public API resolves, drives a filter end to end, and keeps its layers."""

import ast
from pathlib import Path

import numpy as np
import pytest

import accounting
import accounting.audit as audit
import accounting.curves as curves
import accounting.filters as filters
import accounting.mechanisms as mechanisms

#: Each layer of the library may import only the layers listed for it (and itself).
LAYERS = {
    "curves": {"curves"},
    "mechanisms": {"curves", "mechanisms"},
    "filters": {"curves", "mechanisms", "filters"},
    "audit": {"curves", "mechanisms", "filters", "audit"},
}


def test_every_exported_name_resolves() -> None:
    for module in (accounting, filters, curves, mechanisms, audit):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == []


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_no_upward_imports(layer: str) -> None:
    root = Path(accounting.__file__).parent
    upward = []
    for path in sorted((root / layer).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[0] == "accounting" and len(parts) > 1 and parts[1] in LAYERS:
                    if parts[1] not in LAYERS[layer]:
                        upward.append(f"{path.name}: {node.module}")
    assert upward == []


def test_top_level_names_drive_an_interaction() -> None:
    sigma = accounting.gaussian_sigma(0.5, 1e-6, sensitivity=1.0)
    cost = accounting.EpsDelta(0.5, 1e-6)
    filt = filters.AdditiveFilter(2.0, 1e-5)

    def analyst(outputs: list) -> filters.Query | None:
        return filters.Query(cost, lambda data, rng: data + rng.normal(0.0, sigma))

    transcript = filters.run_interaction(filt, analyst, 3.0, np.random.default_rng(0))
    assert transcript.halted
    assert transcript.stopping_time == 4
    assert accounting.gaussian_delta(0.5, sensitivity=1.0, sigma=sigma) <= 1e-6


def test_package_names_audit_a_finite_mechanism() -> None:
    """An additive filter with budget 1.0 admits two RR_0.5 queries and stays 1.0-DP."""
    mech = mechanisms.FiniteMechanism(*mechanisms.randomized_response_laws(0.5))
    assert curves.is_dominated(mech.pld(), curves.Pld.pure_dp(0.5), tol=1e-12)
    query = audit.DiscreteQuery(accounting.EpsDelta(0.5), mech.p, mech.q)
    result = audit.exact_audit(
        lambda: filters.AdditiveFilter(1.0, 0.0),
        lambda history: query if len(history) < 3 else None,
        audit.Promise.of(accounting.EpsDelta(1.0, 0.0)),
    )
    assert result.passed
    assert result.detail["halt_probability"] == pytest.approx(1.0)
