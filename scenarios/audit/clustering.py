"""Clustering the detected sequences of many rounds into clients (model §5.2, §7.1 T2, §7.5).

The offline attack the pairwise links and the running-mean tracker of :mod:`scenarios.audit.tracking` stop short
of: the base station has recorded T rounds; each round holds K detected sequences with features f_j ∈ R^D (``joint``:
(ln E_j, û_j) with N_r ≥ 3, ln E_j otherwise; :func:`scenarios.audit.linking.joint_features`), one per client, and it
looks for K clusters with one member per round (a client transmits once a round). Algorithm (a constrained k-means,
the round's K points matched one to one to the K centroids):

1. centroids c_1..c_K = the features of round 0, weights w = 1/(spread of each feature over all rounds)²;
2. every round t: match its K points to the centroids by minimum total Σ_f w_f·(f_j − c_{k,f})² (Hungarian
   algorithm); a point's cluster is its centroid;
3. c_k ← mean of its members; w_f ← 1/(mean within-cluster variance of feature f), so a feature that does not stay
   with its client (no line of sight: û) loses its say, one that does gains it;
4. repeat 2–3 for ``passes`` passes (or until no assignment changes).

Scores: ``link`` — the fraction of (client, t) whose round-t and round-(t + 1) sequences fall in one cluster (the
pairwise link, chance 1/K); ``followed`` — the fraction of clients whose sequences of all T rounds fall in one cluster
(the cluster of its round-0 sequence; chance (1/K)^(T−1)). Derived, not a bound: a better attacker may do better.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from .signals import RoundTruth

__all__ = ["cluster_rounds", "cluster_scores"]


def cluster_rounds(features: list[np.ndarray], *, passes: int = 10) -> np.ndarray:
    """labels [T, K] int64: the cluster of each round's point (``features[t]`` [K, D]), by the algorithm of the module
    doc; round 0's point i is cluster i."""
    F = np.stack([np.asarray(f, dtype=np.float64) for f in features])  # [T, K, D]
    if F.ndim != 3 or F.shape[0] < 2:
        raise ValueError(f"features must be T ≥ 2 arrays of shape [K, D] (got {F.shape})")
    D = F.shape[2]
    if D == 1:
        return _cluster(F, np.ones(1), passes)[0]
    # the starting weights: how tightly each feature clusters on its own (a feature without identity still
    # clusters by rank, into quantiles, but far less tightly against its spread)
    w = np.array([1.0 / _cluster(F[:, :, f:f + 1], np.ones(1), passes)[1][0] for f in range(D)])
    return _cluster(F, w, passes)[0]


def _cluster(F: np.ndarray, w: np.ndarray, passes: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels [T, K], within-cluster variance per feature [D]) of the constrained k-means from weights ``w``."""
    T, K, _ = F.shape
    spread = F.reshape(T * K, -1).std(axis=0)
    floor = 1e-12 * np.where(spread > 0, spread, 1.0) ** 2
    w = np.asarray(w, dtype=np.float64)  # raw units: 1/(within-cluster variance)
    centroids = F[0].copy()
    labels = np.tile(np.arange(K), (T, 1))
    for it in range(int(passes)):
        new = np.empty_like(labels)
        for t in range(T):
            cost = np.einsum("jkd,d->jk", np.square(F[t][:, None, :] - centroids[None, :, :]), w)
            rows, cols = linear_sum_assignment(cost)
            new[t, rows] = cols
        members = np.empty_like(F)  # members[t, k] = round t's point in cluster k
        members[np.arange(T)[:, None], new] = F
        centroids = members.mean(axis=0)
        within = np.maximum(np.square(members - centroids[None]).mean(axis=(0, 1)), floor)
        w = 1.0 / within  # a feature that stays with its clients gains weight
        done = it > 0 and np.array_equal(new, labels)
        labels = new
        if done:
            break
    return labels, within


def cluster_scores(labels: np.ndarray, sequences: list[np.ndarray], truths: list[RoundTruth]) -> tuple[int, int, int, int]:
    """(link hits, link trials, followed hits, clients): ``labels`` [T, K] of the detected ``sequences[t]`` [K]."""
    T = len(truths)
    cluster_of = [{int(j): int(c) for j, c in zip(sequences[t], labels[t])} for t in range(T)]
    link = n_link = 0
    followed = 0
    K = truths[0].active.size
    for k in range(K):
        cs = [cluster_of[t].get(int(truths[t].active[k])) for t in range(T)]
        for t in range(T - 1):
            link += int(cs[t] is not None and cs[t] == cs[t + 1])
            n_link += 1
        followed += int(cs[0] is not None and all(c == cs[0] for c in cs))
    return link, n_link, followed, K
