"""Fractional-chip timing offsets on the FLORAS chip path (model §5.1, phy/chip_timing.py)."""

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.fading import draw_rayleigh, effective_gain
from phy.randomness import stream
from phy.schemes import make_aggregator

KEY = bytes(range(16))


def _agg(tau_max, *, snr_db=300.0, K=3, N=6, L=8, d=5, seed=2, **floras):
    cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, timing_offset=tau_max,
                         floras={"N": N, "sequences": "random-orthonormal", **floras})
    return make_aggregator(cfg, K=K, d=d, seed=seed, key=KEY)


def test_offsets_give_the_delayed_chip_stream_formula():
    # noise-free limit (300 dB): build each client's chip stream [a·b, a·s^1, ..., a·s^d], delay it by τ_k chips
    # (rectangular pulses, integrate-and-dump: (1 − τ)·x[n] + τ·x[n − 1]), sum with the gains, despread, and form
    # ŝ^i = b·Σ_j r_j^i / r_j^s over all N sequences (model §6.1, the receiver knows A and b only)
    K, N, L, d, seed, t, tau_max = 3, 6, 8, 5, 2, 4, 0.5
    agg = _agg(tau_max, K=K, N=N, L=L, d=d, seed=seed)
    s = stream(0, "test-s").standard_normal((K, d))
    rnd = agg.link.run_round(s, round_index=t, trace=True)
    assert rnd.path == "chip"
    tau = tau_max * stream(seed, "timing-offset", t).random(K)
    g = effective_gain(draw_rayleigh(seed, t, K=K), csit="none")
    A, b = agg.link.A, 1.0
    y = np.zeros(L * (d + 1))
    for k in range(K):
        x = np.concatenate([A[:, rnd.active[k]] * u for u in np.concatenate([[b], s[k]])])
        delayed = (1 - tau[k]) * x
        delayed[1:] += tau[k] * x[:-1]
        y += g[k] * delayed
    r = A.T @ y.reshape(d + 1, L).T  # [N, d + 1]
    expected = b * (r[:, 1:] / r[:, :1]).sum(axis=0)
    np.testing.assert_allclose(rnd.s_hat, expected, rtol=1e-7)
    # the offsets are really there: the synchronous estimate would be Σ_k s_k up to the inactive noise
    assert not np.allclose(rnd.s_hat - rnd.inactive_noise, s.sum(axis=0), rtol=1e-3)


def test_zero_offset_is_the_synchronous_chip_path_bit_for_bit():
    x = stream(1, "test-x").standard_normal((3, 40))
    a = _agg(0.0, snr_db=10.0, d=40, path="chip")
    b = make_aggregator(PhyConfig.make(scheme="floras", L=8, snr_db=10.0,
                                       floras={"N": 6, "sequences": "random-orthonormal", "path": "chip"}),
                        K=3, d=40, seed=2, key=KEY)
    ra, rb = a.aggregate(x, round_index=3), b.aggregate(x, round_index=3)
    np.testing.assert_array_equal(ra.sum_estimate, rb.sum_estimate)
    assert _agg(0.0, snr_db=10.0, d=40).link.path == "sufficient" and _agg(0.2, snr_db=10.0, d=40).link.path == "chip"
    rc = _agg(1e-3, snr_db=10.0, d=40).aggregate(x, round_index=3)  # any offset changes the chips
    assert not np.array_equal(rc.sum_estimate, ra.sum_estimate)


def test_timing_offset_is_checked_with_one_line_naming_the_key():
    bad = [
        (dict(scheme="floras", timing_offset=1.0), "timing_offset"),
        (dict(scheme="floras", timing_offset=-0.1), "timing_offset"),
        (dict(scheme="floras", timing_offset=0.3, floras={"path": "fast"}), "timing_offset"),
        (dict(scheme="floras", timing_offset=0.3, coherence_symbols=10), "timing_offset"),
        (dict(scheme="channel-inversion", timing_offset=0.3, coherence_symbols=5), "timing_offset"),
        (dict(scheme="analog-gaussian", normalization="clip", clip_norm=1.0, timing_offset=0.6, resource="source-literal",
              **{"analog-gaussian": {"noise_multiplier": 1.0}}), "timing_offset"),
    ]
    for table, key in bad:
        with pytest.raises(ValueError) as info:
            PhyConfig.make(**table).validate(K=4, d=10)
        assert str(info.value).startswith(key) and "\n" not in str(info.value), str(info.value)
