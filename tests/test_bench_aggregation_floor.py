"""benchmarks/aggregation_floor.py times the sums the schemes compute, and a failed row leaves the others written.

The floor's matrix product must compute what a scheme's receiver computes (else the ratio compares unlike work):
without noise draws, its clipped sum is ideal aggregation's estimate and its last row the raw sum the error is
measured against; a floor that forgot the clip, or summed one chunk too few, fails the comparison.
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_floor_computes_the_clipped_and_raw_sums_of_ideal_aggregation():
    from aggregation_floor import _aggregator, _chunks, _floor

    K, d = 7, 50
    rng = np.random.default_rng(4)
    # norms ≈ 0.35, 2.8, 0.7 (one clipped at R = 1), offsets that make μ_k matter
    x = rng.standard_normal((3, d)) * np.array([[0.05], [0.4], [0.1]]) + np.array([[0.3], [-0.2], [0.1]])
    acc = _floor(x, K=K, accumulators=2, draws=0, rng=rng)
    full = np.concatenate([rows for _, rows in _chunks(x, K)])
    assert full.shape == (K, d)  # chunks of 3, 3, 1 rows
    mu = full.mean(axis=1)[:, None]  # model §2: the clip acts on x_k − μ_k·1, μ_k sent beside it
    centred = full - mu
    clipped = centred * np.minimum(1.0, 1.0 / np.linalg.norm(centred, axis=1))[:, None] + mu
    np.testing.assert_allclose(acc[0], clipped.sum(axis=0), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(acc[1], full.sum(axis=0), rtol=1e-12, atol=1e-14)
    ideal = _aggregator("ideal", K=K, d=d).aggregate_stream(_chunks(x, K), round_index=0)
    np.testing.assert_allclose(ideal.sum_estimate, acc[0], rtol=1e-12, atol=1e-14)
    assert not np.allclose(acc[0], acc[1])  # the clip acted


def test_a_failed_row_is_recorded_and_the_others_are_written(tmp_path):
    from aggregation_floor import main

    out = tmp_path / "bench.json"
    # FLORAS with N = 1 024 sequences cannot serve K = 2 000 clients: that row fails at construction
    assert main(["--d", "64", "--K", "4", "2000", "--chunk", "500", "--repeats", "2", "--schemes", "ideal,floras",
                 "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert set(rows) == {"ideal@K=4", "floras@K=4", "ideal@K=2000", "floras@K=2000"}
    assert "error" in rows["floras@K=2000"]
    for name in ("ideal@K=4", "floras@K=4", "ideal@K=2000"):
        assert "error" not in rows[name] and len(rows[name]["aggregate_s"]) == 2 and rows[name]["floor_median_s"] > 0
