"""PriFedSync (model §9.4): per-example clipping, the noise std, the record-level accountant, the mode's
configuration checks and the quick scenario end to end."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

ROOT = Path(__file__).resolve().parents[1]


def _tiny_spec():
    from fl.models import build_model_spec

    return build_model_spec("mlp", input_shape=(3,), num_classes=3, hidden=(4,))


def _manual_grad(w_flat, x, y):
    """Cross-entropy gradient of the 3-4-3 ReLU MLP for one example, by hand (back-propagation in numpy)."""
    W1, b1 = w_flat[:12].reshape(3, 4), w_flat[12:16]
    W2, b2 = w_flat[16:28].reshape(4, 3), w_flat[28:31]
    a = x @ W1 + b1
    h = np.maximum(a, 0.0)
    z = h @ W2 + b2
    p = np.exp(z - z.max())
    p /= p.sum()
    dz = p - np.eye(3)[y]
    dh = (W2 @ dz) * (a > 0)
    return np.concatenate([np.outer(x, dh).ravel(), dh, np.outer(h, dz).ravel(), dz])


def test_per_example_gradients_match_manual_backprop_and_clipping_bounds_each_norm():
    import tensorflow as tf

    from fl.prifedsync_step import clip_examples, per_example_gradients

    spec = _tiny_spec()
    assert spec.d == 31
    rng = np.random.default_rng(3)
    K, B = 2, 6
    w = rng.normal(0, 1.0, (K, spec.d))
    x = rng.normal(0, 2.0, (K, B, 3))
    y = rng.integers(0, 3, (K, B))
    g, _ = per_example_gradients(spec, tf.constant(w, tf.float32), tf.constant(x, tf.float32), tf.constant(y, tf.int32))
    g = g.numpy()
    manual = np.array([[_manual_grad(w[k], x[k, i], y[k, i]) for i in range(B)] for k in range(K)])
    np.testing.assert_allclose(g, manual, rtol=1e-4, atol=1e-5)  # float32 against float64
    norms = np.linalg.norm(manual, axis=-1)
    C = float(np.median(norms))  # half of the examples are clipped, half are not
    clipped, _ = clip_examples(tf.constant(g), C)
    clipped = clipped.numpy()
    assert np.all(np.linalg.norm(clipped, axis=-1) <= C * (1 + 1e-5))
    expect = manual * np.minimum(1.0, C / norms)[..., None]
    np.testing.assert_allclose(clipped, expect, rtol=1e-4, atol=1e-5)
    assert (norms > C).sum() >= 4 and (norms < C).sum() >= 4


def test_noise_std_is_sigma_c_over_b():
    """g̃ − Σḡ/B = σC ξ / B: its sample std over n = K·d coordinates estimates σC/B with relative standard
    error 1/√(2n) = 0.35 % (n = 40 000); 5 standard errors, 1.8 %, separates it from σC/√B (B = 4: ×2)."""
    import tensorflow as tf

    from fl.prifedsync_step import clip_examples, privatise

    K, B, d, C, sigma = 2, 4, 20000, 0.7, 1.3
    g = tf.constant(np.random.default_rng(1).normal(0, 1, (K, B, d)), tf.float32)
    clipped, _ = clip_examples(g, C)
    noise = tf.random.stateless_normal([K, d], seed=[4, 2])
    gt = privatise(clipped, noise, clip_norm=C, noise_multiplier=sigma).numpy()
    resid = gt - clipped.numpy().sum(axis=1) / B
    target = sigma * C / B
    assert abs(resid.std() / target - 1) < 5 / math.sqrt(2 * K * d)
    assert abs(resid.mean()) < 5 * target / math.sqrt(K * d)


def test_trainer_without_noise_is_clipped_adam_on_its_batches():
    """σ = 0: the trainer's S steps equal clipped Adam written out in numpy on the same batches."""
    from fl.clients import StackedClients
    from fl.prifedsync import PriFedSyncTrainer, client_batches
    from scenarios.config.tables import PriFedSyncConfig

    spec = _tiny_spec()
    rng = np.random.default_rng(5)
    M, D, B, S = 3, 10, 4, 3
    xs, ys = rng.normal(0, 2, (M, D, 3)).astype(np.float32), rng.integers(0, 3, (M, D))
    cfg = PriFedSyncConfig(clip_norm=0.5, noise_multiplier=1e-30, weight_decay=0.01)
    tr = PriFedSyncTrainer(spec, clients=StackedClients(xs, ys), batch_size=B, steps=S, lr=0.05, config=cfg, seed=9)
    clients = np.array([2, 0])
    w0 = rng.normal(0, 1, (2, spec.d)).astype(np.float32)
    zeros = np.zeros_like(w0)
    w, m, v, tau, _ = tr.train(w0, zeros, zeros, np.zeros(2, np.float32), clients, 4)
    rows = client_batches(seed=9, round_index=4, clients=clients, D=D, batch_size=B, steps=S)
    for k, j in enumerate(clients):
        wk, mk, vk = w0[k].astype(np.float64), np.zeros(spec.d), np.zeros(spec.d)
        for s in range(S):
            gs = np.array([_manual_grad(wk, xs[j, r], ys[j, r]) for r in rows[s, k]])
            gs *= np.minimum(1.0, 0.5 / np.linalg.norm(gs, axis=1))[:, None]
            g = gs.mean(axis=0) + 0.01 * wk
            mk = 0.9 * mk + 0.1 * g
            vk = 0.999 * vk + 0.001 * g * g
            wk = wk - 0.05 * (mk / (1 - 0.9 ** (s + 1))) / (np.sqrt(vk / (1 - 0.999 ** (s + 1))) + 1e-8)
        np.testing.assert_allclose(w[k], wk, rtol=1e-3, atol=1e-4)
    assert np.all(tau == S)


def test_batches_are_uniform_draws_without_replacement():
    """Each step's batch is B distinct rows; over 2000 steps every row's inclusion frequency is B/D = 0.3
    within 5 binomial standard errors √(0.3·0.7/2000) = 0.0102."""
    from fl.prifedsync import client_batches

    rows = client_batches(seed=0, round_index=0, clients=np.array([7]), D=10, batch_size=3, steps=2000)[:, 0]
    assert all(len(set(r)) == 3 for r in rows)
    freq = np.bincount(rows.ravel(), minlength=10) / 2000
    assert np.all(np.abs(freq - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 2000))


def _gdp_epsilon(mu, delta):
    """ε of G_μ at δ, from δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor. 2.13)."""
    return brentq(lambda e: norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta, 0, 500)


def test_accountant_against_independent_computations():
    """rdp: dp_accounting's sampled Gaussian without replacement (replace-one; noise multiplier σ/2 for the
    sensitivity 2C), composed S·t times. fdp with B = D: G_{2√(S·t)/σ} exactly (closed form); with B < D it is
    amplified, below both that and the RDP bound."""
    import dp_accounting as dpa
    from dp_accounting import rdp

    from privacy.prifedsync import PriFedSyncAccountant
    from privacy.rdp import DEFAULT_ORDERS

    sigma, B, D, S, t, delta = 3.0, 8, 60, 5, 4, 1e-5
    ours = PriFedSyncAccountant(noise_multiplier=sigma, batch_size=B, examples=D, steps=S, delta=delta)
    ref = rdp.RdpAccountant(orders=list(DEFAULT_ORDERS), neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    ref.compose(dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(D, B, dpa.GaussianDpEvent(sigma / 2)), S * t))
    eps_rdp = ours.epsilon(rounds=t)
    assert eps_rdp == pytest.approx(ref.get_epsilon(delta), rel=1e-9)
    assert ours.epsilon(rounds=2 * t) > eps_rdp  # rounds compose
    full = PriFedSyncAccountant(noise_multiplier=sigma, batch_size=D, examples=D, steps=S, delta=delta, accountant="fdp")
    unsampled = _gdp_epsilon(2 * math.sqrt(S * t) / sigma, delta)
    assert full.epsilon(rounds=t) == pytest.approx(unsampled, rel=1e-6)
    sampled = PriFedSyncAccountant(noise_multiplier=sigma, batch_size=B, examples=D, steps=S, delta=delta,
                                   accountant="fdp").epsilon(rounds=t)
    assert sampled < min(unsampled, eps_rdp)


def _config(**over):
    from scenarios.config.loading import load_scenario

    return load_scenario(ROOT / "scenarios/examples/digits_prifedsync.toml", over)


@pytest.mark.parametrize("key,value,message", [
    ("model.name", "cnn", "model.name = 'cnn' is not supported"),
    ("phy.scheme", "floras", "set phy.scheme = 'ideal'"),
    ("privacy.level", "client", "set privacy.level = 'item'"),
    ("privacy.accountant", "pld", "privacy.accountant = 'pld' is not supported"),
    ("training.mode", "prifed", "training.mode must be one of {fedavg, prifedsync}"),
    ("training.prifedsync.mix", 1.5, "training.prifedsync.mix must be a finite number ≥ 0.0 and ≤ 1.0"),
    ("training.prifedsync.noise_multiplier", 0, "training.prifedsync.noise_multiplier must be a finite number > 0.0"),
    ("training.prifedsync.clipnorm", 1.0, "did you mean training.prifedsync.clip_norm?"),
])
def test_configuration_errors_name_the_key(key, value, message):
    with pytest.raises(ValueError) as exc:
        _config(**{key: value}).validate()
    assert message in str(exc.value)


def test_quick_scenario_end_to_end(tmp_path):
    """The example trains; its ε column is the accountant's worst case over S·t steps; states are kept for the
    clients seen only; on the non-IID shards the personalised models beat the global model on the clients'
    own test examples (digits, seed 0: 0.68 against 0.30 after 15 rounds, a margin far above the run's noise)."""
    import csv

    from privacy.prifedsync import PriFedSyncAccountant
    from scenarios.runs.run import run_scenario

    config = _config()
    summary = run_scenario(config, tmp_path / "run", progress=False)
    with open(tmp_path / "run" / "metrics.csv") as fh:
        rows = list(csv.DictReader(fh))
    with open(tmp_path / "run" / "prifedsync.csv") as fh:
        personal = list(csv.DictReader(fh))
    assert len(rows) == len(personal) == 15
    D = 2 * (1347 // 40)  # digits: 1347 training rows (1797, 25 % test) in 2M = 40 label shards, 2 per client
    acc = PriFedSyncAccountant(noise_multiplier=1.0, batch_size=16, examples=D, steps=8, delta=1e-5)
    assert float(rows[-1]["epsilon"]) == pytest.approx(acc.epsilon(rounds=15), rel=1e-9)
    assert summary["final_epsilon"] == pytest.approx(acc.epsilon(rounds=15), rel=1e-9)
    assert [int(r["clients_seen"]) for r in personal][0] == 10  # K = 10 clients seen after round 1
    last = personal[-1]
    assert float(last["personal_accuracy"]) > float(last["global_accuracy"]) + 0.15
    assert float(last["personal_accuracy"]) > 0.55  # above guessing among a client's own (mostly 2) classes


def test_synchronisation_mixes_each_clients_model_with_the_new_global_model():
    """h_{t+1} = h_t + mean_j (w̃_j − h_t) and w^(j) ← (1 − λ) w̃_j + λ h_{t+1}, for the sampled clients only; an
    unseen client starts from h_t and a seen one from its own model (fake trainer and ideal-mean aggregator)."""
    from types import SimpleNamespace

    from fl.federated import sample_clients
    from fl.prifedsync import PriFedSync

    starts = []

    class Trainer:
        def train(self, w, m, v, tau, clients, round_index):
            starts.append(w.copy())
            out = (w + 1.0 + clients[:, None]).astype(np.float32)  # client j moves every coordinate by 1 + j
            return out, m + 1, v + 2, tau + 3, np.zeros(len(clients))

    class Mean:
        def aggregate(self, updates, *, round_index, clients):
            return SimpleNamespace(mean_estimate=updates.mean(axis=0), error=0.0, contributors=len(updates), diagnostics={})

    loop = PriFedSync(trainer=Trainer(), aggregator=Mean(), M=6, K=2, seed=2, mix=0.25)  # round 1: one seen, one new
    h0 = np.zeros(3)
    h1, outcome = loop.step(h0, 0)
    ids = sample_clients(seed=2, round_index=0, M=6, K=2)
    np.testing.assert_array_equal(outcome.clients, ids)
    np.testing.assert_allclose(starts[0], 0.0)  # unseen clients start from h_0
    np.testing.assert_allclose(h1, np.full(3, 1.0 + ids.mean()))
    assert sorted(loop.states) == sorted(ids.tolist())  # state for the clients seen only
    for j in ids:
        w, m, v, tau = loop.states[int(j)]
        np.testing.assert_allclose(w, 0.75 * (1.0 + j) + 0.25 * h1, rtol=1e-6)
        assert m[0] == 1 and v[0] == 2 and tau == 3
    h2, _ = loop.step(h1, 1)
    ids2 = sample_clients(seed=2, round_index=1, M=6, K=2)
    assert {int(j) in ids for j in ids2} == {True, False}
    for k, j in enumerate(ids2):  # a client seen in round 1 starts from its own model, a new one from h_1
        expect = (0.75 * (1.0 + j) + 0.25 * h1) if int(j) in ids else h1
        np.testing.assert_allclose(starts[1][k], expect, rtol=1e-6)
