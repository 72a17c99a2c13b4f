"""Following clients over many rounds by their pilots and decodes (model §5.1, §5.2, §7.1 T2, §7.5).

The same K clients (identities 0..K−1) are scheduled every round; the keyed permutation gives each round
a fresh assignment of sequences. From T rounds of base-station views the attacker links round t to round
t + 1 for every t with a pairwise method of :mod:`scenarios.audit.linking` (``pilot``, ``signature``,
``similarity``, ``steering``, ``joint``) and the scorer reports

(a) **pairwise** success: the fraction of (client, t) with the link t → t + 1 right, over the T − 1
    consecutive pairs; interval: two-sided Clopper–Pearson on the pooled count, treating the K(T − 1)
    client-links as independent Bernoulli trials (approximate: one matching couples the K links of a pair);
(b) **chains** of R rounds: for every start s ∈ {0, …, T − R}, client k's round-s sequence π_s(k) is pushed
    through the links s → s + 1 → … → s + R − 1; success iff it arrives at π_{s+R−1}(k) (a sequence the
    attacker did not detect breaks the chain). Chance 1/K for every R (a composition of independent
    uniform matchings is uniform);
(c) the **cumulative** attack (pilot energy): a tracker started at round s opens one chain per sequence
    detected in round s with running mean μ_c = ln E of that sequence (E = ‖r^s‖², N_r = 1: E = |r^s|²).
    At round τ + 1 it matches the chains to the K sequences detected then by minimum total
    (μ_c − ln E_j(τ + 1))² (Hungarian algorithm; the rank matching, :mod:`scenarios.audit.linking`), moves each
    chain to its sequence and updates
    μ_c ← μ_c + (ln E_j(τ + 1) − μ_c)/n_c, n_c the rounds in chain c so far. Two scores after R rounds,
    averaged over the starts s: ``followed``, the fraction of clients k whose chain (the one opened at
    π_s(k)) sits at π_{s+R−1}(k); ``link``, the fraction of the tracker's links s + R − 2 → s + R − 1 that are
    right (the chain moves from a client's sequence to the same client's next one). For R = 2 both are the
    pairwise ``pilot`` link. With the squared cost every round's matching is the rank matching, and the
    running means keep their order (μ' = (1 − 1/n)·μ + e/n with μ and e sorted alike), so the chain of rank r
    takes the rank-r energy of every round: the tracker is the chain of pairwise ``pilot`` links, whatever R
    (derived; K = 2: both scores p² + (1 − p)² with p = P(E_1 > E_2) in one round, tested). A running mean
    helps only a matching that is not by rank; the earlier absolute-difference cost had the rank matching
    among its optima, with ties that the solver broke by the last bits of its input.

(d) the **cumulative joint** attack: (c) with the two-dimensional features (ln E_j, û_j) of the ``joint`` link
    (N_r ≥ 3; below it the features are ln E alone and (d) is (c)): the chains' running means are vectors and each
    round is matched by :func:`scenarios.audit.linking.feature_matching` (each feature divided by its standard
    deviation over the chains' means and the new round's features). In two dimensions the matching is not by rank,
    so the running means, whose noise falls as 1/n, do sharpen it.

(e) the **clustered** attack (:mod:`scenarios.audit.clustering`): all T rounds' joint features clustered offline into
    K clients, one point a round each, with per-feature weights learnt from the clusters' spread; ``link`` the
    fraction of (client, t) whose rounds t and t + 1 share a cluster, ``followed`` the fraction of clients whose T
    rounds all do.

Intervals of (b)–(e) are Clopper–Pearson on the pooled counts with the same caveat (overlapping
windows share links): indicative, not exact.
"""

from __future__ import annotations

import numpy as np

from .clustering import cluster_rounds, cluster_scores
from .linking import detected, energy_matching, feature_matching, joint_features, link_rounds, log_pilot_energy
from .signals import BaseStationView, RoundTruth
from .stats import clopper_pearson

__all__ = ["TRACK_METHODS", "CHAIN_LENGTHS", "chain_success", "cumulative_success", "track_clients"]

TRACK_METHODS = ("pilot", "signature", "similarity", "steering", "joint")
CHAIN_LENGTHS = (2, 5, 10)


def _rate(hits: int, n: int, confidence: float) -> dict:
    lo, hi = clopper_pearson(int(hits), int(n), confidence=confidence)
    return {"success_rate": hits / n, "ci": [float(lo), float(hi)], "trials": int(n)}


def chain_success(mappings: list[dict[int, int]], truths: list[RoundTruth], R: int) -> tuple[int, int]:
    """(hits, trials) of (b): every client and start s, the links s → … → s + R − 1 (mappings[t]: t → t + 1)."""
    T = len(truths)
    hits = n = 0
    for s in range(T - R + 1):
        for k in range(truths[s].active.size):
            j = int(truths[s].active[k])
            for t in range(s, s + R - 1):
                j = mappings[t].get(j)
                if j is None:
                    break
            hits += int(j == int(truths[s + R - 1].active[k]))
            n += 1
    return hits, n


def cumulative_success(features: list[tuple[np.ndarray, np.ndarray]], truths: list[RoundTruth],
                       R: int) -> tuple[int, int, int]:
    """(followed hits, link hits, trials) of (c) after R rounds; features[t] = (detected sequences [K], ln E [K]); of
    (d) with features[t] = (detected sequences [K], [K, D] features).

    followed: client k's chain (opened at π_s(k)) sits at π_{s+R−1}(k); link: the tracker's last link
    s + R − 2 → s + R − 1 is right for the client at the chain's round-(s + R − 2) sequence (one trial per
    chain whose sequence then was active).
    """
    T = len(truths)
    followed = linked = n = 0
    for s in range(T - R + 1):
        seq, mu = features[s][0].copy(), features[s][1].copy()
        prev = seq
        for t in range(s + 1, s + R):
            det, le = features[t]
            if le.ndim == 1:
                rows, cols = energy_matching(mu, le)  # the rank matching, as the pairwise pilot link
            else:
                rows, cols = feature_matching(mu, le)
            order = np.empty(seq.size, dtype=np.int64)
            order[rows] = cols
            prev, seq = seq, det[order]
            mu = mu + (le[order] - mu) / (t - s + 1)
        start = {int(j): c for c, j in enumerate(features[s][0])}
        owner = {int(j): k for k, j in enumerate(truths[s + R - 2].active)}
        for k in range(truths[s].active.size):
            c = start.get(int(truths[s].active[k]))
            followed += int(c is not None and int(seq[c]) == int(truths[s + R - 1].active[k]))
            n += 1
        for c in range(seq.size):
            k = owner.get(int(prev[c]))
            linked += int(k is not None and int(seq[c]) == int(truths[s + R - 1].active[k]))
    return followed, linked, n


def track_clients(views: list[tuple[BaseStationView, RoundTruth]], *, kind: str, chain_lengths=CHAIN_LENGTHS,
                  confidence: float = 0.95) -> dict:
    """(a), (b) per method of :data:`TRACK_METHODS` and (c), as a JSON-ready dict (see the module docstring).

    views : the T ≥ 2 consecutive rounds (view, truth); kind : the detector statistic picking the K sequences.
    Chain lengths R > T are skipped.
    """
    T = len(views)
    if T < 2:
        raise ValueError(f"rounds must be ≥ 2 to link clients across rounds (got {T})")
    truths = [tr for _, tr in views]
    K = views[0][0].K
    lengths = [int(R) for R in chain_lengths if 2 <= int(R) <= T]
    methods = {}
    for method in TRACK_METHODS:
        maps = [link_rounds(views[t][0], views[t + 1][0], method=method, kind=kind) for t in range(T - 1)]
        hits, n = chain_success(maps, truths, 2)
        methods[method] = {"pairwise": _rate(hits, n, confidence),
                           "chain": {str(R): _rate(*chain_success(maps, truths, R), confidence) for R in lengths}}
    feats = []
    for v, _ in views:
        det = detected(v, kind)
        feats.append((det, 2.0 * log_pilot_energy(v, det) if v.n_rx == 1 and v.n_pilots == 1 else log_pilot_energy(v, det)))
    cum = {R: cumulative_success(feats, truths, R) for R in sorted(set(lengths) | {max(2, T // 2), T})}
    methods["cumulative"] = {"followed": {str(R): _rate(f, n, confidence) for R, (f, _, n) in cum.items()},
                             "link": {str(R): _rate(lk, n, confidence) for R, (_, lk, n) in cum.items()}}
    joint = [(det, joint_features(v, det)) for (det, _), (v, _) in zip(feats, views)]
    cum = {R: cumulative_success(joint, truths, R) for R in cum}
    methods["cumulative-joint"] = {"followed": {str(R): _rate(f, n, confidence) for R, (f, _, n) in cum.items()},
                                   "link": {str(R): _rate(lk, n, confidence) for R, (_, lk, n) in cum.items()}}
    labels = cluster_rounds([f for _, f in joint])  # the joint features computed once, above
    link, n_link, followed, n_clients = cluster_scores(labels, [det for det, _ in joint], truths)
    methods["clustered"] = {"link": _rate(link, n_link, confidence), "followed": _rate(followed, n_clients, confidence),
                            "rounds": T}
    return {
        "rx_antennas": views[0][0].n_rx,
        "rounds": T,
        "K": K,
        "methods": methods,
        "chance": 1.0 / K,
        "clients": "the same K clients (identities 0..K−1) every round; the keyed permutation changes each round",
        "uncertainty": f"two-sided {confidence:g} Clopper–Pearson on pooled counts, links treated as independent "
                       "(approximate: a matching couples its K links, overlapping windows share links)",
    }
