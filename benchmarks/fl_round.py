"""Seconds per federated round, K = 20 of M = 100, Fashion-MNIST (SPEC §8 setting).

For the MLP (784-200-10) and the small CNN, in one run:

* ``vectorized``: :class:`fl.training.VectorizedTrainer` (all K clients in one batched
  TensorFlow computation per local step);
* ``keras fit``: the usual per-client loop — ``set_weights`` + ``model.fit`` for each client;
* a full FLORAS round of the run loop (training + aggregation + evaluation of the global model
  on the test set and the training subset) and the share of it spent in the channel
  simulation (``aggregator.aggregate``).

Usage: ``python benchmarks/fl_round.py [--rounds 5] [--batch-size 50] [--models mlp cnn]``
(IID partition, E = 1 local epoch of D = 600 examples, η = 0.005). Needs the Fashion-MNIST IDX
files (see docs/fl.md).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per measurement (after one warm-up round)")
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    ap.add_argument("--fit-rounds", type=int, default=2, help="timed rounds of the Keras fit loop")
    ap.add_argument("--cnn-channels", type=int, nargs="+", default=[8, 16], help="CNN convolution widths")
    ap.add_argument("--kernel-size", type=int, default=3, help="CNN kernel size")
    args = ap.parse_args()

    import keras
    import tensorflow as tf

    from fl.data import load_dataset
    from fl.federated import FederatedAveraging, sample_clients
    from fl.models import build_model_spec
    from fl.partition import iid_partition
    from fl.training import Evaluator, VectorizedTrainer
    from phy.aggregation import make_aggregator
    from phy.config import PhyConfig

    M, K, B, lr, seed = 100, 20, args.batch_size, 0.005, 0
    ds = load_dataset("fashion-mnist", seed=seed)
    part = iid_partition(ds.y_train, M, seed=seed)
    cx, cy = ds.x_train[part], ds.y_train[part]
    print(f"Fashion-MNIST, K = {K} of M = {M}, D = {part.shape[1]}, B = {B}, E = 1 epoch, "
          f"threads: intra-op {tf.config.threading.get_intra_op_parallelism_threads() or 'default'}, cpus {os.cpu_count()}")
    rows = []
    for name in args.models:
        spec = build_model_spec(name, input_shape=ds.input_shape, num_classes=10,
                                channels=tuple(args.cnn_channels), kernel_size=args.kernel_size)
        d = spec.d
        trainer = VectorizedTrainer(spec, client_x=cx, client_y=cy, batch_size=B, lr=lr, local_epochs=1, seed=seed)
        w = spec.init(seed)
        trainer.train(w, sample_clients(seed=seed, round_index=0, M=M, K=K), 0)  # trace
        t0 = time.perf_counter()
        for t in range(1, args.rounds + 1):
            trainer.train(w, sample_clients(seed=seed, round_index=t, M=M, K=K), t)
        vec = (time.perf_counter() - t0) / args.rounds

        model = spec.keras_model()
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        weights = spec.unflatten(w.astype(np.float32))

        def fit_round(t):
            for m in sample_clients(seed=seed, round_index=t, M=M, K=K):
                model.set_weights(weights)
                model.fit(cx[m], cy[m], batch_size=B, epochs=1, shuffle=True, verbose=0)

        fit_round(0)
        t0 = time.perf_counter()
        for t in range(1, args.fit_rounds + 1):
            fit_round(t)
        fit = (time.perf_counter() - t0) / args.fit_rounds

        phy = PhyConfig(scheme="floras", N=30, L=32, snr_db=20.0)
        agg = make_aggregator(phy, K=K, d=d, seed=seed, key=bytes(range(32)))
        timed = {"agg": 0.0}
        real = agg.aggregate

        def aggregate(updates, *, round_index):
            s = time.perf_counter()
            out = real(updates, round_index=round_index)
            timed["agg"] += time.perf_counter() - s
            return out

        agg.aggregate = aggregate
        fedavg = FederatedAveraging(trainer=trainer, aggregator=agg, M=M, K=K, seed=seed)
        ev_test = Evaluator(spec, ds.x_test, ds.y_test)
        sub = part.reshape(-1)[:10000]
        ev_train = Evaluator(spec, ds.x_train[sub], ds.y_train[sub])
        w, _ = fedavg.step(w, 0)
        ev_test.evaluate(w), ev_train.evaluate(w)
        timed["agg"] = 0.0
        t0 = time.perf_counter()
        for t in range(1, args.rounds + 1):
            w, _ = fedavg.step(w, t)
            ev_train.evaluate(w)
            ev_test.evaluate(w)
        full = (time.perf_counter() - t0) / args.rounds
        share = timed["agg"] / args.rounds / full
        rows.append((name, d, vec, fit, fit / vec, full, share))

    print(f"{'model':6} {'d':>8} {'vectorized s/round':>19} {'keras fit s/round':>18} {'speed-up':>9} "
          f"{'FLORAS round s':>15} {'channel share':>14}")
    for name, d, vec, fit, up, full, share in rows:
        print(f"{name:6} {d:8d} {vec:19.3f} {fit:18.3f} {up:8.1f}x {full:15.3f} {100 * share:13.1f}%")
    print("vectorized/keras fit: local training only; FLORAS round: training + FLORAS aggregation (N = 30, L = 32, "
          "20 dB) + evaluation on the 10 000 test and 10 000 training-subset examples.")


if __name__ == "__main__":
    main()
