"""Adult's data variants (experiments/adult_synth's cause variants): rows with missing values
kept, and the discretisation of the Adult that Private-PGM's examples ship."""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf
from test_preprocess import AGE_EDGES, HOURS_EDGES, _real

from experiments.data import preprocess as pp

REPO = Path(__file__).resolve().parents[3]
CONFIG = OmegaConf.load(REPO / "config" / "data.yaml")
#: The domain sizes of Private-PGM's shipped data/adult-domain.json (McKenna et al.).
PGM_SIZES = {
    "age": 85,
    "workclass": 9,
    "fnlwgt": 100,
    "education-num": 16,
    "marital-status": 7,
    "occupation": 15,
    "relationship": 6,
    "race": 5,
    "sex": 2,
    "capital-gain": 100,
    "capital-loss": 100,
    "hours-per-week": 99,
    "native-country": 42,
    "income": 2,
}


def _pgm(paths, name: str):
    spec = CONFIG.adult_variants[name]
    return pp.adult_pgm(
        *paths, CONFIG.adult_pgm_numeric, drop=list(spec.drop), missing=spec.missing
    )


def test_config_names_the_processed_variants():
    assert tuple(CONFIG.adult_variants) == pp.ADULT_VARIANTS
    assert len(pp.OUTPUTS["adult_variants"]) == 2 * len(pp.ADULT_VARIANTS)


def test_missing_rows_kept_as_a_category(tmp_path):
    paths = _real(tmp_path, *pp.RAW["adult"])
    frame, meta = pp.adult(*paths, AGE_EDGES, HOURS_EDGES, missing="category")
    assert frame.shape == (48842, 13)
    assert meta["n_train_rows"] == 32561 and meta["n_test_rows"] == 16281
    for column in ("workclass", "occupation", "native-country"):
        assert "?" in meta["columns"][column]
    dropped, _ = pp.adult(*paths, AGE_EDGES, HOURS_EDGES)
    assert len(dropped) == 45222
    with pytest.raises(ValueError, match="missing must be one of"):
        pp.adult(*paths, AGE_EDGES, HOURS_EDGES, missing="impute")


def test_private_pgm_discretisation(tmp_path):
    paths = _real(tmp_path, *pp.RAW["adult"])
    frame, meta = _pgm(paths, "pgm_domain")
    sizes = {c: len(v) for c, v in meta["columns"].items()}
    assert len(frame) == 48842 and sizes == PGM_SIZES
    for column in frame:
        assert frame[column].between(0, sizes[column] - 1).all()
    bins, meta = _pgm(paths, "pgm_bins")  # its bins on App. D's rows and columns
    sizes = {c: len(v) for c, v in meta["columns"].items()}
    assert len(bins) == 45222 and list(bins) == list(pp.adult(*paths, AGE_EDGES, HOURS_EDGES)[0])
    assert sizes["age"] == 85 and sizes["hours-per-week"] == 99 and sizes["workclass"] == 7
    assert sizes["capital-gain"] == sizes["capital-loss"] == 100


def test_pgm_numeric_codings():
    import numpy as np

    loss = pp._pgm_numeric(
        np.array([0, 50, 51, 155, 3900, 5000]), {"bins": 100, "range": [0, 5000]}
    )
    # 100 equal-width bins closed on the right, the lowest holding 0
    assert loss[0].tolist() == [0, 0, 1, 3, 77, 99] and len(loss[1]) == 100
    age = pp._pgm_numeric(np.array([16, 17, 90, 100]), {"values": [16, 100]})
    assert age[0].tolist() == [0, 1, 74, 84] and len(age[1]) == 85
    with pytest.raises(ValueError, match="outside"):
        pp._pgm_numeric(np.array([15, 20]), {"values": [16, 100]})
    with pytest.raises(ValueError, match="outside"):
        pp._pgm_numeric(np.array([-1, 20]), {"bins": 100, "range": [0, 5000]})
