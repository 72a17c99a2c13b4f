"""Client data providers: where the trainer finds the rows of the clients it trains (model §1, §8).

A provider answers three questions for :class:`fl.training.VectorizedTrainer`:

``M``, ``input_shape``
    the population and the shape of one example;
``sizes(clients)``
    D_k of the given clients (``[K] int64``), from which each client's batch order is drawn
    (:func:`fl.training.batch_indices`), and ``min_size``, a lower bound on every D_k (the batch size
    must not exceed it);
``batches(clients, local_rows)``
    for the clients of one chunk and their local row indices ``[S, K, B]`` (row r of client k is its
    r-th example), the arrays ``x [n, *input_shape] float32``, ``y [n] int32`` and the rows
    ``[S, K, B]`` into them that the training graph gathers its batches from.

:class:`StackedClients` holds a partitioned data set (every client the same D, ``[M, D, ...]``, as built
from Fashion-MNIST, MNIST, digits or the Gaussian mixture); its rows are global (k·D + r) into the whole
stacked set, which stays in memory once. :class:`LazyClients` wraps a population that generates a
client's data on demand (:class:`fl.fedprox_synthetic.FedProxSynthetic`): a chunk's data are generated
when the chunk trains and only the rows its batches use are kept, so memory is O(chunk · S · B) rows.
"""

from __future__ import annotations

import numpy as np

__all__ = ["StackedClients", "LazyClients"]


class StackedClients:
    """The rows of a partitioned data set: ``x [M, D, *input_shape]``, ``y [M, D]``."""

    equal_sizes = True

    def __init__(self, x: np.ndarray, y: np.ndarray):
        import tensorflow as tf

        x, y = np.asarray(x), np.asarray(y)
        if y.ndim != 2 or x.shape[:2] != y.shape:
            raise ValueError(f"client data shapes {x.shape} / {y.shape} must be [M, D, ...] / [M, D]")
        self.M, self.D = (int(n) for n in y.shape)
        self.min_size = self.D
        self.input_shape = tuple(int(n) for n in x.shape[2:])
        self._x = tf.constant(x.reshape(self.M * self.D, *self.input_shape), dtype=tf.float32)
        self._y = tf.constant(y.reshape(-1), dtype=tf.int32)

    def sizes(self, clients) -> np.ndarray:
        return np.full(len(clients), self.D, dtype=np.int64)

    def batches(self, clients: np.ndarray, local_rows: np.ndarray):
        rows = local_rows + np.asarray(clients, dtype=np.int64)[None, :, None] * self.D
        return self._x, self._y, rows


class LazyClients:
    """Clients generated on demand by ``population`` (``M``, ``input_shape``, ``min_size``,
    ``sizes(clients)``, ``client_data(k) -> (x [D_k, ...] float32, y [D_k] int32)``)."""

    equal_sizes = False

    def __init__(self, population):
        self.population = population
        self.M = int(population.M)
        self.min_size = int(getattr(population, "min_train_size", population.min_size))
        self.input_shape = tuple(population.input_shape)

    def sizes(self, clients) -> np.ndarray:
        return self.population.sizes(clients)

    def batches(self, clients: np.ndarray, local_rows: np.ndarray):
        """Generate the chunk's clients and keep the rows their batches use (sorted, each once)."""
        xs, ys = [], []
        rows = np.empty(local_rows.shape, dtype=np.int64)
        offset = 0
        for j, k in enumerate(np.asarray(clients).reshape(-1)):
            x, y = self.population.client_data(int(k))
            used, inverse = np.unique(local_rows[:, j, :], return_inverse=True)
            xs.append(x[used])
            ys.append(y[used])
            rows[:, j, :] = offset + inverse.reshape(local_rows.shape[0], local_rows.shape[2])
            offset += used.size
        return np.concatenate(xs), np.concatenate(ys), rows
