"""Keyed random-permutation assignment (model §4) and the key-free receiver API."""

import hashlib
import hmac
import inspect

import numpy as np
import pytest
from scipy import stats

from phy.assignment import DOMAIN_TAG, KeyedAssignment, key_from_hex, round_permutation, round_seed, simulation_key
from phy.receiver import Receiver
from phy.sequences import walsh_hadamard

KEY = bytes(range(32))
LEVEL = 1e-3  # significance level of the chi-square tests


def test_round_seed_is_hmac_sha256_of_tag_and_round():
    expected = hmac.new(KEY, DOMAIN_TAG + (7).to_bytes(8, "big"), hashlib.sha256).digest()
    assert round_seed(KEY, 7) == expected


def test_clients_agree_and_never_collide():
    N, K = 30, 20
    clients = [KeyedAssignment(KEY, N=N) for _ in range(K)]  # each client derives it independently
    for t in range(200):
        indices = [clients[k].sequence_index(k, t) for k in range(K)]
        assert len(set(indices)) == K
        np.testing.assert_array_equal(indices, KeyedAssignment(KEY, N=N).active_set(t, K=K))
        perm = round_permutation(KEY, t, N=N)
        assert sorted(perm.tolist()) == list(range(N))


def test_fresh_every_round_and_key_sensitive():
    N, rounds = 30, 200
    perms = np.array([round_permutation(KEY, t, N=N) for t in range(rounds)])
    # two equal permutations of 30 elements occur with probability 1/30! per pair: none expected
    assert len({p.tobytes() for p in perms}) == rounds
    other = bytearray(KEY)
    other[0] ^= 1  # one bit of the key
    perms_other = np.array([round_permutation(bytes(other), t, N=N) for t in range(rounds)])
    assert not np.any(np.all(perms == perms_other, axis=1))
    # agreement between the two keys' permutations is at chance level: E[#fixed matches] = 1 per round
    matches = np.sum(perms == perms_other)
    assert abs(matches - rounds) < 5 * np.sqrt(rounds)  # Poisson(1)-like count per round, sd ≈ √rounds


def test_active_set_is_uniform():
    """Inclusion counts over R rounds; each round is a uniform K-subset of N.

    Per round the inclusion indicators X have Cov = p(1−p)·N/(N−1)·(I − 11ᵀ/N), p = K/N, so
    Σ_j (O_j − Rp)² · (N−1)/(R·p(1−p)·N) is asymptotically χ²(N−1).
    """
    N, K, R = 30, 20, 3000
    a = KeyedAssignment(KEY, N=N)
    counts = np.zeros(N)
    first_client = np.zeros(N)
    for t in range(R):
        perm = a.permutation(t)
        counts[perm[:K]] += 1
        first_client[perm[0]] += 1
    p = K / N
    stat = np.sum((counts - R * p) ** 2) * (N - 1) / (R * p * (1 - p) * N)
    assert stats.chi2.sf(stat, N - 1) > LEVEL
    # client 0's sequence is uniform over the N indices: ordinary multinomial chi-square
    assert stats.chisquare(first_client).pvalue > LEVEL


@pytest.mark.parametrize("key", [b"", b"short", bytes(15)])
def test_short_keys_are_rejected(key):
    with pytest.raises(ValueError, match=r"^key must be at least 16 bytes"):
        KeyedAssignment(key, N=30)


def test_key_from_hex_checks_length_and_digits():
    assert key_from_hex("00" * 16) == bytes(16)
    with pytest.raises(ValueError, match="^key-hex"):
        key_from_hex("00" * 15)
    with pytest.raises(ValueError, match="^key-hex"):
        key_from_hex("zz" * 16)
    assert simulation_key(0) == simulation_key(0) != simulation_key(1)
    assert "hidden" in repr(KeyedAssignment(KEY, N=4)) and KEY.hex() not in repr(KeyedAssignment(KEY, N=4))


def test_receiver_api_has_no_key_or_permutation():
    forbidden = {"key", "permutation", "perm", "pi", "active", "assignment", "seed"}
    for name, member in inspect.getmembers(Receiver, predicate=inspect.isfunction):
        params = set(inspect.signature(member).parameters)
        assert not params & forbidden, (name, params & forbidden)


def test_receiver_works_from_A_and_received_signals_only():
    """Chip-level signals built here with a secret active set; the receiver gets A, y_s, y."""
    rng = np.random.default_rng(5)
    L, N, K, d, b = 32, 30, 20, 50, 2.0
    A = walsh_hadamard(L=L, N=N)
    active = round_permutation(KEY, 3, N=N)[:K]
    g = rng.normal(size=K) + 3.0
    s = rng.normal(size=(K, d))
    noise_ref, noise = 1e-3 * rng.normal(size=L), 1e-3 * rng.normal(size=(L, d))
    y_ref = A[:, active] @ (g * b) + noise_ref
    y = A[:, active] @ (g[:, None] * s) + noise
    s_hat = Receiver(A, reference_amplitude=b).estimate(y_ref, y)
    r_ref, r = A.T @ y_ref, A.T @ y
    # inactive ratios divide rounding of size ε·‖y‖ by noise of size 1e-3: agreement to ~1e-11 relative
    np.testing.assert_allclose(s_hat, b * np.sum(r / r_ref[:, None], axis=0), rtol=1e-8)
