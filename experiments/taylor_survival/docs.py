"""The numbers of this experiment the docs quote (experiments/common/doc_quotes.py)."""

from __future__ import annotations

from experiments.common.doc_quotes import Generator, Quote, quotes

TAYLOR = (
    Quote("t_rdp", ".0f", "T_RDP at eps = 10: the last t the RDP filter reaches"),
    Quote(
        "realisation_min_survival_to_t_rdp", ".3f", "realisation level: min P(T >= t), t <= T_RDP"
    ),
    Quote("realisation_survival_after_t_rdp", ".3f", "realisation level: P(T >= T_RDP + 1)"),
    Quote("realisation_survival_at_n", ".3f", "realisation level: P(T >= N), N = 48"),
    Quote("realisation_mean_stopping_time", ".1f", "realisation level: E[T] at eps = 10"),
    Quote("rdp_early_lead", ".3f", "max over t <= T_RDP of P_RDP(T >= t) - P_real(T >= t)"),
    Quote(
        "claims_hold_eps_(?:min|max)",
        "g",
        "smallest / largest swept eps where all four claims hold",
    ),
    Quote("eps_reaching_n_.*", "g", "smallest swept eps with P(T >= N) >= 1/2 (nan: none)"),
    Quote("rule_(?:delta_tilde|theta)", ".4e", "Sec. V-B: the pair the text's rule selects"),
    Quote("tight_delta", ".7e", "the delta for which the printed pair is tight"),
    Quote(
        "(?:rule|published)_objective", ".3f", "Phi^-1(1 - delta~) + Phi^-1(1 - theta) of each pair"
    ),
    Quote("puredp_mean_stopping_time_.*", ".1f", "Sec. V-A instance: E[T] under X = 0 / 1 (<= 40)"),
)


DOC_BLOCKS: dict[str, Generator] = {
    "taylor-numbers": quotes("taylor_survival", "survival.csv", TAYLOR),
}
