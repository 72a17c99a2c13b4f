"""The run accountant, generic over the privacy mechanism (model §7.4, §9.1–§9.5, §10).

:class:`RunAccountant` takes a registered mechanism (:mod:`privacy.mechanisms`) and its
parameters, builds one per-round event, samples it (K of M clients without replacement under
replace-one, or Poisson under add/remove), and answers ``report(rounds=t)`` /
``epsilon(rounds=t)`` under the named accountant (:mod:`privacy.engines`). A mechanism with its
own sampling chain (FLORAS, :class:`privacy.run.FlorasRunAccountant`) is handed its arguments
unchanged; the report then carries the threat model given here first.
"""

from __future__ import annotations

import numpy as np

from privacy.checks import check_run_arguments
from privacy.engines import ACCOUNTANT_TEXT, make_engine
from privacy.events import PoissonSampled, SampledWithoutReplacement
from privacy.mechanisms import mechanism
from privacy.rdp import DEFAULT_ORDERS, check_orders
from privacy.report import CONVERSION_TEXT, PrivacyReport, int_at_least

__all__ = ["RunAccountant"]


class RunAccountant:
    """ε of a federated run of ``mechanism`` after t rounds, with every assumption (model §7.4).

    Keyword arguments: K of M clients per round, ``level`` (client or item: item level equals
    client level for these mechanisms, full local epochs assumed), ``relation`` (replace or
    add-remove), ``sampling`` (without-replacement needs replace, poisson needs add-remove, when
    K < M), δ, ``accountant`` (rdp, rdp-generic, pld, gdp, fdp, tightest), ``threat_model`` (text; default: the
    mechanism's), ``conversion``, ``orders`` and the mechanism's own parameters.
    """

    def __init__(self, mechanism_name: str, *, K: int, M: int, level: str = "client", relation: str = "replace",
                 sampling: str = "without-replacement", delta: float = 1e-5, accountant: str = "rdp",
                 threat_model: str | None = None, conversion: str = "tight", orders=None, **params):
        mech = mechanism(mechanism_name)
        self.mechanism, self.accountant_name = mech.name, accountant
        if mech.run_accountant is not None:
            check_run_arguments(K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                                conversion=conversion, accountant=accountant)
            self._own = mech.run_accountant(K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                                            accountant=accountant, conversion=conversion, orders=orders, **params)
            self.threat_model = threat_model
            self.delta = self._own.delta
            return
        self._own = None
        K, M, delta = check_run_arguments(K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                                          conversion=conversion, accountant=accountant)
        if K < M and sampling == "without-replacement" and relation != "replace":
            raise ValueError("relation must be 'replace' with sampling 'without-replacement' (the bounds assume "
                             "replace-one neighbours; use sampling 'poisson' for add-remove)")
        if K < M and sampling == "poisson" and relation != "add-remove":
            raise ValueError("relation must be 'add-remove' with sampling 'poisson' (the bounds assume add/remove neighbours)")
        if mech.poisson_refusal and sampling == "poisson" and K < M:
            raise ValueError(f"sampling must be 'without-replacement' for {mech.name}: {mech.poisson_refusal}")
        required, optional = set(mech.required), set(mech.optional)
        missing, unknown = required - set(params), set(params) - required - optional
        if missing or unknown:
            raise ValueError(f"mechanism {mech.name} needs parameters {sorted(required)} (optional {sorted(optional)}); "
                             + (f"missing {sorted(missing)}" if missing else f"unknown {sorted(unknown)}"))
        self.K, self.M, self.level, self.relation, self.sampling = K, M, level, relation, sampling
        self.delta, self.conversion, self.params = delta, conversion, dict(params)
        self.threat_model = threat_model or mech.threat_model
        self._orders = np.unique(check_orders(DEFAULT_ORDERS if orders is None else orders))
        rnd = mech.round_event(params, K=K, relation=relation)
        self.sensitivity = rnd.sensitivity
        rate = K / M
        if rate == 1.0:
            self.event, samp = rnd.event, f"no client sampling amplification (K = M = {M})"
        elif sampling == "without-replacement":
            self.event = SampledWithoutReplacement(rnd.event, sample_size=K, population_size=M)
            samp = f"client sampling: K = {K} of M = {M} uniformly without replacement each round (q = {rate:.6g}; replace-one)"
        else:
            self.event = PoissonSampled(rnd.event, rate=rate)
            samp = f"client sampling: each of M = {M} clients independently with probability {rate:.6g} (Poisson; add/remove)"
        self._engine = make_engine(accountant, self.event, orders=self._orders, conversion=conversion)
        unit = "one client's whole data" if level == "client" else "one record (full local epochs: item level equals client level)"
        self._fixed = [
            f"threat model: {self.threat_model}",
            f"neighbouring relation: {'replace' if relation == 'replace' else 'add or remove'} {unit} ({level}-level DP)",
            *rnd.lines, samp, "composition over rounds: adaptive composition of identical rounds",
        ]

    # -----------------------------------------------------------------------------------------
    def epsilon(self, *, rounds: int) -> float:
        if self._own is not None:
            return self._own.epsilon(rounds=rounds)
        return self._engine.epsilon(int_at_least("rounds", rounds, 0), self.delta)[0]

    def delta_at(self, *, rounds: int, epsilon: float) -> float:
        if self._own is not None:
            return self._own.delta_at(rounds=rounds, epsilon=epsilon)
        return self._engine.delta_at(int_at_least("rounds", rounds, 0), epsilon)

    def known_sample_epsilon(self, *, rounds: int, rate: float) -> float | None:
        """ε over n ~ Binomial(rounds, rate) rounds by the engine's own route (a PLD's one composition; the Rényi sum
        for ``tightest`` and for f-DP from a Rényi curve), or None: the caller sums δ_n over n (model §7.3)."""
        if self._own is not None:
            return self._own.known_sample_epsilon(rounds=rounds, rate=rate)
        direct = getattr(self._engine, "known_sample_epsilon", None)
        return None if direct is None else direct(int(rounds), float(rate), self.delta)

    def report(self, *, rounds: int) -> PrivacyReport:
        if self._own is not None:
            rep = self._own.report(rounds=rounds)
            if self.threat_model:
                rep.assumptions.insert(0, f"threat model (as given): {self.threat_model}")
            return rep
        rounds = int_at_least("rounds", rounds, 0)
        eps, best, warnings = self._engine.epsilon(rounds, self.delta)
        approx = bool(getattr(self._engine, "approximate", False))
        lines = list(self._fixed) + [f"δ = {self.delta:g}", f"accountant: {ACCOUNTANT_TEXT[self.accountant_name]}"]
        if self.accountant_name == "gdp":
            lines.append(self._engine.rule)
        elif self.accountant_name.startswith("rdp") or (self.accountant_name == "tightest" and best is not None):
            lines += [f"ε attained at α = {best:.6g}" if best is not None else "no Rényi order attains a finite positive ε",
                      CONVERSION_TEXT[self.conversion]]
        if getattr(self._engine, "note", None):  # tightest: which accountant attained ε, both values
            lines.append(self._engine.note)
        return PrivacyReport(
            epsilon=eps, delta=self.delta, best_order=best,
            sensitivity=float(self.sensitivity) if self.sensitivity is not None else 0.0,
            threat_model=self.threat_model, assumptions=lines, warnings=list(warnings), rounds=rounds,
            conversion=self.conversion, relation=self.relation, level=self.level, accountant=self.accountant_name,
            approximate=approx,
        )
