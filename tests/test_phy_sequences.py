"""Spreading-sequence sets (model §3)."""

import numpy as np
import pytest

from phy.sequences import make_sequences, orthogonality_defect, pseudo_noise, random_orthonormal, walsh_hadamard


@pytest.mark.parametrize("family", ["walsh-hadamard", "random-orthonormal"])
@pytest.mark.parametrize("L, N", [(32, 30), (32, 32), (16, 1), (64, 40)])
def test_orthonormal_families(family, L, N):
    A = make_sequences(family, L=L, N=N, seed=3)
    assert A.shape == (L, N) and A.dtype == np.float64
    np.testing.assert_allclose(A.T @ A, np.eye(N), atol=1e-12)
    assert orthogonality_defect(A) < 1e-12


def test_walsh_hadamard_entries_are_plus_minus_one_over_sqrt_L():
    A = walsh_hadamard(L=32, N=30)
    np.testing.assert_array_equal(np.abs(A), np.full((32, 30), 1 / np.sqrt(32)))


def test_random_orthonormal_is_keyed_by_seed():
    np.testing.assert_array_equal(random_orthonormal(L=32, N=30, seed=1), random_orthonormal(L=32, N=30, seed=1))
    assert not np.allclose(random_orthonormal(L=32, N=30, seed=1), random_orthonormal(L=32, N=30, seed=2))


def test_pseudo_noise_is_unit_norm_unique_and_not_orthogonal():
    A = pseudo_noise(L=16, N=40, seed=0)  # N > L is allowed for the non-orthogonal family
    assert A.shape == (16, 40)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, atol=1e-15)
    assert len({A[:, j].tobytes() for j in range(40)}) == 40
    assert orthogonality_defect(A) > 0.1


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: walsh_hadamard(L=24, N=20), "L"),
        (lambda: walsh_hadamard(L=32, N=33), "N"),
        (lambda: random_orthonormal(L=8, N=9, seed=0), "N"),
        (lambda: make_sequences("gold", L=8, N=4), "sequences"),
        (lambda: pseudo_noise(L=2, N=5, seed=0), "N"),
    ],
)
def test_bad_sequence_parameters_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        call()
