"""Foundation: keyed randomness, normalization, the ideal aggregator, configuration checks."""

import numpy as np
import pytest

from phy.ideal import IdealAggregator
from phy.schemes import make_aggregator
from phy.config import PhyConfig
from phy.normalization import denormalize, normalize
from phy.randomness import stream


def test_streams_are_keyed_by_logical_indices():
    a = stream(7, "fading", 3).standard_normal(5)
    b = stream(7, "fading", 3).standard_normal(5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, stream(7, "fading", 4).standard_normal(5))
    assert not np.array_equal(a, stream(7, "awgn", 3).standard_normal(5))
    assert not np.array_equal(a, stream(8, "fading", 3).standard_normal(5))


@pytest.mark.parametrize("rule", ["paper", "clip"])
def test_normalization_bounds_and_roundtrip(rule):
    rng = stream(0, "test")
    x = rng.normal(size=(5, 40)) * np.arange(1, 6)[:, None] + 3.0
    C = np.sqrt(40.0)
    nz = normalize(x, rule=rule, C=C, clip_norm=1e6)
    assert np.all(np.linalg.norm(nz.s, axis=1) <= C * (1 + 1e-12))
    np.testing.assert_allclose(nz.s.mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(denormalize(nz.s.sum(axis=0), nz), x.sum(axis=0), rtol=1e-12, atol=1e-9)
    if rule == "paper":
        assert np.isclose(np.linalg.norm(nz.s, axis=1).max(), C)


def test_clip_normalization_clips():
    x = np.array([[3.0, -3.0], [0.1, -0.1]])
    nz = normalize(x, rule="clip", C=1.0, clip_norm=1.0)
    np.testing.assert_allclose(np.linalg.norm(nz.s, axis=1), [1.0, np.sqrt(0.02)])


def test_ideal_aggregator_is_exact():
    x = stream(1, "test").normal(size=(4, 100))
    agg = make_aggregator(PhyConfig(scheme="ideal"), K=4, d=100, seed=0)
    assert isinstance(agg, IdealAggregator)
    res = agg.aggregate(x, round_index=0)
    np.testing.assert_allclose(res.sum_estimate, x.sum(axis=0), atol=1e-10)
    assert res.contributors == 4 and res.error < 1e-20


@pytest.mark.parametrize(
    "kwargs, K, name",
    [
        (dict(floras={"N": 10}), 20, "floras.N"),
        (dict(L=32, floras={"N": 40}), 20, "floras.N"),
        (dict(L=24, floras={"N": 20}), 20, "L"),
        (dict(snr_db=float("nan")), 20, "snr_db"),
        (dict(g_th=0.0), 20, "g_th"),
        (dict(scheme="bogus"), 20, "scheme"),
    ],
)
def test_config_errors_name_the_parameter(kwargs, K, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        PhyConfig.make(**kwargs).validate(K=K, d=10)


def test_unknown_config_key_is_an_error():
    with pytest.raises(ValueError, match="unknown key phy.snr"):
        PhyConfig.from_dict({"snr": 3})
