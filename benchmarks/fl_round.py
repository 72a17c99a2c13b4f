"""Seconds per federated round and the compute floor, K = 20 of M = 100 on Fashion-MNIST (model §1, §8).

Measured in ONE process, repetitions interleaved (every repetition runs every contender once, in
turn), medians reported, so the ratios are comparable under a varying machine load:

* ``batched``: :class:`fl.training.VectorizedTrainer` — all K clients' local epoch in one
  ``tf.function`` call (per-client parameters stacked on a leading K axis);
* ``compiled_per_client``: the honest per-client peer — one Keras model, and each client's local
  epoch is one compiled ``tf.function`` (SGD with ``tf.GradientTape``), clients one after another,
  weights set and read back per client (what a careful TFF-style simulation does);
* ``keras_fit``: the usual per-client loop, ``set_weights`` + ``model.fit`` per client;
* ``floor``: the same forward + backward products of one round as plain batched TensorFlow ops on
  fixed tensors (no batch gather, no parameter update, no host copies). MLP: the five batched
  matrix products per step (x·W1, h·W2, hᵀ·δ2, δ2·W2ᵀ, xᵀ·δ1); CNN: the loss gradient of the
  batched forward pass (one network per client, unrolled) on a fixed batch;
* ``conv_candidates`` (CNN only): the floor's forward + backward with each batched-CNN form
  tried — every client's network written out on its own in one graph (what ``fl.models`` uses),
  one plain conv2d per client with pooling batched over K·B, one grouped conv2d (clients on the channel axis; its gradient exists only in oneDNN's CPU kernels,
  so it is reported as failed where oneDNN is off), a depthwise conv2d summed over input
  channels, im2col patches with a batched matrix product; run it with ``TF_ENABLE_ONEDNN_OPTS=0``
  and ``=1`` to see both CPU configurations (the header records which one ran);
* ``floras_round_N{20,30}``: a whole learning round of the run loop (training, FLORAS aggregation
  with the default path at L = 32, 15 dB, evaluation on the test set and a 10 000-example training
  subset) and ``channel_share`` = time in ``aggregator.aggregate`` / round time; for comparison the
  same updates are also aggregated by the fast path (``fast_path_channel_s``, not part of the round).

Usage::

    python benchmarks/fl_round.py [--reps 7] [--models mlp cnn] [--json FILE]
    python benchmarks/fl_round.py --dataset digits --clients 10 --per-round 4 --reps 1   # tiny check

A model that fails prints its error; the others' rows are still printed and written to ``--json``
(rewritten atomically after each model), and the exit status is then 1.

Prints the machine load (``os.getloadavg``), the TensorFlow devices and thread settings.
Needs the Fashion-MNIST IDX files (docs/fl.md) unless ``--dataset digits``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from types import SimpleNamespace

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np

import phy  # noqa: E402,F401  (TensorFlow's process defaults, phy/tf_runtime.py, before TensorFlow starts)


def _onednn():
    from tensorflow.python.util import _pywrap_util_port

    return "on" if _pywrap_util_port.IsMklEnabled() else "off"


def _error_line(exc) -> str:
    """The informative line of an exception (TensorFlow's start with "Graph execution error:")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.endswith(":") and not ln.startswith(("Detected at node", "File "))]
    return (useful or lines or [""])[0][:300]


def _median(v):
    return float(np.median(v)) if v else float("nan")


class CompiledPerClient:
    """Per-client loop: each client's local epoch is one compiled tf.function over a Keras model."""

    def __init__(self, spec, trainer, lr):
        import tensorflow as tf

        self.spec, self.trainer = spec, trainer
        self.model = spec.keras_model()
        self.vars = self.model.trainable_variables
        self.cx = trainer._x  # the trainer's stacked data, [M·D, ...] on the device
        self.cy = trainer._y
        lr = tf.constant(lr, tf.float32)

        @tf.function
        def epoch(rows):  # rows [S, B] global row indices
            for s in tf.range(tf.shape(rows)[0]):
                xb, yb = tf.gather(self.cx, rows[s]), tf.gather(self.cy, rows[s])
                with tf.GradientTape() as tape:
                    logits = self.model(xb, training=True)
                    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits))
                for v, g in zip(self.vars, tape.gradient(loss, self.vars)):
                    v.assign_sub(lr * g)

        self.epoch = epoch

    def train(self, w, clients, round_index):
        import tensorflow as tf

        rows = self.trainer.rows(clients, round_index)  # same batches as the batched trainer
        start = self.spec.unflatten(np.asarray(w, np.float32))
        out = np.empty((len(clients), self.spec.d))
        for j in range(len(clients)):
            for v, p in zip(self.vars, start):
                v.assign(p)
            self.epoch(tf.constant(rows[:, j, :].astype(np.int32)))
            out[j] = np.concatenate([v.numpy().ravel() for v in self.vars]) - w
        return out


def _floor_fn(spec, trainer, K, B, S, conv=None, update=False):
    """A tf.function running the round's forward+backward products on fixed tensors (``update``, MLP only: plus
    the SGD update W −= η·∇W of both weight matrices per step, on tf.Variables)."""
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((K, B, *spec.input_shape)).astype(np.float32))
    y = tf.constant(rng.integers(0, spec.num_classes, (K, B)).astype(np.int32))
    params = [tf.constant(rng.standard_normal((K, *p.shape)).astype(np.float32) * 0.01) for p in spec.params]
    if spec.name == "mlp" and len(spec.hidden) == 1:
        xf = tf.reshape(x, [K, B, -1])
        W1, W2 = params[0], params[2]
        if update:
            W1, W2 = tf.Variable(W1), tf.Variable(W2)
        d2 = tf.constant(rng.standard_normal((K, B, spec.num_classes)).astype(np.float32))

        @tf.function
        def floor():
            acc = tf.zeros([], tf.float32)
            for _ in tf.range(S):
                h = tf.nn.relu(tf.matmul(xf, W1))
                out = tf.matmul(h, W2)
                gW2 = tf.matmul(h, d2, transpose_a=True)
                d1 = tf.matmul(d2, W2, transpose_b=True)
                gW1 = tf.matmul(xf, d1, transpose_a=True)
                if update:
                    W1.assign_sub(1e-6 * gW1)
                    W2.assign_sub(1e-6 * gW2)
                acc += out[0, 0, 0] + gW2[0, 0, 0] + gW1[0, 0, 0]
            return acc

        return floor, "five batched matrix products per step" + (" and the update of both weight matrices" if update else "")

    @tf.function
    def floor():
        acc = tf.zeros([], tf.float32)
        for _ in tf.range(S):
            with tf.GradientTape() as tape:
                tape.watch(params)
                logits = spec.logits(params, x, conv=conv)
                total = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
            grads = tape.gradient(total, params)
            acc += tf.add_n([tf.reduce_sum(g[0]) for g in grads])
        return acc

    if update:
        raise ValueError("update=True is defined for the one-hidden-layer MLP floor only")
    return floor, "forward + backward of the batched model on a fixed batch"


def bench_model(name, args, ds, part):
    import keras
    import tensorflow as tf

    from fl.federated import FederatedAveraging, sample_clients
    from fl.models import build_model_spec
    from fl.training import Evaluator, VectorizedTrainer
    from phy.schemes import make_aggregator
    from phy.config import PhyConfig

    M, K, B, lr, seed = args.clients, args.per_round, args.batch_size, 0.005, 0
    cx, cy = ds.x_train[part], ds.y_train[part]
    spec = build_model_spec(name, input_shape=ds.input_shape, num_classes=ds.num_classes,
                            channels=tuple(args.cnn_channels), kernel_size=args.kernel_size)
    trainer = VectorizedTrainer(spec, client_x=cx, client_y=cy, batch_size=B, lr=lr, local_epochs=1, seed=seed)
    peer = CompiledPerClient(spec, trainer, lr)
    floor, floor_what = _floor_fn(spec, trainer, K, B, trainer.steps)
    candidates, cand_errors, cand_diff = {}, {}, {}
    if name == "cnn":  # forward + backward of the same fixed batch with each convolution kernel
        from cnn_candidates import conv_candidates

        base = None
        for cname, conv in conv_candidates().items():
            fn, _ = _floor_fn(spec, trainer, K, B, trainer.steps, conv=conv)
            try:
                value = float(fn())  # traces and runs once; a kernel missing on this build fails here
            except Exception as exc:  # noqa: BLE001 - a failing candidate is reported, the others measured
                cand_errors[cname] = f"{type(exc).__name__}: {_error_line(exc)}"
                print(f"conv candidate {cname}: {cand_errors[cname]}")
                continue
            base = value if base is None else base
            cand_diff[cname] = abs(value - base) / max(abs(base), 1e-30)
            candidates[cname] = fn
    model = spec.keras_model()
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    w0 = spec.init(seed)
    weights0 = spec.unflatten(w0.astype(np.float32))

    def fit_round(t):
        for m in sample_clients(seed=seed, round_index=t, M=M, K=K):
            model.set_weights(weights0)
            model.fit(cx[m], cy[m], batch_size=B, epochs=1, shuffle=True, verbose=0)

    sub = part.reshape(-1)[: min(10000, part.size)]
    ev_test, ev_train = Evaluator(spec, ds.x_test, ds.y_test), Evaluator(spec, ds.x_train[sub], ds.y_train[sub])
    key = bytes(range(32))
    runs = {}
    for N in args.floras_N:
        agg = make_aggregator(PhyConfig.make(scheme="floras", L=32, snr_db=15.0, floras={"N": N}), K=K, d=spec.d, seed=seed, key=key)
        fast = make_aggregator(PhyConfig.make(scheme="floras", L=32, snr_db=15.0, floras={"N": N, "path": "fast"}), K=K, d=spec.d, seed=seed, key=key)
        runs[N] = {"agg": agg, "fast": fast, "fedavg": FederatedAveraging(trainer=trainer, aggregator=agg, M=M, K=K, seed=seed),
                   "w": w0.copy(), "round": [], "channel": [], "fast_channel": [], "path": agg.link.path}

    def floras_round(N, t):
        r = runs[N]
        real = r["agg"].aggregate
        seen = {}

        def timed(updates, *, round_index, clients=None):
            s = time.perf_counter()
            out = real(updates, round_index=round_index, clients=clients)
            seen["s"] = time.perf_counter() - s
            seen["x"] = updates
            return out

        # the round hands the aggregator the gathered K×d updates (no aggregate_stream), timed on its own
        r["fedavg"].aggregator = SimpleNamespace(aggregate=timed, config=r["agg"].config)
        t0 = time.perf_counter()
        r["w"], _ = r["fedavg"].step(r["w"], t)
        ev_train.evaluate(r["w"])
        ev_test.evaluate(r["w"])
        return time.perf_counter() - t0, seen

    # warm-up: tracing of every tf.function, Sionna model, Keras fit graph
    clients0 = sample_clients(seed=seed, round_index=0, M=M, K=K)
    ref = trainer.train(w0, clients0, 0)[0]
    peer_diff = float(np.max(np.abs(peer.train(w0, clients0, 0) - ref)))  # same batches, same SGD: float32 rounding
    floor()
    if args.fit_reps > 0:
        fit_round(0)
    for N in runs:
        floras_round(N, 0)
    times = {"batched": [], "compiled_per_client": [], "keras_fit": [], "floor": []}
    cand_times: dict[str, list[float]] = {}
    for rep in range(1, args.reps + 1):
        clients = sample_clients(seed=seed, round_index=rep, M=M, K=K)
        for kind in times:
            if kind == "keras_fit" and rep > args.fit_reps:
                continue
            t0 = time.perf_counter()
            if kind == "batched":
                trainer.train(w0, clients, rep)
            elif kind == "compiled_per_client":
                peer.train(w0, clients, rep)
            elif kind == "floor":
                float(floor())
            else:
                fit_round(rep)
            times[kind].append(time.perf_counter() - t0)
        for cname, fn in candidates.items():
            t0 = time.perf_counter()
            float(fn())
            cand_times.setdefault(cname, []).append(time.perf_counter() - t0)
        for N, r in runs.items():
            dt, seen = floras_round(N, rep)
            r["round"].append(dt)
            r["channel"].append(seen["s"])
            s = time.perf_counter()
            r["fast"].aggregate(seen["x"], round_index=rep)
            r["fast_channel"].append(time.perf_counter() - s)
    med = {k: _median(v) for k, v in times.items()}
    out = {"model": name, "d": spec.d, "steps_per_round": trainer.steps, "floor_is": floor_what,
           "compiled_per_client_max_abs_diff": peer_diff, "max_abs_update": float(np.max(np.abs(ref))),
           "seconds": med, "samples": {k: len(v) for k, v in times.items()},
           "ratios": {"fit_over_batched": med["keras_fit"] / med["batched"],  # nan with --fit-reps 0
                      "compiled_per_client_over_batched": med["compiled_per_client"] / med["batched"],
                      "batched_over_floor": med["batched"] / med["floor"]},
           "floras": {}}
    if name == "cnn":
        out["conv_candidates"] = {
            "what": "forward + backward of one round's steps on a fixed batch with each convolution kernel (s)",
            "seconds": {c: _median(v) for c, v in cand_times.items()},
            "relative_diff_of_summed_gradients": cand_diff, "errors": cand_errors}
    for N, r in runs.items():
        rt, ch, fc = _median(r["round"]), _median(r["channel"]), _median(r["fast_channel"])
        out["floras"][f"N{N}"] = {"path": r["path"], "round_s": rt, "channel_s": ch,
                                   "channel_share": _median([c / t for c, t in zip(r["channel"], r["round"])]),
                                   "fast_path_channel_s": fc, "fast_path_share_if_used": fc / (rt - ch + fc)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7, help="interleaved repetitions (after one warm-up round)")
    ap.add_argument("--fit-reps", type=int, default=3, help="repetitions that include the (slow) Keras fit loop (0: skip it)")
    ap.add_argument("--batch-size", type=int, default=50)
    ap.add_argument("--models", nargs="+", default=["mlp", "cnn"])
    ap.add_argument("--cnn-channels", type=int, nargs="+", default=[8, 16], help="CNN convolution widths")
    ap.add_argument("--kernel-size", type=int, default=3, help="CNN kernel size")
    ap.add_argument("--dataset", default="fashion-mnist", choices=["fashion-mnist", "digits"])
    ap.add_argument("--clients", type=int, default=100, help="M")
    ap.add_argument("--per-round", type=int, default=20, help="K")
    ap.add_argument("--floras-N", type=int, nargs="+", default=[20, 30], help="FLORAS set sizes (L = 32, 15 dB)")
    ap.add_argument("--threads", type=int, default=None,
                    help="TensorFlow intra-op threads (sweep workers use 1; with 1 also set OPENBLAS_NUM_THREADS=1 "
                         "before starting, as sweeps do)")
    ap.add_argument("--json", dest="json_path", metavar="FILE", help="write the results as JSON")
    args = ap.parse_args()

    import tensorflow as tf

    if args.threads is not None:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)

    from fl.data import load_dataset
    from fl.partition import iid_partition

    ds = load_dataset(args.dataset, seed=0)
    part = iid_partition(ds.y_train, args.clients, seed=0)
    gpus = [d.name for d in tf.config.list_physical_devices("GPU")]
    head = {"dataset": args.dataset, "M": args.clients, "K": args.per_round, "D": int(part.shape[1]),
            "B": args.batch_size, "E": "1 epoch", "reps": args.reps, "fit_reps": args.fit_reps,
            "cpus": os.cpu_count(), "gpus": gpus, "tensorflow": tf.__version__,
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads() or "default",
            "thread_env": {v: os.environ.get(v) for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")},
            "onednn": _onednn(), "TF_ENABLE_ONEDNN_OPTS": os.environ.get("TF_ENABLE_ONEDNN_OPTS"),
            "TF_CPU_ALLOCATOR_USE_BFC": os.environ.get("TF_CPU_ALLOCATOR_USE_BFC"),
            "load_before": list(os.getloadavg())}
    print(json.dumps(head))
    results, failed = [], []
    for name in args.models:
        try:
            results.append(bench_model(name, args, ds, part))
        except Exception as exc:  # noqa: BLE001 - one failing model must not lose the others' rows
            msg = f"{type(exc).__name__}: {_error_line(exc)}"
            print(f"model {name}: FAILED ({msg})")
            failed.append({"model": name, "error": msg})
        head["load_after"] = list(os.getloadavg())
        if args.json_path:
            _write_json(args.json_path, {**head, "models": results, "failed": failed})
    head["load_after"] = list(os.getloadavg())
    print(f"load average after: {head['load_after']}  (cpus {head['cpus']}, gpus {gpus or 'none'})")
    print(f"{'model':5} {'d':>7} {'batched':>8} {'compiled':>9} {'fit':>7} {'floor':>7} "
          f"{'fit/b':>6} {'comp/b':>7} {'b/floor':>8}   FLORAS round (channel share, fast path share)")
    for r in failed:
        print(f"{r['model']:5} FAILED: {r['error']}")
    for r in results:
        s, q = r["seconds"], r["ratios"]
        fl = "  ".join(f"N={k[1:]}: {v['round_s']:.3f}s ({100 * v['channel_share']:.1f}%, {100 * v['fast_path_share_if_used']:.1f}%)"
                       for k, v in r["floras"].items())
        print(f"{r['model']:5} {r['d']:>7} {s['batched']:>8.4f} {s['compiled_per_client']:>9.4f} {s['keras_fit']:>7.3f} "
              f"{s['floor']:>7.4f} {q['fit_over_batched']:>6.1f} {q['compiled_per_client_over_batched']:>7.2f} "
              f"{q['batched_over_floor']:>8.2f}   {fl}")
    print("seconds: medians of interleaved repetitions, local training of K clients only (FLORAS round: training + "
          "aggregation with the default path + evaluation)")
    for r in results:
        for cname, sec in r.get("conv_candidates", {}).get("seconds", {}).items():
            print(f"  {r['model']} conv candidate {cname:34} {sec:8.4f} s  "
                  f"({sec / r['seconds']['compiled_per_client']:.2f}x the compiled per-client loop)")
        for cname, err in r.get("conv_candidates", {}).get("errors", {}).items():
            print(f"  {r['model']} conv candidate {cname:34} FAILED: {err}")
    if args.json_path:
        _write_json(args.json_path, {**head, "models": results, "failed": failed})
    if failed:
        raise SystemExit(1)


def _write_json(path, payload):
    """Write the results so far atomically (a temporary beside the target, then a rename)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=2)
        os.replace(tmp, path)
    finally:  # a failure between the write and the rename leaves no temporary behind
        if os.path.exists(tmp):
            os.unlink(tmp)


if __name__ == "__main__":
    main()
