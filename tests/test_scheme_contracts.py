"""Contracts every registered scheme keeps (docs/extending.md): the tests iterate the registry, so a new
scheme is tested without anyone listing it. The worked example scheme (tests/example_scheme) is
registered here too, so its contracts are checked with the built-in ones."""

import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import example_scheme  # noqa: E402,F401  (registers "local-gaussian" in phy and privacy)

from phy.aggregation import AggregationResult  # noqa: E402
from phy.config import PhyConfig  # noqa: E402
from phy.randomness import stream  # noqa: E402
from phy.schemes import make_aggregator, scheme_names, scheme_spec  # noqa: E402

K, D, KEY = 4, 64, bytes(range(16))
SCHEMES = scheme_names()


def _config(name: str, **extra) -> PhyConfig:
    return PhyConfig.make(scheme=name, **{**scheme_spec(name).example, **extra})


def test_the_registry_lists_the_built_in_schemes_and_the_example():
    assert {"floras", "channel-inversion", "ideal", "central-gaussian", "analog-gaussian", "ddgauss", "sqsgd",
            "local-gaussian"} <= set(SCHEMES)


@pytest.mark.parametrize("name", SCHEMES)
def test_every_scheme_example_is_valid_and_round_trips_through_its_dict(name):
    cfg = _config(name).validate(K=K, d=D)
    back = PhyConfig.from_dict(json.loads(json.dumps(cfg.to_dict())))
    assert back == cfg
    assert back.to_dict() == cfg.to_dict()
    spec = scheme_spec(name)
    if spec.params is not None:  # the scheme's own sub-table is always written, defaults filled in
        assert cfg.to_dict()[name] == dataclasses.asdict(cfg.of(name))


@pytest.mark.parametrize("name", SCHEMES)
def test_every_aggregator_reports_channel_uses_and_its_nmse(name):
    agg = make_aggregator(_config(name), K=K, d=D, seed=3, key=KEY)
    x = stream(0, "contract-x").standard_normal((K, D))
    res, _trace = agg.aggregate_traced(x, round_index=0)
    assert isinstance(res, AggregationResult) and res.sum_estimate.shape == (D,)
    assert 0 <= res.contributors <= K
    assert res.diagnostics["channel_uses"] > 0 and math.isfinite(res.diagnostics["channel_uses"])
    assert res.diagnostics["nmse"] == res.error
    again, _ = make_aggregator(_config(name), K=K, d=D, seed=3, key=KEY).aggregate_traced(x, round_index=0)
    np.testing.assert_array_equal(again.sum_estimate, res.sum_estimate)  # a pure function of (config, seed, round)
    assert agg.aggregate(x, round_index=0).sum_estimate.shape == (D,)
    assert agg.describe()["scheme"] == name


@pytest.mark.parametrize("name", SCHEMES)
def test_every_aggregator_reports_the_noise_energy_and_the_clipped_sum_error(name):
    """noise_energy = ‖x̂ − Σ x̃_k‖² and clipped_nmse = that / ‖Σ x̃_k‖², x̃_k = clip(x_k − μ_k) + μ_k (model §2, §6.4),
    predicted here from the raw configuration: the contributors are all K, or the admitted count (a scheme that
    admits fewer reports it as ``admitted``; the sum is then over an unknown subset, so only the shape is checked)."""
    cfg = _config(name)
    agg = make_aggregator(cfg, K=K, d=D, seed=3, key=KEY)
    x = 3.0 * stream(1, "contract-x").standard_normal((K, D))
    res, _ = agg.aggregate_traced(x, round_index=0)
    diag = res.diagnostics
    assert diag["noise_energy"] >= 0.0 and math.isfinite(diag["noise_energy"])
    if res.contributors == K:
        mu = x.mean(axis=1, keepdims=True)
        v = x - mu
        R = cfg.clip_norm if cfg.normalization == "clip" else None
        if R is not None:
            v = v * np.minimum(1.0, R / np.linalg.norm(v, axis=1, keepdims=True))
        target = (v + mu).sum(axis=0) if R is not None else x.sum(axis=0)  # "paper": no clipping, x̃ = x
        energy = float(np.sum((res.sum_estimate - target) ** 2))
        assert diag["noise_energy"] == pytest.approx(energy, rel=1e-9, abs=1e-9)
        assert diag["clipped_nmse"] == pytest.approx(energy / float(np.sum(target**2)), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", [n for n in SCHEMES if scheme_spec(n).unbiased])
def test_every_unbiased_scheme_is_unbiased_within_four_standard_errors(name):
    """All K clients send the same x₀, so whichever K' clients contribute, E[x̂] = K'·x₀: the error
    projected on a fixed direction has mean 0 (a scheme that drops a factor, e.g. d/d̃ or √K, fails)."""
    rounds = 150
    agg = make_aggregator(_config(name), K=K, d=D, seed=5, key=KEY)
    x0 = stream(1, "contract-x0").standard_normal(D)
    x0 -= x0.mean()
    x0 *= 0.5 / np.linalg.norm(x0)  # inside the clip norm 1: no clipping bias
    u = stream(2, "contract-direction").standard_normal(D)
    u /= np.linalg.norm(u)
    proj, scale = [], []
    for t in range(rounds):
        res = agg.aggregate(np.tile(x0, (K, 1)), round_index=t)
        if res.contributors:
            proj.append(float(u @ (res.sum_estimate - res.contributors * x0)))
            scale.append(float(u @ (res.contributors * x0)))
    proj = np.asarray(proj)
    assert len(proj) > rounds // 2
    se = proj.std(ddof=1) / math.sqrt(len(proj))
    assert abs(proj.mean()) <= 4 * se + 1e-9 * (1 + abs(np.mean(scale)))


@pytest.mark.parametrize("name", SCHEMES)
def test_a_key_of_another_scheme_is_refused_with_its_place(name):
    spec = scheme_spec(name)
    if spec.params is None:
        return
    other = next(n for n in SCHEMES if n != name and scheme_spec(n).params is not None
                 and not set(f.name for f in dataclasses.fields(scheme_spec(n).params))
                 & set(f.name for f in dataclasses.fields(spec.params)))
    field = dataclasses.fields(scheme_spec(other).params)[0].name
    with pytest.raises(ValueError, match=rf"phy\.{name}\.{field} belongs to scheme '{other}'.*phy\.{other}\.{field}"):
        PhyConfig.from_dict({"scheme": name, name: {field: 1}})


def test_flat_keys_of_earlier_files_name_their_new_place():
    with pytest.raises(ValueError, match=r"^phy\.N has moved to phy\.floras\.N"):
        PhyConfig.from_dict({"N": 30})
    with pytest.raises(ValueError, match=r"^phy\.dd_bits has moved to phy\.ddgauss\.bits"):
        PhyConfig.from_dict({"dd_bits": 8})
    with pytest.raises(ValueError, match=r"phy\.noise_multiplier has moved to phy\.central-gaussian\.noise_multiplier "
                                         r"or phy\.analog-gaussian\.noise_multiplier"):
        PhyConfig.from_dict({"noise_multiplier": 1.0})
    with pytest.raises(ValueError, match=r"^phy\.ddgauss\.dd_bits is now phy\.ddgauss\.bits"):
        PhyConfig.from_dict({"ddgauss": {"dd_bits": 8}})
    with pytest.raises(ValueError, match=r"did you mean 'floras'"):
        PhyConfig.from_dict({"flras": {"N": 3}})


def test_an_unregistered_scheme_is_an_error_naming_the_registered_ones():
    with pytest.raises(ValueError, match=r"^scheme must be one of \{floras, .*\} \(got 'bogus'\)"):
        PhyConfig(scheme="bogus").validate(K=2)


# ------------------------------------------------------------------ scenarios: the wiring rows
from scenarios.config import scenario_from_dict  # noqa: E402
from scenarios.config.calibration import calibrate_config  # noqa: E402
from scenarios.config.schemes import wirings  # noqa: E402

ROWS = {w.scheme: w for w in wirings()}


def _scenario(name: str, **privacy):
    """The scheme's example in a small scenario (K = 5 of M = 20, 30 rounds, digits)."""
    phy = {"scheme": name, **json.loads(json.dumps(scheme_spec(name).example))}
    return scenario_from_dict({"partition": {"clients": 20}, "training": {"clients_per_round": 5, "batch_size": 10},
                               "phy": phy, "privacy": privacy, "run": {"rounds": 30}}, resolve=False)


def test_every_registered_scheme_has_a_wiring_row():
    assert set(SCHEMES) <= set(ROWS), f"schemes without a wiring row: {sorted(set(SCHEMES) - set(ROWS))}"


@pytest.mark.parametrize("name", SCHEMES)
def test_the_scenario_round_trips_through_config_json(name):
    cfg = _scenario(name)
    back = scenario_from_dict(json.loads(json.dumps(cfg.to_dict())), resolve=False)
    assert back == cfg


@pytest.mark.parametrize("name", SCHEMES)
def test_epsilon_is_finite_exactly_when_the_scheme_adds_privacy_noise(name):
    acc = _scenario(name).privacy_accountant(d=50, D=10)
    if ROWS[name].accountant is None:
        assert acc is None  # the row declares no privacy noise: the ε column is ∞ by declaration
        return
    eps = acc.epsilon(rounds=30)
    assert math.isfinite(eps) and eps > 0
    assert acc.epsilon(rounds=60) > eps  # composition over rounds costs privacy


@pytest.mark.parametrize("name", [n for n in SCHEMES if ROWS[n].calibrated])
@pytest.mark.parametrize("target", [2.0, 9.0])
def test_calibration_never_overshoots_the_target(name, target):
    """The calibrated value meets the target (ε ≤ target, recomputed from a fresh accountant) and is not
    needlessly noisy: a 1 % step towards less noise breaks it (integer keys: one step)."""
    from scenarios.config.calibration import with_phy
    from scenarios.config.schemes import get_phy_key

    cfg = _scenario(name)
    row = ROWS[name]
    key = next(iter(row.calibrated.values()))
    if key.key == "C":  # FLORAS at its example N: a narrower bracket keeps the test fast
        row_cal = dataclasses.replace(key, bracket=(0.05, 20.0))
    else:
        row_cal = key
    from scenarios.config.schemes import register_wiring

    register_wiring(dataclasses.replace(row, calibrated={**row.calibrated, next(iter(row.calibrated)): row_cal}), replace=True)
    try:
        cal = calibrate_config(cfg, target, d=50)
    finally:
        register_wiring(row, replace=True)
    at = with_phy(cfg, cal.parameter, cal.value)
    eps = at.privacy_accountant(d=50, D=10).epsilon(rounds=30)
    assert eps <= target and cal.achieved_epsilon == pytest.approx(eps, rel=1e-12)
    assert get_phy_key(at.phy, key.key) == cal.value
    step = 1 if key.integer else 0.01 * cal.value
    less_noise = cal.value + (step if key.increasing else -step)
    assert with_phy(cfg, key.key, less_noise).privacy_accountant(d=50, D=10).epsilon(rounds=30) > target


def test_docs_fl_lists_every_key_of_every_built_in_sub_table():
    """docs/fl.md's sub-table reference drifts from the dataclasses → this fails naming the missing key."""
    from phy.schemes import BUILTIN_MODULES

    text = (Path(__file__).resolve().parents[1] / "docs" / "fl.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `[phy.")]
    for name in SCHEMES:
        spec = scheme_spec(name)
        if spec.params is None or spec.aggregator.__module__ not in BUILTIN_MODULES:
            continue
        row = next((r for r in rows if f"`[phy.{name}]`" in r), None)
        assert row is not None, f"docs/fl.md has no row for [phy.{name}]"
        for f in dataclasses.fields(spec.params):
            assert f"`{f.name}`" in row, f"docs/fl.md: [phy.{name}] row lacks `{f.name}`"


@pytest.mark.parametrize("name", [n for n in SCHEMES if ROWS[n].calibrated and next(iter(ROWS[n].calibrated.values())).noiseless])
def test_a_resolved_target_changes_only_the_calibrated_key(name):
    """privacy.target_epsilon = "inf" sets the noiseless key and nothing else of [phy] (no placeholder left behind)."""
    from scenarios.config.targets import resolve_privacy_target

    cfg = _scenario(name)
    resolved = resolve_privacy_target(dataclasses.replace(cfg, privacy=dataclasses.replace(cfg.privacy, target_epsilon="inf")))
    key, value = next(iter(ROWS[name].calibrated.values())).noiseless
    value = cfg.training.clients_per_round if value == "K" else value

    def flat(phy):
        d = phy.to_dict()
        out = {k: v for k, v in d.items() if not isinstance(v, dict)}
        out.update({f"{s}.{k}": v for s, t in d.items() if isinstance(t, dict) for k, v in t.items()})
        return out

    before, after = flat(cfg.phy), flat(resolved.phy)
    assert after.pop(key) == value
    before.pop(key, None)
    assert after == before


def test_the_noise_metrics_are_numpys_pairwise_sums_whatever_the_blas_threads():
    """noise_energy and clipped_nmse at d = 159 010 are numpy's pairwise sums of the squares, bit for bit, with one
    BLAS thread or all: a BLAS dot product sums in another order (and one that depends on its threads), so a run's
    diagnostics would differ between a sweep's one-thread worker and a run in this process."""
    from threadpoolctl import threadpool_limits

    from phy.aggregation import noise_metrics

    rng = np.random.default_rng(12)
    target = rng.standard_normal(159_010) * rng.uniform(0.5, 2.0, 159_010)
    estimate = target + rng.standard_normal(159_010) * 0.1
    energy = float(np.add.reduce((estimate - target) ** 2))
    want = {"noise_energy": energy, "clipped_nmse": energy / float(np.add.reduce(target ** 2))}
    for threads in (1, None):
        with threadpool_limits(limits=threads):
            assert noise_metrics(estimate, target) == want, threads
    assert float(np.dot(estimate - target, estimate - target)) != energy  # the order matters in the last bits here


def test_the_round_reductions_that_steer_an_update_do_not_follow_the_blas_threads():
    """The energy estimate V̂ = ‖ŝ‖²/(b²d) of the receiver rules (its weight scales the update) and sqSGD's ℓ2
    projection norm are numpy's pairwise sums at d = 159 010, bit for bit, with one BLAS thread or all."""
    from threadpoolctl import threadpool_limits

    from phy.digital.sqsgd import project_to_ball
    from phy.receiver_rules import energy_variance

    rng = np.random.default_rng(13)
    s_hat = rng.standard_normal(159_010) * rng.uniform(0.5, 2.0, 159_010)
    v_want = float(np.add.reduce(s_hat ** 2)) / (1.5 ** 2 * s_hat.size)
    radius = 0.5 * float(np.sqrt(np.add.reduce(s_hat ** 2)))
    p_want = s_hat * (radius / float(np.sqrt(np.add.reduce(s_hat ** 2))))
    for threads in (1, None):
        with threadpool_limits(limits=threads):
            assert energy_variance(s_hat, b=1.5) == v_want, threads
            assert np.array_equal(project_to_ball(s_hat, radius), p_want), threads
