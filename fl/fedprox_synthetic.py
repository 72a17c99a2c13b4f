"""FedProx's Synthetic(α, β): a federated population of M clients generated lazily (model §8).

Reference: T. Li, A. K. Sahu, M. Zaheer, M. Sanjabi, A. Talwalkar, V. Smith, "Federated Optimization
in Heterogeneous Networks", MLSys 2020, §5.1 and its generator ``data/synthetic_*/generate_synthetic.py``.
Client k (0 ≤ k < M) has its own softmax model and feature distribution:

    u_k ~ N(0, α²)           B_k ~ N(0, β²)                     (scalars; the reference code draws
                                                                 ``normal(0, alpha)``, i.e. standard
                                                                 deviation α, the paper writes N(0, α))
    W_k ~ N(u_k, 1)^{F×C}    b_k ~ N(u_k, 1)^C                  (the client's labelling model)
    v_k ~ N(B_k, 1)^F                                           (its feature mean)
    x ~ N(v_k, Σ),  Σ = diag(j^{−1.2}), j = 1 … F               (its features, float32)
    y = argmax_c softmax(xᵀ W_k + b_k)_c = argmax_c (xᵀ W_k + b_k)_c

β controls how much the clients' feature distributions differ; Synthetic(0, 0), (0.5, 0.5) and (1, 1)
are the paper's settings. Note (a consequence of the equations, not stated in the paper): u_k shifts
every class's logit by the same u_k (Σ_j x_j + 1), so it never changes the argmax: α does not affect
the labels, and the clients' labelling models W_k, b_k are independent N(0, 1) draws whatever α. A
global model must then fit M unrelated labellers, and little is learnable at large M. With
``shared_model`` (the reference's ``iid`` flag, for the model only) every client labels with one
(W, b) ~ N(0, 1) drawn from the stream ``(seed, "synthetic-shared-model")``; features stay
client-specific (β), so the task is learnable and non-IID in its inputs. Client sizes follow the reference's
power law (lognormal): D_k = min(n_min + ⌊e^{μ + σ Z_k}⌋, n_max), Z_k ~ N(0, 1), with the reference's
μ = 4, σ = 2, n_min = 50 and a cap n_max (the reference has none; a cap keeps one client's data
bounded). The reference uses F = 60 features and C = 10 classes; the defaults here are F = 784 (so the
source's 784-200-10 MLP has a realistic d = 159 010) and C = 10. Features are not rescaled.

Laziness: everything about client k is drawn from its own keyed stream ``(seed, "synthetic-client", k)``
in a fixed order (Z_k, u_k, B_k, v_k, W_k, b_k in float64, then the D_k rows of x from float32 standard
normal draws, x = float32(v_k) + float32(Σ^{1/2}) z in float32 arithmetic), so building the population
for M = 10⁶ costs nothing, and client k's data are identical whether generated alone or with others.

Held-out test set (choice): ``test_clients`` clients drawn uniformly without replacement from the
population by the stream ``(seed, "synthetic-test-clients")``, each contributing ``test_per_client``
fresh examples from its own distribution (stream ``(seed, "synthetic-client-test", k)``): the global
model is judged on the population's mixture of client distributions, on examples no client trains on.

Validation split (``validation_fraction`` = f ∈ [0, 1), for choosing hyper-parameters, never the test set; model
§10): every client keeps its first D_k − round(f·D_k) examples for training and holds out the last round(f·D_k)
(the same D_k rows are generated, so the training rows are those of f = 0, bit for bit). The validation set is the
held-out rows, at most ``test_per_client`` of each, of ``test_clients`` clients drawn uniformly without
replacement by the stream ``(seed, "synthetic-validation-clients")``: rows no client trains on, from the same
mixture of client distributions as the test set, and disjoint from the test set's examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fl.sizes import client_train_rows
from phy.randomness import stream

__all__ = ["FedProxSynthetic", "feature_variances"]


def feature_variances(F: int) -> np.ndarray:
    """Σ_jj = j^{−1.2}, j = 1 … F (``[F] float64``), the reference's feature covariance diagonal."""
    return np.arange(1, F + 1, dtype=np.float64) ** -1.2


@dataclass(frozen=True)
class _ClientModel:
    size: int
    W: np.ndarray  # [F, C] float64
    b: np.ndarray  # [C]
    v: np.ndarray  # [F]


@dataclass(frozen=True)
class FedProxSynthetic:
    """The population (module docstring): parameters only, no data until a client is asked for.

    Parameters
    ----------
    seed : master seed of the client streams
    M : clients in the population (1 … 10⁶ or more)
    alpha, beta : α, β ≥ 0
    features, classes : F ≥ 1 and C ≥ 2
    size_mu, size_sigma : μ, σ of the lognormal size law (σ ≥ 0)
    min_size, max_size : n_min ≥ 1 and the cap n_max ≥ n_min (examples per client)
    test_clients, test_per_client : the held-out test set's clients and examples per client
    shared_model : every client labels with one shared (W, b) (module docstring)
    validation_fraction : f ∈ [0, 1), the share of each client's examples held out (module docstring)
    """

    seed: int
    M: int
    alpha: float = 1.0
    beta: float = 1.0
    features: int = 784
    classes: int = 10
    size_mu: float = 4.0
    size_sigma: float = 2.0
    min_size: int = 50
    max_size: int = 1000
    test_clients: int = 100
    test_per_client: int = 50
    shared_model: bool = False
    validation_fraction: float = 0.0

    name = "fedprox"

    def __post_init__(self):
        for key, value, low in (("M", self.M, 1), ("features", self.features, 1), ("classes", self.classes, 2),
                                ("min_size", self.min_size, 1), ("max_size", self.max_size, self.min_size),
                                ("test_clients", self.test_clients, 1), ("test_per_client", self.test_per_client, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"data.fedprox.{key} must be an integer ≥ {low} (got {value!r})")
        for key, value in (("alpha", self.alpha), ("beta", self.beta), ("size_sigma", self.size_sigma)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
                raise ValueError(f"data.fedprox.{key} must be a finite number ≥ 0 (got {value!r})")
        if not isinstance(self.shared_model, bool):
            raise ValueError(f"data.fedprox.shared_model must be true or false (got {self.shared_model!r})")
        if isinstance(self.size_mu, bool) or not isinstance(self.size_mu, (int, float)) or not np.isfinite(self.size_mu):
            raise ValueError(f"data.fedprox.size_mu must be a finite number (got {self.size_mu!r})")
        f = self.validation_fraction
        if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0.0 <= f < 1.0:
            raise ValueError(f"data.validation_fraction must be a number in [0, 1) (got {f!r})")
        if self.train_size(self.min_size) < 1:
            raise ValueError(f"data.validation_fraction = {f!r} holds out every example of a client of data.fedprox."
                             f"min_size = {self.min_size}; lower the fraction or raise min_size")

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (int(self.features),)

    @property
    def num_classes(self) -> int:
        return int(self.classes)

    @property
    def source(self) -> str:
        return (f"FedProx Synthetic(alpha={self.alpha}, beta={self.beta}), M={self.M}, F={self.features}, "
                f"C={self.classes}, sizes min({self.min_size} + lognormal({self.size_mu}, {self.size_sigma}), "
                f"{self.max_size}) (generated per client, seeded)"
                + (f", {self.validation_fraction:g} of each client held out" if self.validation_fraction else ""))

    def train_size(self, D: int) -> int:
        """D − round(f·D): the examples a client of D examples trains on (module docstring)."""
        return client_train_rows(D, self.validation_fraction)

    @property
    def min_train_size(self) -> int:
        """The smallest client's training examples, a lower bound on every client's (the accountant's D)."""
        return self.train_size(self.min_size)

    def _check(self, k: int) -> int:
        k = int(k)
        if not 0 <= k < self.M:
            raise ValueError(f"client id must be in [0, {self.M}) (got {k})")
        return k

    def _size(self, z: float) -> int:
        """D_k = min(n_min + ⌊exp(μ + σ z)⌋, n_max); the exponent is clipped at 700 (exp overflows beyond)."""
        return int(min(self.min_size + np.floor(np.exp(min(self.size_mu + self.size_sigma * z, 700.0))), self.max_size))

    def _model(self, rng: np.random.Generator) -> _ClientModel:
        F, C = int(self.features), int(self.classes)
        size = self._size(rng.standard_normal())
        u = self.alpha * rng.standard_normal()
        B = self.beta * rng.standard_normal()
        v = B + rng.standard_normal(F)
        W = u + rng.standard_normal((F, C))
        b = u + rng.standard_normal(C)
        if self.shared_model:  # the client's own draws are still made, so its features do not change
            shared = stream(self.seed, "synthetic-shared-model")
            W, b = shared.standard_normal((F, C)), shared.standard_normal(C)
        return _ClientModel(size, W, b, v)

    def _draw(self, rng: np.random.Generator, model: _ClientModel, n: int) -> tuple[np.ndarray, np.ndarray]:
        # x = v_k + Σ^{1/2} z with z drawn in float32 and the affine map in float32 (elementwise IEEE:
        # the same on every machine); logits in float64 by einsum (its own loops, no threaded BLAS)
        scale = np.sqrt(feature_variances(int(self.features))).astype(np.float32)
        x = rng.standard_normal((n, int(self.features)), dtype=np.float32)
        x *= scale
        x += model.v.astype(np.float32)
        logits = np.einsum("nf,fc->nc", x.astype(np.float64), model.W) + model.b
        return x, np.argmax(logits, axis=1).astype(np.int32)

    def size(self, k: int) -> int:
        """Client k's training examples: D_k (one draw of its stream) less the held-out round(f·D_k)."""
        return self.train_size(self._size(stream(self.seed, "synthetic-client", self._check(k)).standard_normal()))

    def sizes(self, clients) -> np.ndarray:
        """``[K] int64`` the training examples of the given clients (:meth:`size`)."""
        return np.array([self.size(k) for k in np.asarray(clients).reshape(-1)], dtype=np.int64)

    def _all_data(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        rng = stream(self.seed, "synthetic-client", self._check(k))
        model = self._model(rng)
        return self._draw(rng, model, model.size)

    def client_data(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Client k's training data: ``x [n, F] float32``, ``y [n] int32``, n = :meth:`size` (module docstring)."""
        x, y = self._all_data(k)
        n = self.train_size(y.size)
        return (x, y) if n == y.size else (x[:n], y[:n])

    def validation_client_ids(self) -> np.ndarray:
        """The validation set's clients, ``[min(test_clients, M)] int64`` sorted (their own stream)."""
        n = min(int(self.test_clients), int(self.M))
        return np.sort(stream(self.seed, "synthetic-validation-clients").choice(self.M, size=n, replace=False)).astype(np.int64)

    def validation_set(self) -> tuple[np.ndarray, np.ndarray]:
        """The held-out rows of the validation clients, at most ``test_per_client`` each (module docstring):
        ``x [n, F] float32``, ``y [n] int32``; needs ``validation_fraction`` > 0."""
        if not self.validation_fraction > 0:
            raise ValueError("data.evaluate_on = 'validation' needs data.validation_fraction > 0 (got 0)")
        xs, ys = [], []
        for k in self.validation_client_ids():
            x, y = self._all_data(int(k))
            start = self.train_size(y.size)
            stop = min(y.size, start + int(self.test_per_client))
            xs.append(x[start:stop])
            ys.append(y[start:stop])
        return np.concatenate(xs), np.concatenate(ys)

    def test_client_ids(self) -> np.ndarray:
        """The held-out test set's clients, ``[min(test_clients, M)] int64`` sorted."""
        n = min(int(self.test_clients), int(self.M))
        return np.sort(stream(self.seed, "synthetic-test-clients").choice(self.M, size=n, replace=False)).astype(np.int64)

    def test_set(self) -> tuple[np.ndarray, np.ndarray]:
        """Fresh examples of the test clients (module docstring): ``x [n, F] float32``, ``y [n] int32``."""
        xs, ys = [], []
        for k in self.test_client_ids():
            model = self._model(stream(self.seed, "synthetic-client", int(k)))
            x, y = self._draw(stream(self.seed, "synthetic-client-test", int(k)), model, int(self.test_per_client))
            xs.append(x)
            ys.append(y)
        return np.concatenate(xs), np.concatenate(ys)

    def train_sample(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``n`` training examples of the test clients, the first ⌈n / test clients⌉ rows of each
        client's own training data (fewer if it has fewer): the training-loss evaluation set of a run."""
        ids = self.test_client_ids()
        per = -(-int(n) // ids.size)
        xs, ys = [], []
        for k in ids:
            x, y = self.client_data(int(k))
            xs.append(x[:per])
            ys.append(y[:per])
        x, y = np.concatenate(xs), np.concatenate(ys)
        return x[:n], y[:n]
