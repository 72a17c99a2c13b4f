"""scenarios/matched_population.toml: both variants load and every point validates (model §10, §11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.config import load_scenario
from scenarios.config.calibration import model_dimension
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
    for point in sweep.points:
        cfg = load_scenario(sweep.base, sweep.run_overrides(point, sweep.seeds[0]))  # validates every key
        assert cfg.data.name == "fedprox" and cfg.phy.snr_db == 20.0 and cfg.phy.normalization == "clip"
        K, M = cfg.training.clients_per_round, cfg.partition.clients
        if cfg.phy.scheme == "floras":  # N = K + γ sequences on L ≥ N Walsh–Hadamard chips (model §3, §6.1)
            N = cfg.phy.of("floras").N
            assert K < N <= cfg.phy.L and cfg.phy.L & (cfg.phy.L - 1) == 0
        if not quick:
            assert (K, M, cfg.training.client_chunk) == (1000, 100_000, 100)
            assert model_dimension(cfg) == 784 * 200 + 200 + 200 * 10 + 10  # the 784-200-10 MLP: d = 159 010
        else:
            assert K < M <= 10_000 and cfg.run.rounds <= 5
