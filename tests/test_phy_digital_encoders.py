"""Encoders of the digital schemes: randomized Walsh–Hadamard rotation and the discrete Gaussian (model §9.2)."""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard

from phy.digital.discrete_gaussian import discrete_gaussian_pmf, discrete_gaussian_variance, sample_discrete_gaussian
from phy.digital.rotation import (
    FACTORED_MIN_LENGTH,
    fwht,
    hadamard_factors,
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


def _sylvester_columns(n: int, cols) -> np.ndarray:
    """Columns j of H_n from the definition H_n[i, j] = (−1)^popcount(i AND j), as rows [len(cols), n]."""
    i = np.arange(n, dtype=np.int64)
    out = np.empty((len(cols), n))
    for r, j in enumerate(cols):
        bits = np.bitwise_and(i, int(j))
        parity = np.zeros(n, dtype=np.int64)
        while np.any(bits):
            parity ^= bits & 1
            bits >>= 1
        out[r] = 1.0 - 2.0 * parity
    return out


@pytest.mark.parametrize("n", [FACTORED_MIN_LENGTH, 1 << 13, 1 << 18])
def test_factored_fwht_equals_the_sylvester_definition(n):
    # long rows go through the Kronecker factors (unequal ones at 2^13: 32·16·16); H_n e_j is column j
    # of H_n, predicted from the popcount definition, not from a Kronecker product; a factor applied
    # along the wrong axis, or a factor ordering that mixes the digits, changes these columns
    sizes = hadamard_factors(n)
    assert math.prod(sizes) == n and max(sizes) <= 64 and all(s & (s - 1) == 0 for s in sizes)
    cols = [0, 1, 63, 64, n // 2 + 5, n - 1]
    unit = np.zeros((len(cols), n))
    unit[np.arange(len(cols)), cols] = 1.0
    np.testing.assert_array_equal(fwht(unit), _sylvester_columns(n, cols))
    # on arbitrary rows it agrees with the butterfly form (the transposed product) within rounding
    x = stream(0, "test-fwht-factored", n).standard_normal((3, n))
    y = fwht(x)
    back = fwht(y) / n  # H_n² = n·I
    np.testing.assert_allclose(back, x, atol=1e-12 * math.sqrt(n))
    np.testing.assert_allclose(np.sum(y * y, axis=1), n * np.sum(x * x, axis=1), rtol=1e-12)


def test_fwht_rows_do_not_depend_on_their_neighbours():
    # bit for bit: a row transforms alike alone, in a slice, in a 3-d stack, and with the two buffers
    n = 1 << 14
    x = stream(0, "test-fwht-rows").standard_normal((6, n))
    whole = fwht(x)
    np.testing.assert_array_equal(fwht(x[2:5]), whole[2:5])
    np.testing.assert_array_equal(fwht(x[4]), whole[4])
    np.testing.assert_array_equal(fwht(x.reshape(2, 3, n)).reshape(6, n), whole)
    buf, work = x.copy(), np.empty_like(x)
    res = fwht(buf, overwrite=True, work=work)
    assert res is work
    np.testing.assert_array_equal(res, whole)
    buf = x.copy()
    res = fwht(buf, overwrite=True)
    assert res is buf
    np.testing.assert_array_equal(res, whole)
    with pytest.raises(ValueError, match="power of two"):
        hadamard_factors(48)


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
