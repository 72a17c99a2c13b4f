"""Wall time and peak memory of one federated round on the FedProx population (model §1, §8).

One round of :class:`fl.federated.FederatedAveraging` (``--scheme``, default ideal): K clients sampled of M
(FedProx Synthetic(1, 1), 784 features, 10 classes, clients generated when sampled), the source's
784-200-10 MLP (d = 159 010), ``--steps`` local steps of ``--batch`` examples, the trainer in chunks
of ``--chunk`` clients (``training.client_chunk``). Peak memory is the process's maximum resident set
(``resource.getrusage``), so run one chunk size per process::

    python benchmarks/population_round.py --chunk 100 --json chunk100.json
    python benchmarks/population_round.py --chunk 1000 --json chunk1000.json

Reported: the setup (population, model, aggregator), the tracing (``warm_up``: one training pass
of one chunk of each size, on the first clients), the data generation of the round's K clients alone,
the training alone (``VectorizedTrainer.train``, generation included) and the whole round
(``FederatedAveraging.step``: training and aggregation), the peak RSS after setup, after the warm-up
(the trainer at one chunk), after the training alone (+ the [K, d] updates) and at the end (+ the
aggregator), and the machine load (``os.getloadavg``) before and after. The round streams the trainer's
chunks into the aggregator's running sums (``aggregate_stream``), so it holds O(chunk·d) updates; the
training-alone measurement (``VectorizedTrainer.train``) still gathers a [K, d] array, so ``--round-only``
skips it when the round's own peak is wanted. One scheme per process (peak RSS is per process);
``--schemes`` runs one child process per scheme (clip normalization, R = 1) and writes their rows together::

    python benchmarks/population_round.py --chunk 100 --schemes ideal,floras,channel-inversion,central-gaussian,ddgauss \
        --json docs/bench/population_round_streaming.json

``--floor-reps R`` adds the trainer against its compute floor at this K (model §8): R interleaved repetitions of
(the round's training alone, ``VectorizedTrainer.train_chunks`` as a streaming round consumes it; the same
clients' data generation alone; the floor,
``benchmarks/fl_round.py``'s five batched matrix products per local step on fixed tensors, run once per chunk at
the chunk's size), medians reported with ``(training − generation)/floor``, the trainer's overhead above the
products it cannot avoid, and that overhead broken into layers (``breakdown_s``): the SGD update of the weight
matrices; biases, loss, GradientTape and tiling on a fixed batch; the per-step batch gathers (the trainer's own
graph on inputs converted beforehand); the host side (conversion in, each chunk's float64 copy out); and, apart,
``train`` gathering every chunk into one [K, d] float64 array. Generation (FedProx's
per-client draws) is the population's cost, not the trainer's::

    python benchmarks/population_round.py --chunk 100 --floor-reps 3 --json docs/bench/population_round_floor.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


# one configuration per scheme: clip normalization (every scheme streams with it), R = 1; FLORAS with N = L = 1 024 > K
SCHEMES = {
    "ideal": {},
    "floras": {"L": 1024, "floras": {"N": 1024}},
    "channel-inversion": {"snr_db": 20.0},
    "central-gaussian": {"central-gaussian": {"noise_multiplier": 0.5}},
    "analog-gaussian": {"snr_db": 20.0, "analog-gaussian": {"noise_multiplier": 0.5}},
    "ddgauss": {"ddgauss": {"bits": 20, "local_std": 0.05}},
    "sqsgd": {"sqsgd": {"levels": 4, "epsilon0": 4.0}},
}


def _phy_config(scheme: str):
    from phy.config import PhyConfig

    if scheme not in SCHEMES:
        raise SystemExit(f"--scheme must be one of {', '.join(SCHEMES)} (got {scheme!r})")
    return PhyConfig.make(scheme=scheme, normalization="clip", clip_norm=1.0, **SCHEMES[scheme])


def _run_schemes(args, argv) -> int:
    """One child process per scheme (``--round-only``), their JSON rows collected into one file."""
    import subprocess
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scheme in args.schemes.split(","):
            out = Path(tmp) / f"{scheme}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--scheme", scheme, "--round-only", "--json", str(out),
                   "--M", str(args.M), "--K", str(args.K), "--steps", str(args.steps), "--batch", str(args.batch),
                   "--seed", str(args.seed)] + ([] if args.chunk is None else ["--chunk", str(args.chunk)])
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            rows.append(json.loads(out.read_text()))
            print(f"{scheme}: round {rows[-1]['round_s']:.1f} s, peak RSS {rows[-1]['peak_rss_mb']:.0f} MB", flush=True)
    text = json.dumps({"rows": rows}, indent=1)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


def _versus_floor(trainer, spec, w, clients, args) -> dict:
    """Medians over ``args.floor_reps`` interleaved repetitions: training alone, generation alone, the floor."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from fl_round import _floor_fn

    chunks = trainer.chunks(args.K)
    floors = {c: _floor_fn(spec, trainer, c, args.batch, args.steps)[0] for c in sorted(set(chunks))}
    for f in floors.values():
        float(f())  # trace once

    def generation():
        start = 0
        for c in chunks:
            ids = clients[start : start + c]
            trainer.clients.batches(ids, trainer.local_rows(ids, 0))
            start += c

    updating = {c: _floor_fn(spec, trainer, c, args.batch, args.steps, update=True)[0] for c in sorted(set(chunks))}
    for f in updating.values():
        float(f())
    fixed = {c: _fixed_batch_step(spec, c, args.batch, args.steps) for c in sorted(set(chunks))}
    for f in fixed.values():
        f().numpy()
    graph_inputs = _graph_inputs(trainer, w, clients, chunks)

    def graph():  # the trainer's own graph on tensors made before the clock starts: no host conversion or copy
        for c, inputs in zip(chunks, graph_inputs):
            upd, _ = trainer._fn(c)(*inputs)
            upd.shape  # noqa: B018 (eager: the call has finished)

    graph()
    cached = _Pregenerated(trainer.clients, trainer, clients, chunks)

    def streamed():  # the round's path with a streaming aggregator: each chunk's float64 updates, then dropped
        for _ in trainer.train_chunks(w, clients, 0):
            pass

    def pregenerated(fn):  # fn with the chunks' data generated beforehand: graph + host side
        def run():
            real, trainer.clients = trainer.clients, cached
            try:
                fn()
            finally:
                trainer.clients = real
        return run

    contenders = {"training_s": streamed, "generation_s": generation,
                  "floor_s": lambda: [float(floors[c]()) for c in chunks],
                  "floor_with_update_s": lambda: [float(updating[c]()) for c in chunks],
                  "model_step_fixed_batch_s": lambda: [fixed[c]().numpy() for c in chunks],
                  "trainer_graph_s": graph, "training_pregenerated_s": pregenerated(streamed),
                  "gathered_pregenerated_s": pregenerated(lambda: trainer.train(w, clients, 0))}
    times = {k: [] for k in contenders}
    for _ in range(args.floor_reps):
        for name, fn in contenders.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    low = {k: float(np.min(v)) for k, v in times.items()}  # noise only adds: the minimum is the steadier layer estimate
    return {"reps": args.floor_reps, "times": times, "medians": med, "floor_is": "five batched matrix products per "
            "local step, once per chunk at its size (benchmarks/fl_round.py)",
            "training_over_floor": med["training_s"] / med["floor_s"],
            "training_less_generation_over_floor": (med["training_s"] - med["generation_s"]) / med["floor_s"],
            "floor_with_update_is": "the same products plus the SGD update W −= η·∇W of both weight matrices per step",
            "training_less_generation_over_floor_with_update": (med["training_s"] - med["generation_s"]) / med["floor_with_update_s"],
            "pregenerated_over_floor": {"median": med["training_pregenerated_s"] / med["floor_s"],
                                        "min": low["training_pregenerated_s"] / low["floor_s"]},
            "pregenerated_over_floor_with_update": {"median": med["training_pregenerated_s"] / med["floor_with_update_s"],
                                                    "min": low["training_pregenerated_s"] / low["floor_with_update_s"]},
            "breakdown_is": "each layer adds to the one before: products (floor_s); + the SGD update of the weight "
            "matrices (floor_with_update_s); + biases, softmax cross-entropy, GradientTape and the update of every "
            "parameter, the model tiled from w and the update flattened, on a fixed batch (model_step_fixed_batch_s); + "
            "the per-step batch gathers (trainer_graph_s: the trainer's own graph on inputs converted beforehand); + "
            "the host side, numpy → tensor conversion and each chunk's float32 → float64 copy out "
            "(training_pregenerated_s: trainer.train_chunks, the round's path with a streaming aggregator, with the "
            "chunks' data generated beforehand); breakdown_s from the medians, breakdown_min_s from the minima over "
            "the repetitions; gathered_pregenerated_s: trainer.train (every chunk written into one [K, d] float64 "
            "array, the path of an aggregator that needs all K updates at once), for comparison",
            "minima": low, "breakdown_s": _layers(med), "breakdown_min_s": _layers(low),
            "load_after": os.getloadavg()}


def _fixed_batch_step(spec, K, B, S, lr=0.01, batch=None, w=None):
    """The trainer's local steps (:meth:`fl.training.VectorizedTrainer._train_graph`: model tiled from w, biases,
    softmax cross-entropy, GradientTape, the update of every parameter, the update flattened) on one fixed
    batch [K, B] instead of a gathered batch per step: the graph's cost without its gathers. ``batch`` (x [K, B,
    ...], y [K, B]) and ``w`` [d] default to random ones; returns a callable giving the [K, d] updates."""
    import tensorflow as tf

    rng = np.random.default_rng(1)
    if batch is None:
        batch = (rng.standard_normal((K, B, *spec.input_shape)), rng.integers(0, spec.num_classes, (K, B)))
    xb, yb = tf.constant(np.asarray(batch[0], np.float32)), tf.constant(np.asarray(batch[1], np.int32))
    w = tf.constant((rng.standard_normal(spec.d) * 0.01 if w is None else np.asarray(w)).astype(np.float32))

    @tf.function
    def step():
        params, i = [], 0
        for p in spec.params:
            params.append(tf.tile(tf.reshape(w[i : i + p.size], p.shape)[None], [K] + [1] * len(p.shape)))
            i += p.size
        loss_sum = tf.zeros([K], tf.float32)
        for _ in tf.range(S):
            with tf.GradientTape() as tape:
                tape.watch(params)
                per_client = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=yb, logits=spec.logits(params, xb)), axis=1)
                total = tf.reduce_sum(per_client)
            grads = tape.gradient(total, params)
            params = [p - lr * g for p, g in zip(params, grads)]
            loss_sum += per_client
        return tf.concat([tf.reshape(p, [K, -1]) for p in params], axis=1) - w[None, :], loss_sum

    return lambda: step()[0]


def _layers(t: dict) -> dict:
    """The trainer's time in layers (seconds), each the difference of two consecutive measurements."""
    return {"products": t["floor_s"], "update": t["floor_with_update_s"] - t["floor_s"],
            "biases_loss_tape": t["model_step_fixed_batch_s"] - t["floor_with_update_s"],
            "gathers": t["trainer_graph_s"] - t["model_step_fixed_batch_s"],
            "host": t["training_pregenerated_s"] - t["trainer_graph_s"]}


class _Pregenerated:
    """The trainer's clients with every chunk's ``batches`` computed once beforehand (round 0, these clients)."""

    def __init__(self, inner, trainer, clients, chunks):
        self.inner, self._cache, start = inner, {}, 0
        for c in chunks:
            ids = clients[start : start + c]
            self._cache[ids.tobytes()] = inner.batches(ids, trainer.local_rows(ids, 0))
            start += c

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def batches(self, clients, local_rows):
        return self._cache[np.asarray(clients, dtype=np.int64).tobytes()]


def _graph_inputs(trainer, w, clients, chunks) -> list:
    """Per chunk, the trainer's graph inputs (w, x, y, rows, η) as tensors (even chunk sizes, as the benchmark's)."""
    import tensorflow as tf

    w32, out, start = tf.constant(np.asarray(w, dtype=np.float32)), [], 0
    for c in chunks:
        if c % 2:
            raise ValueError(f"--chunk: the graph-alone layer needs even chunk sizes (got {c})")
        ids = clients[start : start + c]
        x, y, rows = trainer.clients.batches(ids, trainer.local_rows(ids, 0))
        out.append((w32, tf.convert_to_tensor(x, tf.float32), tf.convert_to_tensor(y, tf.int32),
                    tf.constant(rows.astype(np.int32)), tf.constant(trainer.lr, tf.float32)))
        start += c
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--M", type=int, default=100_000)
    ap.add_argument("--K", type=int, default=1000)
    ap.add_argument("--chunk", type=int, default=None, help="clients per trainer call (default: all K)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--scheme", default="ideal", help=f"one of {', '.join(SCHEMES)} (clip normalization)")
    ap.add_argument("--schemes", default=None, help="comma-separated schemes, one child process each")
    ap.add_argument("--round-only", action="store_true",
                    help="skip the training-alone measurement (it gathers a [K, d] array) so the peak is the round's")
    ap.add_argument("--floor-reps", type=int, default=0,
                    help="interleaved repetitions of training alone, generation alone and the matmul floor (0: skip)")
    ap.add_argument("--compare-unchunked", action="store_true",
                    help="after the measurements, train the round's clients all at once and compare bit for bit")
    args = ap.parse_args(argv)
    if args.schemes:
        return _run_schemes(args, argv)

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    from fl.clients import LazyClients
    from fl.fedprox_synthetic import FedProxSynthetic
    from fl.federated import FederatedAveraging
    from fl.models import build_model_spec
    from fl.training import VectorizedTrainer
    from phy.schemes import make_aggregator, scheme_spec

    population = FedProxSynthetic(seed=args.seed, M=args.M)
    spec = build_model_spec("mlp", input_shape=population.input_shape, num_classes=10, hidden=(200,))
    trainer = VectorizedTrainer(spec, clients=LazyClients(population), batch_size=args.batch, lr=0.01,
                                local_steps=args.steps, seed=args.seed, client_chunk=args.chunk)
    phy = _phy_config(args.scheme)
    aggregator = make_aggregator(phy, K=args.K, d=spec.d, seed=args.seed,
                                 key=b"population-round-benchmark" if scheme_spec(args.scheme).needs_key else None)
    fedavg = FederatedAveraging(trainer=trainer, aggregator=aggregator, M=args.M, K=args.K, seed=args.seed)
    w = spec.init(args.seed)
    setup_s = time.perf_counter() - t0
    rss_setup = _rss_mb()

    t1 = time.perf_counter()
    trainer.warm_up(args.K)
    tracing_s = time.perf_counter() - t1
    rss_warm = _rss_mb()  # the trainer at one chunk (warm_up trains one chunk of each size)

    from fl.federated import sample_clients

    clients = sample_clients(seed=args.seed, round_index=0, M=args.M, K=args.K)
    t2 = time.perf_counter()
    start = 0
    for c in trainer.chunks(args.K):  # data generation alone: the rows every chunk's batches use
        ids = clients[start : start + c]
        trainer.clients.batches(ids, trainer.local_rows(ids, 0))
        start += c
    generation_s = time.perf_counter() - t2
    train_s = rss_train = None
    if not args.round_only:
        t3 = time.perf_counter()
        trainer.train(w, clients, 0)  # the training part alone, the round's clients (results discarded)
        train_s = time.perf_counter() - t3
        rss_train = _rss_mb()  # + the [K, d] float64 updates

    t4 = time.perf_counter()
    w_next, outcome = fedavg.step(w, 0)
    round_s = time.perf_counter() - t4
    out = {"scheme": args.scheme, "streaming": bool(getattr(aggregator, "aggregate_stream", None)),
           "phy": phy.to_dict(), "M": args.M, "K": args.K, "client_chunk": args.chunk, "chunks": trainer.chunks(args.K), "d": spec.d,
           "local_steps": args.steps, "batch_size": args.batch, "setup_s": setup_s, "tracing_round_s": tracing_s,
           "round_s": round_s, "training_s": train_s, "generation_s": generation_s,
           "peak_rss_after_setup_mb": rss_setup, "peak_rss_after_warm_up_mb": rss_warm,
           "peak_rss_after_training_mb": rss_train, "peak_rss_mb": _rss_mb(), "mean_client_size": float(np.mean(population.sizes(outcome.clients))),
           "finite": bool(np.all(np.isfinite(w_next))), "load_before": load_before, "load_after": os.getloadavg(),
           "cpus": os.cpu_count(), "tf_cpu_allocator_use_bfc": os.environ.get("TF_CPU_ALLOCATOR_USE_BFC")}
    if args.floor_reps > 0:  # after the memory figures above: it gathers [K, d] updates
        out["floor"] = _versus_floor(trainer, spec, w, clients, args)
    if args.compare_unchunked:  # after the memory figures above: it holds a second [K, d] array
        whole = VectorizedTrainer(spec, clients=LazyClients(population), batch_size=args.batch, lr=0.01,
                                  local_steps=args.steps, seed=args.seed)
        a, la = trainer.train(w, clients, 0)
        b, lb = whole.train(w, clients, 0)
        out["unchunked_identical"] = bool(np.array_equal(a, b) and np.array_equal(la, lb))
        out["unchunked_max_abs_difference"] = float(np.max(np.abs(a - b)))
    text = json.dumps(out, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
