"""The Adult experiment's neighbour relation and the sensitivities it implies (docs/privacy.md).

Neighbours are substitutions: two tables with the same number of rows n that differ in the
values of one row (its id, the row's position in the processed file, is kept). n is public.
The relation is on the processed table; preprocessing (dropping rows with missing values) is
outside the guarantee, as in the paper.

Why n is public, not private (Räisä et al., App. D, read closely): the validation check is
calibrated to Delta_acc = 1 / n_validation, so the noise scale is a function of the validation
size, and our synthetic sets have as many rows as the training part; both need the part sizes
to be public. With n private (add/remove neighbours) none of them may
leak: the check would need a public bound on n_val and every size would have to be released
with noise, which is not the paper's experiment. With n public, adding or removing a row is
not a neighbour (it changes n); substituting one is, and every sensitivity below is the
substitution one.

The split (``data.split``) assigns each row to train, validation or test by a keyed hash of
its id alone, so the part sizes depend only on (n, key) and substituting row i changes only
the part that row i belongs to, by one substitution: neighbouring tables give neighbouring
training parts and equal validation parts, or the reverse (both equal for a test row), as
Algorithm 1's proof needs (Räisä et al., Sec. 4, the theorem of Algorithm 1, whose proof uses
X_y = X'_y or X_eps = X'_eps). Then:

* a marginal's count vector: the row leaves one cell and enters another, l2 change sqrt(2)
  (``MARGINAL_L2``); k marginals released together: sqrt(2 k);
* the selection score |M_ab - n_train p_a (x) p_b|_1 (n_train public, p_a, p_b the noisy
  released 1-way marginals: post-processing): M_ab changes by -1 in one cell and +1 in
  another, so the score changes by at most 2 (``SCORE_SENSITIVITY``);
* the mean validation accuracy over the synthetic sets (which depend on the training part
  only): one validation row's correctness changes, 1 / n_val (``accuracy_sensitivity``), the
  paper's Delta_acc, now with n_val public.

The paper names add/remove (App. D, for Delta_acc); under add/remove a marginal has
l2-sensitivity 1 and the score 1. A substitution is a removal and an addition, so the noise
here is sqrt(2) times the add/remove noise for the marginals (twice the variance).
"""

from __future__ import annotations

import math

MARGINAL_L2_SQUARED = 2  # one marginal's count vector: one cell -1, another +1
MARGINAL_L2 = math.sqrt(MARGINAL_L2_SQUARED)
SCORE_SENSITIVITY = 2.0  # L1 score of a pair: two cells of its 2-way marginal move by 1


def marginals_l2(k: int) -> float:
    """l2-sensitivity of ``k`` marginals' count vectors released together: sqrt(2 k)."""
    if k < 1:
        raise ValueError(f"the number of marginals must be >= 1, got {k!r}")
    return math.sqrt(MARGINAL_L2_SQUARED * k)


def accuracy_sensitivity(n_val: int) -> float:
    """Sensitivity of a validation accuracy (a mean over ``n_val`` rows): 1 / n_val."""
    if n_val < 1:
        raise ValueError(f"the validation part must have >= 1 row, got n_val={n_val!r}")
    return 1.0 / n_val
