"""Client sampling of a federated round (model §1): K of M without replacement, or Poisson.

``without-replacement`` (default): exactly K distinct clients of M, uniform, from the keyed stream
``(seed, "client-sampling", t)`` (:func:`sample_clients`).

``poisson``: each of the M clients joins round t independently with probability q = K/M (K is then the
*expected* cohort), from the keyed stream ``(seed, "client-sampling-poisson", t)`` (:func:`poisson_clients`).
The cohort is drawn in two steps from that one stream: its size K_t ~ Binomial(M, q), then K_t distinct
members uniformly without replacement. This is exact in distribution: for independent Bernoulli(q)
memberships, P(S) = q^{|S|}(1 − q)^{M−|S|} depends on S only through |S|, so given K_t = n every n-subset is
equally likely (and the binomial law of |S| is the first draw). It needs O(K_t) memory and time instead of
M uniforms (M up to 10⁶ and beyond). K_t = 0 happens with probability (1 − q)^M.
"""

from __future__ import annotations

import numpy as np

from phy.randomness import stream

__all__ = ["SAMPLINGS", "sample_clients", "poisson_clients", "round_clients", "participation_counts"]

SAMPLINGS = ("without-replacement", "poisson")


def sample_clients(*, seed: int, round_index: int, M: int, K: int) -> np.ndarray:
    """K distinct client ids from [0, M), uniform without replacement, ``[K] int64`` (model §1)."""
    if not 1 <= K <= M:
        raise ValueError(f"K must be an integer in [1, M = {M}] (got {K})")
    return stream(seed, "client-sampling", round_index).choice(M, size=K, replace=False).astype(np.int64)


def poisson_clients(*, seed: int, round_index: int, M: int, q: float) -> np.ndarray:
    """The Poisson cohort of round ``round_index``: every client of [0, M) independently with probability q,
    ``[K_t] int64`` in the order drawn (K_t ~ Binomial(M, q), then K_t members uniformly without replacement;
    module docstring). May be empty."""
    q = float(q)
    if not 0.0 < q <= 1.0:
        raise ValueError(f"the Poisson sampling rate q = K/M must be in (0, 1] (got {q!r})")
    rng = stream(seed, "client-sampling-poisson", round_index)
    n = int(rng.binomial(int(M), q))
    return rng.choice(int(M), size=n, replace=False).astype(np.int64)


def round_clients(sampling: str, *, seed: int, round_index: int, M: int, K: int) -> np.ndarray:
    """The clients of round ``round_index`` under ``sampling`` (K exactly, or K in expectation)."""
    if sampling == "without-replacement":
        return sample_clients(seed=seed, round_index=round_index, M=M, K=K)
    if sampling == "poisson":
        return poisson_clients(seed=seed, round_index=round_index, M=M, q=K / M)
    raise ValueError(f"training.sampling must be one of {SAMPLINGS} (got {sampling!r})")


def participation_counts(sampling: str, *, seed: int, M: int, K: int, rounds: int) -> np.ndarray:
    """``[M] int64``: in how many of rounds 0 … ``rounds`` − 1 each client is sampled, replaying
    :func:`round_clients` (the streams are keyed per round, so this is the run's own sampling, known before it
    trains). Under either sampling each count is Binomial(rounds, K/M) (model §1); an observer that learns who
    was sampled sees these counts (model §7.3, "Without sampling amplification")."""
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 0:
        raise ValueError(f"rounds must be an integer ≥ 0 (got {rounds!r})")
    counts = np.zeros(int(M), dtype=np.int64)
    for t in range(int(rounds)):
        counts[round_clients(sampling, seed=seed, round_index=t, M=M, K=K)] += 1
    return counts
