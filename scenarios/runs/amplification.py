"""ε without client-sampling amplification: what a run's privacy is against an observer that learns which
clients were sampled (model §7.3, "Without sampling amplification").

Every sampled ε of the simulator assumes that the observer does not learn who took part in a round. A base
station or server that schedules the clients does; so does anyone who sees who transmits. Given the sampled
sets, which do not depend on the data, client k's view is the composition of the unsampled round over the n_k
rounds it took part in (a round without it does not depend on its data), so ε(n_k) of the same mechanism and
accountant at sampling rate 1 bounds it, and ε(max_k n_k) bounds every client. The run's sampling is keyed per
round (:func:`fl.sampling.participation_counts`), so the counts are known before it trains. This needs replace-one
neighbours: under add/remove the sampled set itself reveals whether a client exists, so an observer that learns it
gets no add/remove guarantee at all, and the record says so.
"""

from __future__ import annotations

import dataclasses
import math

from scenarios.config import ScenarioConfig

__all__ = ["without_amplification"]


def without_amplification(config: ScenarioConfig, *, d: int, D: int, rounds: int) -> dict | None:
    """The unamplified ε of ``config``'s scheme after ``rounds`` rounds (JSON-ready), or None where it does not
    apply: a scheme without privacy noise, every client in every round (K = M: nothing was amplified), or
    PriFedSync (its record-level accountant amplifies by record sampling, not by client sampling).

    Keys: ``participations_max`` (the run's most-sampled client, n_max of ``rounds``), ``participations_mean``
    (rounds·K/M), ``epsilon_most_sampled`` = ε(n_max), ``epsilon_every_round`` = ε(rounds) (a scheduler that
    picks a client every round), ``epsilon_ex_ante`` (over the sampling, any client: its rounds are Binomial(T, K/M),
    :func:`privacy.known_sample.known_sample_epsilon`), ``delta``, ``text`` (the assumptions, one sentence).
    """
    from fl.sampling import participation_counts
    from privacy.known_sample import known_sample_of
    from scenarios.config.schemes import scheme_accountant

    t, pr = config.training, config.privacy
    K, M = int(t.clients_per_round), int(config.partition.clients)
    if t.mode == "prifedsync" or K >= M:
        return None
    if pr.relation != "replace":  # add/remove: the sampled set itself says whether the client exists
        return {"participations_max": None, "participations_mean": rounds * K / M, "rounds": int(rounds),
                "delta": float(pr.delta), "epsilon_most_sampled": None, "epsilon_every_round": None,
                "text": ("without client-sampling amplification (an observer that learns which clients were sampled; "
                         f"model §7.3): no guarantee under add/remove neighbours, whose sampled set itself reveals "
                         f"whether a client takes part at all (its membership; it is sampled in some round with "
                         f"probability 1 − (1 − K/M)^T = {-math.expm1(int(rounds) * math.log1p(-K / M)):.4g}); the "
                         "figure is defined for replace-one neighbours (privacy.relation = \"replace\", sampling "
                         "without replacement)")}
    # the same scheme, accountant and relation with every client in every round: sampling rate 1
    unsampled = dataclasses.replace(config, partition=dataclasses.replace(config.partition, clients=K))
    counts = participation_counts(t.sampling, seed=config.run.seed, M=M, K=K, rounds=int(rounds))
    n_max = int(counts.max()) if counts.size else 0
    head = (f"without client-sampling amplification (an observer that learns which clients were sampled, e.g. a "
            f"base station or server that schedules them; model §7.3): the same round and accountant at sampling "
            f"rate 1, composed over the rounds a client takes part in; this run's {t.sampling} sampling (seed "
            f"{config.run.seed}, keyed per round, known before training) puts its most-sampled client of M = {M} in "
            f"{n_max} of {rounds} rounds (mean {rounds * K / M:.4g})")
    out = {"participations_max": n_max, "participations_mean": rounds * K / M, "rounds": int(rounds),
           "delta": float(pr.delta)}
    try:
        accountant = scheme_accountant(unsampled, d=d, D=D)
        if accountant is None:
            return None
        eps_max = float(accountant.epsilon(rounds=n_max)) if n_max > 0 else 0.0
        eps_ante, eps_all = known_sample_of(accountant, rounds=int(rounds), rate=K / M, delta=float(pr.delta))
    except ValueError as exc:  # e.g. a PLD too large at rate 1: say so, never fail the run for this figure
        return {**out, "epsilon_most_sampled": None, "epsilon_every_round": None, "epsilon_ex_ante": None,
                "text": f"{head}: ε not computed ({exc})"}
    text = (f"{head}: ε ≤ {_fmt(eps_max)}; a client in every round (a scheduler that chooses it): ε ≤ "
            f"{_fmt(eps_all)}; over the sampling, for any client, whose rounds n ~ Binomial(T, K/M) the observer "
            f"learns: ε ≤ {_fmt(eps_ante)} (δ(ε) = Σ_n P(n)·δ_n(ε), privacy.known_sample); at δ = {float(pr.delta):g}, "
            "the idealised release (no link-level figure)")
    return {**out, "epsilon_most_sampled": _json(eps_max), "epsilon_every_round": _json(eps_all),
            "epsilon_ex_ante": _json(eps_ante), "text": text}


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


def _json(x: float):
    return "inf" if math.isinf(x) else x
