"""FLORAS's noise-aware receiver (model §6.4) and the clipped-sum error metrics.

Every prediction is made from the model's formulas (model §2, §5, §6.1, §6.4) and the raw configuration
(P, SNR, L, N, K, R, d), never from a value the code under test computed; the simulator's random draws
(the pilot outputs r^s, gains, active set) are read from the round's trace where a formula is conditional
on them.
"""

import csv
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from phy.config import PhyConfig
from phy.receiver_rules import receiver_weight
from phy.schemes import make_aggregator
from phy.randomness import stream

sys.path.insert(0, str(Path(__file__).parent))
from small_scenario import small_scenario  # noqa: E402  (tests/small_scenario.py)

KEY = bytes(range(16))


def _floras(*, K, d, N, L, snr_db=20.0, seed=0, **floras):
    phy = {"scheme": "floras", "L": L, "snr_db": snr_db, "normalization": "clip", "clip_norm": 1e6,
           "floras": {"N": N, **floras}}
    cfg = PhyConfig.from_dict(phy)
    return cfg, make_aggregator(cfg, K=K, d=d, seed=seed, key=KEY)


def test_gamma_squared_over_V_is_chi_squared_with_one_degree_of_freedom():
    """V = Σ_{j∈I} 1/w_j² ~ Lévy(0, γ²) = γ²/Z² (model §6.1), so γ²/V = Z²: mean 1, variance 2."""
    K, N, L, rounds = 4, 16, 16, 6000
    _, agg = _floras(K=K, d=2, N=N, L=L, path="sufficient")
    x = stream(4, "receiver-x").standard_normal((K, 2))
    gamma = N - K
    q = np.array([gamma**2 / agg.aggregate(x, round_index=t).diagnostics["V"] for t in range(rounds)])
    # Z²: E = 1, Var = 2; the sample variance of Z² has variance (μ4 − σ⁴)/n with μ4 = E[(Z² − 1)⁴] = 60
    assert abs(q.mean() - 1.0) <= 4 * math.sqrt(2.0 / rounds)
    assert abs(q.var() - 2.0) <= 4 * math.sqrt((60.0 - 4.0) / rounds)


@pytest.mark.parametrize("path", ["sufficient", "fast"])
def test_weighted_estimator_error_variance_given_the_pilots(path):
    """Given r^s, ŝ^i = Σ_k (b g_k/r^s_{π(k)}) s_k^i + ν^i with ν^i ~ N(0, b²·V_p), V_p = (σ²/L)·Σ_j (r_j^s)^−2
    (model §6.1, AᵀA = I). With x̃ = x (R large: nothing clipped), x̂ = (R/C)·ŝ + Σ μ_k and the release w·x̂,
    so the error about its conditional mean has variance w²·b²·V_p·(R/C)² per entry, w = γ²/V_p."""
    K, N, L, d, snr_db, R = 3, 16, 16, 40000, 20.0, 1e6
    P = 1.0
    sigma2 = P / 10 ** (snr_db / 10)
    b, C, gamma = math.sqrt(P), math.sqrt(d * P), N - K
    _, agg = _floras(K=K, d=d, N=N, L=L, snr_db=snr_db, path=path, receiver="inverse-variance")
    for t in range(4):
        x = 0.01 * stream(5, "receiver-x", t).standard_normal((K, d))
        res, rnd = agg.aggregate_traced(x, round_index=t, trace=(path == "fast"))
        Vp = sigma2 / L * float(np.sum(rnd.r_ref ** -2.0))
        w = gamma**2 / Vp
        assert res.diagnostics["weight"] == pytest.approx(w, rel=1e-9)
        mu = x.mean(axis=1)
        s = (C / R) * (x - mu[:, None])
        mean = w * ((R / C) * ((b * rnd.gains / rnd.r_ref[rnd.active]) @ s) + mu.sum())
        err = res.sum_estimate - mean
        want = w**2 * b**2 * Vp * (R / C) ** 2
        assert abs(np.mean(err**2) - want) <= 4 * want * math.sqrt(2.0 / d)


def test_energy_estimate_matches_V_when_the_noise_dominates():
    """V̂ = ‖ŝ‖²/(b²d): given r^s the noise of ŝ/b has variance V_p ≈ V (active terms ~K/(L·SNR)), the signal
    adds at most ‖Σ s_k/b‖²/d ≤ K² (‖s_k‖ ≤ C = b√d), so with γ² ≫ K², |V̂ − V| ≤ 4·V·√(2/d) + K²."""
    K, N, L, d = 2, 64, 64, 20000
    _, agg = _floras(K=K, d=d, N=N, L=L, snr_db=30.0, path="sufficient", noise_estimate="energy", receiver="capped")
    for t in range(5):
        x = 0.01 * stream(6, "receiver-x", t).standard_normal((K, d))
        diag = agg.aggregate(x, round_index=t).diagnostics
        V = diag["V"]
        assert abs(diag["V_hat"] - V) <= 4 * V * math.sqrt(2.0 / d) + K**2


def test_capped_weights_never_exceed_the_cap_and_reach_it():
    K, N, L, cap = 4, 8, 8, 1.5
    _, agg = _floras(K=K, d=2, N=N, L=L, path="sufficient", receiver="capped", receiver_cap=cap)
    x = stream(4, "receiver-x").standard_normal((K, 2))
    w = np.array([agg.aggregate(x, round_index=t).diagnostics["weight"] for t in range(2000)])
    assert w.max() <= cap and np.any(w == cap) and np.any(w < cap)


def test_rule_definitions():
    assert receiver_weight("plain", gamma=5, V_hat=1e-9, cap=4.0) == 1.0
    assert receiver_weight("inverse-variance", gamma=5, V_hat=5.0, cap=4.0) == 5.0
    assert receiver_weight("capped", gamma=5, V_hat=5.0, cap=4.0) == 4.0
    assert receiver_weight("capped", gamma=0, V_hat=5.0, cap=4.0) == 1.0  # γ = 0: no privacy noise, w = 1


def test_gamma_zero_gives_unit_weight():
    K = 4
    _, agg = _floras(K=K, d=50, N=K, L=8, receiver="inverse-variance")
    assert agg.aggregate(stream(4, "receiver-x").standard_normal((K, 50)), round_index=0).diagnostics["weight"] == 1.0


@pytest.mark.parametrize("path", ["sufficient", "fast", "chip"])
def test_plain_is_the_default_and_the_unweighted_estimate(path):
    """receiver = "plain" equals the default configuration bit for bit, and on a traced path equals
    x̂ = (R/C)·ŝ + Σ μ_k formed here from the round's ŝ (model §2): w = 1 leaves x̂ untouched."""
    K, d, R = 4, 300, 0.5
    x = stream(7, "receiver-x").standard_normal((K, d))
    phy = {"scheme": "floras", "L": 16, "normalization": "clip", "clip_norm": R, "floras": {"N": 8, "path": path}}
    default = make_aggregator(PhyConfig.from_dict(phy), K=K, d=d, seed=1, key=KEY)
    phy["floras"]["receiver"] = "plain"
    plain = make_aggregator(PhyConfig.from_dict(phy), K=K, d=d, seed=1, key=KEY)
    a, rnd = default.aggregate_traced(x, round_index=2, trace=path != "sufficient")
    b, _ = plain.aggregate_traced(x, round_index=2, trace=path != "sufficient")
    np.testing.assert_array_equal(a.sum_estimate, b.sum_estimate)
    assert a.diagnostics["weight"] == 1.0
    if path != "sufficient":
        mu = x.mean(axis=1)
        np.testing.assert_array_equal(a.sum_estimate, (R / math.sqrt(d)) * rnd.s_hat + float(mu.sum()))


def test_validation_names_the_keys_and_the_allowed_values():
    with pytest.raises(ValueError, match=r"floras\.receiver must be one of \{plain, inverse-variance, capped\}"):
        PhyConfig.from_dict({"scheme": "floras", "floras": {"receiver": "wiener"}}).validate(K=4, d=10)
    with pytest.raises(ValueError, match=r"floras\.receiver_cap must be a finite number > 0"):
        PhyConfig.from_dict({"scheme": "floras", "floras": {"receiver_cap": 0.0}}).validate(K=4, d=10)
    with pytest.raises(ValueError, match=r"floras\.noise_estimate must be one of \{pilots, energy\}"):
        PhyConfig.from_dict({"scheme": "floras", "floras": {"noise_estimate": "oracle"}}).validate(K=4, d=10)


def test_ideal_noise_energy_is_zero_even_when_clipping_is_active():
    K, d = 5, 200
    cfg = PhyConfig.from_dict({"scheme": "ideal", "normalization": "clip", "clip_norm": 0.1})
    x = stream(8, "receiver-x").standard_normal((K, d))  # ‖x_k − μ_k‖ ≈ √d ≫ R: every update clipped
    res = make_aggregator(cfg, K=K, d=d, seed=0).aggregate(x, round_index=0)
    assert res.error > 0.5  # against the raw sum
    assert res.diagnostics["noise_energy"] <= 1e-20 * float(np.sum(x.sum(axis=0) ** 2))
    assert res.diagnostics["clipped_nmse"] <= 1e-20


def test_central_gaussian_noise_energy_is_d_times_the_noise_variance_in_model_units():
    """n ~ N(0, (z·S)²) per entry in ŝ units, S = 2C (replace), x̂ = (R/C)·ŝ + Σμ: E‖x̂ − Σx̃‖² = d·(z·S·R/C)²."""
    K, d, R, z, rounds = 4, 100, 0.7, 0.3, 400
    cfg = PhyConfig.from_dict({"scheme": "central-gaussian", "normalization": "clip", "clip_norm": R,
                               "central-gaussian": {"noise_multiplier": z}})
    agg = make_aggregator(cfg, K=K, d=d, seed=2, relation="replace")
    C = math.sqrt(d * cfg.power)
    var = (z * 2 * C * R / C) ** 2
    e = np.array([agg.aggregate(stream(9, "receiver-x", t).standard_normal((K, d)), round_index=t).diagnostics["noise_energy"]
                  for t in range(rounds)])
    assert abs(e.mean() - d * var) <= 4 * var * math.sqrt(2.0 * d / rounds)


def _run(tmp_path, name, receiver):
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario

    path = tmp_path / f"{name}.toml"
    path.write_text(small_scenario(rounds=3))
    cfg = load_scenario(path, {"phy.floras.receiver": receiver, "phy.floras.receiver_cap": 2.0,
                               "phy.normalization": "clip", "phy.clip_norm": 1.0})
    run_scenario(cfg, tmp_path / name, progress=False)
    with open(tmp_path / name / "metrics.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_capped_run_spends_the_same_epsilon_as_a_plain_one(tmp_path):
    plain, capped = _run(tmp_path, "plain", "plain"), _run(tmp_path, "capped", "capped")
    assert [r["epsilon"] for r in capped] == [r["epsilon"] for r in plain]  # the accountant is told nothing new
    assert all(math.isfinite(float(r["epsilon"])) for r in capped)
    for rows in (plain, capped):
        assert list(rows[0])[-5:] == ["noise_energy", "clipped_error", "weight", "cohort", "worst_class_accuracy"]
        assert all(float(r["noise_energy"]) >= 0 and r["clipped_error"] != "" for r in rows)
    assert all(float(r["weight"]) == 1.0 for r in plain)
    assert all(0 < float(r["weight"]) <= 2.0 for r in capped)
    assert [r["V"] for r in capped] == [r["V"] for r in plain]  # same pilots: the rule only rescales


def test_resuming_a_checkpoint_with_the_older_header_is_refused_with_a_message(tmp_path, monkeypatch):
    import io

    from fl.federated import FederatedAveraging
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario

    path = tmp_path / "s.toml"
    path.write_text(small_scenario(rounds=3))
    cfg = load_scenario(path, {"run.checkpoint_every": 1})
    real = FederatedAveraging.step

    def interrupted(self, w, t):
        if t == 2:
            raise KeyboardInterrupt
        return real(self, w, t)

    out = tmp_path / "out"
    monkeypatch.setattr(FederatedAveraging, "step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_scenario(cfg, out, progress=False)
    monkeypatch.setattr(FederatedAveraging, "step", real)
    # make it a run of the previous version: ten columns, and no receiver keys in config.json
    ckpt = dict(np.load(out / "checkpoint.npz"))
    old = "\n".join(",".join(line.split(",")[:10]) for line in str(ckpt["metrics"]).splitlines()) + "\n"
    ckpt["metrics"] = np.str_(old)
    buf = io.BytesIO()
    np.savez(buf, **ckpt)
    (out / "checkpoint.npz").write_bytes(buf.getvalue())
    import json

    record = json.loads((out / "config.json").read_text())
    for key in ("receiver", "receiver_cap", "noise_estimate"):
        del record["config"]["phy"]["floras"][key]
    (out / "config.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="noise_energy, clipped_error, weight, cohort, worst_class_accuracy appended.*cannot be continued"):
        run_scenario(cfg, out, resume=True, progress=False)


def test_link_reports_the_clipped_error_in_db_and_takes_the_receiver_options(tmp_path):
    import json

    from scenarios.cli.main import main

    out = tmp_path / "link.json"
    assert main(["link", "--scheme", "floras", "ideal", "--K", "4", "--N", "12", "--L", "16", "--d", "64", "--rounds", "20",
                 "--normalization", "clip", "--clip-norm", "0.5", "--receiver", "capped", "--receiver-cap", "2.0",
                 "--noise-estimate", "energy", "--json", str(out)]) == 0
    summary = json.loads(out.read_text())
    fl, ideal = summary["schemes"]["floras"], summary["schemes"]["ideal"]
    assert summary["parameters"]["phy"]["floras"]["receiver"] == "capped"
    assert fl["receiver"]["rule"] == "capped" and fl["receiver"]["noise_estimate"] == "energy"
    assert 0 < fl["receiver"]["weight_max"] <= 2.0
    assert ideal["clipped_nmse"]["mean"] <= 1e-20 and ideal["nmse"]["mean"] > 0  # clipping active: raw error only
    for s in (fl, ideal):
        assert s["nmse_db"]["mean"] == pytest.approx(10 * math.log10(s["nmse"]["mean"]))
        assert s["nmse_db"]["median"] == pytest.approx(10 * math.log10(s["nmse"]["median"]))
    assert fl["clipped_nmse_db"]["mean"] == pytest.approx(10 * math.log10(fl["clipped_nmse"]["mean"]))


@pytest.mark.parametrize("rule", ["capped", "inverse-variance"])
def test_block_scope_weighs_each_pilots_entries_by_its_own_variance(rule):
    """receiver_scope = "block" with a pilot per coherence block (model §6.4, "Several pilots"): pilot m's entries
    (n_c − 1 data slots each) are the plain estimate times w_m = rule(V_m), V_m = (σ²/L)·Σ_{j=1}^{N} (r_j^{s,m})^−2
    over all N sequences (orthonormal A; the server does not know the active set), from the round's pilot outputs;
    the reported weight is the entry mean of w_m. "round" weighs every entry by the rule on that entry mean of V_m.
    Bugs caught: one weight for all blocks, V_m over the inactive sequences only, a pilot index shifted by one."""
    K, N, L, d, n_c, snr_db, cap = 4, 8, 8, 900, 31, 10.0, 4.0
    sigma2, gamma = 1.0 / 10 ** (snr_db / 10), N - K
    x = stream(3, "receiver-x").standard_normal((K, d))

    def agg(receiver, scope):
        cfg = PhyConfig.make(scheme="floras", L=L, snr_db=snr_db, coherence_symbols=n_c, normalization="clip",
                             clip_norm=1e6, floras={"N": N, "receiver": receiver, "receiver_scope": scope,
                                                    "receiver_cap": cap, "path": "fast"})
        return make_aggregator(cfg, K=K, d=d, seed=7, key=KEY)

    block, pooled, plain = agg(rule, "block"), agg(rule, "round"), agg("plain", "round")
    B, spread = -(-d // (n_c - 1)), 0.0
    m = np.arange(d) // (n_c - 1)  # entry i is equalised with the pilot of its own block
    for t in range(3):
        ref, rnd = plain.aggregate_traced(x, round_index=t)
        res, _ = block.aggregate_traced(x, round_index=t)
        V = sigma2 / L * np.sum(rnd.r_ref_blocks ** -2.0, axis=1)  # [B]
        w = gamma**2 / V
        if rule == "capped":
            w = np.minimum(cap, w)
        np.testing.assert_allclose(res.sum_estimate, w[m] * ref.sum_estimate, rtol=1e-12, atol=0)
        assert res.diagnostics["weight"] == pytest.approx(float(np.mean(w[m])), rel=1e-12)
        w_round = gamma**2 / float(np.mean(V[m]))
        w_round = min(cap, w_round) if rule == "capped" else w_round
        np.testing.assert_allclose(pooled.aggregate_traced(x, round_index=t)[0].sum_estimate, w_round * ref.sum_estimate,
                                   rtol=1e-12, atol=0)
        spread = max(spread, float(w.max() / w.min()))
    assert V.size == B and spread > 2.0  # the blocks' weights do differ


def test_block_scope_validation_and_the_single_pilot_case():
    with pytest.raises(ValueError, match=r"^floras\.receiver_scope must be one of \{round, block\}"):
        PhyConfig.from_dict({"scheme": "floras", "floras": {"receiver_scope": "entry"}}).validate(K=4, d=10)
    with pytest.raises(ValueError, match=r"^floras\.receiver_scope = 'block' needs floras\.noise_estimate = 'pilots'"):
        PhyConfig.from_dict({"scheme": "floras", "floras": {"receiver_scope": "block", "noise_estimate": "energy"}}
                            ).validate(K=4, d=10)
    x = stream(8, "receiver-x").standard_normal((4, 200))
    one = [make_aggregator(PhyConfig.from_dict({"scheme": "floras", "L": 16, "floras": {
        "N": 8, "receiver": "capped", "receiver_scope": scope}}), K=4, d=200, seed=2, key=KEY) for scope in ("round", "block")]
    np.testing.assert_array_equal(one[0].aggregate(x, round_index=1).sum_estimate, one[1].aggregate(x, round_index=1).sum_estimate)
