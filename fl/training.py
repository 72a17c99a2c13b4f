"""Local training of the K scheduled clients, all together (model §1).

Client k starts from the global model w_t and runs mini-batch SGD with learning rate η and
batch size B on its own D examples,

    w ← w − η · ∇ (1/B) Σ_{(x,y) ∈ batch} CE(softmax(f(w; x)), y),

for E local epochs (``local_epochs``) or E local steps (``local_steps``), and reports the
model differential x_k = w^k_{t+1} − w_t (model §1).

Batch order: every round t, client m (its global id) shuffles its D examples with the stream
``(seed, "data-order", t, m)``, one fresh permutation per epoch; each epoch is cut into
⌊D/B⌋ batches of B consecutive entries and the last partial batch (D mod B examples) is
dropped (choice; with the source's D = 600 and B ∈ {20, 50} nothing is dropped). In
``local_steps`` mode the client takes the first E batches of that same sequence of epochs.
Every client therefore runs the same number S of steps, which is what lets the K clients
train as one batched computation: per-client parameters are stacked on a leading K axis and
one ``tf.function`` call runs all S steps for all K clients (a ``tf.while_loop`` over steps,
each step one batched forward/backward pass; see :mod:`fl.models`). Because the K clients'
losses are independent, the gradient of their sum with respect to the stacked parameters is
the stack of the per-client gradients, so the result equals training the clients one after
another (checked by the tests to float32 tolerance).

Unequal client sizes (a population such as :class:`fl.fedprox_synthetic.FedProxSynthetic`): every
client still takes the same S = ``local_steps`` steps (``local_epochs`` is refused: an epoch has no
common length); client k's batches are cut from epochs over its own D_k examples, ⌊D_k/B⌋ batches
each, drawn from the same stream as above, so an epoch of a large client is longer than S steps and
a small client revisits its data. B must not exceed the smallest client (the population's n_min).

Chunks (``client_chunk``): a round's K clients are trained in consecutive chunks of at most c clients
(one batched call each, one trace per chunk size), in the order sampled. A client's batches depend on
its own stream only and the batched graph computes every client independently, so a client's update
is the same whatever chunk it is in up to the rounding of TensorFlow's batched float32 kernels, which may
pick other code paths for other batch sizes: bit for bit for the cases tests/test_fl_training.py checks and
for the 784-200-10 MLP at K = 1 000, chunk 100, but up to 3·10⁻⁸ apart on digits with chunks of 1, 2, 3 or 5
(docs/fl.md). The trainer holds one chunk's tensors at a time. :meth:`VectorizedTrainer.train_chunks` yields the chunks' updates one after another;
:meth:`VectorizedTrainer.train` writes them into one ``[K, d] float64`` array (for an aggregator without
``aggregate_stream``; the built-in schemes take the chunks, :mod:`phy.aggregation`). Where the data come from is a provider (:mod:`fl.clients`): the stacked rows of a
partitioned data set, or clients generated when their chunk trains.

Arithmetic is float32 inside TensorFlow; the differentials are returned as float64.
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import numpy as np

from phy.randomness import stream

from .models import ModelSpec

__all__ = ["local_schedule", "batch_indices", "ClientChunk", "VectorizedTrainer", "Evaluator"]


def local_schedule(*, D: int, batch_size: int, local_epochs: int | None, local_steps: int | None) -> tuple[int, int]:
    """Return (steps per round S, epochs drawn) for a client with D examples.

    Exactly one of ``local_epochs`` / ``local_steps`` must be given.
    """
    if (local_epochs is None) == (local_steps is None):
        raise ValueError("exactly one of training.local_epochs and training.local_steps must be set")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"training.batch_size must be an integer ≥ 1 (got {batch_size!r})")
    if batch_size > D:
        raise ValueError(f"training.batch_size must be ≤ the examples per client D = {D} (got {batch_size})")
    per_epoch = D // batch_size
    if local_epochs is not None:
        return local_epochs * per_epoch, local_epochs
    return local_steps, -(-local_steps // per_epoch)


def batch_indices(*, seed: int, round_index: int, clients: np.ndarray, D, batch_size: int, steps: int,
                  epochs: int | None = None) -> np.ndarray:
    """Local row indices ``[S, K, B] int64`` of every client's batches in round ``round_index``.

    ``D`` is the examples per client, one integer for all or ``[K]`` (one per client, unequal sizes).
    Client k draws ⌈S/⌊D_k/B⌋⌉ epochs of ⌊D_k/B⌋ batches from its own stream ``(seed, "data-order", t, m)``
    and keeps the first S batches. ``epochs`` (what :func:`local_schedule` returns) is accepted and not
    needed: drawing more permutations of a client's own stream changes nothing of its first S batches.
    """
    sizes = np.broadcast_to(np.asarray(D, dtype=np.int64), (len(clients),))
    out = np.empty((steps, len(clients), batch_size), dtype=np.int64)
    for j, m in enumerate(clients):
        D_k = int(sizes[j])
        per_epoch = D_k // batch_size
        if per_epoch < 1:
            raise ValueError(f"client {int(m)} has D = {D_k} examples, fewer than training.batch_size = {batch_size}")
        n_epochs = -(-steps // per_epoch)
        rng = stream(seed, "data-order", round_index, int(m))
        batches = np.concatenate([rng.permutation(D_k)[: per_epoch * batch_size] for _ in range(n_epochs)])
        out[:, j, :] = batches[: steps * batch_size].reshape(steps, batch_size)
    return out


class ClientChunk(NamedTuple):
    """One chunk of a round's clients: ids ``[c] int64``, updates ``[c, d] float64`` (read-only), local loss ``[c] float64``."""

    clients: np.ndarray
    updates: np.ndarray
    local_loss: np.ndarray


class VectorizedTrainer:
    """Runs one round of local SGD for K clients as batched TensorFlow computations, chunk by chunk.

    Parameters
    ----------
    spec : ModelSpec
    client_x, client_y : ``[M, D, *input_shape] float32`` and ``[M, D] int`` (row m = client m), or
    clients : a provider of :mod:`fl.clients` instead (e.g. :class:`fl.clients.LazyClients`)
    batch_size, lr : B and η
    local_epochs, local_steps : exactly one is set (E epochs or E steps); clients of unequal sizes
        need ``local_steps`` (every client takes the same S steps, see the module docstring)
    seed : master seed of the data-order streams
    client_chunk : clients trained per batched call (None: all K at once)
    """

    def __init__(self, spec: ModelSpec, *, client_x: np.ndarray | None = None, client_y: np.ndarray | None = None,
                 clients=None, batch_size: int, lr: float, local_epochs: int | None = None,
                 local_steps: int | None = None, seed: int, client_chunk: int | None = None):
        from .clients import StackedClients

        if (clients is None) == (client_x is None or client_y is None):
            raise ValueError("give either client_x and client_y or a clients provider")
        if clients is None:
            if client_x.shape[:2] != client_y.shape or client_x.shape[2:] != spec.input_shape:
                raise ValueError(f"client data shapes {client_x.shape} / {client_y.shape} do not match the model input {spec.input_shape}")
            clients = StackedClients(client_x, client_y)
        if tuple(clients.input_shape) != tuple(spec.input_shape):
            raise ValueError(f"client data shape {clients.input_shape} does not match the model input {spec.input_shape}")
        if not clients.equal_sizes and local_steps is None:
            raise ValueError("training.local_steps must be set (and training.local_epochs not) for clients of unequal "
                             "sizes: every client takes the same S local steps, an epoch has no common length")
        if client_chunk is not None and (isinstance(client_chunk, bool) or not isinstance(client_chunk, int) or client_chunk < 1):
            raise ValueError(f"training.client_chunk must be an integer ≥ 1 or absent (got {client_chunk!r})")
        self.spec = spec
        self.clients = clients
        self.M = clients.M
        self.D = clients.min_size  # every client's D (equal sizes) or a lower bound on them
        self.batch_size = batch_size
        self.lr = float(lr)
        self.seed = seed
        self.client_chunk = client_chunk
        self.steps, self.epochs = local_schedule(D=self.D, batch_size=batch_size, local_epochs=local_epochs, local_steps=local_steps)
        if clients.equal_sizes:  # the stacked data, kept for tools that gather the same batches (benchmarks)
            self._x, self._y = clients._x, clients._y
        self._fns: dict[int, object] = {}

    def _fn(self, K: int):
        """The training function for chunks of K clients (one trace per K)."""
        import tensorflow as tf

        if K not in self._fns:
            sig = [tf.TensorSpec([self.spec.d], tf.float32), tf.TensorSpec([None, *self.spec.input_shape], tf.float32),
                   tf.TensorSpec([None], tf.int32), tf.TensorSpec([self.steps, K, self.batch_size], tf.int32),
                   tf.TensorSpec([], tf.float32)]
            self._fns[K] = tf.function(self._train_graph, input_signature=sig)
        return self._fns[K]

    def tracing_count(self) -> int:
        """Traces of the training functions so far (one per chunk size once warmed up)."""
        return sum(int(f.experimental_get_tracing_count()) for f in self._fns.values())

    def _train_graph(self, w, x, y, rows, lr):
        import tensorflow as tf

        spec = self.spec
        K = int(rows.shape[1])  # static: one trace per number of clients
        params, i = [], 0
        for p in spec.params:
            t = tf.reshape(w[i : i + p.size], p.shape)
            params.append(tf.tile(t[None], [K] + [1] * len(p.shape)))
            i += p.size
        loss_sum = tf.zeros([K], tf.float32)
        for s in tf.range(tf.shape(rows)[0]):
            xb = tf.gather(x, rows[s])  # [K, B, *input_shape]
            yb = tf.gather(y, rows[s])  # [K, B]
            with tf.GradientTape() as tape:
                tape.watch(params)
                logits = spec.logits(params, xb)
                per_client = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits), axis=1)
                total = tf.reduce_sum(per_client)
            grads = tape.gradient(total, params)
            params = [p - lr * g for p, g in zip(params, grads)]
            loss_sum += per_client
        flat = tf.concat([tf.reshape(p, [K, -1]) for p in params], axis=1)
        return flat - w[None, :], loss_sum / tf.cast(tf.shape(rows)[0], tf.float32)

    def local_rows(self, clients: np.ndarray, round_index: int) -> np.ndarray:
        """Each client's local row indices ``[S, K, B]`` (into its own data) for this round."""
        return batch_indices(seed=self.seed, round_index=round_index, clients=clients, D=self.clients.sizes(clients),
                             batch_size=self.batch_size, steps=self.steps)

    def rows(self, clients: np.ndarray, round_index: int) -> np.ndarray:
        """Global row indices ``[S, K, B]`` into the stacked client data for this round (equal sizes only)."""
        if not self.clients.equal_sizes:
            raise ValueError("rows() needs stacked client data; lazily generated clients have no global rows")
        return self.clients.batches(clients, self.local_rows(clients, round_index))[2]

    def chunks(self, K: int) -> list[int]:
        """Sizes of the chunks a round of K clients is trained in (``training.client_chunk``)."""
        c = int(K) if self.client_chunk is None else min(int(self.client_chunk), int(K))
        return [c] * (int(K) // c) + ([int(K) % c] if int(K) % c else [])

    def _run(self, w32, clients: np.ndarray, round_index: int):
        """One batched call for ``clients``; an odd count is padded with a copy of the last client (its
        outputs dropped): TensorFlow's CPU kernels treat an odd last client of a batch on another code
        path (different float32 rounding), so with even calls a client's numbers do not depend on the
        call it is in (tested for chunk sizes 1 … K)."""
        import tensorflow as tf

        n = len(clients)
        if n % 2:
            clients = np.append(clients, clients[-1])
        x, y, rows = self.clients.batches(clients, self.local_rows(clients, round_index))
        upd, loss = self._fn(len(clients))(w32, tf.convert_to_tensor(x, tf.float32), tf.convert_to_tensor(y, tf.int32),
                                           tf.constant(rows.astype(np.int32)), tf.constant(self.lr, tf.float32))
        return (upd[:n], loss[:n]) if n % 2 else (upd, loss)

    def warm_up(self, K: int) -> None:
        """Trace and run the training function once for every chunk size of a K-client round (zero model,
        round-0 batches of the first clients).

        Pure: no state changes and no draws from the run's streams beyond recomputing keyed batch
        orders, so a run's results do not depend on it; it moves ``tf.function`` tracing out of the
        first round's wall time (see docs/fl.md, "Wall time").
        """
        import tensorflow as tf

        for c in sorted(set(self.chunks(min(int(K), self.M)))):
            self._run(tf.zeros([self.spec.d], tf.float32), np.arange(c), 0)  # traces the padded (even) size

    def _check(self, clients) -> np.ndarray:
        clients = np.asarray(clients, dtype=np.int64)
        if clients.ndim != 1 or clients.size < 1 or clients.min() < 0 or clients.max() >= self.M:
            raise ValueError(f"clients must be a non-empty list of ids in [0, {self.M}) (got {clients!r})")
        return clients

    def train_chunks(self, w: np.ndarray, clients: np.ndarray, round_index: int) -> Iterator[ClientChunk]:
        """Train ``clients`` (global ids, ``[K]``) from ``w`` (``[d]``), one chunk after another, in order.

        Yields :class:`ClientChunk` ``(clients [c], updates [c, d] float64, local_loss [c] float64)``;
        only one chunk's updates are held at a time. The updates are a read-only view of a TensorFlow tensor (the
        float32 result widened exactly): copy them to modify them. A client's update does not depend on the chunk
        it is trained in beyond float32 kernel rounding (module docstring): its batches come from its
        own stream and the batched graph computes every client independently.
        """
        import tensorflow as tf

        clients = self._check(clients)
        w32 = tf.constant(np.asarray(w, dtype=np.float32))
        start = 0
        for c in self.chunks(clients.size):
            ids = clients[start : start + c]
            upd, loss = self._run(w32, ids, round_index)
            # widened inside TensorFlow (exact) and viewed, not copied: the float64 chunk lives in the allocator's
            # reused memory (phy/tf_runtime.py) instead of fresh pages per chunk; read-only
            yield ClientChunk(ids, np.asarray(tf.cast(upd, tf.float64)), loss.numpy().astype(np.float64))
            start += c

    def train(self, w: np.ndarray, clients: np.ndarray, round_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Train clients ``clients`` (global ids, ``[K]``) from global model ``w`` (``[d]``), all chunks.

        Returns
        -------
        updates : ``[K, d] float64``, x_k = w_{t+1}^k − w_t (each chunk written into it in place)
        local_loss : ``[K] float64``, each client's mean mini-batch loss over its S steps
        """
        import tensorflow as tf

        clients = self._check(clients)
        w32 = tf.constant(np.asarray(w, dtype=np.float32))
        updates = np.empty((clients.size, self.spec.d), dtype=np.float64)
        local_loss = np.empty(clients.size, dtype=np.float64)
        start = 0
        for c in self.chunks(clients.size):
            upd, loss = self._run(w32, clients[start : start + c], round_index)
            updates[start : start + c] = np.asarray(upd)  # float32 → float64 in place, read from the tensor: no copy
            local_loss[start : start + c] = loss.numpy()
            del upd
            start += c
        return updates, local_loss


class Evaluator:
    """Loss and accuracy of one (global) model on a fixed data set, in few batched passes.

    ``evaluate(w) -> (mean cross-entropy [nats], accuracy in [0, 1])`` over all examples,
    processed in chunks of ``chunk`` examples (memory bound only; the result does not depend
    on it beyond float32 summation order). ``evaluate_by_class(w)`` adds the accuracy of each
    class c, (correct examples of label c)/(examples of label c), NaN for a class absent from
    the set (docs/fl.md: ``worst_class_accuracy`` is its minimum over the present classes).
    """

    def __init__(self, spec: ModelSpec, x: np.ndarray, y: np.ndarray, *, chunk: int = 5000):
        import tensorflow as tf

        self.spec = spec
        self.n = int(y.shape[0])
        self._chunks = [
            (tf.constant(x[i : i + chunk], tf.float32), tf.constant(y[i : i + chunk], tf.int32)) for i in range(0, self.n, chunk)
        ]
        labels = np.asarray(y, dtype=np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= spec.num_classes):
            raise ValueError(f"evaluation labels must lie in 0..{spec.num_classes - 1} (got {labels.min()}..{labels.max()})")
        self.class_counts = np.bincount(labels, minlength=spec.num_classes)  # [C] examples per label
        self._fn = tf.function(self._graph)

    def _graph(self, w, x, y):
        import tensorflow as tf

        params, i = [], 0
        for p in self.spec.params:
            params.append(tf.reshape(w[i : i + p.size], (1, *p.shape)))
            i += p.size
        logits = self.spec.logits(params, x[None])[0]
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        hit = tf.cast(tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), y), tf.float32)
        by_class = tf.math.unsorted_segment_sum(hit, y, self.spec.num_classes)
        return loss, tf.reduce_sum(hit), by_class

    def warm_up(self) -> None:
        """Trace the evaluation function for every chunk shape (one evaluation of a zero model)."""
        self.evaluate(np.zeros(self.spec.d))

    def evaluate(self, w: np.ndarray) -> tuple[float, float]:
        loss, accuracy, _ = self.evaluate_by_class(w)
        return loss, accuracy

    def evaluate_by_class(self, w: np.ndarray) -> tuple[float, float, np.ndarray]:
        """(mean cross-entropy [nats], accuracy, per-class accuracy [C], NaN where the set has no example)."""
        import tensorflow as tf

        wt = tf.constant(np.asarray(w, dtype=np.float32))
        loss = correct = 0.0
        hits = np.zeros(self.spec.num_classes)
        for x, y in self._chunks:
            l_, c_, h_ = self._fn(wt, x, y)
            loss += float(l_)
            correct += float(c_)
            hits += h_.numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            per_class = np.where(self.class_counts > 0, hits / np.maximum(self.class_counts, 1), np.nan)
        return loss / self.n, correct / self.n, per_class
