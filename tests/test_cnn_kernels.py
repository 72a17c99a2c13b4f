"""The batched CNN trains with TensorFlow's default kernels, with oneDNN on and off (docs/fl.md).

TensorFlow turns oneDNN on by default only on CPUs with AVX-512-class features; elsewhere (many
AMD and older Intel CPUs) only its default kernels exist, and an op whose gradient only oneDNN
implements (a grouped ``conv2d``) fails there. ``TF_ENABLE_ONEDNN_OPTS=0`` reproduces that
configuration on any x86-64 CPU; it is read when TensorFlow is imported, so each setting runs in
a fresh subprocess.
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = ["0", "1"]


def _env(onednn):
    return dict(os.environ, TF_ENABLE_ONEDNN_OPTS=onednn, TF_CPP_MIN_LOG_LEVEL="2")


def _onednn_state(onednn):
    code = "from tensorflow.python.util import _pywrap_util_port as p; print(int(p.IsMklEnabled()))"
    out = subprocess.run([sys.executable, "-c", code], env=_env(onednn), cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1] == "1"


@pytest.mark.parametrize("onednn", SETTINGS)
def test_batched_cnn_equals_clients_alone_with_onednn(onednn):
    if onednn == "0":
        # the configuration of a CPU without oneDNN: the test below then runs on the default kernels
        assert not _onednn_state("0")
    tests = ["tests/test_fl_training.py::test_batched_training_equals_clients_one_after_another[cnn]",
             "tests/test_fl_training.py::test_batched_forward_pass_matches_keras[cnn]"]
    res = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-v", "-p", "no:cacheprovider", *tests], env=_env(onednn),
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert res.stdout.count(" PASSED") == 2, res.stdout[-3000:]


CNN_SCENARIO = """
[data]
name = "digits"
test_fraction = 0.25

[partition]
kind = "iid"
clients = 8

[model]
name = "cnn"
channels = [4, 6]
kernel_size = 3

[training]
clients_per_round = 3
lr = 0.1
batch_size = 10
local_epochs = 1

[phy]
scheme = "floras"
L = 8
snr_db = 20.0
normalization = "clip"
clip_norm = 1.0
C = 1.0

[phy.floras]
N = 5
[privacy]
delta = 1e-5
level = "client"
relation = "replace"

[run]
rounds = 1
seed = 0
"""


@pytest.mark.parametrize("onednn", SETTINGS)
def test_floras_train_runs_a_cnn_round_with_onednn(onednn, tmp_path):
    scenario = tmp_path / "cnn.toml"
    scenario.write_text(CNN_SCENARIO)
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "scenarios", "train", str(scenario), "--out", str(out)],
                         env=_env(onednn), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (out / "DONE").exists()
    rows = (out / "metrics.csv").read_text().strip().splitlines()
    assert len(rows) == 2  # header + the one round
    header, values = rows[0].split(","), rows[1].split(",")
    assert math.isfinite(float(values[header.index("train_loss")]))
    assert 0.0 <= float(values[header.index("test_accuracy")]) <= 1.0
    config = json.loads((out / "config.json").read_text())
    assert config["config"]["model"]["name"] == "cnn"
    if onednn == "0":
        assert config["versions"]["tensorflow_onednn"] == "off"
