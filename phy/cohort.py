"""Aggregators for a cohort of any size: the rounds of a Poisson-sampled run (model §1).

With ``training.sampling = "poisson"`` round t has K_t clients (K_t ~ Binomial(M, K/M), E[K_t] = K), so its
aggregator is built for K_t rows: :func:`cohort_aggregators` returns ``aggregator_for(n)``, which builds (and
keeps, for the next round of the same size) the scheme's aggregator for n clients from the same
configuration, seed, key and relation. Every keyed stream of a round is keyed by (seed, purpose, round, …),
not by the instance, so building per round changes no draw.

What must not change with K_t is the privacy noise the accountant assumes (model §1, §9):

- ideal, channel inversion: no privacy noise;
- central Gaussian: N(0, (z·S)²) on the sum, independent of K;
- analog Gaussian: the artificial noise a ~ N(0, σ_a²) whatever the admitted count (model §9.1), the
  receiver noise independent of K;
- DDGauss: the accountant's event is n = K noise shares of N_ℤ(0, (σ/γ)²) on the modular sum with the grid γ
  of the bit budget at n = K. A round of K_t clients is therefore built with that grid (``grid_clients = K``)
  and carries exactly n = K shares whatever K_t (``noise_shares = K``, :mod:`phy.digital.ddgauss`): the K′
  admitted clients hold them round robin. The noise law is then the accountant's, independent of the cohort,
  as Kairouz, Liu & Steinke's Thm 1 needs under add/remove ("to keep n fixed … zero-out the relevant
  vectors"); the per-client sensitivity is unchanged. A cohort above K uses the same grid: its sum may wrap
  the modulus more often (``wrapped_fraction``), an accuracy cost, never a privacy one;
- sqSGD: each client's message is ε₀-LDP whatever the cohort (its stateful options are refused).

FLORAS (its N ≥ K_t sequences, keyed permutation and γ = N − K_t would vary per round) and PriFedSync are
refused by the configuration (:func:`poisson_refusal`).
"""

from __future__ import annotations

__all__ = ["POISSON_SCHEMES", "poisson_refusal", "cohort_aggregators"]

#: the schemes whose rounds take any number of clients and whose accountant has a Poisson form
POISSON_SCHEMES = ("ideal", "channel-inversion", "central-gaussian", "analog-gaussian", "ddgauss", "sqsgd")


def poisson_refusal(config) -> str | None:
    """Why ``config`` (a :class:`phy.config.PhyConfig`) cannot run with Poisson sampling, or None."""
    scheme = config.scheme
    if scheme not in POISSON_SCHEMES:
        why = ("FLORAS needs N ≥ K_t sequences and its keyed permutation and γ = N − K_t would change from round "
               "to round" if scheme == "floras" else f"scheme {scheme!r} declares no aggregation for a varying cohort")
        return (f"training.sampling = 'poisson' is not supported for phy.scheme = {scheme!r} ({why}); use "
                f"training.sampling = 'without-replacement', or one of {', '.join(POISSON_SCHEMES)}")
    if scheme == "ddgauss" and float(config.of("ddgauss").dropout) != 0.0:
        return ("training.sampling = 'poisson' needs phy.ddgauss.dropout = 0 (the n = K noise shares are spread over "
                "the admitted clients; dropped shares are not accounted for a varying cohort); set dropout = 0 or "
                "use training.sampling = 'without-replacement'")
    if scheme == "sqsgd":
        p = config.of("sqsgd")
        if p.adaptive or p.accumulation:
            return ("training.sampling = 'poisson' needs phy.sqsgd.norm_bound = 'fixed' and accumulation = false (the "
                    "adaptive bound and the accumulators are state across rounds of a fixed-size aggregator); change "
                    "them or use training.sampling = 'without-replacement'")
    return None


def cohort_aggregators(config, *, K: int, d: int, seed: int, key: bytes | None = None, relation: str = "replace"):
    """``aggregator_for(n)``: the aggregator of a round of n ≥ 1 clients in a run of expected cohort K (module
    docstring); the last one built is kept for the next round of the same size."""
    from .schemes import make_aggregator

    why = poisson_refusal(config)
    if why is not None:
        raise ValueError(why)
    cache: dict[int, object] = {}

    def aggregator_for(n: int):
        n = int(n)
        if n < 1:
            raise ValueError(f"a round's cohort must hold at least one client (got {n})")
        if n not in cache:
            cache.clear()  # one at a time: DDGauss keeps O(n·d_pad) buffers
            if config.scheme == "ddgauss":
                from .digital.ddgauss import DDGaussAggregator

                config.validate(K=n, d=d)
                cache[n] = DDGaussAggregator(config, K=n, d=d, seed=seed, grid_clients=K, noise_shares=K)
            else:
                cache[n] = make_aggregator(config, K=n, d=d, seed=seed, key=key, relation=relation)
        return cache[n]

    return aggregator_for
