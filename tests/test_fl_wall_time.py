"""Wall-time accounting of a run (docs/fl.md "Wall time"): setup and tf.function tracing recorded apart."""

import csv
import json

from scenarios.config import scenario_from_dict
from scenarios.runs.run import run_scenario


def test_run_records_setup_and_tracing_apart_from_wall_time(tmp_path):
    cfg = scenario_from_dict({
        "data": {"name": "synthetic", "synthetic_samples": 300, "synthetic_features": 6, "synthetic_classes": 3},
        "partition": {"clients": 6}, "model": {"hidden": [8]},
        "training": {"clients_per_round": 3, "lr": 0.1, "batch_size": 10},
        "phy": {"scheme": "floras", "L": 8, "snr_db": 10.0, "floras": {"N": 5}}, "run": {"rounds": 3, "seed": 1},
    })
    run_scenario(cfg, tmp_path / "r", progress=False)
    record = json.loads((tmp_path / "r" / "config.json").read_text())
    timing = record["timing"]
    assert timing["setup_s"] > 0 and timing["tracing_s"] > 0
    assert "tracing" in record["metrics"]["wall_time_s"]
    assert record["aggregator"]["path"] == "sufficient"  # learning runs take the sufficient path by default
    with open(tmp_path / "r" / "metrics.csv", newline="") as fh:
        wall = [float(r["wall_time_s"]) for r in csv.DictReader(fh)]
    assert len(wall) == 3 and all(b >= a for a, b in zip(wall, wall[1:]))
