"""Batched client training (model §1): equals sequential training, matches Keras, FedAvg step."""

import numpy as np
import pytest

from fl.data import load_digits, make_synthetic
from fl.federated import FederatedAveraging, NonFiniteModelError, sample_clients
from fl.models import build_model_spec
from fl.partition import iid_partition
from fl.training import Evaluator, VectorizedTrainer, batch_indices, local_schedule
from phy.schemes import make_aggregator
from phy.config import PhyConfig


def _setup(model="mlp", *, M=6, local_epochs=2, local_steps=None, lr=0.1, batch_size=8):
    if model == "mlp":
        ds = make_synthetic(seed=0, n_train=240, n_test=60, num_features=12, num_classes=3)
        spec = build_model_spec("mlp", input_shape=ds.input_shape, num_classes=3, hidden=(16, 8))
    else:
        ds = load_digits(seed=0)
        spec = build_model_spec("cnn", input_shape=ds.input_shape, num_classes=10, channels=(4, 6), kernel_size=3)
    part = iid_partition(ds.y_train, M, seed=0)
    trainer = VectorizedTrainer(spec, client_x=ds.x_train[part], client_y=ds.y_train[part], batch_size=batch_size,
                                lr=lr, local_epochs=local_epochs, local_steps=local_steps, seed=3)
    return ds, spec, part, trainer


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_batched_training_equals_clients_one_after_another(model):
    _, spec, _, trainer = _setup(model)
    w = spec.init(1)
    clients = np.array([4, 0, 2, 5])
    together, loss = trainer.train(w, clients, round_index=7)
    alone = [trainer.train(w, np.array([m]), round_index=7) for m in clients]
    sequential = np.concatenate([u for u, _ in alone])
    scale = np.abs(together).max()
    assert scale > 0
    # float32 arithmetic in both paths; only the batching of the products differs
    np.testing.assert_allclose(together, sequential, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(loss, [l[0] for _, l in alone], rtol=1e-5)


def test_training_matches_a_plain_numpy_sgd_reference():
    # One client, one hidden layer, local_steps = 3: recompute SGD by hand (float64).
    ds = make_synthetic(seed=1, n_train=40, n_test=10, num_features=5, num_classes=3)
    spec = build_model_spec("mlp", input_shape=(5,), num_classes=3, hidden=(4,))
    part = iid_partition(ds.y_train, 2, seed=0)
    tr = VectorizedTrainer(spec, client_x=ds.x_train[part], client_y=ds.y_train[part], batch_size=4, lr=0.5,
                           local_steps=3, seed=9)
    w0 = spec.init(2)
    upd, _ = tr.train(w0, np.array([1]), round_index=0)
    W1, b1, W2, b2 = (p.astype(np.float64).copy() for p in spec.unflatten(w0))
    rows = batch_indices(seed=9, round_index=0, clients=np.array([1]), D=20, batch_size=4, steps=3, epochs=1)[:, 0]
    X, Y = ds.x_train[part[1]].astype(np.float64), ds.y_train[part[1]]
    for r in rows:
        x, y = X[r], Y[r]
        h_pre = x @ W1 + b1
        h = np.maximum(h_pre, 0)
        z = h @ W2 + b2
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        g = (p - np.eye(3)[y]) / len(y)
        gW2, gb2 = h.T @ g, g.sum(0)
        gh = (g @ W2.T) * (h_pre > 0)
        gW1, gb1 = x.T @ gh, gh.sum(0)
        W1, b1, W2, b2 = W1 - 0.5 * gW1, b1 - 0.5 * gb1, W2 - 0.5 * gW2, b2 - 0.5 * gb2
    ref = np.concatenate([a.ravel() for a in (W1, b1, W2, b2)]) - w0
    np.testing.assert_allclose(upd[0], ref, atol=2e-6 * np.abs(ref).max())


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_batched_forward_pass_matches_keras(model):
    ds, spec, _, _ = _setup(model)
    w = spec.init(5)
    keras_model = spec.keras_model()
    keras_model.set_weights(spec.unflatten(w.astype(np.float32)))
    x = ds.x_test[:32]
    ref = keras_model(x, training=False).numpy()
    params = [p[None] for p in spec.unflatten(w.astype(np.float32))]
    got = spec.logits(params, x[None]).numpy()[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    assert spec.d == keras_model.count_params()


def test_model_dimension_of_the_source_mlp():
    spec = build_model_spec("mlp", input_shape=(28, 28, 1), num_classes=10)
    assert spec.d == 784 * 200 + 200 + 200 * 10 + 10


def test_local_schedule_and_batch_order():
    assert local_schedule(D=600, batch_size=50, local_epochs=1, local_steps=None) == (12, 1)
    assert local_schedule(D=26, batch_size=5, local_epochs=2, local_steps=None) == (10, 2)  # last partial batch dropped
    assert local_schedule(D=26, batch_size=5, local_epochs=None, local_steps=7) == (7, 2)
    with pytest.raises(ValueError, match="exactly one"):
        local_schedule(D=26, batch_size=5, local_epochs=1, local_steps=1)
    with pytest.raises(ValueError, match="batch_size"):
        local_schedule(D=4, batch_size=5, local_epochs=1, local_steps=None)
    idx = batch_indices(seed=0, round_index=3, clients=np.array([2, 9]), D=26, batch_size=5, steps=10, epochs=2)
    for k in range(2):
        for e in range(2):
            epoch = idx[5 * e : 5 * e + 5, k].ravel()
            assert np.unique(epoch).size == 25  # a permutation within each epoch
    steps = batch_indices(seed=0, round_index=3, clients=np.array([2, 9]), D=26, batch_size=5, steps=7, epochs=2)
    np.testing.assert_array_equal(steps, idx[:7])
    # a client's order depends on its id and the round only, not on who else is scheduled
    alone = batch_indices(seed=0, round_index=3, clients=np.array([9]), D=26, batch_size=5, steps=10, epochs=2)
    np.testing.assert_array_equal(alone[:, 0], idx[:, 1])


def test_client_sampling_without_replacement_and_keyed():
    a = sample_clients(seed=1, round_index=4, M=100, K=20)
    assert a.size == 20 and np.unique(a).size == 20 and a.min() >= 0 and a.max() < 100
    np.testing.assert_array_equal(a, sample_clients(seed=1, round_index=4, M=100, K=20))
    assert not np.array_equal(a, sample_clients(seed=1, round_index=5, M=100, K=20))


@pytest.mark.parametrize("normalization", ["paper", "clip"])
def test_ideal_aggregation_reproduces_plain_fedavg(normalization):
    _, spec, _, trainer = _setup("mlp")
    K = 3
    phy = PhyConfig(scheme="ideal", normalization=normalization, clip_norm=1e6 if normalization == "clip" else None)
    fedavg = FederatedAveraging(trainer=trainer, aggregator=make_aggregator(phy, K=K, d=spec.d, seed=0), M=6, K=K, seed=11)
    w = spec.init(0)
    for t in range(3):
        w_prev = w
        w, outcome = fedavg.step(w_prev, t)
        clients = sample_clients(seed=11, round_index=t, M=6, K=K)
        np.testing.assert_array_equal(outcome.clients, clients)
        updates, _ = trainer.train(w_prev, clients, t)
        w_ref = w_prev + updates.mean(axis=0)  # plain FedAvg from the same model
        # ideal aggregation normalizes and de-normalizes in float64: equal up to float64 rounding
        np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12 * np.abs(w_ref).max())
        assert outcome.contributors == K and outcome.agg_error < 1e-20


def test_divergent_training_stops_with_the_round_named():
    _, spec, _, trainer = _setup("mlp", lr=1e38)
    fedavg = FederatedAveraging(trainer=trainer, aggregator=make_aggregator(PhyConfig(scheme="ideal"), K=2, d=spec.d, seed=0),
                                M=6, K=2, seed=0)
    with pytest.raises(NonFiniteModelError, match="round 1: local training"):
        fedavg.step(spec.init(0), 0)


def test_evaluator_counts_accuracy_and_loss_over_chunks():
    ds, spec, _, _ = _setup("mlp")
    w = spec.init(3)
    whole = Evaluator(spec, ds.x_test, ds.y_test, chunk=10_000).evaluate(w)
    chunked = Evaluator(spec, ds.x_test, ds.y_test, chunk=7).evaluate(w)
    np.testing.assert_allclose(whole, chunked, rtol=1e-6)
    km = spec.keras_model()
    km.set_weights(spec.unflatten(w.astype(np.float32)))
    pred = km(ds.x_test, training=False).numpy().argmax(1)
    assert whole[1] == pytest.approx(np.mean(pred == ds.y_test))


def test_warm_up_traces_once_and_does_not_change_results():
    """warm_up moves tracing out of the first round: no retrace afterwards, identical updates (pure)."""
    ds, spec, part, trainer = _setup("mlp")
    w, clients = spec.init(2), np.array([1, 3, 4])
    fresh = trainer.train(w, clients, round_index=5)
    _, _, _, warmed = _setup("mlp")
    warmed.warm_up(len(clients))
    assert warmed.tracing_count() == 1
    again = warmed.train(w, clients, round_index=5)
    assert warmed.tracing_count() == 1  # the first real round traces nothing
    np.testing.assert_array_equal(again[0], fresh[0])
    np.testing.assert_array_equal(again[1], fresh[1])
    ev = Evaluator(spec, ds.x_test, ds.y_test, chunk=25)  # 60 examples: chunks of 25, 25, 10 (two shapes)
    ev.warm_up()
    count = ev._fn.experimental_get_tracing_count()
    assert count == 2
    ev.evaluate(w)
    assert ev._fn.experimental_get_tracing_count() == count


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_chunks_give_the_same_updates_bit_for_bit(model):
    # every client's batches come from its own stream, the batched graph computes clients
    # independently and odd calls are padded to even ones, so the chunk a client is trained in cannot
    # change a single bit (without the padding, odd chunks change some clients' float32 rounding in the
    # lazy-client test below)
    _, spec, _, trainer = _setup(model, M=12, local_epochs=1)
    w, clients = spec.init(4), np.array([11, 2, 7, 0, 5, 9, 3])
    ref_u, ref_l = trainer.train(w, clients, round_index=2)
    for chunk in (1, 3, 4):  # padded calls of 2, 4, 4 (and a last one of 2)
        _, _, _, t = _setup(model, M=12, local_epochs=1)
        t.client_chunk = chunk
        u, l = t.train(w, clients, round_index=2)
        np.testing.assert_array_equal(u, ref_u)
        np.testing.assert_array_equal(l, ref_l)
    t.client_chunk = 3
    assert t.chunks(7) == [3, 3, 1]
    parts = list(t.train_chunks(w, clients, round_index=2))
    assert [p.clients.tolist() for p in parts] == [[11, 2, 7], [0, 5, 9], [3]]
    assert all(p.updates.dtype == np.float64 and p.updates.shape == (len(p.clients), spec.d) for p in parts)
    np.testing.assert_array_equal(np.concatenate([p.updates for p in parts]), ref_u)
    np.testing.assert_array_equal(np.concatenate([p.local_loss for p in parts]), ref_l)


def _population(**kw):
    from fl.fedprox_synthetic import FedProxSynthetic

    return FedProxSynthetic(seed=1, M=10**6, features=9, classes=3, min_size=12, max_size=80, **kw)


def test_lazy_clients_train_as_their_stacked_data_and_independently_of_the_chunk():
    from fl.clients import LazyClients

    spec = build_model_spec("mlp", input_shape=(9,), num_classes=3, hidden=(6,))
    w, clients = spec.init(3), np.array([999_999, 5, 123_456, 77, 0])
    lazy = lambda chunk: VectorizedTrainer(spec, clients=LazyClients(_population()), batch_size=4, lr=0.05,  # noqa: E731
                                           local_steps=5, seed=2, client_chunk=chunk)
    ref_u, ref_l = lazy(None).train(w, clients, round_index=1)
    for chunk in (1, 2, 3):
        u, l = lazy(chunk).train(w, clients, round_index=1)
        np.testing.assert_array_equal(u, ref_u)
        np.testing.assert_array_equal(l, ref_l)
    # σ = 0: equal sizes D = min(12 + ⌊e^4⌋, 80) = 66; the same clients stacked give the same updates
    pop = _population(size_sigma=0.0)
    ids = np.array([3, 1, 4])
    data = [pop.client_data(int(k)) for k in range(5)]
    assert {x.shape[0] for x, _ in data} == {66}
    stacked = VectorizedTrainer(spec, client_x=np.stack([x for x, _ in data]), client_y=np.stack([y for _, y in data]),
                                batch_size=4, lr=0.05, local_steps=5, seed=2)
    on_demand = VectorizedTrainer(spec, clients=LazyClients(pop), batch_size=4, lr=0.05, local_steps=5, seed=2,
                                  client_chunk=2)
    np.testing.assert_array_equal(on_demand.train(w, ids, 0)[0], stacked.train(w, ids, 0)[0])


def test_unequal_sizes_draw_batches_from_each_clients_own_data():
    sizes = np.array([13, 40, 8])
    idx = batch_indices(seed=0, round_index=1, clients=np.array([4, 6, 8]), D=sizes, batch_size=4, steps=6)
    for j, (m, D) in enumerate(zip((4, 6, 8), sizes)):
        alone = batch_indices(seed=0, round_index=1, clients=np.array([m]), D=int(D), batch_size=4, steps=6)
        np.testing.assert_array_equal(idx[:, j], alone[:, 0])
        # epochs of ⌊D/B⌋ batches: every epoch a permutation's first ⌊D/B⌋·B entries, no repeats inside
        per = D // 4
        flat = idx[:, j].reshape(-1)
        assert flat.max() < D
        for e in range(0, 6, per):
            epoch = flat[4 * e : 4 * min(e + per, 6)]
            assert np.unique(epoch).size == epoch.size


def test_lazy_clients_refuse_local_epochs_and_large_batches():
    from fl.clients import LazyClients

    spec = build_model_spec("mlp", input_shape=(9,), num_classes=3, hidden=(6,))
    with pytest.raises(ValueError, match="training.local_steps must be set"):
        VectorizedTrainer(spec, clients=LazyClients(_population()), batch_size=4, lr=0.1, local_epochs=1, seed=0)
    with pytest.raises(ValueError, match=r"training.batch_size must be ≤ the examples per client D = 12"):
        VectorizedTrainer(spec, clients=LazyClients(_population()), batch_size=13, lr=0.1, local_steps=1, seed=0)
    with pytest.raises(ValueError, match="training.client_chunk"):
        VectorizedTrainer(spec, clients=LazyClients(_population()), batch_size=4, lr=0.1, local_steps=1, seed=0,
                          client_chunk=0)


def test_evaluator_accuracy_by_class_counts_each_label_separately():
    """A linear model (no hidden layer) on one-hot inputs predicts class map[f] for feature f, so each label's
    accuracy is known from the data alone: label c's examples whose feature maps to c, over label c's examples.
    A class absent from the set is NaN. Fails if hits were divided by the set size or binned by prediction."""
    from fl.models import build_model_spec

    spec = build_model_spec("mlp", input_shape=(4,), num_classes=4, hidden=())
    mapping = np.array([0, 1, 2, 0])  # feature → predicted class (class 3 never predicted, never present)
    W = np.zeros((4, 4))
    W[np.arange(4), mapping] = 5.0
    w = np.concatenate([W.ravel(), np.zeros(4)])
    f = np.array([0, 0, 1, 3, 2, 2, 1, 0, 3, 1, 2])  # each example's active feature
    y = np.array([0, 1, 1, 0, 2, 1, 0, 0, 2, 2, 2])  # labels: 0 ×4, 1 ×3, 2 ×4
    x = np.eye(4)[f]
    pred = mapping[f]
    want = np.array([np.mean(pred[y == c] == c) for c in range(3)] + [np.nan])  # 1, 1/3, 1/2
    for chunk in (100, 4):
        loss, acc, by_class = Evaluator(spec, x, y, chunk=chunk).evaluate_by_class(w)
        np.testing.assert_allclose(by_class, want)
        assert acc == pytest.approx(np.mean(pred == y))
    with pytest.raises(ValueError, match=r"labels must lie in 0\.\.3"):
        Evaluator(spec, x, np.where(y == 2, 4, y))
