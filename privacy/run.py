"""Accounting for a FLORAS federated-learning run (model §7.1–§7.4) and planning.

:class:`FlorasRunAccountant` turns the run's configuration into one per-round privacy event
(Cauchy noise of scale γ = N − K, sensitivity from the normalization, client and record
sampling), evaluates its RDP curve once, and answers ``report(rounds=t)`` by composing t rounds
(RDP × t) and converting to (ε, δ). Every :class:`PrivacyReport` carries the assumptions of
model §7.4. :func:`plan_smallest_N` inverts the question.

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
q_touch = 1, no amplification (item level equals client level, model §7.3). With E local steps of
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

import math

import numpy as np

from privacy.accountant import RdpAccountant
from privacy.checks import check_run_arguments
from privacy.engines import ACCOUNTANT_TEXT, make_engine
from privacy.events import CauchyRound, PoissonSampled, PrivacyEvent, SampledWithoutReplacement
from privacy.floras_texts import amplification_text, divergence_text, noise_text, threat_text
from privacy.rdp import DEFAULT_ORDERS, check_orders
from privacy.report import CONVERSION_TEXT, THREAT_MODEL_T1, PrivacyReport
from privacy.report import choice as _choice
from privacy.report import int_at_least as _int_at_least
from privacy.sensitivity import NORMALIZATIONS, release_sensitivity

__all__ = ["FlorasRunAccountant"]


class FlorasRunAccountant:
    """Privacy accounting for a FLORAS run under threat model T1 (model §7).

    All arguments are keyword-only. K scheduled of M clients, N sequences (γ = N − K), model
    dimension d; normalization, C (None: √(d·P)), power P, clip_norm R (``clip`` only); level
    ``client`` or ``item``; relation ``replace`` or ``add-remove``; client sampling
    ``without-replacement`` or ``poisson``; δ; for item level, local_steps E (None: full local
    epochs, q_touch = 1), batch_size B and local_dataset_size D; orders (default ``privacy.rdp.DEFAULT_ORDERS``).
    ``sensitivity`` overrides the derived S; ``conversion`` is ``tight`` (default) or ``standard``.
    ``accountant``: ``rdp`` (default; the conditional-Gaussian bound of model §9.5 for sampled
    rounds), ``rdp-generic`` (the generic sampling bounds, the accountant before model §9.5) or
    ``pld`` (Poisson, without replacement or no sampling); ``gdp`` has no FLORAS form and is refused.
    ``link``: a :class:`privacy.link.LinkModel` (SNR, L, CSIT) adds the link-level ε_link of the
    simulated finite-SNR link to every report (:mod:`privacy.link`). ``pilot_blocks`` B ≥ 1: pilots per round,
    each block's noise of its own V_m (model §9.5, "Several pilots"); under ``pld`` the mixture over V_min.
    ``antennas`` N_r ≥ 1: receive antennas of the base station, combined by maximum ratio on the pilots (model §5.2);
    N_r > 1 (model §9.5, "Several antennas") has every accountant (the Rényi bound through E[e^{c/V}],
    :mod:`privacy.antenna_rdp`; the PLD through the law of V, :mod:`privacy.antenna_noise`) and one pilot block; a
    ``link`` must then hold the same ``antennas`` (its ε_link bounds the maximum-ratio factors, :mod:`privacy.link`).

    The per-round curve (or PLD) is computed once here; :meth:`report` only composes it t times.
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
        accountant: str = "rdp",
        link=None,
        pilot_blocks: int = 1,
        antennas: int = 1,
    ):
        K, M, delta = check_run_arguments(K=K, M=M, level=level, relation=relation, sampling=sampling, delta=delta,
                                          conversion=conversion, accountant=accountant)
        N = _int_at_least("N", N, 1)
        d = _int_at_least("d", d, 1)
        if N < K:
            raise ValueError(f"N must be ≥ K (got N = {N} < K = {K})")
        _choice("normalization", normalization, NORMALIZATIONS)
        if accountant == "gdp":
            raise ValueError("accountant gdp does not support the FLORAS (Cauchy) mechanism: its release is not "
                             "Gaussian DP; use rdp, rdp-generic or pld")
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
        self._C, self._power, self._clip_norm = C, power, clip_norm
        if sensitivity is None:
            self.sensitivity = sens.value
            sens_line = f"sensitivity {sens.derivation}"
        else:
            self.sensitivity = float(sensitivity)
            sens_line = (
                f"sensitivity S = {self.sensitivity:.6g} given by the user (overrides the derived {sens.value:.6g}: "
                f"{sens.derivation})"
            )
        self.pilot_blocks = pilot_blocks = _int_at_least("pilot_blocks", pilot_blocks, 1)
        antennas = _int_at_least("antennas", antennas, 1)
        if link is not None and getattr(link, "undefined", None) is None and getattr(link, "antennas", 1) != antennas:
            raise ValueError(f"link: the LinkModel has antennas = {getattr(link, 'antennas', 1)}, the run {antennas}; "
                             "pass the run's receive antennas to both")
        self.antennas = antennas
        base = CauchyRound(gamma=float(self.gamma), sensitivity=self.sensitivity, blocks=pilot_blocks,
                           antennas=antennas)
        self.accountant_name = accountant
        self.event, sampling_lines = self._build_event(base, local_steps, batch_size, local_dataset_size)
        # RDP curves are built on first use (a config check needs none); PLD is built now, so that an
        # unsupported configuration fails at construction
        lazy = accountant.startswith("rdp") or accountant == "tightest"  # tightest's PLD may fail: it then uses rdp alone
        self._engine_obj = None if lazy else make_engine(accountant, self.event, orders=self._orders)
        self.link = link
        self._link_engines: dict = {}
        self._build_args = dict(local_steps=local_steps, batch_size=batch_size, local_dataset_size=local_dataset_size,
                                pilot_blocks=pilot_blocks, antennas=antennas)
        self._fixed_assumptions = [
            THREAT_MODEL_T1,
            f"neighbouring relation: {self._relation_text()}",
            sens_line,
            noise_text(N, K, antennas, pilot_blocks),
            *sampling_lines,
            *sens.caveats,
            "composition over rounds: " + {"pld": "the round's PLD composed T times (FFT convolution)",
                                           "tightest": "RDP curves added order by order, and the round's PLD composed "
                                                       "T times (FFT convolution); the smaller ε is reported"}.get(
                                              accountant, "RDP curves added order by order"),
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
            + amplification_text("without-replacement", self.accountant_name, antennas=self.antennas, pilot_blocks=self.pilot_blocks)
        )
        if self.level == "client":
            if self.sampling == "without-replacement":
                return SampledWithoutReplacement(base, sample_size=K, population_size=M), [wor_line]
            return PoissonSampled(base, rate=p), [
                f"client sampling: each of M = {M} clients independently with probability {p:.6g} (Poisson); "
                + amplification_text("poisson", self.accountant_name, antennas=self.antennas, pilot_blocks=self.pilot_blocks)
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
    def _engine(self):
        if self._engine_obj is None:
            self._engine_obj = make_engine(self.accountant_name, self.event, orders=self._orders, conversion=self.conversion)
        return self._engine_obj

    @property
    def round_rdp(self) -> np.ndarray:
        """The per-round RDP curve (RDP accountants only)."""
        if not hasattr(self._engine, "round_rdp"):
            raise ValueError(f"round_rdp needs an RDP accountant (this one is {self.accountant_name!r})")
        return self._engine.round_rdp

    @property
    def orders(self) -> np.ndarray:
        return self._orders.copy()

    def accountant(self, rounds: int) -> RdpAccountant:
        """An :class:`RdpAccountant` holding ``rounds`` compositions of the per-round event."""
        rounds = _int_at_least("rounds", rounds, 0)
        method = "generic" if self.accountant_name == "rdp-generic" else "tight"
        return RdpAccountant(self._orders, method=method).compose(self.event, rounds)

    def rdp(self, rounds: int) -> np.ndarray:
        """RDP curve after ``rounds`` rounds [n] float64 (t · per-round curve)."""
        rounds = _int_at_least("rounds", rounds, 0)
        if rounds == 0:
            return np.zeros_like(self._orders)
        return rounds * self.round_rdp

    def epsilon(self, *, rounds: int) -> float:
        """The idealised ε after ``rounds`` rounds (no report, no link figure)."""
        rounds = _int_at_least("rounds", rounds, 0)
        return self._engine.epsilon(rounds, self.delta)[0]

    def report(self, *, rounds: int) -> PrivacyReport:
        """(ε, δ) after ``rounds`` rounds with every assumption (model §7.4), plus ε_link when a link is set."""
        rounds = _int_at_least("rounds", rounds, 0)
        eps, best, warnings = self._engine.epsilon(rounds, self.delta)
        warnings = list(warnings)
        if eps == math.inf and rounds > 0:
            warnings.append(divergence_text(self.sensitivity, self.gamma, self.delta))
        if self.accountant_name in ("rdp", "rdp-generic") or best is not None:
            grid = (
                f"order grid: {len(self._orders)} orders in [{self._orders[0]:.6g}, {self._orders[-1]:.6g}]; "
                + ("ε attained at α = " + f"{best:.6g}" if best is not None else "no order attains a finite ε" if eps == math.inf else "ε = 0")
            )
            conv = [CONVERSION_TEXT[self.conversion]]
        else:
            grid, conv = "privacy-loss distribution: no Rényi order (ε read off the composed PLD at δ)", []
        note = getattr(self._engine, "note", None)  # tightest: which accountant attained ε
        assumptions = list(self._fixed_assumptions) + [f"δ = {self.delta:g}", grid, f"accountant: {ACCOUNTANT_TEXT[self.accountant_name]}",
                                                       *([note] if note else []), *conv]
        eps_link, link = None, None
        if self.link is not None:
            from privacy.link_epsilon import floras_link_epsilon

            eps_link, link = floras_link_epsilon(self, rounds=rounds)
            assumptions += link["assumptions"]
        return PrivacyReport(
            epsilon=eps,
            delta=self.delta,
            best_order=best,
            sensitivity=self.sensitivity,
            threat_model=threat_text(self.antennas),
            assumptions=assumptions,
            warnings=warnings,
            rounds=rounds,
            conversion=self.conversion,
            relation=self.relation,
            level=self.level,
            gamma=float(self.gamma),
            accountant=self.accountant_name,
            epsilon_link=eps_link,
            link=link,
        )

    def delta_at(self, *, rounds: int, epsilon: float) -> float:
        """δ(ε) after ``rounds`` rounds (the inverse conversion)."""
        return self._engine.delta_at(_int_at_least("rounds", rounds, 0), epsilon)

    def known_sample_epsilon(self, *, rounds: int, rate: float) -> float | None:
        """ε over n ~ Binomial(rounds, rate) rounds of this (unsampled) accountant by its engine's own route (a PLD's
        one composition; the Rényi sum for ``tightest``), or None: the caller sums δ_n over n
        (:func:`privacy.known_sample.known_sample_of`, model §7.3)."""
        direct = getattr(self._engine, "known_sample_epsilon", None)
        return None if direct is None else direct(int(rounds), float(rate), self.delta)

    def with_sensitivity_generic(self, sensitivity: float) -> "FlorasRunAccountant":
        """The same run with S replaced, under ``rdp-generic`` (the link-level analysis, :mod:`privacy.link`); cached."""
        key = float(sensitivity)
        if key not in self._link_engines:
            self._link_engines[key] = FlorasRunAccountant(
                K=self.K, N=self.N, M=self.M, d=self.d, normalization=self.normalization, C=self._C, power=self._power,
                clip_norm=self._clip_norm, level=self.level, relation=self.relation, sampling=self.sampling,
                delta=self.delta, orders=self._orders, sensitivity=key, conversion=self.conversion,
                accountant="rdp-generic", **self._build_args,
            )
        return self._link_engines[key]
