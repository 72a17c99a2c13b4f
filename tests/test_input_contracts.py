"""Exact input contracts of the pure phy functions (written while triaging mutation survivors, docs/testing.md).

Values of the wrong type (bool, float, str) or below the range are ValueErrors naming the parameter,
never a TypeError from deep inside and never a silent acceptance (True is not the integer 1 here).
"""

import numpy as np
import pytest

from phy.sequences import make_sequences, pseudo_noise, random_orthonormal, walsh_hadamard

FAMILIES = [
    lambda **kw: walsh_hadamard(**kw),
    lambda **kw: random_orthonormal(seed=0, **kw),
    lambda **kw: pseudo_noise(seed=0, **kw),
]


@pytest.mark.parametrize("make", FAMILIES)
@pytest.mark.parametrize("bad", [True, False, 2.0, "4", None, 0, -3])
def test_sequence_dimensions_reject_non_integers_and_out_of_range(make, bad):
    with pytest.raises(ValueError, match=r"^N must be an integer ≥ 1"):
        make(L=8, N=bad)
    with pytest.raises(ValueError, match=r"^L must be an integer ≥ 1"):
        make(L=bad, N=2)


@pytest.mark.parametrize("family", ["walsh-hadamard", "random-orthonormal", "pn"])
def test_numpy_integers_are_accepted(family):
    A = make_sequences(family, L=np.int64(8), N=np.int32(4), seed=1)
    assert A.shape == (8, 4)
    np.testing.assert_allclose(np.linalg.norm(A, axis=0), 1.0, rtol=1e-12)
