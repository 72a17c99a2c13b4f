"""``floras privacy --sample-known``: ε against an observer that learns which clients each round sampled (a base
station or server that schedules them), over the sampling (model §7.3, "Without sampling amplification";
:func:`privacy.known_sample.known_sample_epsilon`)."""

from __future__ import annotations

import math

__all__ = ["known_sample_figure"]


def known_sample_figure(make, *, K: int, M: int, rounds: int, delta: float, relation: str) -> dict:
    """``make(M=…)`` builds the run's accountant for a population of M clients. Returns the JSON entry: ``epsilon``
    (over n ~ Binomial(T, K/M) unsampled rounds), ``epsilon_every_round`` and ``text``; replace-one only (under
    add/remove the sampled set reveals whether a client exists)."""
    from privacy.known_sample import known_sample_of

    if relation != "replace":
        raise ValueError("sample-known is defined for replace-one neighbours (--relation replace, sampling without "
                         "replacement): under add/remove the sampled set itself reveals whether a client exists")
    if K >= M:
        raise ValueError(f"sample-known needs client sampling, K < M (got K = {K}, M = {M}): with K = M the ε above "
                         "already has no amplification")
    eps, every = known_sample_of(make(M=K), rounds=rounds, rate=K / M, delta=delta)
    text = (f"an observer that learns which clients each round sampled (no amplification; replace-one): a client takes "
            f"part in n ~ Binomial({rounds}, {K / M:.6g}) rounds, δ(ε) = Σ_n P(n)·δ_n(ε) with δ_n the unsampled round "
            f"composed n times: ε = {_fmt(eps)} at δ = {delta:g} over the sampling; a client in every round "
            f"(a scheduler that chooses it): ε = {_fmt(every)} (model §7.3)")
    return {"epsilon": "inf" if math.isinf(eps) else eps, "epsilon_every_round": "inf" if math.isinf(every) else every,
            "text": text}


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.6g}"
