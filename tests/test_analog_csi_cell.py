"""Analog Gaussian with imperfect CSI in a cell with a fixed drop (model §5.1, "Imperfect CSI", "In a cell"): the
per-client laws (phy/csi_cell_law.py), their envelope (privacy.gaussian_mixture.envelope_band_law) and the run's
accountant and calibration request (scenarios/config/analog_csi.py, scenarios/config/targets.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from phy.csi_cell_law import cell_pool, client_strengths, distinct_clients
from phy.csi_law import csi_rounds, strengths
from privacy.gaussian_mixture import envelope_band_law, exceedances, panel_edges

LINK = dict(target_std=3.0, sensitivity=1.0, receiver_variance=0.02)


def test_equal_gains_give_every_client_the_cell_free_law():
    """β ≡ 1: a client's law (its draws with itself left out of the others) is the cell-free law of
    :func:`phy.csi_law.csi_rounds` (independent streams): two-sample Kolmogorov–Smirnov at α = 10⁻³ for both ρ
    rules. Caught: the client counted twice (its own slot also among the others), the others' gains taken from the
    wrong clients."""
    pool = cell_pool(np.ones(40), K=8, g_th=0.2, csi_error=0.05, draws=60_000, seed=1)
    for rule in ("threshold", "min-admitted"):
        cell = client_strengths(pool, 7, rho_rule=rule, **LINK)
        free = strengths(csi_rounds(K=8, g_th=0.2, csi_error=0.05, rho_rule=rule, draws=60_000, seed=2), **LINK)
        n1, n2 = cell.size, free.size
        crit = math.sqrt(-math.log(1e-3 / 2) / 2 * (n1 + n2) / (n1 * n2))
        assert stats.ks_2samp(cell, free).statistic < crit


def test_each_client_is_admitted_by_its_own_gain_among_uniform_others():
    """Gains spread over three decades: client k's fraction of admitted draws is e^{−g_th/(β_k(1 + σ_e²))}
    (|h̃ + ẽ|² ~ Exp(1 + σ_e²)); among its draws the others admitted average Σ_{j≠k} (K − 1)/(M − 1)·
    e^{−g_th/(β_j(1 + σ_e²))}; every draw holds K − 1 others and never the client. Tolerances 5 binomial or
    sampling standard deviations. Caught: β of another client, sets with replacement or including the client,
    admission on the true channel instead of the estimate."""
    M, K, g_th, err, m = 30, 6, 0.5, 0.3, 40_000
    gains = np.logspace(-1.5, 1.5, M)
    pool = cell_pool(gains, K=K, g_th=g_th, csi_error=err, draws=m, seed=3)
    bits = np.unpackbits(pool.members, axis=1, count=m).astype(bool)
    np.testing.assert_array_equal(bits.sum(axis=0), K - 1)
    p = np.exp(-g_th / (gains * (1 + err)))
    for k in (0, 9, 29):
        keep = ~bits[k]
        mu = client_strengths(pool, k, rho_rule="threshold", **LINK)
        n = mu.size
        assert n == keep.sum() and abs(n / m - (M - K) / (M - 1)) < 5 * math.sqrt(0.25 / m)
        assert abs((mu > 0).mean() - p[k]) < 5 * math.sqrt(p[k] * (1 - p[k]) / n) + 1e-12
        others = np.delete(p, k)
        mean = (K - 1) / (M - 1) * others.sum()
        # K_o is a sum of K − 1 draws without replacement: its variance is below the with-replacement (K − 1)·Var
        var = (K - 1) * (others.var() + (others * (1 - others)).mean())
        assert abs(pool.others_k[keep].mean() - mean) < 5 * math.sqrt(var / n)


def test_one_draw_is_the_documented_streams_and_formula():
    """The first 16 draws recomputed from the documented streams: (seed, "csi-cell-law", 0) gives the sets (the
    K − 1 smallest of M uniforms) then [4, n, K − 1] normals, (seed, "csi-cell-own", 0) the own [4, n] normals;
    ρ = min admitted |ĥ|², V = σ_a²(ρ)·Σc²/K′ + σ_n²/ρ, μ = |c_k|·S/√V (model §5.1)."""
    from phy.randomness import stream

    M, K, g_th, err, m, k = 12, 4, 0.3, 0.2, 16, 5
    gains = np.linspace(0.2, 3.0, M)
    pool = cell_pool(gains, K=K, g_th=g_th, csi_error=err, draws=m, seed=9)
    got = client_strengths(pool, k, rho_rule="min-admitted", **LINK)
    rng = stream(9, "csi-cell-law", 0)
    u = rng.random((m, M))
    z = rng.standard_normal((4, m, K - 1))
    zo = stream(9, "csi-cell-own", 0).standard_normal((4, m))
    sT, S, s2 = LINK["target_std"], LINK["sensitivity"], LINK["receiver_variance"]
    want = []
    for i in range(m):
        others = np.argsort(u[i])[:K - 1]
        if k in others:
            continue
        ids = np.concatenate([[k], others])
        zz = np.concatenate([zo[:, i:i + 1], z[:, i, :]], axis=1)
        h = (zz[0] + 1j * zz[1]) / math.sqrt(2)
        hh = h + math.sqrt(err / 2) * (zz[2] + 1j * zz[3])
        g = gains[ids] * np.abs(hh) ** 2
        adm = g >= g_th
        if not adm[0]:
            want.append(0.0)
            continue
        c = np.real(h / hh)[adm]
        rho = g[adm].min()
        var = max(0.0, sT ** 2 - s2 / rho) * (c * c).sum() / adm.sum() + s2 / rho
        want.append(abs(np.real(h / hh)[0]) * S / math.sqrt(var))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_clients_of_one_gain_share_a_law():
    assert distinct_clients([2.0, 1.0, 2.0, 0.5, 1.0]).tolist() == [3, 1, 0]


def test_the_envelope_dominates_every_law_and_is_one_band_for_one_law():
    """Two known laws (0.2·|N(0, 1)| + 1 and 0.5·U(0, 1) + 0.8, 3 000 draws each, β = 10⁻³, 20 trials): at every
    panel edge the envelope's exceedance is at least both true ones and at most the larger plus its band margin
    (10 binomial standard deviations: the limit's normal quantile at β/(2(J + 1)) is 4.97 and the
    largest of 695 counts' own deviations up to about 4; + 2·ln(2(J + 1)/β)/m). Caught: the smaller of the limits
    taken, the level not divided among the laws (the top mass would be ln((J + 1)/β)/m)."""
    from privacy.gaussian_mixture import band_law

    m, beta, upper = 3000, 1e-3, 5.0
    edges = panel_edges(upper)
    true = np.maximum(2 * stats.norm.sf((edges - 1.0) / 0.2) * (edges >= 1.0) + (edges < 1.0),
                      np.clip((1.3 - edges) / 0.5, 0.0, 1.0))
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a, b = np.abs(rng.standard_normal(m)) * 0.2 + 1.0, rng.random(m) * 0.5 + 0.8
        values, weights = envelope_band_law([exceedances(a, upper=upper), exceedances(b, upper=upper)], [m, m],
                                            upper=upper, beta=beta)
        law = np.array([weights[values > e * (1 + 1e-12)].sum() for e in edges[:-1]])
        assert np.all(law >= true[:-1] - 1e-12)
        margin = 10 * np.sqrt(true[:-1] * (1 - true[:-1]) / m) + 2 * math.log(2 * edges.size / beta) / m
        assert np.all(law <= true[:-1] + margin + 1e-12)
        top = weights[-1]
        assert math.log(2 * edges.size / beta) / m * 0.5 < top < 2 * math.log(2 * edges.size / beta) / m
    one = envelope_band_law([exceedances(a, upper=upper)], [m], upper=upper, beta=beta)
    for x, y in zip(one, band_law(a, upper=upper, beta=beta)):
        np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="exceedance counts"):
        envelope_band_law([exceedances(a, upper=upper)], [m - 1000], upper=upper, beta=beta)


# ---------------------------------------------------------------- the run's accountant
def _config(tmp_path, *, err: float, cell: str, z: float = 2.0, M: int = 50):
    """tests/test_analog_csi.py's scenario (K = 10 of M, digits, g_th = 0.1, 10 dB, pld) in a 100 m log-distance
    cell with phy lines ``cell``."""
    from test_analog_t2 import _scenario  # noqa: E402

    return _scenario(tmp_path, n_rx=1, z=z, rounds=30, M=M, K=10, snr_db=10.0, g_th=0.1, accountant="pld",
                     phy_extra=f'csi_error = {err}\npathloss = "log-distance"\ncell_radius = 100.0\n{cell}')


def test_a_cell_of_equal_gains_is_the_cell_free_accountant_and_spread_gains_cost_more(tmp_path):
    """Path-loss inversion to a target every client reaches (0 dB below the cell-edge reference, no shadowing): every
    β_eff = 1, one law, and ε within Monte Carlo error (1 %) of the cell-free accountant's. Full power in the same
    cell: the near clients (β up to 10³) are admitted almost always, where the cell-free client is with
    e^{−g_th/(1 + σ_e²)}, so ε is larger; it stays below the perfect-CSI one plus the method's cost (5 %) as
    σ_e² → 0 and grows with σ_e²."""
    from test_analog_csi import _config as free_config  # noqa: E402

    flat = 'shadowing_db = 0.0\npower_control = "pathloss-inversion"\npc_target_db = 0.0'
    acc = _config(tmp_path, err=0.05, cell=flat).privacy_accountant(d=100, D=30)
    assert "1 laws, one per distinct gain" in " ".join(acc.report(rounds=30).assumptions)
    free = free_config(tmp_path, err=0.05, z=2.0, snr_db=10.0).privacy_accountant(d=100, D=30).epsilon(rounds=30)
    assert acc.epsilon(rounds=30) == pytest.approx(free, rel=0.01)
    full = {e: _config(tmp_path, err=e, cell="shadowing_db = 0.0").privacy_accountant(d=100, D=30).epsilon(rounds=30)
            for e in (1e-6, 0.05)}
    perfect = _config(tmp_path, err=0.0, cell="").privacy_accountant(d=100, D=30).epsilon(rounds=30)
    assert free < full[0.05] and full[1e-6] < full[0.05] and full[1e-6] <= 1.05 * perfect
    text = " ".join(_config(tmp_path, err=0.05, cell="").privacy_accountant(d=100, D=30).report(rounds=30).assumptions)
    assert "fixed drop (seed 4; 50 clients)" in text and "envelope" in text and "membership stays hidden" in text


def test_refusals_name_the_key_and_the_request_keeps_the_drop(tmp_path):
    """A fixed drop's population above CELL_CLIENTS is refused naming the key; the calibration request of analog
    Gaussian with imperfect CSI in a cell keeps the cell, and the seed for a fixed drop (each seed's drop has its own
    laws) but not for a re-dropped one (one law for every seed); every other request drops both."""
    from scenarios.config import analog_csi
    from scenarios.config.targets import _cache_key

    config = _config(tmp_path, err=0.1, cell="")
    redrop = dataclasses.replace(config, phy=dataclasses.replace(config.phy, redrop=True))
    assert _cache_key(dataclasses.replace(redrop, run=dataclasses.replace(redrop.run, seed=1))) == \
        _cache_key(dataclasses.replace(redrop, run=dataclasses.replace(redrop.run, seed=2)))
    assert _cache_key(redrop) != _cache_key(dataclasses.replace(redrop, phy=dataclasses.replace(redrop.phy,
                                                                                               cell_radius=300.0)))
    umi = dataclasses.replace(redrop, phy=dataclasses.replace(redrop.phy, pathloss="umi"))
    with pytest.raises(ValueError, match=r"^phy.redrop: .*use a fixed drop"):
        analog_csi.csi_accountant(umi, d=100, common={}, threat="")
    big = dataclasses.replace(config, partition=dataclasses.replace(config.partition,
                                                                    clients=analog_csi.CELL_CLIENTS + 1))
    with pytest.raises(ValueError, match=r"^partition.clients: .*≤ 1000 clients"):
        analog_csi.csi_accountant(big, d=100, common={}, threat="")

    def seeded(cfg, seed, radius=100.0):
        return dataclasses.replace(cfg, run=dataclasses.replace(cfg.run, seed=seed),
                                   phy=dataclasses.replace(cfg.phy, cell_radius=radius))

    assert _cache_key(seeded(config, 1)) != _cache_key(seeded(config, 2))
    assert _cache_key(seeded(config, 1)) != _cache_key(seeded(config, 1, radius=200.0))
    perfect = dataclasses.replace(config, phy=dataclasses.replace(config.phy, csi_error=0.0))
    assert _cache_key(seeded(perfect, 1)) == _cache_key(seeded(perfect, 2, radius=200.0))


@pytest.mark.parametrize("kappa", [3.0, 10.0])
def test_rician_admission_is_the_noncentral_chi_square_law(kappa):
    """Rician h̃ = √(κ/(κ+1)) + √(1/(κ+1))·CN(0, 1): |h̃ + ẽ|² is s²/2 times a noncentral χ² with 2 degrees of freedom
    and noncentrality 2ν²/s² (ν² = κ/(κ+1), s² = 1/(κ+1) + σ_e²), so a slot of gain β is admitted with probability
    ncx2.sf(2·g_th/(β·s²), 2, 2ν²/s²): the cell-free rounds' admitted count and a cell client's admission rate against
    it (5 standard deviations). Caught: the line of sight's power not split by κ (Rayleigh admission), the diffuse
    part not scaled."""
    err, g_th, m = 0.05, 0.3, 40_000
    nu2, s2 = kappa / (kappa + 1), 1 / (kappa + 1) + err

    def p(beta):
        return stats.ncx2.sf(2 * g_th / (beta * s2), 2, 2 * nu2 / s2)

    free = csi_rounds(K=5, g_th=g_th, csi_error=err, rho_rule="threshold", draws=m, seed=4, rician_k=kappa)
    mean, var = 5 * p(1.0), 5 * p(1.0) * (1 - p(1.0))
    assert abs(free.admitted.mean() - mean) < 5 * math.sqrt(var / m)
    pool = cell_pool(np.array([0.4, 1.0, 2.0, 0.4]), K=2, g_th=g_th, csi_error=err, draws=m, seed=4, rician_k=kappa)
    mu = client_strengths(pool, 0, rho_rule="threshold", **LINK)
    assert abs((mu > 0).mean() - p(0.4)) < 5 * math.sqrt(p(0.4) * (1 - p(0.4)) / mu.size)
    assert p(0.4) < math.exp(-g_th / (0.4 * (1 + err))) - 0.05 or p(0.4) > math.exp(-g_th / (0.4 * (1 + err))) + 0.05


def test_a_rician_run_is_accounted_on_its_own_law(tmp_path):
    """rician_k > 0 is accepted (refused until 7 December) and the law is drawn with it: the report names κ, and ε
    differs from the Rayleigh run's at the same z (admission and gains change with the line of sight)."""
    from test_analog_csi import _config as free_config  # noqa: E402

    config = free_config(tmp_path, err=0.05, z=2.0, snr_db=10.0)
    los = dataclasses.replace(config, phy=dataclasses.replace(config.phy, rician_k=5.0))
    acc = los.privacy_accountant(d=100, D=30)
    assert "i.i.d. Rician (κ = 5) channels" in " ".join(acc.report(rounds=30).assumptions)
    assert acc.epsilon(rounds=30) != pytest.approx(config.privacy_accountant(d=100, D=30).epsilon(rounds=30), rel=1e-3)


# ---------------------------------------------------------------- a re-dropped cell: one law, every slot's gain afresh
def _cell_phy(**keys):
    from phy.config import PhyConfig

    base = dict(scheme="analog-gaussian", pathloss="log-distance", cell_radius=200.0, cell_min_distance=10.0,
                pathloss_exponent=3.0, redrop=True, snr_reference="cell-edge")
    return PhyConfig(**{**base, **keys})


def test_the_drop_law_is_the_redropped_links_gain_law():
    """:meth:`phy.cell.CellChannel.drop_law_gains` against the gains the link itself draws under ``redrop`` (200
    rounds of 50 clients, keyed per round and client), with 8 dB shadowing and path-loss inversion capped at −5 dB:
    two-sample Kolmogorov–Smirnov at α = 10⁻³, and the cap's atom P(β_eff = β_target) within 5 binomial standard
    deviations. Caught: the distance drawn uniform in d rather than in d², the shadowing left out, the cap ignored."""
    from phy.cell import CellChannel

    phy = _cell_phy(shadowing_db=8.0, power_control="pathloss-inversion", pc_target_db=-5.0)
    cell = CellChannel(phy, seed=3)
    link = np.concatenate([cell.large_scale(np.arange(50), K=50, round_index=t).gain_eff for t in range(200)])
    law = cell.drop_law_gains(np.random.default_rng(7), (20_000,))
    n1, n2 = link.size, law.size
    assert stats.ks_2samp(link, law).statistic < math.sqrt(-math.log(1e-3 / 2) / 2 * (n1 + n2) / (n1 * n2))
    cap = 10 ** -0.5
    p = (law == cap).mean()
    assert 0.05 < p < 0.95 and abs((link == cap).mean() - p) < 5 * math.sqrt(p * (1 - p) / n1)
    with pytest.raises(ValueError, match="elementwise path-loss models only"):  # Sionna's topology: refused
        CellChannel(_cell_phy(pathloss="umi"), seed=0).drop_law_gains(np.random.default_rng(0), (3,))


def test_redropped_admission_is_the_annulus_integral():
    """Full power, n = 3, no shadowing, SNR at the cell edge: β(d) = (R/d)³ with d² uniform on [r₀², R²], so a slot is
    admitted with probability ∫ e^{−g_th·(d/R)³/(1 + σ_e²)}·2d/(R² − r₀²) dd; the rounds' mean admitted count is K times
    that (5 standard deviations). Caught: every slot at β = 1 (a cell ignored: e^{−g_th/(1 + σ_e²)} = 0.64 instead of
    0.85), gains drawn once per round instead of per slot (the count's variance)."""
    from scipy import integrate

    from phy.cell import CellChannel

    R, r0, g_th, err, K, m = 200.0, 10.0, 0.5, 0.1, 8, 20_000
    p = integrate.quad(lambda d: math.exp(-g_th * (d / R) ** 3 / (1 + err)) * 2 * d / (R * R - r0 * r0), r0, R)[0]
    rounds = csi_rounds(K=K, g_th=g_th, csi_error=err, rho_rule="threshold", draws=m, seed=2,
                        gains=CellChannel(_cell_phy(), seed=0).drop_law_gains)
    assert abs(rounds.admitted.mean() - K * p) < 5 * math.sqrt(K * p * (1 - p) / m)
    assert rounds.admitted.var() == pytest.approx(K * p * (1 - p), rel=0.1)  # independent slots: binomial
    ones = csi_rounds(K=K, g_th=g_th, csi_error=err, rho_rule="min-admitted", draws=300, seed=2,
                      gains=lambda rng, shape: np.ones(shape))
    plain = csi_rounds(K=K, g_th=g_th, csi_error=err, rho_rule="min-admitted", draws=300, seed=2)
    for a, b in zip(ones, plain):
        np.testing.assert_array_equal(a, b)


def test_a_redropped_cell_of_equal_gains_is_the_cell_free_accountant_exactly(tmp_path):
    """Re-dropped, every β_eff = 1 (path-loss inversion to the cell-edge reference, no shadowing): the rounds are the
    cell-free ones bit for bit (the gains are drawn after the channels' normals), so ε is the same number; the report
    says the cell is re-dropped and the channels revealed."""
    from test_analog_csi import _config as free_config  # noqa: E402

    flat = 'shadowing_db = 0.0\npower_control = "pathloss-inversion"\npc_target_db = 0.0\nredrop = true'
    acc = _config(tmp_path, err=0.05, cell=flat).privacy_accountant(d=100, D=30)
    free = free_config(tmp_path, err=0.05, z=2.0, snr_db=10.0).privacy_accountant(d=100, D=30)
    assert acc.epsilon(rounds=30) == free.epsilon(rounds=30)
    text = " ".join(acc.report(rounds=30).assumptions)
    assert "re-dropped log-distance cell" in text and "do not identify the client" in text
