"""Accounting for a FLORAS federated-learning run (SPEC §7.1–§7.4) and planning.

:class:`FlorasRunAccountant` turns the run's configuration into one per-round privacy event
(Cauchy noise of scale γ = N − K, sensitivity from the normalization, client and record
sampling), evaluates its RDP curve once, and answers ``report(rounds=t)`` by composing t rounds
(RDP × t) and converting to (ε, δ). Every :class:`PrivacyReport` carries the assumptions of
SPEC §7.4. :func:`plan_smallest_N` inverts the question.

Sampling chains (which published bound applies to which configuration; neighbouring relations
as each source assumes them):

====== ============== ========== ===========================================================
level  clients        relation   per-round event
====== ============== ========== ===========================================================
client without repl.  replace    WoR(K of M) ∘ Cauchy(S = 2C/b)          [WBK 2019, Thm 9]
client Poisson        add-remove Poisson(K/M) ∘ Cauchy(S = C/b)          [Zhu & Wang 2019, Thm 6]
client (other pairs)  —          refused: the bound's relation differs from the one asked for
item   without repl.  either     WoR(K of M) ∘ [record sampling] ∘ Cauchy(S = 2C/b)
item   Poisson        either     [record sampling] ∘ Cauchy(S = 2C/b); no client amplification
====== ============== ========== ===========================================================

Record sampling at item level: E ≥ 1 full local epochs (``local_steps=None``) use every record,
q_touch = 1, no amplification (item level equals client level, SPEC §7.3). With E local steps of
batch B from D records, each step's batch is taken as Poisson-style (every record independently
with probability q = B/D), so q_touch = 1 − (1 − q)^E and the record is touched independently of
the others; under add-remove this is amplified by Zhu & Wang 2019, Thm 6. A record change
replaces one client's data set, which is the replace-one relation WBK 2019 needs at client level.
Under ``replace`` at item level with local steps no record-sampling amplification is applied
(Zhu & Wang cover add/remove only); with Poisson client sampling no client amplification is
applied at item level (a record change is a replacement at client level, which Zhu & Wang do not
cover). Each report says which.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from privacy.accountant import RdpAccountant, edge_warning, event_rdp
from privacy.events import CauchyRound, PoissonSampled, PrivacyEvent, SampledWithoutReplacement
from privacy.rdp import CONVERSIONS, DEFAULT_ORDERS, check_orders, delta_from_rdp, epsilon_from_rdp
from privacy.sensitivity import LEVELS, NORMALIZATIONS, RELATIONS, release_sensitivity

__all__ = ["SAMPLINGS", "PrivacyReport", "FlorasRunAccountant", "PlanResult", "plan_smallest_N", "largest_sensitivity"]

SAMPLINGS = ("without-replacement", "poisson")
THREAT_MODEL_T1 = (
    "T1 (output observer): the adversary sees only the server's per-round estimates ŝ_t / the global "
    "models; this bound says nothing about T2 (a base station that keeps the raw received signals, SPEC §7.1)"
)
ACCOUNTANT_NAME = "privacy.RdpAccountant (Rényi DP, composition by addition order by order)"
CONVERSION_TEXT = {
    "standard": "standard conversion ε = RDP(α) + ln(1/δ)/(α−1) (Mironov 2017, arXiv:1702.07476, Prop. 3)",
    "tight": (
        "tight conversion ε = RDP(α) + ln(1−1/α) − (ln δ + ln α)/(α−1) (Canonne–Kamath–Steinke 2020, "
        "arXiv:2004.00010, Prop. 12; Balle et al. 2020, arXiv:1905.09982, Thm 21)"
    ),
}


def _fmt(x: float) -> str:
    return "∞" if x == math.inf else f"{x:.6g}"


@dataclass(frozen=True)
class PrivacyReport:
    """ε after some rounds, with every assumption of SPEC §7.4.

    Attributes
    ----------
    epsilon : float (math.inf allowed)
    delta : float
    best_order : float or None
        The Rényi order α where ε was attained (None when ε = ∞ or ε = 0 at no cost).
    sensitivity : float
        S, dimensionless (ℓ2 sensitivity of Σ_k s_k/b).
    threat_model : str
        "T1".
    assumptions : list[str]
        Every assumption, one sentence each (threat model, relation, S and how, sampling,
        normalization caveats, δ, α, accountant, conversion).
    warnings : list[str]
        Grid-edge and divergence warnings.
    """

    epsilon: float
    delta: float
    best_order: float | None
    sensitivity: float
    threat_model: str
    assumptions: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    rounds: int = 0
    conversion: str = "tight"
    relation: str = "replace"
    level: str = "client"
    gamma: float = 0.0
    accountant: str = ACCOUNTANT_NAME

    def to_dict(self) -> dict:
        """JSON-ready dict; ε = ∞ is the string "inf"."""
        return {
            "epsilon": "inf" if self.epsilon == math.inf else float(self.epsilon),
            "delta": float(self.delta),
            "best_order": None if self.best_order is None else float(self.best_order),
            "sensitivity": float(self.sensitivity),
            "threat_model": self.threat_model,
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "rounds": int(self.rounds),
            "conversion": self.conversion,
            "relation": self.relation,
            "level": self.level,
            "gamma": float(self.gamma),
            "accountant": self.accountant,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)

    def __str__(self) -> str:
        alpha = "—" if self.best_order is None else f"{self.best_order:.6g}"
        lines = [
            f"ε = {_fmt(self.epsilon)} at δ = {self.delta:g} after {self.rounds} round(s) "
            f"({self.level}-level, {self.relation}, threat model {self.threat_model}, best order α = {alpha})",
            "assumptions:",
        ]
        lines += [f"  - {a}" for a in self.assumptions]
        if self.warnings:
            lines.append("warnings:")
            lines += [f"  ! {w}" for w in self.warnings]
        return "\n".join(lines)


def _int_at_least(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer ≥ {low} (got {value!r})")
    return int(value)


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {{{', '.join(allowed)}}} (got {value!r})")


class FlorasRunAccountant:
    """Privacy accounting for a FLORAS run under threat model T1 (SPEC §7).

    All arguments are keyword-only. K scheduled of M clients, N sequences (γ = N − K), model
    dimension d; normalization, C (None: √(d·P)), power P, clip_norm R (``clip`` only); level
    ``client`` or ``item``; relation ``replace`` or ``add-remove``; client sampling
    ``without-replacement`` or ``poisson``; δ; for item level, local_steps E (None: full local
    epochs, q_touch = 1), batch_size B and local_dataset_size D; orders (default grid of 100).
    ``sensitivity`` overrides the derived S; ``conversion`` is ``tight`` (default) or ``standard``.

    The per-round RDP curve is computed once here; :meth:`report` only multiplies it by t.
    """

    def __init__(
        self,
        *,
        K: int,
        N: int,
        M: int,
        d: int,
        normalization: str = "paper",
        C: float | None = None,
        power: float = 1.0,
        clip_norm: float | None = None,
        level: str = "client",
        relation: str = "replace",
        sampling: str = "without-replacement",
        delta: float = 1e-5,
        local_steps: int | None = None,
        batch_size: int | None = None,
        local_dataset_size: int | None = None,
        orders=None,
        sensitivity: float | None = None,
        conversion: str = "tight",
    ):
        K = _int_at_least("K", K, 1)
        N = _int_at_least("N", N, 1)
        M = _int_at_least("M", M, 1)
        d = _int_at_least("d", d, 1)
        if K > M:
            raise ValueError(f"K must be ≤ M (got K = {K} > M = {M})")
        if N < K:
            raise ValueError(f"N must be ≥ K (got N = {N} < K = {K})")
        _choice("normalization", normalization, NORMALIZATIONS)
        _choice("level", level, LEVELS)
        _choice("relation", relation, RELATIONS)
        _choice("sampling", sampling, SAMPLINGS)
        _choice("conversion", conversion, CONVERSIONS)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (0.0 < delta < 1.0):
            raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
        if sensitivity is not None and (
            isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, float))
            or not math.isfinite(sensitivity) or sensitivity < 0
        ):
            raise ValueError(f"sensitivity must be a finite number ≥ 0 (got {sensitivity!r})")
        if level == "client" and sampling == "without-replacement" and relation != "replace":
            raise ValueError(
                "relation must be 'replace' for client-level accounting with sampling 'without-replacement' "
                "(Wang, Balle & Kasiviswanathan 2019 assume replace-one neighbours; use sampling 'poisson' for add-remove)"
            )
        if level == "client" and sampling == "poisson" and relation != "add-remove":
            raise ValueError(
                "relation must be 'add-remove' for client-level accounting with sampling 'poisson' "
                "(Zhu & Wang 2019 assume add/remove neighbours)"
            )
        if local_steps is not None:
            local_steps = _int_at_least("local_steps", local_steps, 1)
            if level == "item":
                batch_size = _int_at_least("batch_size", batch_size, 1)
                local_dataset_size = _int_at_least("local_dataset_size", local_dataset_size, 1)
                if batch_size > local_dataset_size:
                    raise ValueError(
                        f"batch_size must be ≤ local_dataset_size (got {batch_size} > {local_dataset_size})"
                    )
        self._orders = np.unique(check_orders(DEFAULT_ORDERS if orders is None else orders))
        sens = release_sensitivity(
            normalization=normalization, d=d, relation=relation, level=level, C=C, power=power, clip_norm=clip_norm
        )
        self.K, self.N, self.M, self.d = K, N, M, d
        self.gamma = N - K
        self.delta = float(delta)
        self.level, self.relation, self.sampling, self.conversion = level, relation, sampling, conversion
        self.normalization = normalization
        if sensitivity is None:
            self.sensitivity = sens.value
            sens_line = f"sensitivity {sens.derivation}"
        else:
            self.sensitivity = float(sensitivity)
            sens_line = (
                f"sensitivity S = {self.sensitivity:.6g} given by the user (overrides the derived {sens.value:.6g}: "
                f"{sens.derivation})"
            )
        base = CauchyRound(gamma=float(self.gamma), sensitivity=self.sensitivity)
        self.event, sampling_lines = self._build_event(base, local_steps, batch_size, local_dataset_size)
        self.round_rdp = event_rdp(self.event, self._orders)
        self._fixed_assumptions = [
            THREAT_MODEL_T1,
            f"neighbouring relation: {self._relation_text()}",
            sens_line,
            (
                f"noise: isotropic multivariate Cauchy of scale γ = N − K = {N} − {K} = {self.gamma} per round; "
                "per-round RDP bound ε(α) = −ln(1 − α(α−1)S²/γ²)/(2(α−1)) if α(α−1)S² < γ², else ∞ "
                "(SPEC §7.2, derived; valid for every d, tight as d grows)"
            ),
            *sampling_lines,
            *sens.caveats,
            "composition over rounds: RDP curves added order by order",
        ]

    # ---------------------------------------------------------------------------------------
    def _relation_text(self) -> str:
        unit = "record" if self.level == "item" else "client's whole data"
        if self.relation == "replace":
            return f"replace one {unit} ({self.level}-level DP)"
        what = "one record added or removed" if self.level == "item" else "one client added or removed"
        return f"{what} ({self.level}-level DP)"

    def _build_event(self, base: PrivacyEvent, local_steps, batch_size, local_dataset_size):
        K, M = self.K, self.M
        p = K / M
        wor_line = (
            f"client sampling: K = {K} of M = {M} uniformly without replacement each round (p = {p:.6g}); "
            "amplification by Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087, Thm 9; replace-one neighbours, "
            "integer orders, fractional orders through ⌈α⌉)"
        )
        if self.level == "client":
            if self.sampling == "without-replacement":
                return SampledWithoutReplacement(base, sample_size=K, population_size=M), [wor_line]
            return PoissonSampled(base, rate=p), [
                f"client sampling: each of M = {M} clients independently with probability {p:.6g} (Poisson); "
                "amplification by Zhu & Wang 2019 (ICML, Thm 6; add/remove neighbours, integer orders)"
            ]
        lines = []
        if local_steps is None:
            inner = base
            lines.append("record use: E ≥ 1 full local epochs, every record is used (q_touch = 1): item level equals client level")
        else:
            q = batch_size / local_dataset_size
            q_touch = 1.0 - (1.0 - q) ** local_steps
            touch = (
                f"record use: E = {local_steps} local steps, each batch Poisson-style (every record independently with "
                f"probability q = B/D = {batch_size}/{local_dataset_size}), q_touch = 1 − (1 − q)^E = {q_touch:.6g}"
            )
            if self.relation == "add-remove" and q_touch < 1.0:
                inner = PoissonSampled(base, rate=q_touch)
                lines.append(touch + "; amplification by Zhu & Wang 2019 (ICML, Thm 6; add/remove of one record)")
            else:
                inner = base
                lines.append(
                    touch + "; no amplification applied (Zhu & Wang 2019 cover add/remove; replace-one under Poisson "
                    "record sampling is not covered by the bounds used here)"
                    if q_touch < 1.0 else touch
                )
        if self.sampling == "without-replacement":
            lines.append(wor_line + "; a record change replaces one client's data set")
            return SampledWithoutReplacement(inner, sample_size=K, population_size=M), lines
        lines.append(
            f"client sampling: Poisson with probability {p:.6g}, but no client-level amplification is applied at item "
            "level (a record change replaces one client's data set; Zhu & Wang 2019 cover add/remove only)"
        )
        return inner, lines

    # ---------------------------------------------------------------------------------------
    @property
    def orders(self) -> np.ndarray:
        return self._orders.copy()

    def accountant(self, rounds: int) -> RdpAccountant:
        """An :class:`RdpAccountant` holding ``rounds`` compositions of the per-round event."""
        rounds = _int_at_least("rounds", rounds, 0)
        return RdpAccountant(self._orders).compose(self.event, rounds)

    def rdp(self, rounds: int) -> np.ndarray:
        """RDP curve after ``rounds`` rounds [n] float64 (t · per-round curve)."""
        rounds = _int_at_least("rounds", rounds, 0)
        if rounds == 0:
            return np.zeros_like(self._orders)
        return rounds * self.round_rdp

    def report(self, *, rounds: int) -> PrivacyReport:
        """(ε, δ) after ``rounds`` rounds with every assumption (SPEC §7.4). Cheap: O(#orders)."""
        rounds = _int_at_least("rounds", rounds, 0)
        curve = self.rdp(rounds)
        eps, idx = epsilon_from_rdp(self._orders, curve, delta=self.delta, conversion=self.conversion)
        warnings = []
        best = None
        if math.isfinite(eps) and eps > 0:
            best = float(self._orders[idx])
            w = edge_warning(self._orders, idx, eps)
            if w:
                warnings.append(w)
        if eps == math.inf and rounds > 0:
            warnings.append(self._divergence_text())
        assumptions = list(self._fixed_assumptions) + [
            f"δ = {self.delta:g}",
            f"order grid: {len(self._orders)} orders in [{self._orders[0]:.6g}, {self._orders[-1]:.6g}]; "
            + ("ε attained at α = " + f"{best:.6g}" if best is not None else "no order attains a finite ε" if eps == math.inf else "ε = 0"),
            f"accountant: {ACCOUNTANT_NAME}",
            CONVERSION_TEXT[self.conversion],
        ]
        return PrivacyReport(
            epsilon=eps,
            delta=self.delta,
            best_order=best,
            sensitivity=self.sensitivity,
            threat_model="T1",
            assumptions=assumptions,
            warnings=warnings,
            rounds=rounds,
            conversion=self.conversion,
            relation=self.relation,
            level=self.level,
            gamma=float(self.gamma),
        )

    def delta_at(self, *, rounds: int, epsilon: float) -> float:
        """δ(ε) after ``rounds`` rounds (the inverse conversion)."""
        return delta_from_rdp(self._orders, self.rdp(rounds), epsilon=epsilon, conversion=self.conversion)[0]

    def _divergence_text(self) -> str:
        S, g = self.sensitivity, float(self.gamma)
        if g == 0.0:
            return "γ = N − K = 0: no Cauchy noise, ε = ∞ (SPEC §7.2)"
        r = (g / S) ** 2
        alpha_max = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * r))
        lower = math.log(1.0 / self.delta) / r
        return (
            f"ε = ∞ on this grid: the per-round Cauchy bound is finite only for α(α−1) < γ²/S² = {r:.4g}, i.e. "
            f"α < {alpha_max:.8g}; at any such order the conversion alone costs ln(1/δ)/(α−1) > ln(1/δ)·S²/γ² = "
            f"{lower:.4g}, so no order could certify a meaningful ε (raise γ = N − K or lower S = 2C/b)"
        )


# -------------------------------------------------------------------------------------------
# Planning
# -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanResult:
    """Outcome of :func:`plan_smallest_N`: N (None when no N in the range reaches the target)."""

    N: int | None
    target_epsilon: float
    search_range: tuple[int, int]
    report: PrivacyReport
    message: str

    def to_dict(self) -> dict:
        return {
            "N": self.N,
            "gamma": None if self.N is None else self.N - (self.search_range[0]),
            "target_epsilon": self.target_epsilon,
            "search_range": list(self.search_range),
            "message": self.message,
            "report": self.report.to_dict(),
        }


def plan_smallest_N(*, target_epsilon: float, rounds: int, n_max: int = 10**9, **config) -> PlanResult:
    """Smallest N ∈ [K, n_max] whose run reaches ε ≤ ``target_epsilon`` after ``rounds`` rounds.

    ``config`` holds the keyword arguments of :class:`FlorasRunAccountant` except N. ε is
    non-increasing in N (every bound used is non-decreasing in the base RDP, which decreases in
    γ), so a bisection over the integers is exact. The result's report is at the N found, or at
    n_max when none reaches the target.
    """
    if isinstance(target_epsilon, bool) or not isinstance(target_epsilon, (int, float)) or not (
        math.isfinite(target_epsilon) and target_epsilon > 0
    ):
        raise ValueError(f"target_epsilon must be a finite number > 0 (got {target_epsilon!r})")
    rounds = _int_at_least("rounds", rounds, 0)
    if "N" in config:
        raise ValueError("N is what plan_smallest_N searches for; do not pass it")
    K = config.get("K")
    _int_at_least("K", K, 1)
    n_max = _int_at_least("n_max", n_max, K)

    def report_at(n: int) -> PrivacyReport:
        return FlorasRunAccountant(N=n, **config).report(rounds=rounds)

    lo_report = report_at(K)  # validates the whole configuration before the search
    if lo_report.epsilon <= target_epsilon:
        return PlanResult(K, float(target_epsilon), (K, n_max), lo_report, f"N = K = {K} (γ = 0) already reaches ε ≤ {target_epsilon:g}")
    hi_report = report_at(n_max)
    if hi_report.epsilon > target_epsilon:
        return PlanResult(
            None, float(target_epsilon), (K, n_max), hi_report,
            f"no N in [{K}, {n_max}] reaches ε ≤ {target_epsilon:g} after {rounds} rounds "
            f"(ε = {_fmt(hi_report.epsilon)} at N = {n_max})",
        )
    lo, hi = K, n_max
    while hi - lo > 1:
        mid = (lo + hi) // 2
        rep = report_at(mid)
        if rep.epsilon <= target_epsilon:
            hi, hi_report = mid, rep
        else:
            lo = mid
    return PlanResult(
        hi, float(target_epsilon), (K, n_max), hi_report,
        f"smallest N = {hi} (γ = {hi - K}) reaches ε = {_fmt(hi_report.epsilon)} ≤ {target_epsilon:g} after {rounds} rounds; "
        f"orthonormal sequences then need L ≥ {hi}",
    )


def largest_sensitivity(*, target_epsilon: float, rounds: int, rel_tol: float = 1e-6, **config) -> float:
    """Largest S (bisection in log S) whose run reaches ε ≤ ``target_epsilon`` after ``rounds`` rounds.

    ``config`` holds the keyword arguments of :class:`FlorasRunAccountant` except ``sensitivity``.
    C follows as S·b/2 (replace) or S·b (client-level add-remove). Returns 0.0 when even S → 0
    cannot reach the target (only for γ = 0 or a target below the S = 0 value, which is 0).
    """
    if not (isinstance(target_epsilon, (int, float)) and math.isfinite(target_epsilon) and target_epsilon > 0):
        raise ValueError(f"target_epsilon must be a finite number > 0 (got {target_epsilon!r})")
    if "sensitivity" in config:
        raise ValueError("sensitivity is what largest_sensitivity searches for; do not pass it")

    def eps_at(s: float) -> float:
        return FlorasRunAccountant(sensitivity=s, **config).report(rounds=rounds).epsilon

    if config.get("N", 0) - config.get("K", 0) <= 0 and eps_at(1e-300) > target_epsilon:
        return 0.0
    lo, hi = 1e-12, 1.0
    if eps_at(lo) > target_epsilon:
        return 0.0
    while eps_at(hi) <= target_epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return hi
    while hi / lo > 1.0 + rel_tol:
        mid = math.sqrt(lo * hi)
        if eps_at(mid) <= target_epsilon:
            lo = mid
        else:
            hi = mid
    return lo
