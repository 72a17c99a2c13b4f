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

Arithmetic is float32 inside TensorFlow; the differentials are returned as float64.
"""

from __future__ import annotations

import numpy as np

from phy.randomness import stream

from .models import ModelSpec

__all__ = ["local_schedule", "batch_indices", "VectorizedTrainer", "Evaluator"]


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


def batch_indices(*, seed: int, round_index: int, clients: np.ndarray, D: int, batch_size: int, steps: int, epochs: int) -> np.ndarray:
    """Local row indices ``[S, K, B] int64`` of every client's batches in round ``round_index``."""
    per_epoch = D // batch_size
    out = np.empty((steps, len(clients), batch_size), dtype=np.int64)
    for j, m in enumerate(clients):
        rng = stream(seed, "data-order", round_index, int(m))
        batches = np.concatenate([rng.permutation(D)[: per_epoch * batch_size] for _ in range(epochs)])
        out[:, j, :] = batches[: steps * batch_size].reshape(steps, batch_size)
    return out


class VectorizedTrainer:
    """Runs one round of local SGD for K clients as one batched TensorFlow computation.

    Parameters
    ----------
    spec : ModelSpec
    client_x : ``[M, D, *input_shape] float32``
        Every client's local data (row m = client m).
    client_y : ``[M, D] int``
    batch_size, lr : B and η
    local_epochs, local_steps : exactly one is set (E epochs or E steps)
    seed : master seed of the data-order streams
    """

    def __init__(self, spec: ModelSpec, *, client_x: np.ndarray, client_y: np.ndarray, batch_size: int, lr: float,
                 local_epochs: int | None = None, local_steps: int | None = None, seed: int):
        import tensorflow as tf

        if client_x.shape[:2] != client_y.shape or client_x.shape[2:] != spec.input_shape:
            raise ValueError(f"client data shapes {client_x.shape} / {client_y.shape} do not match the model input {spec.input_shape}")
        self.spec = spec
        self.M, self.D = client_y.shape
        self.batch_size = batch_size
        self.lr = float(lr)
        self.seed = seed
        self.steps, self.epochs = local_schedule(D=self.D, batch_size=batch_size, local_epochs=local_epochs, local_steps=local_steps)
        self._x = tf.constant(client_x.reshape(self.M * self.D, *spec.input_shape), dtype=tf.float32)
        self._y = tf.constant(client_y.reshape(-1), dtype=tf.int32)
        self._fn = tf.function(self._train_graph)

    def _train_graph(self, w, rows, lr):
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
            xb = tf.gather(self._x, rows[s])  # [K, B, *input_shape]
            yb = tf.gather(self._y, rows[s])  # [K, B]
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

    def rows(self, clients: np.ndarray, round_index: int) -> np.ndarray:
        """Global row indices ``[S, K, B]`` into the stacked client data for this round."""
        local = batch_indices(seed=self.seed, round_index=round_index, clients=clients, D=self.D,
                              batch_size=self.batch_size, steps=self.steps, epochs=self.epochs)
        return local + np.asarray(clients, dtype=np.int64)[None, :, None] * self.D

    def warm_up(self, K: int) -> None:
        """Trace and run the training function once for K clients (zero model, round-0 batches).

        Pure: no state changes and no draws from the run's streams beyond recomputing keyed batch
        orders, so a run's results do not depend on it; it moves ``tf.function`` tracing out of the
        first round's wall time (see docs/fl.md, "Wall time").
        """
        import tensorflow as tf

        rows = self.rows(np.arange(min(int(K), self.M)), 0)
        self._fn(tf.zeros([self.spec.d], tf.float32), tf.constant(rows.astype(np.int32)), tf.constant(self.lr, tf.float32))

    def train(self, w: np.ndarray, clients: np.ndarray, round_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Train clients ``clients`` (global ids, ``[K]``) from global model ``w`` (``[d]``).

        Returns
        -------
        updates : ``[K, d] float64``, x_k = w_{t+1}^k − w_t
        local_loss : ``[K] float64``, each client's mean mini-batch loss over its S steps
        """
        import tensorflow as tf

        clients = np.asarray(clients, dtype=np.int64)
        if clients.ndim != 1 or clients.size < 1 or clients.min() < 0 or clients.max() >= self.M:
            raise ValueError(f"clients must be a non-empty list of ids in [0, {self.M}) (got {clients!r})")
        rows = self.rows(clients, round_index)
        upd, loss = self._fn(tf.constant(np.asarray(w, dtype=np.float32)), tf.constant(rows.astype(np.int32)), tf.constant(self.lr, tf.float32))
        return upd.numpy().astype(np.float64), loss.numpy().astype(np.float64)


class Evaluator:
    """Loss and accuracy of one (global) model on a fixed data set, in few batched passes.

    ``evaluate(w) -> (mean cross-entropy [nats], accuracy in [0, 1])`` over all examples,
    processed in chunks of ``chunk`` examples (memory bound only; the result does not depend
    on it beyond float32 summation order).
    """

    def __init__(self, spec: ModelSpec, x: np.ndarray, y: np.ndarray, *, chunk: int = 5000):
        import tensorflow as tf

        self.spec = spec
        self.n = int(y.shape[0])
        self._chunks = [
            (tf.constant(x[i : i + chunk], tf.float32), tf.constant(y[i : i + chunk], tf.int32)) for i in range(0, self.n, chunk)
        ]
        self._fn = tf.function(self._graph)

    def _graph(self, w, x, y):
        import tensorflow as tf

        params, i = [], 0
        for p in self.spec.params:
            params.append(tf.reshape(w[i : i + p.size], (1, *p.shape)))
            i += p.size
        logits = self.spec.logits(params, x[None])[0]
        loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        correct = tf.reduce_sum(tf.cast(tf.equal(tf.argmax(logits, axis=1, output_type=tf.int32), y), tf.float32))
        return loss, correct

    def warm_up(self) -> None:
        """Trace the evaluation function for every chunk shape (one evaluation of a zero model)."""
        self.evaluate(np.zeros(self.spec.d))

    def evaluate(self, w: np.ndarray) -> tuple[float, float]:
        import tensorflow as tf

        wt = tf.constant(np.asarray(w, dtype=np.float32))
        loss = correct = 0.0
        for x, y in self._chunks:
            l_, c_ = self._fn(wt, x, y)
            loss += float(l_)
            correct += float(c_)
        return loss / self.n, correct / self.n
