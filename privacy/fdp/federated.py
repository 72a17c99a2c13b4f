"""Weak and strong federated f-DP (Zheng et al. 2021 §3, Definitions 3.5 and 3.6; model §9.4).

Setting: m clients, client j holds S^{(j)}; the federated algorithm M = (M_1, …, M_m) returns to
client i its helper model M_i(S); S′^j differs from S in one record of client j.

- **weak** (one-vs-one, Def. 3.5): T(M_i(S), M_i(S′^j)) ≥ f for every i ≠ j — any single other
  client is the adversary;
- **strong** (one-vs-all, Def. 3.6): T(M_{−j}(S), M_{−j}(S′^j)) ≥ f, M_{−j} the joint view of all
  clients but j (they may collude). M_i is a post-processing of M_{−j}, so strong implies weak.

The three steps of the text's analysis (its Lemma 3.7, Lemma 3.8, Theorem 1) as functions:

1. one synchronisation without sampling: if client j's dispatched model is f-DP in S^{(j)}, every
   release derived from it is f-DP for every other client alike (post-processing; Lemma 3.7);
2. client sampling, Poisson with rate p per client: the release to i depends on S^{(j)} only in
   rounds where both i and j are sampled (probability p², one-vs-one) — for the coalition of all
   others, when j and at least one other client are (q = p·(1 − (1 − p)^{m−1})). Both outputs are
   then mixtures q·A + (1 − q)·R with a common R, the structure of DRS Thm 4.2, so one round is
   C_q(f)-DP (the stored text describes this mixture; the statement of its Lemma 3.8 is not in it:
   q = p² is derived here from that description);
3. composition over R synchronisations: C_q(f)^{⊗R} (DRS Thm 3.2), numerically, or by the central
   limit theorem for f = G_μ: C_q(G_μ)^{⊗R} → G_{μ′}, μ′ = √2·q√R·√(e^{μ²}Φ(1.5μ) + 3Φ(−0.5μ) − 2)
   as q√R stays fixed (DRS Thm 3.5 / Cor. 5.4).
"""

from __future__ import annotations

import math

import numpy as np

from privacy.fdp.compose import tensor_power
from privacy.fdp.tradeoff import Gaussian, TradeOff, subsample
from privacy.gdp import clt_mu_without_replacement

__all__ = ["one_vs_one_rate", "one_vs_all_rate", "sync_tradeoff", "weak_federated", "strong_federated",
           "federated_clt_mu", "noisy_sgd_tradeoff", "satisfies"]


def _rate(p) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0.0 <= p <= 1.0):
        raise ValueError(f"rate must be a number in [0, 1] (the Poisson client sampling rate; got {p!r})")
    return float(p)


def one_vs_one_rate(p: float) -> float:
    """q = p²: both client i (who receives) and client j (whose record differs) are sampled."""
    return _rate(p) ** 2


def one_vs_all_rate(p: float, clients: int) -> float:
    """q = p·(1 − (1 − p)^{m−1}): j and at least one of the m − 1 others are sampled."""
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 2:
        raise ValueError(f"clients must be an integer ≥ 2 (got {clients!r})")
    p = _rate(p)
    return p * -math.expm1((clients - 1) * math.log1p(-p)) if p < 1.0 else 1.0


def sync_tradeoff(f: TradeOff, q: float) -> TradeOff:
    """One synchronisation round under client sampling: C_q(f) (step 2 above)."""
    return subsample(f, _rate(q))


def weak_federated(f: TradeOff, *, rate: float, rounds: int, **kw) -> TradeOff:
    """The one-vs-one guarantee after ``rounds`` synchronisations: C_{p²}(f)^{⊗R} (weak federated f-DP)."""
    return tensor_power(sync_tradeoff(f, one_vs_one_rate(rate)), rounds, **kw)


def strong_federated(f: TradeOff, *, rate: float, rounds: int, clients: int, **kw) -> TradeOff:
    """The one-vs-all guarantee: C_q(f)^{⊗R}, q = p(1 − (1 − p)^{m−1}) (strong federated f-DP)."""
    return tensor_power(sync_tradeoff(f, one_vs_all_rate(rate, clients)), rounds, **kw)


def federated_clt_mu(mu: float, *, q: float, rounds: int) -> float:
    """μ′ of the CLT limit of C_q(G_μ)^{⊗R} (approximate: exact only as q → 0 with q√R fixed)."""
    if mu == 0:
        return 0.0
    return clt_mu_without_replacement(rate=_rate(q), noise_multiplier=1.0 / mu, rounds=rounds)


def noisy_sgd_tradeoff(mu: float, *, batch_rate: float, steps: int, **kw) -> TradeOff:
    """Client j's dispatched model after ``steps`` noisy-gradient steps, each G_μ-DP in the batch (μ = the
    replace-one sensitivity over the noise std) on a batch drawn without replacement at ``batch_rate``:
    C_{B/n}(G_μ)^{⊗K} (DRS Thm 4.2 and 3.2). Adam or momentum on the noisy gradients is post-processing."""
    return tensor_power(subsample(Gaussian(mu), _rate(batch_rate)), steps, **kw)


def satisfies(actual: TradeOff, claimed: TradeOff, *, slack: float = 0.0, eps=None) -> bool:
    """Whether ``actual`` ≥ ``claimed`` (an actual-f-DP mechanism is then claimed-f-DP), tested on the dual:
    δ_actual(ε) ≤ δ_claimed(ε) + slack on a grid of ε (symmetrised curves)."""
    e = np.linspace(-10.0, 10.0, 2001) if eps is None else np.asarray(eps, dtype=np.float64)
    return bool(np.all(actual.symmetric_delta(e) <= claimed.symmetric_delta(e) + slack))
