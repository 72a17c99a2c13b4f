"""benchmarks/population_round.py's layers of the trainer's time measure the trainer's own computation.

The "fixed batch" layer mirrors :meth:`fl.training.VectorizedTrainer._train_graph` without its gathers; if the
mirror drifted from the trainer (a missing bias update, another loss, a different learning rate) the breakdown
would time something else. Fed the batch the trainer gathers at every step, it must give the trainer's updates.
"""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_fixed_batch_layer_computes_the_trainers_updates_and_the_cache_returns_the_same_batches():
    import tensorflow as tf

    from fl.clients import LazyClients
    from fl.fedprox_synthetic import FedProxSynthetic
    from fl.models import build_model_spec
    from fl.training import VectorizedTrainer
    from population_round import _fixed_batch_step, _Pregenerated

    population = FedProxSynthetic(seed=3, M=40)
    spec = build_model_spec("mlp", input_shape=population.input_shape, num_classes=10, hidden=(16,))
    K, B, S, lr = 4, 5, 3, 0.05
    trainer = VectorizedTrainer(spec, clients=LazyClients(population), batch_size=B, lr=lr, local_steps=S, seed=3)
    ids = np.array([2, 7, 11, 30])
    x, y, rows = trainer.clients.batches(ids, trainer.local_rows(ids, 0))
    same = np.repeat(rows[:1], S, axis=0)  # the step-0 batch at every step: what the fixed-batch layer computes
    w = spec.init(3)
    upd, _ = trainer._fn(K)(tf.constant(w.astype(np.float32)), tf.constant(x), tf.constant(y),
                            tf.constant(same.astype(np.int32)), tf.constant(lr, tf.float32))
    mirror = _fixed_batch_step(spec, K, B, S, lr=lr, batch=(x[rows[0]], y[rows[0]]), w=w)()
    assert np.abs(upd.numpy()).max() > 1e-3  # the steps moved the model
    np.testing.assert_allclose(mirror.numpy(), upd.numpy(), rtol=1e-5, atol=1e-6)
    # a wrong learning rate in the mirror is caught by the same comparison
    other = _fixed_batch_step(spec, K, B, S, lr=2 * lr, batch=(x[rows[0]], y[rows[0]]), w=w)()
    assert np.abs(other.numpy() - upd.numpy()).max() > 1e-3

    # the pre-generated clients hand the trainer the very batches the population generates
    cached = _Pregenerated(trainer.clients, trainer, ids, [2, 2])
    for part in (ids[:2], ids[2:]):
        got, want = cached.batches(part, None), trainer.clients.batches(part, trainer.local_rows(part, 0))
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
