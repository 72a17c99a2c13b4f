"""Channel uses against K (model §5): the analytic costs against hand formulas, and the figure from fake results."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from phy.channel_uses import ddgauss_bits_per_client, floras_min_chips, mean_inverse_rate, mean_tdma_channel_uses


def test_floras_needs_the_next_power_of_two_above_k_plus_gamma():
    assert floras_min_chips(K=100, gamma=28) == 128      # N = 128 exactly: no padding
    assert floras_min_chips(K=101, gamma=28) == 256      # N = 129
    assert floras_min_chips(K=1000, gamma=28) == 2048
    assert floras_min_chips(K=101, gamma=28, walsh=False) == 129
    with pytest.raises(ValueError, match="gamma"):
        floras_min_chips(K=10, gamma=0)                  # N > K: at least one inactive sequence


def test_ddgauss_pads_to_a_power_of_two():
    assert ddgauss_bits_per_client(d=159_010, bits=16) == 262_144 * 16
    assert ddgauss_bits_per_client(d=1024, bits=16) == 1024 * 16
    assert ddgauss_bits_per_client(d=1025, bits=8) == 2048 * 8


def test_mean_inverse_rate_matches_monte_carlo_over_rayleigh_fading():
    """J = E[1{g ≥ g_th}·2/log2(1 + g·SNR)], g ~ Exp(1), estimated from 400 000 draws; tolerance 5 standard errors
    of that mean (the sample standard deviation over √n), far below a factor-2 or a ln-vs-log2 error."""
    rng = np.random.default_rng(7)
    g = rng.exponential(1.0, 400_000)
    for snr_db, g_th in ((20.0, 0.01), (10.0, 0.1)):
        snr = 10 ** (snr_db / 10)
        x = np.where(g >= g_th, 2.0 / np.log2(1.0 + g * snr), 0.0)
        se = x.std() / math.sqrt(x.size)
        assert abs(mean_inverse_rate(snr_db=snr_db, g_th=g_th) - x.mean()) < 5 * se


def test_mean_tdma_uses_is_k_bits_j_and_the_sampled_round_agrees():
    """E[Σ_adm ⌈b/r_k⌉] lies in [K·b·J, K·b·J + K·P(g ≥ g_th)] (the ceiling adds < 1 per admitted client); over 2 000
    sampled rounds of K = 20 the mean's standard error is tiny against the 4.7·10⁵-use mean, so a 1 % window plus
    that slack is a strict check."""
    K, bits = 20, 65_536
    J = mean_inverse_rate(snr_db=20.0, g_th=0.01)
    assert mean_tdma_channel_uses(K=K, bits=bits, snr_db=20.0, g_th=0.01) == pytest.approx(K * bits * J, rel=1e-12)
    rng = np.random.default_rng(3)
    g = rng.exponential(1.0, (2000, K))
    r = 0.5 * np.log2(1.0 + g * 100.0)
    U = np.where(g >= 0.01, np.ceil(bits / r), 0.0).sum(axis=1)
    assert K * bits * J * 0.99 < U.mean() < K * bits * J * 1.01 + K


def test_the_analytic_curves_follow_the_model_formulas():
    from figures.channel_uses_vs_k import analytic_uses

    d = 159_010
    assert analytic_uses("floras", K=100, d=d) == (d + 1) * 128
    assert analytic_uses("floras", K=1000, d=d) == (d + 1) * 2048
    assert analytic_uses("analog", K=10, d=d) == analytic_uses("analog", K=1000, d=d) == d
    J = mean_inverse_rate(snr_db=20.0, g_th=0.01)
    assert analytic_uses("ddgauss", K=50, d=d) == pytest.approx(50 * 262_144 * 16 * J)
    # sqSGD: ⌊0.1·d⌋ = 15 901 coordinates padded to 16 384, one bit each (2 levels), plus seed and norm bits
    from phy.digital.sqsgd import NORM_BITS, SEED_BITS

    assert analytic_uses("sqsgd", K=200, d=d) == pytest.approx(200 * (16_384 + SEED_BITS + NORM_BITS) * J)


HEADER = "round,train_loss,test_loss,test_accuracy,agg_error,V,admitted,epsilon,wall_time_s,channel_uses"


def fake_runner(cfg, out_dir, *, resume, progress):
    """A run's files with the model's channel uses at d = 1 000: FLORAS (d+1)·L, the others a fixed number."""
    out_dir = Path(out_dir)
    K, d = cfg.training.clients_per_round, 1000
    uses = (d + 1) * cfg.phy.L if cfg.phy.scheme == "floras" else 7 * K * d
    (out_dir / "config.json").write_text(json.dumps({"config": cfg.to_dict(), "derived": {"K": K, "d": d}}))
    rows = [HEADER] + [f"{t},1.0,1.0,0.5,0.01,,,inf,{0.1 * t!r},{uses}" for t in range(1, cfg.run.rounds + 1)]
    (out_dir / "metrics.csv").write_text("\n".join(rows) + "\n")
    (out_dir / "DONE").write_text("")
    return {}


def test_the_figure_draws_measured_points_from_fake_results_and_the_analytic_model_alone(tmp_path):
    from dataclasses import replace

    from figures.channel_uses_vs_k import make, measured_points
    from scenarios.experiments.sweep import load_sweep, run_sweep

    root = Path(__file__).resolve().parents[1]
    sweep = load_sweep(root / "scenarios" / "matched_population.toml", quick=True)
    # ε = ∞ points only (a finite target needs the calibration of floras matched); sqSGD has none, so 5 schemes remain
    sweep = replace(sweep, points=tuple(p for p in sweep.points if p.grid["privacy.target_epsilon"] == "inf" and p.label != "sqsgd"))
    run_sweep([(sweep, tmp_path / sweep.name)], runner=fake_runner, progress=False, echo=None)
    points = measured_points(tmp_path / sweep.name)
    by_label = {p["label"]: p for p in points}
    assert by_label["floras-none"]["uses"] == 1001 * 128 and by_label["floras-none"]["K"] == 50
    assert by_label["ddgauss"]["uses"] == 7 * 50 * 1000 and by_label["ddgauss"]["d"] == 1000
    paths = make(tmp_path / sweep.name, tmp_path / "figs")
    caption = (tmp_path / "figs" / "channel_uses_vs_k.caption.txt").read_text()
    assert f"{len(points)} finished grid point(s)" in caption and any(p.suffix == ".png" for p in paths)
    make(None, tmp_path / "alone")
    assert "analytic model only" in (tmp_path / "alone" / "channel_uses_vs_k.caption.txt").read_text()
    # another sweep's results (the first slice) go to a file of their own: neither figure overwrites the other
    slice_dir = tmp_path / "matched_population_eps8"
    (tmp_path / sweep.name).rename(slice_dir)
    make(slice_dir, tmp_path / "figs")
    assert (tmp_path / "figs" / "channel_uses_vs_k_matched_population_eps8.caption.txt").is_file()
    assert (tmp_path / "figs" / "channel_uses_vs_k.caption.txt").read_text() == caption  # the first one untouched
