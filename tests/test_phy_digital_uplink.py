"""Shannon-rate TDMA uplink and per-scheme channel uses (model §5)."""

import math

import numpy as np
import pytest

from phy.channel_uses import analog_channel_uses, floras_channel_uses
from phy.config import PhyConfig
from phy.digital.uplink import DigitalUplink, shannon_rate, tdma_channel_uses
from phy.fading import draw_rayleigh


def test_shannon_rate_known_values():
    # ½·log2(1 + 3) = 1 bit; ½·log2(1 + 15) = 2 bits; a 10 dB link at |h|² = 1: ½·log2(11)
    assert shannon_rate(1.0, 3.0) == pytest.approx(1.0, rel=1e-15)
    assert shannon_rate(0.5, 30.0) == pytest.approx(2.0, rel=1e-15)
    assert shannon_rate(1.0, 10.0) == pytest.approx(0.5 * math.log2(11.0), rel=1e-15)
    assert shannon_rate(0.0, 10.0) == 0.0


def test_tdma_channel_uses_rounds_up_per_client():
    # 10 bits at 3 bits/use needs 4 uses (not 10/3); two clients add up.
    assert tdma_channel_uses(10, [3.0]) == 4
    assert tdma_channel_uses([10, 9], [3.0, 3.0]) == 7
    assert tdma_channel_uses(10, []) == 0
    with pytest.raises(ValueError, match="rates"):
        tdma_channel_uses(10, [0.0])


def test_digital_uplink_matches_the_formula_on_the_shared_fading_draw():
    cfg = PhyConfig(scheme="ideal", snr_db=10.0, g_th=0.05)
    K, seed, bits = 20, 7, 12_345
    link = DigitalUplink(cfg, K=K, seed=seed)
    for t in range(5):
        rnd = link.run_round(bits, round_index=t)
        h = draw_rayleigh(seed, t, K=K)  # the draw every scheme sees for (seed, round)
        np.testing.assert_array_equal(rnd.h, h)
        g2 = np.abs(h) ** 2
        expected = 0
        for gk in g2:
            if gk >= 0.05:
                expected += math.ceil(bits / (0.5 * math.log2(1.0 + gk * 10.0)))
        assert rnd.channel_uses == expected
        np.testing.assert_array_equal(rnd.admitted, g2 >= 0.05)
        assert np.all(rnd.airtime[~rnd.admitted] == 0)


def test_analog_channel_uses():
    assert floras_channel_uses(d=100, L=32) == 101 * 32
    assert analog_channel_uses(d=100, L=32, resource="equal") == 3200
    assert analog_channel_uses(d=100, L=32, resource="source-literal") == 100
    with pytest.raises(ValueError, match="resource"):
        analog_channel_uses(d=100, L=32, resource="other")
    with pytest.raises(ValueError, match="d must be"):
        floras_channel_uses(d=0, L=32)
