"""The laws of the three samplers, tested against their statistics (docs/reliability.md, "Sampler laws").

* :func:`fl.federated.sample_clients`: K of M clients uniformly without replacement;
* :mod:`phy.assignment`: π_t a uniform permutation of [N], the active set S_t = π_t({0..K−1})
  a uniform K-subset of [N];
* :func:`fl.training.batch_indices`: every epoch a uniform permutation of a client's D rows.

Statistics (all seeded, so every test is deterministic; the level α is the chance that a
correct sampler with another seed would fail):

* **inclusion** of each of M items over R draws of a K-subset: counts c_m, p = K/M,
  ``X = (M−1)/M · Σ (c_m − Rp)² / (R p (1−p))``. Without replacement the indicators have
  covariance p(1−p)·M/(M−1)·(I − 11ᵀ/M), so X → χ²_{M−1} exactly (not the plain Pearson sum,
  whose mean is M, not M−1).
* **pairs**: for a few fixed pairs (a, b), n_ab ~ Binomial(R, q), q = K(K−1)/(M(M−1)) exactly;
  z-test, Bonferroni over the pairs, two-sided.
* **positions** of R permutations of [N]: C[i, v] = #{π(i) = v}, E = R/N,
  ``X = (N−1)/N · Σ (C − E)² / E``. A uniform permutation matrix has covariance
  (1/(N−1))·Q⊗Q (Q the centring projector), so X → χ²_{(N−1)²}.

Each test computes the same statistic on samples of plausible wrong laws drawn here and
asserts that they are rejected: "never client 0" (0 replaced by another), "biased" (weights
∝ 1 + 0.5·[m even], successive sampling) and, for permutations, the naive shuffle (swap i
with a uniform j in [0, N)).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from fl.federated import sample_clients
from fl.training import batch_indices
from phy.assignment import KeyedAssignment

ALPHA = 1e-4  # per statistic


# ------------------------------------------------------------------ statistics
def inclusion_stat(subsets: np.ndarray, M: int) -> tuple[float, float]:
    """(X, critical value at ALPHA) for the per-item inclusion counts of ``subsets`` [R, K]."""
    R, K = subsets.shape
    p = K / M
    c = np.bincount(subsets.ravel(), minlength=M)
    x = (M - 1) / M * float(np.sum((c - R * p) ** 2) / (R * p * (1 - p)))
    return x, float(stats.chi2.isf(ALPHA, M - 1))


PAIRS = ((0, 1), (0, 2), (1, 2), (1, 3), (3, 10))


def pair_z(subsets: np.ndarray, M: int, pairs=PAIRS) -> tuple[np.ndarray, float]:
    """(|z| per pair, Bonferroni two-sided critical value at ALPHA)."""
    R, K = subsets.shape
    q = K * (K - 1) / (M * (M - 1))
    ind = np.zeros((R, M), dtype=bool)
    np.put_along_axis(ind, subsets, True, axis=1)
    n = np.array([np.sum(ind[:, a] & ind[:, b]) for a, b in pairs])
    z = (n - R * q) / np.sqrt(R * q * (1 - q))
    return np.abs(z), float(stats.norm.isf(ALPHA / (2 * len(pairs))))


def position_stat(perms: np.ndarray) -> tuple[float, float]:
    """(X, critical value at ALPHA) for the position-value counts of ``perms`` [R, N]."""
    R, N = perms.shape
    assert np.all(np.sort(perms, axis=1) == np.arange(N)), "not permutations"
    C = np.zeros((N, N))
    np.add.at(C, (np.broadcast_to(np.arange(N), perms.shape), perms), 1)
    E = R / N
    x = (N - 1) / N * float(np.sum((C - E) ** 2) / E)
    return x, float(stats.chi2.isf(ALPHA, (N - 1) ** 2))


# ------------------------------------------------------------------ wrong laws
def _weights(n: int) -> np.ndarray:
    w = 1 + 0.5 * (np.arange(n) % 2 == 0)
    return w / w.sum()


def never_zero_subsets(rng, R: int, M: int, K: int) -> np.ndarray:
    """Uniform K-subsets, but client 0 replaced by a uniform client not in the subset."""
    out = np.stack([rng.choice(M, K, replace=False) for _ in range(R)])
    for row in out:
        if 0 in row:
            free = np.setdiff1d(np.arange(1, M), row)
            row[row == 0] = rng.choice(free)
    return out


def biased_subsets(rng, R: int, M: int, K: int) -> np.ndarray:
    w = _weights(M)
    return np.stack([rng.choice(M, K, replace=False, p=w) for _ in range(R)])


def never_zero_first(rng, R: int, N: int) -> np.ndarray:
    """Uniform permutations, but value 0 never at position 0 (swapped with a uniform other position)."""
    out = np.stack([rng.permutation(N) for _ in range(R)])
    for row in out:
        if row[0] == 0:
            j = rng.integers(1, N)
            row[0], row[j] = row[j], row[0]
    return out


def biased_perms(rng, R: int, N: int) -> np.ndarray:
    w = _weights(N)
    return np.stack([rng.choice(N, N, replace=False, p=w) for _ in range(R)])


def naive_shuffle(rng, R: int, N: int) -> np.ndarray:
    out = np.tile(np.arange(N), (R, 1))
    for row in out:
        for i in range(N):
            j = rng.integers(0, N)
            row[i], row[j] = row[j], row[i]
    return out


# ------------------------------------------------------------------ tests
M_CL, K_CL, R_CL = 20, 5, 20000


def test_client_sampling_inclusion_is_k_over_m():
    """Inclusion χ²_{19} at α = 1e-4 (critical 50.8) over R = 20 000 rounds, M = 20, K = 5.

    Power: a law with inclusion probabilities p_m has non-centrality
    λ ≈ R·(M−1)/M·Σ(p_m − K/M)²/(p(1−p)); power 0.99 needs λ ≥ 68.6, i.e. one client off by
    |Δp| ≥ 0.026 (0.25 → 0.224) suffices. The wrong laws are tested on R/4 = 5 000 rounds:
    "never client 0" has λ ≈ 1 700 there and "biased" (p_even ≈ 0.293, p_odd ≈ 0.207)
    λ ≈ 950, against the critical 50.8: power 1 to machine precision.
    """
    good = np.stack([sample_clients(seed=11, round_index=r, M=M_CL, K=K_CL) for r in range(R_CL)])
    assert all(len(set(row)) == K_CL for row in good[:100])
    x, crit = inclusion_stat(good, M_CL)
    assert x < crit, (x, crit)
    rng = np.random.default_rng(5)
    for wrong in (never_zero_subsets(rng, R_CL // 4, M_CL, K_CL), biased_subsets(rng, R_CL // 4, M_CL, K_CL)):
        xw, critw = inclusion_stat(wrong, M_CL)  # a quarter of the samples, still rejected
        assert xw > critw, (xw, critw)


def test_client_sampling_pairs_are_k_k1_over_m_m1():
    """Pair inclusion q = K(K−1)/(M(M−1)) = 0.0526: |z| on 5 pairs, Bonferroni α = 1e-4 (|z| > 4.26).

    Power over R = 20 000 rounds (sd of n_ab ≈ 31.6): a pair off by |Δq| ≥ 0.0085 (16 %
    relative) is found with power ≈ 0.99. The wrong laws, on R/2 = 10 000 rounds: "never
    client 0" gives z ≈ −23.6 on the pairs holding 0; "biased" gives q_02 ≈ 0.074 on the even
    pair (0, 2), z ≈ 9.5, power Φ((9.5 − 4.26)/1.17) ≈ 1 − 4·10⁻⁶.
    """
    good = np.stack([sample_clients(seed=12, round_index=r, M=M_CL, K=K_CL) for r in range(R_CL)])
    z, crit = pair_z(good, M_CL)
    assert np.all(z < crit), (z, crit)
    rng = np.random.default_rng(6)
    for wrong in (never_zero_subsets(rng, R_CL // 2, M_CL, K_CL), biased_subsets(rng, R_CL // 2, M_CL, K_CL)):
        zw, critw = pair_z(wrong, M_CL)
        assert np.max(zw) > critw, (zw, critw)


N_SEQ, K_SEQ, R_SEQ = 12, 10, 20000
KEY = bytes.fromhex("5eed" * 16)


def test_round_permutation_positions_are_uniform():
    """Position χ²_{121} at α = 1e-4 (critical 187.6) over R = 20 000 rounds, N = 12.

    Power 0.99 needs λ ≥ 126, λ ≈ R·Σ_{i,v}(P(π(i)=v) − 1/N)²·N: e.g. one position whose
    value law is off by 0.03 on two values. "Never 0 at position 0" has λ ≈ 1 800, "biased"
    (even values first) λ ≈ 7 500, and the naive shuffle λ ≈ 2 700 (its position 0 holds
    value 1 with probability 1/12 + 0.025 and value 11 with 1/12 − 0.02).
    """
    a = KeyedAssignment(KEY, N=N_SEQ)
    good = np.stack([a.permutation(t) for t in range(R_SEQ)])
    x, crit = position_stat(good)
    assert x < crit, (x, crit)
    rng = np.random.default_rng(7)
    for wrong in (never_zero_first(rng, R_SEQ, N_SEQ), biased_perms(rng, R_SEQ, N_SEQ), naive_shuffle(rng, R_SEQ, N_SEQ)):
        xw, critw = position_stat(wrong)
        assert xw > critw, (xw, critw)


def test_active_set_is_a_uniform_k_subset():
    """Inclusion χ²_{11} (critical 37.4 at α = 1e-4) of S_t = π_t({0..K−1}), K = 10 of N = 12.

    With p = 10/12 (only 2 inactive sequences) the statistic sees an inactive-set bias of
    |Δp| ≥ 0.013 on one sequence with power ≈ 0.99 (λ ≥ 52 over R = 20 000). The wrong laws,
    on R/4 = 5 000 rounds: an active set that never holds sequence 0 (λ ≈ 25 000) and one
    biased to even sequences (λ ≈ 1 200). Pairs are z-tested as for the client sampler.
    """
    a = KeyedAssignment(KEY, N=N_SEQ)
    good = np.stack([a.active_set(t, K=K_SEQ) for t in range(R_SEQ)])
    x, crit = inclusion_stat(good, N_SEQ)
    assert x < crit, (x, crit)
    z, zcrit = pair_z(good, N_SEQ)
    assert np.all(z < zcrit), (z, zcrit)
    rng = np.random.default_rng(8)
    for wrong in (never_zero_subsets(rng, R_SEQ // 4, N_SEQ, K_SEQ), biased_subsets(rng, R_SEQ // 4, N_SEQ, K_SEQ)):
        xw, critw = inclusion_stat(wrong, N_SEQ)
        assert xw > critw, (xw, critw)


D_B, B_B, CLIENTS, ROUNDS = 10, 2, 50, 300


def test_batch_orders_are_uniform_permutations_each_epoch():
    """Position χ²_{81} (critical 137.1 at α = 1e-4) of each epoch's order, D = 10, 15 000 orders.

    ``batch_indices`` with B | D and steps = E·D/B returns the full order of each epoch; both
    epochs of every (round, client) are tested, and the pair (epoch 1, epoch 2) is checked not to
    repeat. Power 0.99 needs λ ≥ 109 (e.g. one position off by 0.035 on two values); the wrong
    laws (row 0 never first, even rows favoured, naive shuffle) have λ in the hundreds or more.
    """
    clients = np.arange(CLIENTS)
    epochs = 2
    steps = epochs * D_B // B_B
    orders = np.concatenate([
        batch_indices(seed=13, round_index=r, clients=clients, D=D_B, batch_size=B_B, steps=steps, epochs=epochs)
        .transpose(1, 0, 2).reshape(CLIENTS, epochs, D_B)
        for r in range(ROUNDS)
    ])  # [R·clients, epochs, D]
    for e in range(epochs):
        x, crit = position_stat(orders[:, e])
        assert x < crit, (e, x, crit)
    same = np.mean(np.all(orders[:, 0] == orders[:, 1], axis=1))
    assert same < 0.01  # P(two independent uniform orders agree) = 1/10! ≈ 3e-7
    n = ROUNDS * CLIENTS
    rng = np.random.default_rng(9)
    for wrong in (never_zero_first(rng, n, D_B), biased_perms(rng, n, D_B), naive_shuffle(rng, n, D_B)):
        xw, critw = position_stat(wrong)
        assert xw > critw, (xw, critw)
