"""benchmarks/sqsgd_floor.py: its per-client floor does the mechanism's work on the mechanism's coordinates, and a
failed row leaves the others written.

Without the quantization, the floor's rotation, un-rotation and scatter-add return n·Σ_k x_k on each client's
coordinates I_k (H_n·H_n = n·I, the signs squared to 1): a floor that drew its coordinates from another stream, kept
n instead of d̃ of them, or transformed vectors of the wrong length would differ from Σ_k x_k masked by
client_coordinates.
"""

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_client_floor_decodes_the_clients_sum_on_their_coordinates():
    from sqsgd_floor import _client_floor

    from phy.digital.sqsgd import client_coordinates, subsampled_dimension

    d, t = 300, 4
    x = np.random.default_rng(2).standard_normal((3, d))
    for ratio in (0.2, 1.0):
        d_tilde, n = subsampled_dimension(d, ratio)
        total = _client_floor(x, admitted=5, d_tilde=d_tilde, n=n, levels=2, t=t)
        expected = np.zeros(d)
        for k in range(5):
            coords = client_coordinates(0, t, k, d=d, d_tilde=d_tilde)
            expected[coords] += x[k % 3, coords]
        np.testing.assert_allclose(total / n, expected, rtol=1e-12, atol=1e-12)


def test_a_failed_row_is_recorded_and_the_others_are_written(tmp_path):
    from sqsgd_floor import main

    out = tmp_path / "bench.json"
    # at d = 8 the population configuration keeps ⌊0.1·8⌋ = 0 coordinates: that row fails at construction
    assert main(["--d", "8", "--K", "3", "--repeats", "2", "--json", str(out)]) == 1
    rows = json.loads(out.read_text())["rows"]
    assert set(rows) == {"population@K=3", "full@K=3"}
    assert "error" in rows["population@K=3"]
    full = rows["full@K=3"]
    assert "error" not in full and len(full["aggregate_s"]) == 2 and full["floor_median_s"] > 0
    assert len(full["admitted"]) == 2 and all(0 <= a <= 3 for a in full["admitted"])
