"""Rayleigh block fading through Sionna (model §5)."""

import numpy as np
import pytest
from scipy import stats

from phy.fading import draw_rayleigh, effective_gain

LEVEL = 1e-3


@pytest.fixture(scope="module")
def h():
    return np.concatenate([draw_rayleigh(11, t, K=50) for t in range(200)])  # 10 000 coefficients


def test_draw_is_keyed_by_seed_and_round():
    a = draw_rayleigh(1, 4, K=20)
    assert a.shape == (20,) and a.dtype == np.complex128
    np.testing.assert_array_equal(a, draw_rayleigh(1, 4, K=20))
    assert not np.allclose(a, draw_rayleigh(1, 5, K=20))
    assert not np.allclose(a, draw_rayleigh(2, 4, K=20))


def test_unit_average_power(h):
    p = np.abs(h) ** 2  # Exp(1): mean 1, sd 1
    se = 1 / np.sqrt(p.size)
    assert abs(p.mean() - 1) < 4 * se
    assert stats.kstest(p, "expon").pvalue > LEVEL


def test_real_part_and_phase_csit_gains(h):
    g_none = effective_gain(h, csit="none")  # N(0, 1/2): E g² = 1/2, Var g² = 1/2
    assert abs(np.mean(g_none**2) - 0.5) < 4 * np.sqrt(0.5 / h.size)
    assert stats.kstest(g_none, "norm", args=(0, np.sqrt(0.5))).pvalue > LEVEL
    g_phase = effective_gain(h, csit="phase")  # Rayleigh(σ = 1/√2), E g² = 1
    assert np.all(g_phase >= 0)
    assert stats.kstest(g_phase, "rayleigh", args=(0, np.sqrt(0.5))).pvalue > LEVEL
    with pytest.raises(ValueError, match="^csit"):
        effective_gain(h, csit="full")


def test_draw_is_the_same_in_a_fresh_process():
    import subprocess
    import sys

    code = "from phy.fading import draw_rayleigh; print(draw_rayleigh(3, 5, K=4).tobytes().hex())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert bytes.fromhex(out.stdout.strip().splitlines()[-1]) == draw_rayleigh(3, 5, K=4).tobytes()
