"""FedProx's Synthetic(α, β) population (model §8, fl/fedprox_synthetic.py): lazy, keyed per client,
the documented laws; its scenario keys; the quick scenario end to end."""

import json
import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from fl.clients import LazyClients
from fl.fedprox_synthetic import FedProxSynthetic
from phy.randomness import stream
from scenarios.config import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]


def _reference_client(seed, k, *, alpha, beta, F, C, n_min, n_max, mu, sigma):
    """Client k drawn by hand from the documented stream order (z, u, B, v, W, b, then x)."""
    rng = stream(seed, "synthetic-client", k)
    D = int(min(n_min + math.floor(math.exp(mu + sigma * rng.standard_normal())), n_max))
    u = alpha * rng.standard_normal()
    B = beta * rng.standard_normal()
    v = B + rng.standard_normal(F)
    W = u + rng.standard_normal((F, C))
    b = u + rng.standard_normal(C)
    z = rng.standard_normal((D, F), dtype=np.float32)  # float32 draws, float32 affine map (model §11)
    x = v.astype(np.float32) + (np.arange(1, F + 1) ** -0.6).astype(np.float32) * z
    return x, np.argmax(x.astype(np.float64) @ W + b, axis=1), v, W, b


def test_client_data_follow_the_documented_draws_exactly():
    pop = FedProxSynthetic(seed=5, M=1000, alpha=0.5, beta=2.0, features=12, classes=4, min_size=20, max_size=300)
    for k in (0, 7, 999):
        x, y = pop.client_data(k)
        rx, ry, *_ = _reference_client(5, k, alpha=0.5, beta=2.0, F=12, C=4, n_min=20, n_max=300, mu=4.0, sigma=2.0)
        np.testing.assert_array_equal(x, rx)
        np.testing.assert_array_equal(y, ry)
        assert x.dtype == np.float32 and y.dtype == np.int32 and pop.size(k) == x.shape[0]


def test_feature_variances_are_j_to_the_minus_1_2():
    # σ = 0: every client has D = min(n_min + ⌊e^μ⌋, n_max) = 20 + ⌊e^{7.6}⌋ = 2018 examples. The sample variance
    # of feature j around the client's own mean v_j has mean j^{−1.2} and relative standard deviation
    # √(2/(n−1)) = 0.0315 (Gaussian); 5 of them is the tolerance.
    pop = FedProxSynthetic(seed=1, M=3, features=10, classes=3, size_mu=7.6, size_sigma=0.0, min_size=20, max_size=5000)
    x, _ = pop.client_data(2)
    n = x.shape[0]
    assert n == 20 + math.floor(math.exp(7.6))
    _, _, v, *_ = _reference_client(1, 2, alpha=1.0, beta=1.0, F=10, C=3, n_min=20, n_max=5000, mu=7.6, sigma=0.0)
    ratio = ((x.astype(np.float64) - v) ** 2).sum(axis=0) / (n - 1) / np.arange(1, 11) ** -1.2
    assert np.all(np.abs(ratio - 1) < 5 * math.sqrt(2 / (n - 1))), ratio


def test_client_sizes_follow_the_capped_lognormal_law():
    # D_k = min(50 + ⌊e^{4 + 2Z}⌋, 1000): P(D_k = 1000) = 1 − Φ((ln 950 − 4)/2) ≈ 0.0761 and
    # P(D_k ≤ 104) = P(e^{4+2Z} < 55) = Φ((ln 55 − 4)/2) ≈ 0.5015; over 4 000 clients each fraction is
    # binomial, tolerance 5 standard errors.
    n = 4000
    sizes = FedProxSynthetic(seed=2, M=10**6).sizes(np.arange(n))
    assert sizes.min() >= 50 and sizes.max() <= 1000
    for frac, p in (((sizes == 1000).mean(), 1 - norm.cdf((math.log(950) - 4) / 2)),
                    ((sizes <= 104).mean(), norm.cdf((math.log(55) - 4) / 2))):
        assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n), (frac, p)


def test_a_million_clients_cost_nothing_until_sampled():
    # building the population and drawing one client's data allocates that client's rows only
    # (≤ n_max·F float64 draws + float32 rows ≈ 9.4 MB), whatever M
    tracemalloc.start()
    pop = FedProxSynthetic(seed=0, M=10**6)
    x, y = pop.client_data(999_999)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 2 * 1000 * 784 * 12
    assert x.shape == (pop.size(999_999), 784)
    with pytest.raises(ValueError, match=r"\[0, 1000000\)"):
        pop.client_data(10**6)


def test_a_client_is_the_same_alone_or_with_others():
    pop = FedProxSynthetic(seed=3, M=10**5, features=8, classes=3, min_size=10, max_size=60)
    provider = LazyClients(pop)
    rows = stream(0, "test-rows").integers(0, 10, size=(4, 3, 5))  # rows < n_min: valid for every client
    x3, y3, r3 = provider.batches(np.array([17, 99_999, 4]), rows)
    x1, y1, r1 = provider.batches(np.array([99_999]), rows[:, 1:2])
    np.testing.assert_array_equal(x3[r3[:, 1]], x1[r1[:, 0]])
    np.testing.assert_array_equal(y3[r3[:, 1]], y1[r1[:, 0]])
    full_x, full_y = pop.client_data(99_999)
    np.testing.assert_array_equal(x1[r1[:, 0]], full_x[rows[:, 1]])
    np.testing.assert_array_equal(y1[r1[:, 0]], full_y[rows[:, 1]])


def test_alpha_never_changes_the_labels_and_the_shared_model_is_shared():
    # u_k adds u_k·(Σ_j x_j + 1) to every class's logit: the argmax, hence the data, do not depend on α
    kw = dict(seed=4, M=50, features=6, classes=5, min_size=30, max_size=200)
    for k in (3, 41):
        a, b = FedProxSynthetic(alpha=0.0, **kw).client_data(k), FedProxSynthetic(alpha=3.0, **kw).client_data(k)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
    shared = FedProxSynthetic(shared_model=True, **kw)
    rng = stream(4, "synthetic-shared-model")
    W, b = rng.standard_normal((6, 5)), rng.standard_normal(5)
    for k in (3, 41):
        x, y = shared.client_data(k)
        np.testing.assert_array_equal(x, FedProxSynthetic(**kw).client_data(k)[0])  # features unchanged
        np.testing.assert_array_equal(y, np.argmax(x.astype(np.float64) @ W + b, axis=1))


def test_test_set_is_fresh_examples_of_a_fixed_set_of_clients():
    pop = FedProxSynthetic(seed=6, M=10**6, features=5, classes=3, test_clients=7, test_per_client=4)
    ids = pop.test_client_ids()
    assert ids.size == 7 and np.unique(ids).size == 7
    x, y = pop.test_set()
    assert x.shape == (28, 5) and y.shape == (28,)
    # each block of 4 follows its client's own labeller (the reference draws of that client), and is not
    # a copy of its training rows
    for j, k in enumerate(ids):
        train_x, _, _, W, b = _reference_client(6, int(k), alpha=1.0, beta=1.0, F=5, C=3, n_min=50, n_max=1000,
                                                mu=4.0, sigma=2.0)
        block = x[4 * j : 4 * j + 4]
        np.testing.assert_array_equal(y[4 * j : 4 * j + 4], np.argmax(block.astype(np.float64) @ W + b, axis=1))
        assert not np.isin(block, train_x).any()
    np.testing.assert_array_equal(x, pop.test_set()[0])
    sx, sy = pop.train_sample(10)  # ⌈10/7⌉ = 2 first rows of each test client, 10 in all
    assert sx.shape == (10, 5)
    np.testing.assert_array_equal(sx[:2], pop.client_data(int(ids[0]))[0][:2])


def _fedprox(**training):
    return {"data": {"name": "fedprox", "fedprox": {"features": 20, "min_size": 20}},
            "training": {"local_steps": 2, "batch_size": 10, **training}}


@pytest.mark.parametrize("table, match", [
    ({"data": {"fedprox": {"alpha": -1.0}}}, r"data\.fedprox\.alpha must be a finite number ≥ 0\.0"),
    ({"data": {"fedprox": {"classes": 1}}}, r"data\.fedprox\.classes must be an integer ≥ 2"),
    ({"data": {"fedprox": {"min_size": 60, "max_size": 50}}}, r"data\.fedprox\.max_size must be an integer ≥ 60"),
    ({"data": {"fedprox": {"shared_model": 1}}}, r"data\.fedprox\.shared_model must be true or false"),
    ({"data": {"fedprox": {"alpah": 1.0}}}, r"unknown key data\.fedprox\.alpah \(did you mean data\.fedprox\.alpha\?\)"),
    ({"data": {"fedprox": 3}}, r"data\.fedprox must be a table"),
    ({"training": {"client_chunk": 0}}, r"training\.client_chunk must be an integer ≥ 1"),
])
def test_bad_population_keys_are_named(table, match):
    with pytest.raises(ValueError, match=match):
        scenario_from_dict(table)


def test_fedprox_runs_need_local_steps_a_small_batch_and_no_partition_kind():
    assert scenario_from_dict(_fedprox()).data.fedprox.features == 20
    with pytest.raises(ValueError, match=r"training\.local_steps must be set for data\.name = 'fedprox'"):
        scenario_from_dict({"data": {"name": "fedprox"}})
    with pytest.raises(ValueError, match=r"training\.batch_size must be ≤ data\.fedprox\.min_size = 20"):
        scenario_from_dict(_fedprox(batch_size=21))
    with pytest.raises(ValueError, match=r"partition\.kind = 'shards' does not apply to data\.name = 'fedprox'"):
        scenario_from_dict({**_fedprox(), "partition": {"kind": "shards"}})
    cfg = scenario_from_dict(_fedprox(), {"data.fedprox.alpha": 0.5, "training.client_chunk": 4})
    assert cfg.data.fedprox.alpha == 0.5 and cfg.training.client_chunk == 4
    assert scenario_from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg


def test_quick_scenario_runs_end_to_end_and_its_metrics_do_not_depend_on_the_chunk(tmp_path):
    from scenarios import api

    path = ROOT / "scenarios" / "examples" / "synthetic_quick.toml"
    chunked = api.run(path, out=tmp_path / "chunked", overrides={"run.rounds": 2})
    whole = api.run(path, out=tmp_path / "whole", overrides={"run.rounds": 2, "training.client_chunk": None})
    assert len(chunked) == 2
    for a, b in zip(chunked, whole):
        assert {k: v for k, v in a.items() if k != "wall_time_s"} == {k: v for k, v in b.items() if k != "wall_time_s"}
        assert 0.0 <= a["test_accuracy"] <= 1.0 and math.isfinite(a["train_loss"])
    record = json.loads((tmp_path / "chunked" / "config.json").read_text())
    assert record["derived"]["partition"]["kind"] == "population" and record["derived"]["M"] == 1000
    assert record["derived"]["D"] == 50 and record["derived"]["n_test"] == 50 * 20


def test_validation_split_holds_out_the_last_rows_of_every_client():
    """validation_fraction = f (docs/fl.md, [data.fedprox]): client k trains on its first D_k − round(f·D_k) rows,
    the same rows as with f = 0 (reference draws by hand); the validation set is the held-out rows, at most
    test_per_client each, of test_clients clients from the stream (seed, "synthetic-validation-clients"), and shares
    no row with any client's training rows nor with the test set. Bugs caught: held-out rows still trained on, the
    first rows held out (the training rows would then differ from f = 0's), the test set used for validation."""
    f, kw = 0.25, dict(features=6, classes=3, min_size=8, max_size=60, test_clients=5, test_per_client=4)
    pop = FedProxSynthetic(seed=3, M=500, validation_fraction=f, **kw)
    base = FedProxSynthetic(seed=3, M=500, **kw)
    for k in (0, 11, 499):
        rx, ry, *_ = _reference_client(3, k, alpha=1.0, beta=1.0, F=6, C=3, n_min=8, n_max=60, mu=4.0, sigma=2.0)
        n = rx.shape[0] - int(round(f * rx.shape[0]))
        x, y = pop.client_data(k)
        np.testing.assert_array_equal(x, rx[:n])
        np.testing.assert_array_equal(y, ry[:n])
        assert pop.size(k) == n and base.size(k) == rx.shape[0]
        np.testing.assert_array_equal(base.client_data(k)[0], rx)
    assert pop.min_train_size == 8 - 2 and LazyClients(pop).min_size == 6
    ids = pop.validation_client_ids()
    expected_ids = np.sort(stream(3, "synthetic-validation-clients").choice(500, size=5, replace=False))
    np.testing.assert_array_equal(ids, expected_ids)
    vx, vy = pop.validation_set()
    parts, start = [], 0
    for k in ids:
        rx, ry, *_ = _reference_client(3, int(k), alpha=1.0, beta=1.0, F=6, C=3, n_min=8, n_max=60, mu=4.0, sigma=2.0)
        n = rx.shape[0] - int(round(f * rx.shape[0]))
        held = min(rx.shape[0] - n, 4)
        np.testing.assert_array_equal(vx[start:start + held], rx[n:n + held])
        np.testing.assert_array_equal(vy[start:start + held], ry[n:n + held])
        assert not np.isin(vx[start:start + held], pop.client_data(int(k))[0]).any()
        start += held
    assert start == vx.shape[0] > 0
    assert not np.isin(vx, pop.test_set()[0]).any()
    with pytest.raises(ValueError, match=r"needs data\.validation_fraction > 0"):
        base.validation_set()


def test_fedprox_tuning_runs_evaluate_on_the_validation_split(tmp_path):
    """A run with data.validation_fraction > 0 and evaluate_on = "validation" (what floras tune sets) trains on the
    kept rows and reports the validation set's size as its n_test; the accountant's D is min_size − round(f·min_size)
    (the smallest client's training rows); a fraction that leaves fewer rows than a batch is a one-line error."""
    from scenarios import api

    path = ROOT / "scenarios" / "examples" / "synthetic_quick.toml"
    rows = api.run(path, out=tmp_path / "val", overrides={"run.rounds": 1, "data.validation_fraction": 0.2,
                                                          "data.evaluate_on": "validation"})
    assert 0.0 <= rows[-1]["test_accuracy"] <= 1.0
    record = json.loads((tmp_path / "val" / "config.json").read_text())
    cfg = scenario_from_dict(record["config"])
    pop = FedProxSynthetic(seed=cfg.run.seed, M=cfg.partition.clients, features=cfg.data.fedprox.features,
                           min_size=cfg.data.fedprox.min_size, max_size=cfg.data.fedprox.max_size,
                           test_clients=cfg.data.fedprox.test_clients, test_per_client=cfg.data.fedprox.test_per_client,
                           shared_model=cfg.data.fedprox.shared_model, validation_fraction=0.2)
    assert record["derived"]["n_test"] == pop.validation_set()[1].size
    n_min = cfg.data.fedprox.min_size
    assert record["derived"]["D"] == n_min - int(round(0.2 * n_min))
    with pytest.raises(ValueError, match=r"^data\.validation_fraction = 0\.9 leaves the smallest client") as info:
        scenario_from_dict(_fedprox(), {"data.validation_fraction": 0.9})
    assert "\n" not in str(info.value)
