"""Empirical lower bound on ε from a distinguishing game (model §7.5).

Input: the scores of an attack's test statistic on i.i.d. trials of two neighbouring
worlds — world 0 (e.g. the canary update is present) and world 1 (the canary is replaced).
The attack says "world 1" when ``direction · score > τ``.

Procedure (decided here and stated in every report):

1. **Held-out threshold selection.** Each world's trials are split by index into a selection
   part (the first ``select_fraction`` of them) and an evaluation part (the rest); the trials
   are i.i.d., so the split is independent of the data. On the selection part every candidate
   rule (τ at each observed score, both directions) is scored by the same confidence-bounded ε
   as in step 2, and the best rule is kept (ties broken by the ε of the smoothed point
   estimates (k + ½)/(n + 1); among rules still tied, the middle one, with τ in the middle of
   the gap to the next observed score). Only this one rule is evaluated on the held-out part,
   so no multiple-comparison correction over thresholds is needed.
2. **Clopper–Pearson on the held-out part.** With FP false positives among n₀ world-0 trials
   and FN false negatives among n₁ world-1 trials, the one-sided upper bounds FPR⁺ and FNR⁺
   are taken at level 1 − α/2 each (Bonferroni over the two rates), so both hold together with
   probability ≥ 1 − α = ``confidence``. Then (Kairouz, Oh & Viswanath 2015, Thm. 2.1;
   Jagielski, Ullman & Oprea 2020, arXiv:2006.07709, §3)

       ε_lower = max{ ln((1 − δ − FNR⁺)/FPR⁺), ln((1 − δ − FPR⁺)/FNR⁺), 0 }.

Guarantee: if the mechanism is (ε, δ)-DP for the neighbouring pair played, then
P[ε_lower > ε] ≤ 1 − confidence over the trials. The largest value the procedure can report
with n evaluation trials per world (a perfect attack) is about ln(n / ln(2/α)).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .stats import check_confidence, clopper_pearson_upper, epsilon_from_rates

__all__ = ["EpsilonLowerBound", "empirical_epsilon_lower", "max_reportable_epsilon"]

_MAX_CANDIDATES = 4096  # thresholds scored on the selection part (evenly spaced order statistics)


@dataclass(frozen=True)
class EpsilonLowerBound:
    """Result of :func:`empirical_epsilon_lower`.

    Attributes
    ----------
    epsilon : float
        ε_lower, a lower confidence bound on the mechanism's ε at ``delta``.
    confidence : float
        Joint confidence level 1 − α of the bound.
    delta : float
    threshold, direction : float, int
        The rule selected on the selection part: "world 1" iff direction·score > threshold.
    false_positives, n_eval_world0, false_negatives, n_eval_world1 : int
        Held-out counts.
    fpr_upper, fnr_upper : float
        One-sided Clopper–Pearson upper bounds at level 1 − α/2 each.
    n_select_world0, n_select_world1 : int
        Trials used for threshold selection.
    max_reportable : float
        ε_lower a perfect attack would get with these held-out sizes (saturation level).
    method : str
        "held-out threshold selection + Clopper–Pearson (Bonferroni over FPR, FNR)".
    """

    epsilon: float
    confidence: float
    delta: float
    threshold: float
    direction: int
    false_positives: int
    n_eval_world0: int
    false_negatives: int
    n_eval_world1: int
    fpr_upper: float
    fnr_upper: float
    n_select_world0: int
    n_select_world1: int
    max_reportable: float
    method: str = "held-out threshold selection + Clopper-Pearson (Bonferroni over FPR, FNR)"

    @property
    def saturated(self) -> bool:
        """True when the attack was perfect on the held-out trials (more trials could raise ε_lower)."""
        return self.false_positives == 0 and self.false_negatives == 0

    def to_dict(self) -> dict:
        out = asdict(self)
        out["saturated"] = self.saturated
        return out


def _check_scores(scores, name: str) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64).ravel()
    if s.size < 2:
        raise ValueError(f"{name} must hold at least 2 trials (got {s.size})")
    if np.any(np.isnan(s)):
        raise ValueError(f"{name} must not contain NaN")
    return s


def _error_counts(s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """FP = #{s0 > τ}, FN = #{s1 ≤ τ} for every τ (vectorized by sorting)."""
    fp = s0.size - np.searchsorted(np.sort(s0), thresholds, side="right")
    fn = np.searchsorted(np.sort(s1), thresholds, side="right")
    return fp, fn


def max_reportable_epsilon(n_world0: int, n_world1: int, *, delta: float, confidence: float) -> float:
    """ε_lower of a perfect attack (0 errors) with these held-out sizes."""
    level = 1.0 - (1.0 - check_confidence(confidence)) / 2.0
    fpr = clopper_pearson_upper(0, n_world0, level=level)
    fnr = clopper_pearson_upper(0, n_world1, level=level)
    return float(epsilon_from_rates(fpr, fnr, delta=delta))


def empirical_epsilon_lower(
    scores_world0,
    scores_world1,
    *,
    delta: float,
    confidence: float = 0.95,
    select_fraction: float = 0.5,
) -> EpsilonLowerBound:
    """Lower confidence bound on ε from attack scores in two neighbouring worlds.

    Parameters
    ----------
    scores_world0, scores_world1 : array-like of float, shapes [n0], [n1]
        Test statistic on i.i.d. trials of each world (±inf allowed, NaN not).
    delta : float in [0, 1)
        The δ at which ε is bounded (use the accountant's δ for a like-for-like comparison).
    confidence : float in (0, 1)
        Joint confidence 1 − α of the bound.
    select_fraction : float in (0, 1)
        Share of each world's trials used to select the threshold (the rest evaluate it).

    Returns
    -------
    EpsilonLowerBound (see the module docstring for the procedure and its guarantee).
    """
    confidence = check_confidence(confidence)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be a number in [0, 1) (got {delta!r})")
    if not isinstance(select_fraction, (int, float)) or not 0.0 < select_fraction < 1.0:
        raise ValueError(f"select_fraction must be a number in (0, 1) (got {select_fraction!r})")
    s0 = _check_scores(scores_world0, "scores_world0")
    s1 = _check_scores(scores_world1, "scores_world1")
    m0 = min(max(1, int(math.floor(select_fraction * s0.size))), s0.size - 1)
    m1 = min(max(1, int(math.floor(select_fraction * s1.size))), s1.size - 1)
    sel0, ev0 = s0[:m0], s0[m0:]
    sel1, ev1 = s1[:m1], s1[m1:]
    level = 1.0 - (1.0 - confidence) / 2.0  # one-sided level of each rate (Bonferroni over two rates)

    best = None
    for direction in (1, -1):
        a0, a1 = direction * sel0, direction * sel1
        thresholds = np.unique(np.concatenate([a0, a1]))
        thresholds = thresholds[np.isfinite(thresholds)]
        if thresholds.size > _MAX_CANDIDATES:  # a data-independent thinning of the candidate grid
            thresholds = thresholds[np.linspace(0, thresholds.size - 1, _MAX_CANDIDATES).round().astype(int)]
        if thresholds.size == 0:
            thresholds = np.array([0.0])
        fp, fn = _error_counts(a0, a1, thresholds)
        eps_cp = epsilon_from_rates(
            clopper_pearson_upper(fp, m0, level=level), clopper_pearson_upper(fn, m1, level=level), delta=delta
        )
        eps_pt = epsilon_from_rates((fp + 0.5) / (m0 + 1), (fn + 0.5) / (m1 + 1), delta=delta)
        i = int(np.lexsort((-eps_pt, -eps_cp))[0])
        key = (float(eps_cp[i]), float(eps_pt[i]))
        # every threshold in [t_i, t_{i+1}) makes the same decisions on the selection part; among
        # equally good candidates take the middle one and the middle of its interval (margin for
        # the held-out part)
        tied = np.flatnonzero((eps_cp == eps_cp[i]) & (eps_pt == eps_pt[i]))
        i = int(tied[tied.size // 2])
        tau = float(thresholds[i]) if i + 1 == thresholds.size else 0.5 * float(thresholds[i] + thresholds[i + 1])
        if best is None or key > best[0]:
            best = (key, tau, direction)
    _, tau, direction = best

    fp_e, fn_e = _error_counts(direction * ev0, direction * ev1, np.array([tau]))
    fp_e, fn_e = int(fp_e[0]), int(fn_e[0])
    fpr_hi = float(clopper_pearson_upper(fp_e, ev0.size, level=level))
    fnr_hi = float(clopper_pearson_upper(fn_e, ev1.size, level=level))
    eps = float(epsilon_from_rates(fpr_hi, fnr_hi, delta=delta))
    return EpsilonLowerBound(
        epsilon=eps,
        confidence=confidence,
        delta=float(delta),
        threshold=tau,
        direction=direction,
        false_positives=fp_e,
        n_eval_world0=int(ev0.size),
        false_negatives=fn_e,
        n_eval_world1=int(ev1.size),
        fpr_upper=fpr_hi,
        fnr_upper=fnr_hi,
        n_select_world0=m0,
        n_select_world1=m1,
        max_reportable=max_reportable_epsilon(ev0.size, ev1.size, delta=delta, confidence=confidence),
    )
