"""Encoders of the digital schemes: randomized Walsh–Hadamard rotation and the discrete Gaussian (model §9.2)."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard

from phy.digital.discrete_gaussian import discrete_gaussian_pmf, discrete_gaussian_variance, sample_discrete_gaussian
from phy.digital.rotation import (
    fwht,
    inverse_randomized_hadamard,
    padded_dimension,
    rademacher_signs,
    randomized_hadamard,
)
from phy.randomness import stream


def test_fwht_equals_the_sylvester_matrix_product():
    x = stream(0, "test-fwht").standard_normal((3, 64))
    np.testing.assert_allclose(fwht(x), x @ hadamard(64).T, atol=1e-12)
    with pytest.raises(ValueError, match="power-of-two"):
        fwht(np.ones(12))


def test_randomized_hadamard_is_orthogonal_and_inverts():
    n = 32
    signs = rademacher_signs(1, "test-rotation", 0, n=n)
    assert set(np.unique(signs)) <= {-1.0, 1.0}
    # the matrix of the map, column by column, is H·D with H = H_n/√n: orthogonal
    R = randomized_hadamard(np.eye(n), signs).T
    np.testing.assert_allclose(R, hadamard(n) @ np.diag(signs) / math.sqrt(n), atol=1e-12)
    np.testing.assert_allclose(R.T @ R, np.eye(n), atol=1e-12)
    x = stream(0, "test-rotation-x").standard_normal((5, n))
    y = randomized_hadamard(x, signs)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), np.linalg.norm(x, axis=1), rtol=1e-12)
    np.testing.assert_allclose(inverse_randomized_hadamard(y, signs), x, atol=1e-12)
    # it spreads a spike evenly: every coordinate of R(e_1) has magnitude 1/√n
    np.testing.assert_allclose(np.abs(randomized_hadamard(np.eye(n)[0], signs)), 1 / math.sqrt(n))
    assert [padded_dimension(d) for d in (1, 2, 3, 256, 257, 159010)] == [1, 2, 4, 256, 512, 262144]


@pytest.mark.parametrize("scale", [0.7, 3.4, 12.0])
def test_discrete_gaussian_matches_the_exact_pmf(scale):
    n = 200_000
    y = sample_discrete_gaussian(stream(5, "test-dgauss", int(scale * 10)), scale, (n,))
    assert y.dtype == np.int64
    # bins: every integer with expected count ≥ 5, the two tails merged into the outermost bins
    support = np.arange(-int(10 * scale) - 10, int(10 * scale) + 11)
    p = discrete_gaussian_pmf(support, scale)
    keep = support[p * n >= 5]
    lo, hi = keep.min(), keep.max()
    counts = np.array([np.sum(y <= lo)] + [np.sum(y == v) for v in range(lo + 1, hi)] + [np.sum(y >= hi)])
    pk = discrete_gaussian_pmf(np.arange(lo + 1, hi), scale)
    tail = (1.0 - pk.sum()) / 2.0  # the pmf is symmetric
    expected = n * np.concatenate([[tail], pk, [tail]])
    chi2 = stats.chisquare(counts, expected)
    assert chi2.pvalue > 1e-3, chi2
    # a continuous Gaussian rounded to ℤ would have variance s² + 1/12; the discrete Gaussian's is below s²
    var = discrete_gaussian_variance(scale)
    assert np.var(y) == pytest.approx(var, rel=4 * math.sqrt(2 / n) + 1e-3)


def test_discrete_gaussian_zero_scale_and_bad_scale():
    np.testing.assert_array_equal(sample_discrete_gaussian(stream(0, "t"), 0.0, (4,)), 0)
    with pytest.raises(ValueError, match="scale"):
        sample_discrete_gaussian(stream(0, "t"), -1.0, (4,))
