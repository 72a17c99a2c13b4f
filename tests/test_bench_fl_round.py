"""benchmarks/fl_round.py writes every row it measured, also when a model or a kernel candidate fails."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--dataset", "digits", "--clients", "10", "--per-round", "4", "--floras-N", "6", "--reps", "1", "--fit-reps", "0"]


def _bench(tmp_path, *args, onednn="0"):
    out = tmp_path / "bench.json"
    env = dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPP_MIN_LOG_LEVEL="2")
    res = subprocess.run([sys.executable, "benchmarks/fl_round.py", *TINY, *args, "--json", str(out)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    return res, (json.loads(out.read_text()) if out.exists() else None)


def test_without_onednn_the_cnn_row_is_written_and_the_grouped_candidate_reported(tmp_path):
    res, got = _bench(tmp_path, "--models", "cnn")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert got["onednn"] == "off" and got["failed"] == []
    (row,) = got["models"]
    assert row["model"] == "cnn" and row["seconds"]["batched"] > 0 and row["seconds"]["compiled_per_client"] > 0
    cand = row["conv_candidates"]
    # the kernel the trainer uses runs on TensorFlow's default kernels; the grouped conv2d's gradient does not
    assert cand["seconds"]["per_client_networks (fl.models)"] > 0
    assert cand["errors"]["grouped_conv2d"].startswith("InvalidArgumentError")
    for name, diff in cand["relative_diff_of_summed_gradients"].items():
        assert diff < 1e-3, (name, diff)  # every working candidate computes the same gradients


def test_a_failing_model_keeps_the_other_rows(tmp_path):
    # four halvings of the 8x8 digits leave no pixel: the CNN fails to build, the MLP after it is still measured
    res, got = _bench(tmp_path, "--models", "cnn", "mlp", "--cnn-channels", "2", "2", "2", "2")
    assert res.returncode == 1
    assert "model cnn: FAILED" in res.stdout
    assert [r["model"] for r in got["models"]] == ["mlp"]
    assert got["models"][0]["seconds"]["batched"] > 0
    assert [f["model"] for f in got["failed"]] == ["cnn"] and "channels" in got["failed"][0]["error"]
