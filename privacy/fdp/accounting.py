"""The f-DP accountant of a federated run: a privacy event → the trade-off function of T rounds (model §9.4).

=========================================== ============================================ ============
event                                        trade-off function per round                 composition
=========================================== ============================================ ============
GaussianRound(σ, S)                           G_{S/σ} (exact, DRS Thm 2.7)                  G_{μ√T}
RandomizedResponseRound(ε₀)                   f_{ε₀,0} (exact for binary RR; DRS Prop. 2.5) numerical ⊗
SampledWithoutReplacement(e, K of M)          C_{K/M}(f_e) (DRS Thm 4.2, replace-one)        numerical ⊗
PoissonSampled(e, p)                          f_p (remove) and f_p⁻¹ (add): (P, (1−p)P + pQ)  numerical ⊗,
                                              dominates the Poisson-subsampled mechanism      both orders
                                              (Zhu, Dong & Wang 2022)
Composed / SelfComposed                       ⊗ of the parts                                ⊗
DDGaussRound (any sampling)                   none known in closed form: f implied by the    in RDP, then
                                              T-round RDP curve (:mod:`privacy.fdp.from_rdp`) converted
CauchyRound (FLORAS)                          refused: no closed-form trade-off function
=========================================== ============================================ ============

Numerical ⊗ runs on the loss grid ``step``: ε lies in [ε_true, ε_true + T·step] (at δ less the
truncated mass, ≤ 1e-10 here); see :mod:`privacy.fdp.lossdist`.
"""

from __future__ import annotations

import math

import numpy as np

from privacy.fdp.compose import Composition, tensor, tensor_power
from privacy.fdp.lossdist import DEFAULT_STEP
from privacy.fdp.tradeoff import EpsDelta, Gaussian, Identity, Mixture, TradeOff, subsample

__all__ = ["FLORAS_REFUSAL", "round_tradeoff", "run_tradeoff", "uses_rdp"]

FLORAS_REFUSAL = ("accountant fdp does not support the FLORAS (Cauchy) mechanism: its release has no closed-form "
                  "trade-off function; use --accountant rdp, rdp-generic or pld")


def _leaf(event):
    from privacy.events import Composed, PoissonSampled, SampledWithoutReplacement, SelfComposed

    while isinstance(event, (PoissonSampled, SampledWithoutReplacement, SelfComposed)):
        event = event.event
    if isinstance(event, Composed):
        return [x for e in event.events for x in _leaf(e)]
    return [event]


def uses_rdp(event) -> bool:
    """True when the event holds a DDGauss round (its f is the one implied by its RDP curve)."""
    from privacy.events import CauchyRound, DDGaussRound

    leaves = _leaf(event)
    if any(isinstance(e, CauchyRound) for e in leaves):
        raise ValueError(FLORAS_REFUSAL)
    return any(isinstance(e, DDGaussRound) for e in leaves)


def round_tradeoff(event, *, step: float = DEFAULT_STEP) -> TradeOff:
    """The trade-off function of one occurrence of ``event`` (see the table); ValueError when none is known."""
    from privacy.events import (CauchyRound, Composed, GaussianRound, PoissonSampled, RandomizedResponseRound,
                                SampledWithoutReplacement, SelfComposed)

    if isinstance(event, GaussianRound):
        if event.sensitivity == 0:
            return Identity()
        return Gaussian(math.inf if event.noise_std == 0 else event.sensitivity / event.noise_std)
    if isinstance(event, RandomizedResponseRound):
        return EpsDelta(event.epsilon0) if event.epsilon0 > 0 else Identity()
    if isinstance(event, (SampledWithoutReplacement, PoissonSampled)):
        base = round_tradeoff(event.event, step=step)
        if isinstance(base, Composition):
            base = base.piecewise()
        if event.rate == 1.0 or isinstance(base, Identity):
            return base
        return subsample(base, event.rate) if isinstance(event, SampledWithoutReplacement) else Mixture(base, event.rate)
    if isinstance(event, SelfComposed):
        return tensor_power(round_tradeoff(event.event, step=step), event.count, step=step)
    if isinstance(event, Composed):
        return tensor(*(round_tradeoff(e, step=step) for e in event.events), step=step)
    if isinstance(event, CauchyRound):
        raise ValueError(FLORAS_REFUSAL)
    raise ValueError(f"accountant fdp has no trade-off function for {type(event).__name__}; use --accountant rdp")


def run_tradeoff(event, rounds: int, *, step: float = DEFAULT_STEP, orders=None) -> TradeOff:
    """The trade-off function after ``rounds`` adaptive repetitions of ``event``."""
    if uses_rdp(event):
        from privacy.accountant import event_rdp
        from privacy.fdp.from_rdp import rdp_tradeoff
        from privacy.rdp import DEFAULT_ORDERS

        o = np.asarray(DEFAULT_ORDERS if orders is None else orders, dtype=np.float64)
        return Identity() if rounds == 0 else rdp_tradeoff(o, rounds * event_rdp(event, o))
    return tensor_power(round_tradeoff(event, step=step), int(rounds), step=step)
