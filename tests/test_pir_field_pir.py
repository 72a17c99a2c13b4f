"""privacy.pir: prime field, split MDS code and the Sun–Jafar PIR (model §9.6)."""

from fractions import Fraction
from itertools import permutations

import numpy as np
import pytest

from privacy.pir import sun_jafar as sj
from privacy.pir.field import PrimeField, is_prime, prime_for_bits
from privacy.pir.mds import SplitMDSCode
from privacy.pir.verify import check_queries


def test_primes_against_a_sieve_and_known_values():
    n = 2000
    sieve = np.ones(n, bool)
    sieve[:2] = False
    for p in range(2, int(n**0.5) + 1):
        sieve[p * p::p] = False
    assert [is_prime(k) for k in range(n)] == list(sieve)
    assert prime_for_bits(2) == 3 and prime_for_bits(31) == 2**31 - 1 and prime_for_bits(32) == 2**32 - 5
    assert prime_for_bits(61) == 2**61 - 1
    with pytest.raises(ValueError, match="field-bits"):
        prime_for_bits(63)


def test_matmul_is_exact_near_2_31():
    """Products near q² ≈ 2^62 must not overflow: compare with Python integers."""
    F = PrimeField(2**31 - 1)
    rng = np.random.default_rng(0)
    A, B = F.random(rng, (5, 40)), F.random(rng, (40, 3))
    ref = [[sum(int(A[i, k]) * int(B[k, j]) for k in range(40)) % F.q for j in range(3)] for i in range(5)]
    assert F.matmul(A, B).tolist() == ref
    assert F.mults == 5 * 40 * 3


def test_mds_round_trip_parts_and_inverse():
    F = PrimeField(101)
    code = SplitMDSCode(F, 11, 3)
    assert code.part_sizes == [4, 4, 3]
    assert np.array_equal(F.matmul(code.G, F.inverse(code.G)), np.eye(11, dtype=np.int64))
    m = F.random(np.random.default_rng(1), 11)
    parts = code.encode(m)
    assert [len(p) for p in parts] == [4, 4, 3]
    assert np.array_equal(code.decode(parts), m)
    assert not np.array_equal(np.concatenate(parts), m)  # non-systematic
    with pytest.raises(ValueError, match="field too small"):
        SplitMDSCode(PrimeField(7), 8, 2)


@pytest.mark.parametrize("K,N", [(1, 2), (2, 2), (3, 2), (2, 3), (3, 3), (4, 2), (2, 4)])
def test_sun_jafar_retrieves_every_message_at_capacity(K, N):
    F = PrimeField(10007)
    rng = np.random.default_rng(K * 10 + N)
    L = N**K
    W = F.random(rng, (K, L))
    expected_download = L * (1 + sum(Fraction(1, N**k) for k in range(1, K)))  # capacity, Sun–Jafar Thm 1
    for theta in range(K):
        q = sj.build_queries(K, N, theta, [rng.permutation(L) for _ in range(K)])
        answers = [sj.answer(F, Q, W) for Q in q.queries]
        assert np.array_equal(sj.decode(F, q, answers, L), W[theta])
        assert sum(len(A) for A in answers) == expected_download
        assert len({len(Q) for Q in q.queries}) == 1  # symmetric across databases
        for Q in q.queries:
            for k in range(K):  # within one database, a message's symbols never repeat
                used = Q[:, k][Q[:, k] >= 0]
                assert len(used) == len(set(used.tolist())) == N ** (K - 1)


def test_queries_exhaustively_private_and_check_has_teeth():
    assert check_queries(r=2, N=2).passed and check_queries(r=1, N=3).passed
    # without the random permutations the queries for θ = 0 and θ = 1 differ: the comparison can fail
    ident = [np.arange(4), np.arange(4)]
    q0, q1 = (sj.build_queries(2, 2, th, ident).queries[0] for th in (0, 1))
    assert not np.array_equal(q0, q1)
    # and over all permutations the multisets of queries seen by database 0 coincide
    perms = list(permutations(range(4)))
    views = [sorted(sj.build_queries(2, 2, th, [perms[a], perms[b]]).queries[0].tobytes()
                    for a in range(24) for b in range(24)) for th in (0, 1)]
    assert views[0] == views[1]


def test_subpacketization_error_names_s_and_n_to_the_r():
    with pytest.raises(ValueError, match=r"s = 6 .*multiple of N\^r = 4"):
        sj.check_subpacketization(6, 2, 2)
