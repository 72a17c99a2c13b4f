"""Linking clients across rounds by a curious base station (model §4, §7.1 T2, §7.5).

The keyed permutation gives every round a fresh, uniformly random assignment of sequences to
clients, so the sequence index carries no information about who sent it. The base station can
still try to follow a client from round t to round t + 1 by what it decodes:

``similarity``
    Decode v_j = b·r_j^i/r_j^s for the K sequences detected active in each round (top-K by the
    NP statistic of :mod:`scenarios.audit.detection`) and match the two rounds' decodes one to
    one by maximum total cosine similarity (Hungarian algorithm,
    :func:`scipy.optimize.linear_sum_assignment`).
``pilot``
    Match by the reference amplitude |r_j^s| (a channel fingerprint): minimum total
    (ln|r_j^s(t)| − ln|r_l^s(t+1)|)². With N_r receive antennas (model §5.2) by the pilot energy
    E_j = ‖r_j^s‖² = Σ_r (r_{j,r}^s)²: minimum total (ln E_j(t) − ln E_l(t+1))² (N_r = 1: the same matching,
    ln E = 2 ln|r|); with a pilot per coherence block (model §5.1) E_j sums over the P pilots too. The squared cost's optimum is unique for distinct values: the rank matching (the i-th
    smallest of round t to the i-th smallest of round t + 1). The absolute difference has the rank matching
    among its optima too, but ties are generic (two pairs whose intervals overlap cost the same either way
    round), so the solver's pick among them moved with the last bits of its input from one CPU to another. Without a cell,
    under the simulator's fading, i.i.d. across rounds (model §5), it carries no information; in a cell
    E_j ≈ (b²β_eff,k/2 + σ²/L)·χ²_{N_r} hardens around its client's large-scale gain as N_r grows, and the
    drop is fixed across rounds (model §5.1), so it links clients.
``signature``
    Match the pilot vectors r_j^s ∈ R^{N_r} by maximum total cosine similarity (a spatial signature).
    With fading i.i.d. across rounds and antennas it is at chance; a channel correlated across rounds would make it
    work.
``steering``
    Match by the line of sight's direction (model §5.2, "Rician fading with several antennas"): antenna r's line of
    sight is A·e^{j(φ + π·r·u)}, u = sin θ_k, so the pilot vector's mean A·b·√β·cos(φ + π·r·u) lies in the plane
    span{c_u, s_u}, c_u[r] = cos(π·r·u), s_u[r] = sin(π·r·u), whatever the round's phase φ. The base station
    estimates û_j = argmax_u ‖P_u r_j^s‖² over a grid of u ∈ [0, 1] (P_u the projector on that plane: the
    least-squares fit of an unknown phase and amplitude; u and −u span the same plane, so the real pilots give
    |sin θ| only) and matches by minimum total (û_j(t) − û_l(t + 1))² (the rank matching). In a fixed drop θ_k
    stays with the client while the keyed permutation changes. With N_r ≤ 2 every plane is the whole space and û
    is undefined: the method then pairs the detected sequences in index order, a uniformly random guess.
``joint``
    Match by both fingerprints at once, the features (ln E_j, û_j) (N_r ≤ 2: ln E_j alone, the ``pilot`` matching),
    each divided by its standard deviation over the 2K sequences being matched (a scale the base station computes;
    a weighting tuned to each feature's spread within a client would do at least as well), by minimum total squared
    Euclidean distance (Hungarian algorithm): a matching in two dimensions is no longer the rank matching, so a
    tracker's running means sharpen it (:mod:`scenarios.audit.tracking`).
``index``
    Predict that a client keeps its sequence index.

Score: the fraction of the K clients whose round-t sequence is matched to their own round-(t+1)
sequence. Chance level: 1/K for a random one-to-one matching of K detected sequences
(1/N for ``index``: P(π_{t+1}(ι) = π_t(ι)) = 1/N under independent uniform permutations).

Client updates for the experiment (choice): s_k^t = C·unit(centre(√ρ·m_k + √(1−ρ)·z_k^t)),
m_k, z_k^t i.i.d. N(0, I_d) from keyed streams; ρ ∈ [0, 1] is the persistence of a client's
update direction across rounds (ρ = 0: independent rounds; local data that pulls each client
the same way every round, e.g. non-IID shards, gives ρ > 0).
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.optimize import linear_sum_assignment

from phy.randomness import stream

from .signals import BaseStationView, RoundTruth

__all__ = ["LINK_METHODS", "persistent_updates", "link_rounds", "linking_success", "detected", "log_pilot_energy",
           "energy_matching", "steering_estimate", "joint_features", "feature_matching"]

LINK_METHODS = ("similarity", "pilot", "index", "signature", "steering", "joint")
STEERING_GRID = 2049  # grid of u = |sin θ| on [0, 1] (spacing 4.9·10⁻⁴)


def persistent_updates(seed: int, round_index: int, *, K: int, d: int, C: float, persistence: float,
                       experiment: int = 0) -> np.ndarray:
    """s [K, d] float64 with ‖s_k‖ = C, zero-mean entries, and direction persistence ρ (see module docstring).

    Draws from the keyed streams (seed, "audit-link-persistent", experiment) and
    (seed, "audit-link-fresh", experiment, round_index).
    """
    if not 0.0 <= persistence <= 1.0:
        raise ValueError(f"persistence must be in [0, 1] (got {persistence!r})")
    if d < 2:
        raise ValueError(f"d must be ≥ 2 for zero-mean update directions (got {d})")
    m = stream(seed, "audit-link-persistent", experiment).standard_normal((K, d))
    z = stream(seed, "audit-link-fresh", experiment, round_index).standard_normal((K, d))
    x = np.sqrt(persistence) * m + np.sqrt(1.0 - persistence) * z
    x -= x.mean(axis=1, keepdims=True)
    return C * x / np.linalg.norm(x, axis=1, keepdims=True)


def detected(view: BaseStationView, kind: str) -> np.ndarray:
    """The K sequences with the largest detector statistic (top-K; the base station knows K), sorted [K] int64."""
    stat = view.statistic(kind)
    return np.sort(np.argsort(-stat)[: view.K])


def log_pilot_energy(view: BaseStationView, sequences: np.ndarray) -> np.ndarray:
    """The pilot feature of ``pilot`` linking [len(sequences)]: ln|r_j^s| (N_r = 1, one pilot) or ln E_j (the energy
    over the antennas and pilots)."""
    if view.n_rx == 1 and view.n_pilots == 1:
        return np.log(np.abs(view.r_ref[sequences]))
    return np.log(view.pilot_energy()[sequences])


def energy_matching(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the one-to-one matching of log energies ``a`` [n] to ``b`` [n] by minimum total squared
    difference: the rank matching, unique for distinct values (module doc, ``pilot``)."""
    return linear_sum_assignment(np.square(a[:, None] - b[None, :]))


@functools.lru_cache(maxsize=8)
def _steering_projectors(n_rx: int) -> tuple[np.ndarray, np.ndarray]:
    """(u [G], P_u [G, N_r, N_r]): the grid of :data:`STEERING_GRID` values of u = |sin θ| and the projectors on
    span{c_u, s_u} (module doc, ``steering``)."""
    u = np.linspace(0.0, 1.0, STEERING_GRID)
    ph = np.pi * u[:, None] * np.arange(n_rx)[None, :]
    M = np.stack([np.cos(ph), np.sin(ph)], axis=2)  # [G, N_r, 2]
    P = M @ np.linalg.pinv(M)
    P.setflags(write=False)
    return u, P


def steering_estimate(pilots: np.ndarray) -> np.ndarray:
    """û [n] ∈ [0, 1]: the line-of-sight direction |sin θ| of each pilot vector ``pilots`` [n, N_r] (N_r ≥ 3), the u
    whose plane span{cos(π·r·u), sin(π·r·u)} holds most of its energy (module doc, ``steering``); [P, n, N_r]: the
    energy summed over the P pilots (coherence blocks: the direction is the same in every block)."""
    p = np.asarray(pilots, dtype=np.float64)
    if p.ndim not in (2, 3) or p.shape[-1] < 3:
        raise ValueError(f"pilots must be an n×N_r or P×n×N_r array with N_r ≥ 3 antennas (got shape {p.shape}): with "
                         "N_r ≤ 2 every direction fits a real pilot vector")
    u, P = _steering_projectors(int(p.shape[-1]))
    if p.ndim == 2:
        energy = np.einsum("ni,gij,nj->ng", p, P, p)
    else:  # Σ_p p_pᵀ·P_u·p_p = ⟨Σ_p p_p·p_pᵀ, P_u⟩: the pilots' Gram matrix first
        gram = np.einsum("pni,pnj->nij", p, p)
        energy = gram.reshape(gram.shape[0], -1) @ P.reshape(P.shape[0], -1).T
    return u[np.argmax(energy, axis=1)]


def _pilots(view: BaseStationView, sequences: np.ndarray) -> np.ndarray:
    """The pilot vectors of ``sequences``: [n, N_r] with one pilot, [P, n, N_r] with P."""
    return view.r_pilots[sequences] if view.n_pilots == 1 else view.r_pilot_blocks[:, sequences]


def joint_features(view: BaseStationView, sequences: np.ndarray) -> np.ndarray:
    """[len(sequences), D] float64: (ln E_j, û_j) with N_r ≥ 3, ln E_j alone (D = 1) otherwise (module doc, ``joint``)."""
    le = log_pilot_energy(view, sequences)
    if view.n_rx < 3:
        return le[:, None]
    return np.stack([le, steering_estimate(_pilots(view, sequences))], axis=1)


def feature_matching(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) matching features ``a`` [n, D] to ``b`` [n, D] by minimum total squared Euclidean distance after
    dividing each feature by its standard deviation over the 2n rows (a constant feature is left as it is)."""
    sd = np.concatenate([a, b]).std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    x, y = a / sd, b / sd
    return linear_sum_assignment(np.sum(np.square(x[:, None, :] - y[None, :, :]), axis=2))


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(n > 0, n, 1.0)


def link_rounds(view_a: BaseStationView, view_b: BaseStationView, *, method: str, kind: str) -> dict[int, int]:
    """The attacker's guess: sequence of round a → sequence of round b (base-station data only).

    kind : detector statistic ("energy" or "signed") used to pick the K active sequences.
    """
    if method == "index":
        det = detected(view_a, kind)
        return {int(j): int(j) for j in det}
    da, db = detected(view_a, kind), detected(view_b, kind)
    if method == "pilot":
        rows, cols = energy_matching(log_pilot_energy(view_a, da), log_pilot_energy(view_b, db))
    elif method == "similarity":
        rows, cols = linear_sum_assignment(-_unit(view_a.decodes()[da]) @ _unit(view_b.decodes()[db]).T)
    elif method == "signature":
        rows, cols = linear_sum_assignment(-_unit(view_a.r_pilots[da]) @ _unit(view_b.r_pilots[db]).T)
    elif method == "steering" and view_a.n_rx < 3:  # no direction to estimate (module doc): index order
        rows = cols = np.arange(da.size)
    elif method == "steering":
        rows, cols = energy_matching(steering_estimate(_pilots(view_a, da)), steering_estimate(_pilots(view_b, db)))
    elif method == "joint":
        rows, cols = feature_matching(joint_features(view_a, da), joint_features(view_b, db))
    else:
        raise ValueError(f"method must be one of {{{', '.join(LINK_METHODS)}}} (got {method!r})")
    return {int(da[r]): int(db[c]) for r, c in zip(rows, cols)}


def linking_success(mapping: dict[int, int], truth_a: RoundTruth, truth_b: RoundTruth) -> float:
    """Fraction of clients k with mapping[π_a(k)] = π_b(k)."""
    hits = [mapping.get(int(ja)) == int(jb) for ja, jb in zip(truth_a.active, truth_b.active)]
    return float(np.mean(hits))
