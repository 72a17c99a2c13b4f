"""A run accountant generic over the privacy mechanism (model §7.4, §9.1–§9.5, §10).

:class:`SchemeRunAccountant` builds one per-round event from the mechanism's parameters, samples
it (K of M clients without replacement under replace-one, or Poisson under add/remove), and
answers ``report(rounds=t)`` / ``epsilon(rounds=t)`` under the named accountant
(:mod:`privacy.engines`).

========== ========================================= =============================================
mechanism  parameters                                per-round event
========== ========================================= =============================================
floras     those of :class:`FlorasRunAccountant`     Cauchy round (delegated to FlorasRunAccountant)
gaussian   clip_norm, noise_std (units of the sum)   Gaussian, S = 2·clip_norm (replace) or clip_norm
ddgauss    d, clip_norm, grid, local_std, beta       DDGauss bound with n = K contributors (model §9.2)
ldp        epsilon0 [, epsilon_s]                    pure ε₀(+ε_s) round as randomized response (§9.3)
========== ========================================= =============================================
"""

from __future__ import annotations

import math

import numpy as np

from privacy.engines import ACCOUNTANT_TEXT, ACCOUNTANTS, make_engine
from privacy.events import (
    Composed, DDGaussRound, GaussianRound, PoissonSampled, RandomizedResponseRound, SampledWithoutReplacement,
)
from privacy.rdp import CONVERSIONS, DEFAULT_ORDERS, check_orders
from privacy.report import CONVERSION_TEXT, SAMPLINGS, PrivacyReport, _choice, _int_at_least

__all__ = ["MECHANISMS", "LDP_THREAT_MODEL", "THREAT_MODELS", "SchemeRunAccountant"]

MECHANISMS = ("floras", "gaussian", "ddgauss", "ldp")
_PARAMS = {
    "gaussian": ({"clip_norm", "noise_std"}, set()),
    "ddgauss": ({"d", "clip_norm", "grid", "local_std"}, {"beta"}),
    "ldp": ({"epsilon0"}, {"epsilon_s"}),
}
#: sqSGD's (ldp) threat model: the one text of the run's accountant and of ``floras privacy --mechanism ldp``
LDP_THREAT_MODEL = (
    "any observer (T1 and T2): each client's message of a round is epsilon0-LDP on its own (model §9.3); the "
    "composed epsilon uses client-sampling amplification, which assumes the observer does not learn which clients "
    "were sampled (true for T1); an observer that sees who transmits (T2) gets the unamplified composition, "
    "the same accountant with K = M; the guarantee covers the centred, clipped update s_k, not its mean mu_k, "
    "which the clip normalization sends unprotected on the control channel (model §2)"
)
#: each mechanism's default threat model (model §7.4, §9)
THREAT_MODELS = {
    "gaussian": "T1 (output observer; the server adding the noise is trusted, model §9.1): the adversary sees the "
                "noisy aggregates / global models only",
    "ddgauss": "T1 and an honest-but-curious server behind secure aggregation (model §9.2): it sees only the modular "
               "sum of the clients' noisy, discretized updates",
    "ldp": LDP_THREAT_MODEL,
}


def _num(name: str, value, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not math.isfinite(value) or (
        value <= 0 if positive else value < 0
    ):
        raise ValueError(f"{name} must be a finite number {'> 0' if positive else '≥ 0'} (got {value!r})")
    return float(value)


class SchemeRunAccountant:
    """ε of a federated run of ``mechanism`` after t rounds, with every assumption (model §7.4).

    Keyword arguments: K of M clients per round, ``level`` (client or item: item level equals
    client level here, full local epochs assumed), ``relation`` (replace or add-remove), ``sampling``
    (without-replacement needs replace, poisson needs add-remove), δ, ``accountant`` (rdp,
    rdp-generic, pld, gdp), ``threat_model`` (text; default per mechanism), ``conversion``,
    ``orders`` and the mechanism's own parameters (module table).
    """

    def __init__(self, mechanism: str, *, K: int, M: int, level: str = "client", relation: str = "replace",
                 sampling: str = "without-replacement", delta: float = 1e-5, accountant: str = "rdp",
                 threat_model: str | None = None, conversion: str = "tight", orders=None, **params):
        _choice("mechanism", mechanism, MECHANISMS)
        _choice("accountant", accountant, ACCOUNTANTS)
        self.mechanism, self.accountant_name = mechanism, accountant
        if mechanism == "floras":
            from privacy.run import FlorasRunAccountant

            self._floras = FlorasRunAccountant(K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                                               accountant=accountant, conversion=conversion, orders=orders, **params)
            self.threat_model = threat_model
            self.delta = self._floras.delta
            return
        self._floras = None
        K, M = _int_at_least("K", K, 1), _int_at_least("M", M, 1)
        if K > M:
            raise ValueError(f"K must be ≤ M (got K = {K} > M = {M})")
        _choice("level", level, ("client", "item"))
        _choice("relation", relation, ("replace", "add-remove"))
        _choice("sampling", sampling, SAMPLINGS)
        _choice("conversion", conversion, CONVERSIONS)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (0.0 < delta < 1.0):
            raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
        if K < M and sampling == "without-replacement" and relation != "replace":
            raise ValueError("relation must be 'replace' with sampling 'without-replacement' (the bounds assume "
                             "replace-one neighbours; use sampling 'poisson' for add-remove)")
        if K < M and sampling == "poisson" and relation != "add-remove":
            raise ValueError("relation must be 'add-remove' with sampling 'poisson' (the bounds assume add/remove neighbours)")
        if mechanism == "ddgauss" and sampling == "poisson" and K < M:
            raise ValueError("sampling must be 'without-replacement' for ddgauss: under Poisson sampling the number of "
                             "contributors, whose noise adds up, is random and can fall below K")
        required, optional = _PARAMS[mechanism]
        missing, unknown = required - set(params), set(params) - required - optional
        if missing or unknown:
            raise ValueError(f"mechanism {mechanism} needs parameters {sorted(required)} (optional {sorted(optional)}); "
                             + (f"missing {sorted(missing)}" if missing else f"unknown {sorted(unknown)}"))
        self.K, self.M, self.level, self.relation, self.sampling = K, M, level, relation, sampling
        self.delta, self.conversion, self.params = float(delta), conversion, dict(params)
        self.threat_model = threat_model or THREAT_MODELS[mechanism]
        self._orders = np.unique(check_orders(DEFAULT_ORDERS if orders is None else orders))
        base, self.sensitivity, mech_lines = self._base_event(mechanism, K, relation, params)
        rate = K / M
        if rate == 1.0:
            self.event, samp = base, f"no client sampling amplification (K = M = {M})"
        elif sampling == "without-replacement":
            self.event = SampledWithoutReplacement(base, sample_size=K, population_size=M)
            samp = f"client sampling: K = {K} of M = {M} uniformly without replacement each round (q = {rate:.6g}; replace-one)"
        else:
            self.event = PoissonSampled(base, rate=rate)
            samp = f"client sampling: each of M = {M} clients independently with probability {rate:.6g} (Poisson; add/remove)"
        self._engine = make_engine(accountant, self.event, orders=self._orders, conversion=conversion)
        unit = "one client's whole data" if level == "client" else "one record (full local epochs: item level equals client level)"
        self._fixed = [
            f"threat model: {self.threat_model}",
            f"neighbouring relation: {'replace' if relation == 'replace' else 'add or remove'} {unit} ({level}-level DP)",
            *mech_lines, samp, "composition over rounds: adaptive composition of identical rounds",
        ]

    @staticmethod
    def _base_event(mechanism, K, relation, p):
        factor = 2.0 if relation == "replace" else 1.0
        if mechanism == "gaussian":
            c, sd = _num("clip_norm", p["clip_norm"], positive=True), _num("noise_std", p["noise_std"], positive=False)
            S = factor * c
            return GaussianRound(noise_std=sd, sensitivity=S), S, [
                f"sensitivity S = {'2·' if factor == 2 else ''}clip_norm = {S:.6g} (ℓ2 norm of one client's clipped "
                f"contribution, units of the released sum; {relation})",
                f"noise: Gaussian N(0, σ²I), σ = {sd:.6g} (noise multiplier z = σ/S = {sd / S if S else math.inf:.6g})",
            ]
        if mechanism == "ddgauss":
            ev = DDGaussRound(n=K, d=int(p["d"]), clip=float(p["clip_norm"]), grid=float(p["grid"]),
                              local_std=float(p["local_std"]), beta=float(p.get("beta", math.exp(-0.5))), relation=relation)
            return ev, ev.grid * ev.delta2 * factor, [
                f"sensitivity: Δ₂ = {ev.delta2:.6g} grid units after conditional rounding (β = {ev.beta:.6g}, d_pad = {ev.d_pad}), "
                f"γΔ₂ = {ev.grid * ev.delta2:.6g} in model units{'; replace-one doubles l₁ and l₂' if factor == 2 else ''}",
                f"noise: n = K = {K} clients each add N_ℤ(0, (σ/γ)²) with σ = {ev.local_std:.6g}, γ = {ev.grid:.6g}; RDP bound of "
                "Kairouz, Liu & Steinke 2021 (arXiv:2102.06387, Thm 1 / Prop. 14; model §9.2); sampling by the generic bounds",
            ]
        e0 = _num("epsilon0", p["epsilon0"], positive=False)
        ev = RandomizedResponseRound(epsilon0=e0)
        lines = [f"each round is pure ε₀-LDP with ε₀ = {e0:.6g}, accounted as binary randomized response (model §9.3)"]
        if p.get("epsilon_s") is not None:
            es = _num("epsilon_s", p["epsilon_s"], positive=False)
            ev = Composed((ev, RandomizedResponseRound(epsilon0=es)))
            lines.append(f"adaptive norm bound: a further pure ε_s = {es:.6g} per round, composed")
        return ev, None, lines

    # -----------------------------------------------------------------------------------------
    def epsilon(self, *, rounds: int) -> float:
        if self._floras is not None:
            return self._floras.epsilon(rounds=rounds)
        return self._engine.epsilon(_int_at_least("rounds", rounds, 0), self.delta)[0]

    def delta_at(self, *, rounds: int, epsilon: float) -> float:
        if self._floras is not None:
            return self._floras.delta_at(rounds=rounds, epsilon=epsilon)
        return self._engine.delta_at(_int_at_least("rounds", rounds, 0), epsilon)

    def report(self, *, rounds: int) -> PrivacyReport:
        if self._floras is not None:
            rep = self._floras.report(rounds=rounds)
            if self.threat_model:
                rep.assumptions.insert(0, f"threat model (as given): {self.threat_model}")
            return rep
        rounds = _int_at_least("rounds", rounds, 0)
        eps, best, warnings = self._engine.epsilon(rounds, self.delta)
        approx = bool(getattr(self._engine, "approximate", False))
        lines = list(self._fixed) + [f"δ = {self.delta:g}", f"accountant: {ACCOUNTANT_TEXT[self.accountant_name]}"]
        if self.accountant_name == "gdp":
            lines.append(self._engine.rule)
        elif self.accountant_name.startswith("rdp"):
            lines += [f"ε attained at α = {best:.6g}" if best is not None else "no Rényi order attains a finite positive ε",
                      CONVERSION_TEXT[self.conversion]]
        return PrivacyReport(
            epsilon=eps, delta=self.delta, best_order=best,
            sensitivity=float(self.sensitivity) if self.sensitivity is not None else 0.0,
            threat_model=self.threat_model, assumptions=lines, warnings=list(warnings), rounds=rounds,
            conversion=self.conversion, relation=self.relation, level=self.level, accountant=self.accountant_name,
            approximate=approx,
        )
