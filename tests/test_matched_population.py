"""scenarios/matched_population.toml: both variants load and every point validates (model §10, §11)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from scenarios.config import load_scenario
from scenarios.config.calibration import InfeasibleTarget, model_dimension
from scenarios.experiments.sweep_file import load_sweep

SWEEP = Path(__file__).resolve().parents[1] / "scenarios" / "matched_population.toml"
SCHEMES = {"floras-none", "floras-none-capped", "central-gaussian", "analog-gaussian", "sqsgd", "ideal", "ddgauss"}


@pytest.mark.parametrize("quick", [False, True])
def test_both_variants_load_and_every_point_validates(quick):
    sweep = load_sweep(SWEEP, quick=quick)
    assert {p.label for p in sweep.points} == SCHEMES
    eps = {str(p.grid["privacy.target_epsilon"]) for p in sweep.points}
    assert eps == ({"4", "inf"} if quick else {"1", "2", "4", "8", "inf"})
    assert sweep.seeds == ((0,) if quick else (0, 1, 2))
    # one point per case, every key validated: at ε = ∞ where the scheme has it (no calibration search: the finite
    # targets' calibration is floras matched's, and takes a minute at K = 1 000), else at the case's largest target
    def order(point):
        eps = point.grid["privacy.target_epsilon"]
        return -math.inf if eps == "inf" else -float(eps)

    by_label = {}
    for point in sorted(sweep.points, key=order):
        by_label.setdefault(point.label, []).append(point)
    for label, points in by_label.items():
        for point in points:
            try:
                cfg = load_scenario(sweep.base, sweep.run_overrides(point, sweep.seeds[0]))
                break
            except InfeasibleTarget:  # sqSGD has no noiseless setting; ideal has ε = ∞ only
                continue
        else:
            pytest.fail(f"case {label}: no feasible target")
        assert cfg.data.name == "fedprox" and cfg.phy.snr_db == 20.0 and cfg.phy.normalization == "clip"
        K, M = cfg.training.clients_per_round, cfg.partition.clients
        if cfg.phy.scheme == "floras":  # N = K + γ sequences on L ≥ N Walsh–Hadamard chips (model §3, §6.1)
            N = point.overrides["phy.floras.N"]  # γ = 28 as in matched_xdev.toml (ε = ∞ then sets γ = 0)
            assert N - K == 28 and N <= cfg.phy.L and cfg.phy.L & (cfg.phy.L - 1) == 0
        if not quick:
            assert (K, M, cfg.training.client_chunk) == (1000, 100_000, 100)
            assert cfg.data.fedprox.features == 60 and cfg.training.server_momentum == 0.9
            # the 60-512-256-10 MLP: d = 165 130, the size of Fashion-MNIST's 784-200-10 (159 010)
            assert model_dimension(cfg) == 60 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10 == 165_130
        else:
            assert K < M <= 10_000 and cfg.run.rounds <= 5
            assert model_dimension(cfg) == 60 * 32 + 32 + 32 * 10 + 10  # the 60-32-10 MLP of synthetic_quick.toml


@pytest.mark.parametrize("name,labels", [
    ("matched_population_eps8.toml", {"ideal", "central-gaussian", "analog-gaussian", "floras-none-capped", "ddgauss",
                                      "sqsgd"}),
    ("matched_population_eps2.toml", {"central-gaussian", "analog-gaussian", "floras-none-capped", "ddgauss"}),
    ("matched_population_eps1_4.toml", {"central-gaussian", "analog-gaussian", "floras-none-capped", "ddgauss"}),
    ("matched_population_seed1.toml", {"central-gaussian", "analog-gaussian", "floras-none-capped", "ddgauss"}),
    ("matched_population_seed2.toml", {"central-gaussian", "analog-gaussian", "floras-none-capped", "ddgauss"}),
    ("matched_population_ideal_seeds12.toml", {"ideal"}),
    ("matched_population_sqsgd.toml", {"sqsgd"})])
def test_each_slice_is_a_subset_of_the_whole_sweep(name, labels):
    """scenarios/matched_population_eps8.toml, _eps2.toml, _eps1_4.toml, _seed1.toml, _seed2.toml, _ideal_seeds12.toml
    and _sqsgd.toml (the slices): every point and seed is one of the
    whole sweep's, with the same base and the same overrides, so one invocation with both files copies its runs
    (scenarios/experiments/identical.py) instead of repeating them. A differing key (an η, a chunk size) fails."""
    whole = load_sweep(SWEEP)
    part = load_sweep(SWEEP.with_name(name))
    assert part.base == whole.base and set(part.seeds) <= set(whole.seeds)
    runs = [(p.label, s, whole.run_overrides(p, s)) for p in whole.points for s in whole.seeds]
    for point in part.points:
        for seed in part.seeds:
            eps = point.overrides["privacy.target_epsilon"]
            match = [over for label, s, over in runs if label == point.label and s == seed
                     and str(over["privacy.target_epsilon"]) == str(eps)]
            assert len(match) == 1, (point.label, eps)
            assert part.run_overrides(point, seed) == match[0], point.label
    assert {p.label for p in part.points} == labels


def test_the_probes_differ_from_the_slice_only_where_stated():
    """scenarios/matched_population_probe.toml: FLORAS at ε = 16, at ε = 8 without server momentum (η = 0.2), and
    both, central and analog Gaussian at ε = 8 and the noiseless ideal without server momentum (η = 0.2); every other
    key is the slice's point of the same scheme, so the probes read against it (docs/comparison.md)."""
    slice_ = load_sweep(SWEEP.with_name("matched_population_eps8.toml"))
    probe = load_sweep(SWEEP.with_name("matched_population_probe.toml"))
    assert probe.base == slice_.base and probe.seeds == slice_.seeds == (0,)
    refs = {p.label: slice_.run_overrides(p, 0) for p in slice_.points}
    changed = {"floras-none-capped-eps16": {"privacy.target_epsilon": 16},
               "floras-none-capped-nomomentum": {"training.server_momentum": 0.0, "training.lr": 0.2},
               "floras-none-capped-eps16-nomomentum": {"privacy.target_epsilon": 16, "training.server_momentum": 0.0,
                                                       "training.lr": 0.2},
               "central-gaussian-nomomentum": {"training.server_momentum": 0.0, "training.lr": 0.2},
               "analog-gaussian-nomomentum": {"training.server_momentum": 0.0, "training.lr": 0.2},
               "ideal-nomomentum": {"training.server_momentum": 0.0, "training.lr": 0.2}}
    assert {p.label for p in probe.points} == set(changed)
    for point in probe.points:
        over = probe.run_overrides(point, 0)
        scheme = (point.label.removesuffix("-nomomentum") if not point.label.startswith("floras")
                  else "floras-none-capped")
        assert over == {**refs[scheme], **changed[point.label]}, point.label
        cfg = load_scenario(probe.base, {**over, "privacy.target_epsilon": "inf"})  # validates every key, no search
        assert cfg.phy.scheme == scheme.split("-none")[0] and cfg.training.clients_per_round == 1000


def test_the_no_momentum_slice_is_the_capped_floras_of_the_slices_with_only_momentum_and_rate_changed():
    """scenarios/matched_population_nomomentum.toml: capped FLORAS at ε = 1, 2, 4, 8 and seeds 0–2, each run the
    whole sweep's point of the same ε and seed with server momentum 0 and η = 0.2 and nothing else changed; its seed-0
    ε = 8 run is the probe's floras-none-capped-nomomentum (docs/comparison.md)."""
    whole = load_sweep(SWEEP)
    part = load_sweep(SWEEP.with_name("matched_population_nomomentum.toml"))
    probe = load_sweep(SWEEP.with_name("matched_population_probe.toml"))
    assert part.base == whole.base and part.seeds == whole.seeds == (0, 1, 2)
    assert {p.label for p in part.points} == {"floras-none-capped-nomomentum"}
    assert sorted(float(p.overrides["privacy.target_epsilon"]) for p in part.points) == [1.0, 2.0, 4.0, 8.0]
    ref = {(str(o["privacy.target_epsilon"]), s): o for p in whole.points if p.label == "floras-none-capped"
           for s in whole.seeds for o in [whole.run_overrides(p, s)]}
    for point in part.points:
        for seed in part.seeds:
            over = part.run_overrides(point, seed)
            want = ref[(str(point.overrides["privacy.target_epsilon"]), seed)]
            assert over == {**want, "training.server_momentum": 0.0, "training.lr": 0.2}, (point.label, seed)
    eight = next(p for p in part.points if float(p.overrides["privacy.target_epsilon"]) == 8.0)
    probed = next(p for p in probe.points if p.label == "floras-none-capped-nomomentum")
    assert part.run_overrides(eight, 0) == probe.run_overrides(probed, 0)


@pytest.mark.parametrize("name, epsilons, seeds", [("matched_population_pld.toml", ["8"], (0, 1, 2)),
                                                   ("matched_population_pld_eps1_4.toml", ["1", "2", "4"], (0, 1, 2))])
def test_the_pld_slices_are_the_sweeps_points_under_the_pld_accountant(name, epsilons, seeds):
    """scenarios/matched_population_pld.toml (ε = 8, seeds 0–2) and _pld_eps1_4.toml (ε = 1, 2, 4, seeds 0–2): each run is
    the whole sweep's point of the same scheme and ε, with privacy.accountant = "pld" (and, for the no-momentum case, the
    no-momentum slice's η and momentum); nothing else differs, so their rows read against the RDP runs."""
    whole = load_sweep(SWEEP)
    part = load_sweep(SWEEP.with_name(name))
    assert part.base == whole.base and part.seeds == seeds and set(seeds) <= set(whole.seeds)
    changed = {"training.server_momentum": 0.0, "training.lr": 0.2}
    labels = {"central-gaussian", "analog-gaussian", "floras-none-capped", "floras-none-capped-nomomentum"}
    assert sorted((p.label, str(p.overrides["privacy.target_epsilon"])) for p in part.points) == sorted(
        (label, e) for label in labels for e in epsilons)
    for point in part.points:
        scheme = point.label.removesuffix("-nomomentum")
        extra = changed if point.label.endswith("-nomomentum") else {}
        eps = str(point.overrides["privacy.target_epsilon"])
        for seed in part.seeds:
            ref = {p.label: whole.run_overrides(p, seed) for p in whole.points
                   if str(p.overrides["privacy.target_epsilon"]) == eps}
            assert part.run_overrides(point, seed) == {**ref[scheme], **extra, "privacy.accountant": "pld"}, point.label


def _pld_slice_runs() -> dict:
    """{(case, ε as written, seed): run overrides} of the PLD slices (matched_population_pld.toml, _pld_eps1_4.toml)."""
    ref = {}
    for name in ("matched_population_pld.toml", "matched_population_pld_eps1_4.toml"):
        pld = load_sweep(SWEEP.with_name(name))
        for p in pld.points:
            for seed in pld.seeds:
                ref[(p.label, str(p.overrides["privacy.target_epsilon"]), seed)] = pld.run_overrides(p, seed)
    return ref


def test_the_tuned_floras_slice_is_the_pld_points_at_the_validation_choice():
    """scenarios/matched_population_pld_floras_tuned.toml: capped FLORAS with and without server momentum at ε = 1,
    2, 4, 8, seeds 0–2, each run the PLD slices' point of the same case and ε with training.lr replaced by the η
    that docs/figures/population/tune_pld_eps8.json chose for that case (so a wrong or stale η fails)."""
    import json

    tuned = json.loads((SWEEP.parent.parent / "docs" / "figures" / "population" / "tune_pld_eps8.json").read_text())
    part = load_sweep(SWEEP.with_name("matched_population_pld_floras_tuned.toml"))
    ref = _pld_slice_runs()
    assert part.seeds == (0, 1, 2)
    labels = ("floras-none-capped-nomomentum", "floras-none-capped")
    assert sorted((p.label, str(p.overrides["privacy.target_epsilon"])) for p in part.points) == sorted(
        (label, e) for label in labels for e in ("1", "2", "4", "8"))
    for point in part.points:
        lr = tuned["choices"][point.label]["lr"]
        assert tuned["choices"][point.label]["at_edge"] is False, point.label
        for seed in part.seeds:
            want = ref[(point.label, str(point.overrides["privacy.target_epsilon"]), seed)]
            assert part.run_overrides(point, seed) == {**want, "training.lr": lr}, (point.label, seed)
    assert {p.label: p.overrides["training.lr"] for p in part.points} == {labels[0]: 0.05, labels[1]: 0.02}


def test_the_extra_seeds_at_epsilon_one_are_the_seed_zero_points_with_another_seed():
    """scenarios/matched_population_pld_eps1_seeds3_5.toml: central Gaussian and tuned capped FLORAS without momentum
    at ε = 1, seeds 3-5; each run is the seed-0 run of _pld_eps1_4.toml (central) or _pld_floras_tuned.toml (FLORAS)
    with only run.seed changed."""
    part = load_sweep(SWEEP.with_name("matched_population_pld_eps1_seeds3_5.toml"))
    assert part.seeds == (3, 4, 5)
    for point, ref, at_eps in _at_epsilon(part, {"central-gaussian": "matched_population_pld_eps1_4.toml",
                                                     "floras-none-capped-nomomentum": "matched_population_pld_floras_tuned.toml"}):
        for seed in part.seeds:
            assert part.run_overrides(point, seed) == {**ref.run_overrides(at_eps, 0), "run.seed": seed}, point.label


def _at_epsilon(part, refs: dict, epsilons=("1",)):
    """(point, its reference sweep, the reference's point of the same label and ε) for every point of ``part``,
    whose labels must be exactly ``refs``' keys ({label: reference sweep file}) and whose ε must be in ``epsilons``."""
    assert sorted({p.label for p in part.points}) == sorted(refs)
    for point in part.points:
        eps = str(point.overrides["privacy.target_epsilon"])
        assert eps in epsilons
        ref = load_sweep(SWEEP.with_name(refs[point.label]))
        yield point, ref, next(p for p in ref.points
                               if p.label == point.label and str(p.overrides["privacy.target_epsilon"]) == eps)


def test_central_gaussian_without_momentum_is_the_pld_point_at_its_validation_choice():
    """scenarios/matched_population_pld_central_nomomentum.toml: central Gaussian at ε = 1 and 8, seeds 0–2, each run
    the PLD slices' central-gaussian point of the same ε and seed with server momentum 0 and the η that
    docs/figures/population/tune_pld_central_nomomentum_eps8.json chose inside its grid (a stale η fails)."""
    import json

    tuned = json.loads((SWEEP.parent.parent / "docs" / "figures" / "population"
                        / "tune_pld_central_nomomentum_eps8.json").read_text())["choices"]["central-gaussian-nomomentum"]
    assert tuned["at_edge"] is False and tuned["lr"] == 0.05
    part = load_sweep(SWEEP.with_name("matched_population_pld_central_nomomentum.toml"))
    ref = _pld_slice_runs()
    assert part.seeds == (0, 1, 2)
    assert sorted(str(p.overrides["privacy.target_epsilon"]) for p in part.points) == ["1", "8"]
    for point in part.points:
        assert point.label == "central-gaussian-nomomentum"
        for seed in part.seeds:
            want = ref[("central-gaussian", str(point.overrides["privacy.target_epsilon"]), seed)]
            assert part.run_overrides(point, seed) == {**want, "training.server_momentum": 0.0,
                                                       "training.lr": tuned["lr"]}, seed


def test_the_200_round_slice_is_the_100_round_points_with_only_the_rounds_changed():
    """scenarios/matched_population_pld_rounds200.toml (ε = 1) and its ε = 8 twin: capped FLORAS and central Gaussian
    without momentum, seeds 0–2, each run the T = 100 run of the same case, ε and seed with run.rounds = 200 the only
    change."""
    for name, eps in (("matched_population_pld_rounds200.toml", "1"), ("matched_population_pld_rounds200_eps8.toml", "8")):
        _assert_rounds200(load_sweep(SWEEP.with_name(name)), eps)


def _assert_rounds200(part, eps: str):
    assert part.seeds == (0, 1, 2)
    assert sorted(str(p.overrides["privacy.target_epsilon"]) for p in part.points) == [eps, eps]
    refs = {"central-gaussian-nomomentum": "matched_population_pld_central_nomomentum.toml",
            "floras-none-capped-nomomentum": "matched_population_pld_floras_tuned.toml"}
    for point, ref, at_eps in _at_epsilon(part, refs, epsilons=(eps,)):
        for seed in part.seeds:
            want = ref.run_overrides(at_eps, seed)
            assert want["run.rounds"] == 100
            assert part.run_overrides(point, seed) == {**want, "run.rounds": 200}, (point.label, seed)
