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


# ------------------------------------------------------------------ updates, normalization, error metric
from phy.aggregation import check_updates, relative_error  # noqa: E402
from phy.normalization import denormalize, normalize  # noqa: E402


@pytest.mark.parametrize("shape", [(1, 3), (1, 1), (4, 1), (3, 5)])
def test_any_positive_number_of_clients_and_entries_is_accepted(shape):
    x = np.arange(np.prod(shape), dtype=float).reshape(shape)
    np.testing.assert_array_equal(check_updates(x), x)
    nz = normalize(x, rule="paper", C=2.0)
    assert nz.s.shape == shape


@pytest.mark.parametrize("shape", [(0, 3), (2, 0), (0, 0), (3,), (1, 2, 3)])
def test_empty_or_wrongly_shaped_updates_are_refused_by_name(shape):
    x = np.zeros(shape)
    with pytest.raises(ValueError, match=r"^updates must be a K×d array"):
        check_updates(x)
    with pytest.raises(ValueError, match=r"^updates must be a K×d array"):
        normalize(x, rule="paper", C=1.0)


@pytest.mark.parametrize("rule", ["paper", "clip"])
def test_constant_updates_normalize_to_zero_and_come_back_as_their_means(rule):
    """Every centred update is 0 (each client's entries equal): nothing to transmit, s = 0, the means return (model §2)."""
    x = np.array([[2.0, 2.0, 2.0], [-1.0, -1.0, -1.0]])
    nz = normalize(x, rule=rule, C=3.0, clip_norm=1.0)
    np.testing.assert_array_equal(nz.s, 0.0)
    assert np.all(np.isfinite(nz.s))
    np.testing.assert_array_equal(denormalize(nz.s.sum(axis=0), nz), np.full(3, 1.0))


def test_relative_error_conventions():
    """‖e − t‖²/‖t‖² with 0/0 = 0 and x/0 = ∞ (phy.aggregation)."""
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(np.ones(3), np.zeros(3)) == float("inf")
    assert relative_error(np.array([1.0, 2.0]), np.array([1.0, 0.0])) == 4.0


@pytest.mark.parametrize("scheme, extra", [
    ("floras", {}), ("channel-inversion", {}),
    ("central-gaussian", {"normalization": "clip", "clip_norm": 1.0, "central-gaussian": {"noise_multiplier": 1.0}}),
    ("analog-gaussian", {"normalization": "clip", "clip_norm": 1.0, "analog-gaussian": {"noise_multiplier": 1.0}}),
    ("ddgauss", {"normalization": "clip", "clip_norm": 1.0, "ddgauss": {"local_std": 0.1}}),
    ("sqsgd", {"normalization": "clip", "clip_norm": 1.0}),
])
def test_every_aggregator_names_the_expected_dimension(scheme, extra):
    """One check (phy.aggregation.check_updates with d) for every scheme: K×(d+1) updates are refused."""
    from phy.schemes import make_aggregator
    from phy.config import PhyConfig

    agg = make_aggregator(PhyConfig.make(scheme=scheme, L=8, **extra, floras={"N": 6}), K=3, d=5, seed=0, key=bytes(16))
    with pytest.raises(ValueError, match=r"^updates must .*d = 5.*got.*6"):
        agg.aggregate(np.ones((3, 6)), round_index=0)


def test_floras_sufficient_path_refuses_non_finite_updates():
    """The sufficient-statistic path (aggregate) checks like the traced one: NaN is refused, not propagated."""
    from phy.schemes import make_aggregator
    from phy.config import PhyConfig

    agg = make_aggregator(PhyConfig.make(scheme="floras", L=8, floras={"N": 6}), K=3, d=5, seed=0, key=bytes(16))
    x = np.ones((3, 5))
    x[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"^updates must be finite$"):
        agg.aggregate(x, round_index=0)
