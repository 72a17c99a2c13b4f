"""floras train with the private baselines (model §9): runs, channel uses column, validation before work."""

import csv
import math
from pathlib import Path

import pytest

from scenarios.config import load_scenario
from scenarios.runs.run import run_scenario

ROOT = Path(__file__).resolve().parents[1]
QUICK = ROOT / "scenarios" / "examples" / "digits_quick.toml"
CLIP = {"phy.normalization": "clip", "phy.clip_norm": 1.0, "run.rounds": 3}
SCHEMES = {
    "central-gaussian": {"phy.central-gaussian.noise_multiplier": 0.05},
    "analog-gaussian": {"phy.analog-gaussian.noise_multiplier": 0.05},
    "ddgauss": {"phy.ddgauss.local_std": 0.02, "phy.ddgauss.bits": 16},
}


def _rows(run_dir):
    with open(Path(run_dir) / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_each_baseline_trains_on_digits_and_records_channel_uses(scheme, tmp_path):
    cfg = load_scenario(QUICK, {"phy.scheme": scheme, **CLIP, **SCHEMES[scheme]})
    summary = run_scenario(cfg, tmp_path / scheme, progress=False)
    rows = _rows(tmp_path / scheme)
    assert len(rows) == 3 and math.isfinite(summary["final_test_accuracy"])
    d = 64 * 64 + 64 + 64 * 10 + 10  # the quick scenario's 64-64-10 MLP
    uses = [int(r["channel_uses"]) for r in rows]
    if scheme == "ddgauss":
        assert all(u > 0 for u in uses) and len(set(uses)) > 1  # Σ⌈bits/r_k⌉ follows the fading
    else:
        assert uses == [d * 16] * 3  # d·L, equal resource, L = 16
    admitted = [r["admitted"] for r in rows]
    if scheme == "central-gaussian":  # an ideal channel: no admission diagnostic
        assert admitted == [""] * 3
    else:  # the aggregator's admitted count of the round, 0 ≤ K′ ≤ K = 10
        assert all(0 <= int(a) <= 10 for a in admitted) and any(int(a) > 0 for a in admitted)


@pytest.mark.parametrize("scheme", list(SCHEMES))
def test_paper_normalization_is_refused_before_any_work(scheme):
    with pytest.raises(ValueError, match=r"phy\.normalization must be 'clip'.*public clip norm"):
        load_scenario(QUICK, {"phy.scheme": scheme, **SCHEMES[scheme]})


def test_missing_noise_multiplier_names_the_key():
    with pytest.raises(ValueError, match=r"phy\.central-gaussian\.noise_multiplier must be set"):
        load_scenario(QUICK, {"phy.scheme": "central-gaussian", **CLIP})


# ---------------------------------------------------------------- the epsilon column of each baseline
def test_epsilon_column_comes_from_each_scheme_event(tmp_path):
    from privacy import RunAccountant

    K, M, R, rounds = 10, 50, 1.0, 3  # digits_quick: K = 10 of M = 50, replace-one, δ = 1e-5
    common = dict(K=K, M=M, relation="replace", delta=1e-5)
    z = 0.8
    for scheme in ("central-gaussian", "analog-gaussian"):
        cfg = load_scenario(QUICK, {"phy.scheme": scheme, **CLIP, f"phy.{scheme}.noise_multiplier": z})
        run_scenario(cfg, tmp_path / scheme, progress=False)
        eps = [float(r["epsilon"]) for r in _rows(tmp_path / scheme)]
        # σ = z·S with S = 2R in model units (analog at 20 dB: the receiver noise σ_n/√g_th in model
        # units, √(0.01/16/0.01)·R/√(dP), is far below z·2R, so the target is the certain noise)
        expected = [RunAccountant("gaussian", **common, clip_norm=R, noise_std=z * 2 * R).epsilon(rounds=t)
                    for t in (1, 2, 3)]
        assert eps == pytest.approx(expected, rel=1e-12)
        assert 0 < eps[0] < eps[1] < eps[2] < math.inf
    sigma, B, k = 0.5, 16, 4.0
    cfg = load_scenario(QUICK, {"phy.scheme": "ddgauss", **CLIP, "phy.ddgauss.local_std": sigma, "phy.ddgauss.bits": B})
    run_scenario(cfg, tmp_path / "dd", progress=False)
    d, d_pad = 64 * 64 + 64 + 64 * 10 + 10, 8192
    gamma = 2 * k * math.sqrt(R**2 * K**2 / d_pad + K * sigma**2) / math.sqrt(4.0**B - k**2 * K)
    acc = RunAccountant("ddgauss", **common, d=d, clip_norm=R, grid=gamma, local_std=sigma)
    eps = [float(r["epsilon"]) for r in _rows(tmp_path / "dd")]
    assert eps == pytest.approx([acc.epsilon(rounds=t) for t in (1, 2, 3)], rel=1e-9)
    report = __import__("json").loads((tmp_path / "dd" / "config.json").read_text())["privacy_report"]
    assert report["threat_model"].startswith("the server, given secure aggregation")


def test_ddgauss_noise_rescaling_keeps_the_n_equals_K_bound():
    """K′ admitted clients at σ·√(K/K′) are covered by the event with n = K at σ (docs/baselines.md)."""
    import numpy as np

    from privacy.ddgauss import ddgauss_rdp
    from privacy.events import DDGaussRound

    orders = np.array([1.5, 2.0, 4.0, 16.0, 64.0])
    K, d, c, gamma = 20, 1000, 1.0, 0.02
    for sigma in (0.005, 0.02, 0.1):  # τ from large to negligible
        for rel in ("add-remove", "replace"):
            full = ddgauss_rdp(orders, DDGaussRound(n=K, d=d, clip=c, grid=gamma, local_std=sigma, relation=rel))
            for k_adm in (1, 5, 19):
                part = ddgauss_rdp(orders, DDGaussRound(n=k_adm, d=d, clip=c, grid=gamma,
                                                        local_std=sigma * math.sqrt(K / k_adm), relation=rel))
                assert np.all(part <= full * (1 + 1e-12))


def test_add_remove_with_sampling_without_replacement_is_refused_before_any_work():
    with pytest.raises(ValueError, match=r"privacy: relation must be 'replace'"):
        load_scenario(QUICK, {"phy.scheme": "central-gaussian", **CLIP, "phy.central-gaussian.noise_multiplier": 1.0,
                              "privacy.relation": "add-remove"})


def test_ddgauss_add_remove_is_refused_in_a_run_that_samples_exactly_k():
    """The run draws exactly K of M clients (without replacement): the Poisson bound (add/remove) does not cover it,
    so a DDGauss scenario with add/remove is refused like the others; the Poisson accountant itself is tested in
    tests/test_phy_digital_ddgauss_scale.py."""
    with pytest.raises(ValueError, match=r"relation must be 'replace'"):
        load_scenario(QUICK, {"phy.scheme": "ddgauss", **CLIP, "phy.ddgauss.local_std": 0.1, "privacy.relation": "add-remove"})


def test_sqsgd_run_records_the_admitted_clients(tmp_path):
    """metrics.csv's admitted column carries sqSGD's admitted count (K′ ≤ K = 10), not an empty cell."""
    cfg = load_scenario(QUICK, {"phy.scheme": "sqsgd", **CLIP, "run.rounds": 2, "phy.sqsgd.epsilon0": 5.0})
    run_scenario(cfg, tmp_path / "sq", progress=False)
    admitted = [r["admitted"] for r in _rows(tmp_path / "sq")]
    assert len(admitted) == 2 and all(0 <= int(a) <= 10 for a in admitted) and any(int(a) > 0 for a in admitted)
