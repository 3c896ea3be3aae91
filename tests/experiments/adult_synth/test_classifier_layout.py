"""The Adult jobs' classifier is fitted to sparse (CSC) one-hot features (issue 44): the same
greedy search as on dense features, in about 0.4 of the CPU time (benchmarks/README.md)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from fake_adult import DOMAIN, fake_adult
from scipy import sparse

from experiments.adult_synth.data import one_hot, split


class FakeModel:
    """Stands in for a fitted Private-PGM model: synthetic sets drawn from a fixed table."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def synthetic_data(self, rows: int) -> SimpleNamespace:
        picks = np.random.randint(0, len(self.table), rows)  # noqa: NPY002 (mbi's global state)
        return SimpleNamespace(data={i: self.table[picks, i] for i in range(self.table.shape[1])})


def trees(clf) -> list[tuple[bytes, bytes, bytes]]:
    return [
        (t.tree_.feature.tobytes(), t.tree_.threshold.tobytes(), t.tree_.value.tobytes())
        for t in clf.estimators_[:, 0]
    ]


def test_accuracies_fit_sparse_one_hot_features(monkeypatch):
    from experiments.adult_synth import synthesis

    base = synthesis.GradientBoostingClassifier
    fitted = []

    class Recording(base):
        def fit(self, X, y):
            fitted.append((X, y, self.get_params()))
            return super().fit(X, y)

    monkeypatch.setattr(synthesis, "GradientBoostingClassifier", Recording)
    s = split(fake_adult(300), DOMAIN, "income", 0.4, 0.4, np.random.default_rng(0))
    model = FakeModel(s.train.to_numpy())
    rng = np.random.default_rng(1)
    synthesis.accuracies(model, s, n_synth=2, gbc_estimators=3, rng=rng)
    assert len(fitted) == 2
    x_val = one_hot(s.val, DOMAIN, "income")
    for x, y, params in fitted:
        assert sparse.issparse(x) and x.format == "csc"
        dense = x.toarray()
        # the one-hot coding of the synthetic set: one 1 per non-label column in every row
        assert set(np.unique(dense)) == {0.0, 1.0}
        assert (dense.sum(axis=1) == len(DOMAIN) - 1).all()
        # the same search as on dense features: on these rows, the same labels
        dense_fit = base(**params).fit(np.asfortranarray(dense), y)
        sparse_fit = base(**params).fit(x, y)
        assert np.array_equal(sparse_fit.predict(x_val), dense_fit.predict(x_val))
        assert trees(sparse_fit) == trees(base(**params).fit(x.copy(), y))  # deterministic
    assert fitted[0][0].shape[1] == x_val.shape[1]
