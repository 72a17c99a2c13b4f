"""privacy.pir: exhaustive privacy check, the linkage attack across iterations, channel uses (model §9.6, §5).

Findings these tests pin down (docs/submodel_pir.md): the Sun–Jafar queries and the masked upload
are independent of the trained row d; the source's MDS-coded exclusive data is not (it leaks d
whenever the update is nonzero), the additively shared variant is; and across iterations one
database recovers every earlier d from consecutive uploads, so model §9.6's "zero mutual
information between the row index and each database's view" holds only per iteration.
"""

import numpy as np
import pytest

from functools import partial

from phy.digital.uplink import shannon_rate, tdma_channel_uses
from phy.randomness import stream
from privacy.pir.costs import expected_channel_uses, expected_inverse_rate
from privacy.pir.submodel import simulate
from privacy.pir.verify import (check_two_iterations, check_uploads, check_uploads_uniform_update, linkage_attack,
                                shared_direction)


def test_shared_exclusive_data_is_exhaustively_private():
    res = check_uploads(r=2, s=4, N=2, q=7, exclusive="shared", streams=partial(stream, 0))
    assert res.passed and res.enumerated == 7**4 and res.cases == 4 * 7**2 * 2


def test_three_databases_shared_is_private():
    assert check_uploads(r=1, s=3, N=3, q=5, exclusive="shared", streams=partial(stream, 0)).passed


def test_source_mds_exclusive_data_leaks_the_row():
    """model §9.6 (from Kim & Lee) claims zero mutual information with the (r+s, r+s) MDS-coded
    exclusive data; the exhaustive check finds the view depends on d exactly when Δ_t ≠ 0."""
    res = check_uploads(r=2, s=4, N=2, q=7, exclusive="mds", streams=partial(stream, 0))
    assert not res.passed
    assert "data cases [1, 3]" in res.detail  # the two cases with a nonzero current update


def test_source_mds_leaks_even_when_the_update_is_uniform_and_unknown():
    """The most favourable prior for the source (Δ_1 uniform, unknown to the database) still leaks."""
    res = check_uploads_uniform_update(r=2, s=4, N=2, q=7)
    assert not res.passed and res.enumerated == 7**6


def test_two_consecutive_uploads_depend_on_the_row():
    assert not check_two_iterations(r=2, s=4, N=2, q=7, streams=partial(stream, 0)).passed


@pytest.mark.parametrize("exclusive", ["mds", "shared"])
def test_linkage_attack_recovers_earlier_rows(exclusive):
    """One database, knowing no update, recovers d_t from U_{t−1..t+2} in a large field."""
    system, recs = simulate(r=4, s=16, N=2, q=2**31 - 1, iterations=10, streams=partial(stream, 0), exclusive=exclusive, keep_views=True)
    U = [rc.views[1]["upload"] for rc in recs]
    guesses = []
    for t in range(1, len(recs) - 2):
        v = [shared_direction(system.field, U[k], U[k + 1]) for k in (t - 1, t, t + 1)]
        guesses.append(linkage_attack(system.field, U[t], U[t + 1], *v))
    truth = [rc.d for rc in recs[1:-2]]
    assert guesses == truth and len(set(truth)) > 1
    # with the updates known, the first row too (Δ_0 = 0)
    assert linkage_attack(system.field, U[0], U[1], None, recs[0].update, recs[1].update) == recs[0].d


def test_expected_airtime_against_monte_carlo():
    """E[1/r(g) | g ≥ g_th], g ~ Exp(1), r = ½log2(1 + g·SNR): quad vs 400 000 draws, 5 standard errors."""
    rng = np.random.default_rng(11)
    for snr_db, g_th in [(20.0, 0.01), (0.0, 0.1), (30.0, 0.5)]:
        g = rng.exponential(1.0, 400_000)
        g = g[g >= g_th]
        x = 1.0 / (0.5 * np.log2(1.0 + g * 10 ** (snr_db / 10)))
        mc, se = x.mean(), x.std(ddof=1) / np.sqrt(len(x))
        assert abs(expected_inverse_rate(snr_db=snr_db, g_th=g_th, rate=shannon_rate) - mc) < 5 * se
    # symbols × log2 q bits at that rate: against phy.digital.uplink's per-draw TDMA airtime Σ⌈bits/r_k⌉
    g = rng.exponential(1.0, 200_000)
    rates = shannon_rate(g[g >= 0.01], 100.0)
    bits = 24018 * 31.0
    per_draw = np.ceil(bits / rates)
    mean = tdma_channel_uses(bits, rates) / len(rates)
    se = per_draw.std(ddof=1) / np.sqrt(len(rates))
    v = expected_channel_uses(24018, symbol_bits=31.0, snr_db=20.0, g_th=0.01, rate=shannon_rate)
    assert v == pytest.approx(bits * expected_inverse_rate(snr_db=20.0, g_th=0.01, rate=shannon_rate), rel=1e-12)
    assert -5 * se < mean - v < 1 + 5 * se  # the ⌈·⌉ left out of v adds less than one channel use
    with pytest.raises(ValueError, match="g-th"):
        expected_inverse_rate(snr_db=20.0, g_th=0.0, rate=shannon_rate)
