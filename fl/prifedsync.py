"""PriFedSync: personalised models, clients running noisy Adam with per-example clipping (model §9.4;
Zheng, Chen, Long & Su, *Federated f-Differential Privacy*, its Algorithms 1 and 2).

The stored text keeps the algorithm's prose but not the listings; what follows is reconstructed from
it (docs/fl.md, "PriFedSync", says which parts are the text's and which are choices):

Round t (``training.mode = "prifedsync"``), h_t the server's helper (global) model:

1. the server samples K of M clients (uniform without replacement, the stream of
   :func:`fl.federated.sample_clients`; the text samples each client with probability p);
2. each sampled client j starts from its own personalised model w^(j) (a client never seen before
   starts from h_t, with fresh Adam moments) and runs S noisy Adam steps on its own data
   (:mod:`fl.prifedsync_step`: per-example clipping to C, Gaussian noise σC on the clipped sum,
   batches of B drawn uniformly without replacement per step from the stream
   ``(seed, "prifedsync-batch", t, j)``, noise from ``(seed, "prifedsync-noise", t, j)``); it
   dispatches w̃^(j), its only release;
3. the server averages the dispatched models through the aggregator (ideal: x_j = w̃^(j) − h_t,
   h_{t+1} = h_t + x̂/K');
4. synchronisation: every sampled client mixes its model with the helper,
   w^(j) ← (1 − λ) w̃^(j) + λ h_{t+1} (λ = ``training.prifedsync.mix``; λ = 1: every client keeps the
   global model, i.e. FedAvg with private local Adam). Its Adam moments stay with it.

Memory: client states are kept only for clients seen so far (id → (w, m, v, τ), 3d + 1 floats each).
"""

from __future__ import annotations

import numpy as np

from phy.randomness import stream

__all__ = ["client_batches", "PriFedSyncTrainer", "PriFedSync", "PersonalEvaluator"]


def client_batches(*, seed: int, round_index: int, clients, D: int, batch_size: int, steps: int) -> np.ndarray:
    """Local row indices ``[S, K, B]``: every step an independent uniform draw of B of the D examples
    without replacement (the sampling the accountant assumes), from ``(seed, "prifedsync-batch", t, j)``."""
    out = np.empty((steps, len(clients), batch_size), dtype=np.int64)
    for k, j in enumerate(clients):
        rng = stream(seed, "prifedsync-batch", round_index, int(j))
        for s in range(steps):
            out[s, k] = rng.choice(D, size=batch_size, replace=False)
    return out


def noise_seeds(*, seed: int, round_index: int, clients, steps: int) -> np.ndarray:
    """Stateless-normal seeds ``[S, K, 2] int32`` of every client's steps, from ``(seed, "prifedsync-noise", t, j)``."""
    out = np.empty((steps, len(clients), 2), dtype=np.int32)
    for k, j in enumerate(clients):
        out[:, k] = stream(seed, "prifedsync-noise", round_index, int(j)).integers(0, 2**31 - 1, size=(steps, 2))
    return out


class PriFedSyncTrainer:
    """S noisy Adam steps for a chunk of clients as one ``tf.function`` call (one trace per chunk size).

    ``clients`` is a :class:`fl.clients.StackedClients` (equal sizes D); ``config`` the
    ``[training.prifedsync]`` table; ``lr`` Adam's base rate η.
    """

    def __init__(self, spec, *, clients, batch_size: int, steps: int, lr: float, config, seed: int,
                 client_chunk: int | None = None):
        if not clients.equal_sizes:
            raise ValueError("training.mode = 'prifedsync' needs clients of equal sizes (a partitioned data set)")
        if spec.name != "mlp":
            raise ValueError(f"training.mode = 'prifedsync' supports model.name = 'mlp' only (got {spec.name!r})")
        self.spec, self.clients, self.D = spec, clients, clients.D
        self.batch_size, self.steps, self.lr, self.seed = batch_size, steps, float(lr), seed
        self.cfg, self.client_chunk = config, client_chunk
        self._fns: dict[int, object] = {}

    def _fn(self, K: int):
        import tensorflow as tf

        if K not in self._fns:
            d = self.spec.d
            sig = [tf.TensorSpec([K, d], tf.float32)] * 3 + [tf.TensorSpec([K], tf.float32),
                   tf.TensorSpec([None, *self.spec.input_shape], tf.float32), tf.TensorSpec([None], tf.int32),
                   tf.TensorSpec([self.steps, K, self.batch_size], tf.int32), tf.TensorSpec([self.steps, K, 2], tf.int32)]
            self._fns[K] = tf.function(self._graph, input_signature=sig)
        return self._fns[K]

    def _graph(self, w, m, v, tau, x, y, rows, seeds):
        import tensorflow as tf

        from .prifedsync_step import adam_update, clip_examples, per_example_gradients, privatise

        c = self.cfg
        K, d = int(rows.shape[1]), self.spec.d
        loss_sum = tf.zeros([K], tf.float32)
        for s in tf.range(self.steps):
            g, loss = per_example_gradients(self.spec, w, tf.gather(x, rows[s]), tf.gather(y, rows[s]))
            clipped, _ = clip_examples(g, float(c.clip_norm))
            noise = tf.stack([tf.random.stateless_normal([d], seed=seeds[s, k]) for k in range(K)])
            gt = privatise(clipped, noise, clip_norm=float(c.clip_norm), noise_multiplier=float(c.noise_multiplier))
            w, m, v, tau = adam_update(w, m, v, tau, gt, lr=self.lr, beta1=float(c.beta1), beta2=float(c.beta2),
                                       eps=float(c.adam_eps), weight_decay=float(c.weight_decay))
            loss_sum += tf.reduce_mean(loss, axis=1)
        return w, m, v, tau, loss_sum / float(self.steps)

    def warm_up(self, K: int) -> None:
        """Trace the training function for every chunk size of a K-client round (zero states, clients 0 … c − 1,
        round 0). Pure: no state is kept and the keyed streams are only recomputed, so results do not depend on it."""
        for c in sorted(set(self.chunks(int(K)))):
            z = np.zeros((c, self.spec.d), np.float32)
            self.train(z, z, z, np.zeros(c, np.float32), np.arange(c), 0)

    def chunks(self, K: int) -> list[int]:
        c = int(K) if self.client_chunk is None else min(int(self.client_chunk), int(K))
        return [c] * (int(K) // c) + ([int(K) % c] if int(K) % c else [])

    def train(self, w, m, v, tau, clients: np.ndarray, round_index: int):
        """Clients ``clients [K]`` from their states (``w, m, v [K, d]``, ``tau [K]``); returns the new states
        (float32 numpy) and each client's mean mini-batch loss ``[K]``."""
        import tensorflow as tf

        outs, start = [], 0
        for c in self.chunks(len(clients)):
            ids = clients[start : start + c]
            sl = slice(start, start + c)
            local = client_batches(seed=self.seed, round_index=round_index, clients=ids, D=self.D,
                                   batch_size=self.batch_size, steps=self.steps)
            x, y, rows = self.clients.batches(ids, local)
            seeds = noise_seeds(seed=self.seed, round_index=round_index, clients=ids, steps=self.steps)
            res = self._fn(c)(*(tf.constant(a[sl], tf.float32) for a in (w, m, v, tau)),
                              tf.convert_to_tensor(x, tf.float32), tf.convert_to_tensor(y, tf.int32),
                              tf.constant(rows.astype(np.int32)), tf.constant(seeds))
            outs.append([r.numpy() for r in res])
            start += c
        return tuple(np.concatenate([o[i] for o in outs]) for i in range(5))


class PriFedSync:
    """The PriFedSync loop with :class:`fl.federated.FederatedAveraging`'s interface: ``step(h, t) -> (h_{t+1},
    RoundOutcome)``; ``states`` maps a seen client's id to its (w, m, v, τ)."""

    def __init__(self, *, trainer: PriFedSyncTrainer, aggregator, M: int, K: int, seed: int, mix: float):
        self.trainer, self.aggregator = trainer, aggregator
        self.M, self.K, self.seed, self.mix = M, K, seed, float(mix)
        self.states: dict[int, tuple] = {}

    def _gather(self, h: np.ndarray, clients: np.ndarray):
        d = h.size
        w = np.empty((len(clients), d), np.float32)
        m = np.zeros((len(clients), d), np.float32)
        v = np.zeros((len(clients), d), np.float32)
        tau = np.zeros(len(clients), np.float32)
        for k, j in enumerate(clients):
            if int(j) in self.states:
                w[k], m[k], v[k], tau[k] = self.states[int(j)]
            else:
                w[k] = h
        return w, m, v, tau

    def step(self, h: np.ndarray, round_index: int):
        from .federated import NonFiniteModelError, RoundOutcome, sample_clients

        number = round_index + 1
        clients = sample_clients(seed=self.seed, round_index=round_index, M=self.M, K=self.K)
        w, m, v, tau, loss = self.trainer.train(*self._gather(h, clients), clients, round_index)
        bad = ~np.all(np.isfinite(w), axis=1)
        if bad.any():
            raise NonFiniteModelError(number, f"noisy Adam of client(s) {clients[bad].tolist()} produced a non-finite "
                                              "model (lower training.lr)")
        updates = w.astype(np.float64) - h[None, :]
        result = self.aggregator.aggregate(updates, round_index=round_index, clients=clients)
        h_next = h + result.mean_estimate
        lam = self.mix
        for k, j in enumerate(clients):
            personal = ((1.0 - lam) * w[k].astype(np.float64) + lam * h_next).astype(np.float32)
            self.states[int(j)] = (personal, m[k], v[k], tau[k])
        outcome = RoundOutcome(clients, float(np.mean(loss)), float(result.error), int(result.contributors),
                               dict(result.diagnostics))
        return h_next, outcome


class PersonalEvaluator:
    """Accuracy of every seen client's personalised model and of the global model on that client's own test
    examples: up to ``per_client`` test examples drawn without replacement from those whose label the client
    holds in training (the text's protocol: "each client samples 200 examples with the same label she has
    seen in training"), from the stream ``(seed, "prifedsync-client-test", j)``.

    ``evaluate(states, h) -> (mean personalised accuracy, mean global accuracy, clients)``, both averaged
    over the seen clients with equal weight (each client's accuracy over its own examples).
    """

    def __init__(self, spec, *, x_test, y_test, client_labels, per_client: int, seed: int):
        import tensorflow as tf

        self.spec = spec
        M = len(client_labels)
        rows = np.zeros((M, per_client), np.int64)
        mask = np.zeros((M, per_client), np.float32)
        for j, labels in enumerate(client_labels):
            cand = np.flatnonzero(np.isin(y_test, np.asarray(labels)))
            n = min(per_client, cand.size)
            rows[j, :n] = np.sort(stream(seed, "prifedsync-client-test", j).choice(cand, size=n, replace=False))
            mask[j, :n] = 1.0
        self.rows, self.mask = rows, mask
        self._x = tf.constant(np.asarray(x_test, np.float32))
        self._y = tf.constant(np.asarray(y_test, np.int32))
        sig = [tf.TensorSpec([None, spec.d], tf.float32), tf.TensorSpec([None, per_client], tf.int64),
               tf.TensorSpec([None, per_client], tf.float32)]
        self._fn = tf.function(self._graph, input_signature=sig)  # one trace, whatever the number of clients seen

    def warm_up(self) -> None:
        """Trace the evaluation once (a zero model on client 0's examples); pure."""
        import tensorflow as tf

        self._fn(tf.zeros([1, self.spec.d], tf.float32), tf.constant(self.rows[:1]), tf.constant(self.mask[:1]))

    def _graph(self, w, rows, mask):
        import tensorflow as tf

        from .prifedsync_step import unflatten

        logits = self.spec.logits(unflatten(self.spec, w), tf.gather(self._x, rows))
        hit = tf.cast(tf.equal(tf.argmax(logits, axis=2, output_type=tf.int32), tf.gather(self._y, rows)), tf.float32)
        return tf.reduce_sum(hit * mask, axis=1) / tf.reduce_sum(mask, axis=1)

    def evaluate(self, states: dict, h: np.ndarray) -> tuple[float, float, int]:
        import tensorflow as tf

        ids = np.array(sorted(states), dtype=np.int64)
        if ids.size == 0:
            return float("nan"), float("nan"), 0
        w = np.stack([states[int(j)][0] for j in ids])
        g = np.broadcast_to(np.asarray(h, np.float32), w.shape)
        rows, mask = tf.constant(self.rows[ids]), tf.constant(self.mask[ids])
        personal = self._fn(tf.constant(w), rows, mask).numpy()
        glob = self._fn(tf.constant(g), rows, mask).numpy()
        return float(personal.mean()), float(glob.mean()), int(ids.size)
