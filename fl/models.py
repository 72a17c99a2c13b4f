"""Models by name, written so that K clients' copies run as one batched computation (model §1).

A :class:`ModelSpec` lists the parameter tensors of an architecture (in Keras's weight order)
and gives one forward pass over *stacked* parameters: every parameter carries a leading
client axis K and the input batch is ``[K, B, *input_shape]``, so the K scheduled clients'
models are evaluated together:

- dense layers: batched matrix products ``h[k] @ W[k]`` (``tf.matmul`` over the K axis);
- CNN: each client's whole network (convolutions, bias, ReLU, pooling, the dense layer) is
  written out once per client, unrolled over the static client axis in the same graph, and only
  the K logits are stacked. Only kernels that every TensorFlow build has are used (Eigen's
  convolution and its two gradients on CPU, cuDNN on GPU), so training runs with oneDNN on or off
  (``TF_ENABLE_ONEDNN_OPTS``, which TensorFlow turns on by default only on CPUs with
  AVX-512-class features), and client k's computation is exactly the one of training it alone.
  Measured against the alternatives (docs/fl.md, "Batched CNN kernels";
  ``benchmarks/fl_round.py`` reports them): a grouped ``conv2d`` (clients side by side on the
  channel axis) needs the gradient of a grouped convolution, which only oneDNN implements on
  CPU, and was slower even there; unrolling only the convolutions (pooling batched over K·B),
  a depthwise convolution summed over input channels and im2col patches with a batched matrix
  product were slower with oneDNN on and off. The graph grows linearly with K; it is traced once
  per trainer.

The global model is the K = 1 case of the same function. :meth:`ModelSpec.keras_model` builds
the equivalent Keras model (same weight shapes and order), used by the per-client ``fit``
benchmark and to check the batched forward pass against Keras.

Architectures
-------------
``mlp``  flatten → [Dense(h, ReLU) for h in hidden] → Dense(num_classes); 784-200-10 by default
         on 28×28 images (d = 159 010).
``cnn``  [Conv2D(c, k×k, same, ReLU) → MaxPool(2×2) for c in channels] → flatten →
         Dense(num_classes); channels (8, 16), k = 3 by default (d = 9 098 on 28×28 images).

Flat parameter vector: the concatenation of every tensor flattened row-major in the order of
:attr:`ModelSpec.params` (kernel before bias, layer by layer) — length d. Initialization:
Glorot-uniform kernels (limit √(6/(fan_in+fan_out))), zero biases, drawn from the stream
``(seed, "model-init")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from phy.randomness import stream

__all__ = ["MODELS", "ParamSpec", "ModelSpec", "build_model_spec"]

MODELS = ("mlp", "cnn")


@dataclass(frozen=True)
class ParamSpec:
    """One parameter tensor: name, shape, and Glorot fan-in/fan-out (0 for biases)."""

    name: str
    shape: tuple[int, ...]
    fan_in: int = 0
    fan_out: int = 0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


@dataclass(frozen=True)
class ModelSpec:
    """Architecture description with a batched forward pass (module docstring).

    Attributes
    ----------
    name : {"mlp", "cnn"}
    input_shape : tuple of int
        Per-example input shape, e.g. (28, 28, 1) or (20,).
    num_classes : int
    hidden : tuple of int
        MLP hidden widths.
    channels : tuple of int
        CNN convolution widths.
    kernel_size : int
        CNN kernel size k (k×k, "same" padding).
    """

    name: str
    input_shape: tuple[int, ...]
    num_classes: int
    hidden: tuple[int, ...] = (200,)
    channels: tuple[int, ...] = (8, 16)
    kernel_size: int = 3

    @property
    def params(self) -> tuple[ParamSpec, ...]:
        out: list[ParamSpec] = []
        if self.name == "mlp":
            width = int(np.prod(self.input_shape))
            for i, h in enumerate((*self.hidden, self.num_classes)):
                out.append(ParamSpec(f"dense{i}/kernel", (width, h), width, h))
                out.append(ParamSpec(f"dense{i}/bias", (h,)))
                width = h
        elif self.name == "cnn":
            if len(self.input_shape) != 3:
                raise ValueError(f"model.name = 'cnn' needs image inputs [H, W, C] (got input shape {self.input_shape})")
            H, W, c_in = self.input_shape
            k = self.kernel_size
            for i, c in enumerate(self.channels):
                out.append(ParamSpec(f"conv{i}/kernel", (k, k, c_in, c), k * k * c_in, k * k * c))
                out.append(ParamSpec(f"conv{i}/bias", (c,)))
                c_in, H, W = c, H // 2, W // 2
                if H < 1 or W < 1:
                    raise ValueError(f"model.channels has too many layers for input shape {self.input_shape} (each halves H and W)")
            width = H * W * c_in
            out.append(ParamSpec("dense/kernel", (width, self.num_classes), width, self.num_classes))
            out.append(ParamSpec("dense/bias", (self.num_classes,)))
        else:
            raise ValueError(f"model.name must be one of {{{', '.join(MODELS)}}} (got {self.name!r})")
        return tuple(out)

    @property
    def d(self) -> int:
        """Model dimension d (number of scalar parameters)."""
        return sum(p.size for p in self.params)

    # ------------------------------------------------------------------ parameters
    def init(self, seed: int) -> np.ndarray:
        """Initial flat parameters ``[d] float64`` (Glorot-uniform kernels, zero biases)."""
        rng = stream(seed, "model-init")
        parts = []
        for p in self.params:
            if p.fan_in:
                limit = math.sqrt(6.0 / (p.fan_in + p.fan_out))
                parts.append(rng.uniform(-limit, limit, size=p.size))
            else:
                parts.append(np.zeros(p.size))
        return np.concatenate(parts).astype(np.float32).astype(np.float64)

    def unflatten(self, flat: np.ndarray) -> list[np.ndarray]:
        """Split a flat ``[d]`` vector into the parameter tensors (numpy views)."""
        flat = np.asarray(flat)
        if flat.shape != (self.d,):
            raise ValueError(f"flat parameters must have shape ({self.d},) (got {flat.shape})")
        out, i = [], 0
        for p in self.params:
            out.append(flat[i : i + p.size].reshape(p.shape))
            i += p.size
        return out

    # ------------------------------------------------------------------ forward pass
    def logits(self, params, x, conv=None):
        """Batched forward pass.

        Parameters
        ----------
        params : list of tf.Tensor, each ``[K, *ParamSpec.shape]`` float32
        x : tf.Tensor ``[K, B, *input_shape]`` float32
        conv : callable, optional
            CNN only: a batched convolution ``conv(h [K, B, H, W, C_in], kernel [K, kh, kw, C_in,
            C_out]) -> [K, B, H, W, C_out]`` ("same" padding, stride 1); the network is then run
            layer by layer over all K clients with it (``benchmarks/fl_round.py`` compares
            candidate kernels this way). Training uses the default (None): one network per client.

        Returns
        -------
        tf.Tensor ``[K, B, num_classes]`` float32 (unnormalized log-probabilities)
        """
        import tensorflow as tf

        K = tf.shape(x)[0]
        B = tf.shape(x)[1]
        if self.name == "mlp":
            h = tf.reshape(x, [K, B, -1])
            n = len(self.hidden) + 1
            for i in range(n):
                h = tf.matmul(h, params[2 * i]) + params[2 * i + 1][:, None, :]
                if i < n - 1:
                    h = tf.nn.relu(h)
            return h
        if conv is not None:
            return self._cnn_layered(params, x, conv)
        # CNN: every client's network written out on its own (unrolled over the static K).
        Kc = params[0].shape[0]
        if Kc is None:
            raise ValueError("the batched CNN needs a static number of clients (params[0].shape[0] is unknown)")
        out = []
        for k in range(Kc):
            h = x[k]
            for i in range(len(self.channels)):
                h = tf.nn.conv2d(h, params[2 * i][k], strides=1, padding="SAME")
                h = tf.nn.max_pool2d(tf.nn.relu(h + params[2 * i + 1][k]), ksize=2, strides=2, padding="VALID")
            h = tf.reshape(h, [B, -1])
            out.append(tf.matmul(h, params[-2][k]) + params[-1][k])
        return tf.stack(out)

    def _cnn_layered(self, params, x, conv):
        """CNN with a batched convolution ``conv(h [K,B,H,W,C_in], kernel [K,kh,kw,C_in,C_out])``."""
        import tensorflow as tf

        K, B = tf.shape(x)[0], tf.shape(x)[1]
        Kc = params[0].shape[0]
        h = x
        for i, c in enumerate(self.channels):
            y = tf.nn.relu(conv(h, params[2 * i]) + params[2 * i + 1][:, None, None, None, :])
            _, _, Hh, Ww, _ = y.shape
            y = tf.nn.max_pool2d(tf.reshape(y, [Kc * B, Hh, Ww, c]), ksize=2, strides=2, padding="VALID")
            h = tf.reshape(y, [Kc, B, Hh // 2, Ww // 2, c])
        h = tf.reshape(h, [K, B, -1])
        return tf.matmul(h, params[-2]) + params[-1][:, None, :]

    # ------------------------------------------------------------------ Keras twin
    def keras_model(self):
        """The equivalent Keras model (same weights, same order as :attr:`params`)."""
        import keras

        layers = [keras.Input(shape=self.input_shape)]
        if self.name == "mlp":
            layers.append(keras.layers.Flatten())
            layers += [keras.layers.Dense(h, activation="relu") for h in self.hidden]
        else:
            for c in self.channels:
                layers.append(keras.layers.Conv2D(c, self.kernel_size, padding="same", activation="relu"))
                layers.append(keras.layers.MaxPooling2D(2))
            layers.append(keras.layers.Flatten())
        layers.append(keras.layers.Dense(self.num_classes))
        return keras.Sequential(layers)


def build_model_spec(
    name: str,
    *,
    input_shape: tuple[int, ...],
    num_classes: int,
    hidden: tuple[int, ...] = (200,),
    channels: tuple[int, ...] = (8, 16),
    kernel_size: int = 3,
) -> ModelSpec:
    """Build and check a :class:`ModelSpec` (raises ValueError naming the bad parameter)."""
    if name not in MODELS:
        raise ValueError(f"model.name must be one of {{{', '.join(MODELS)}}} (got {name!r})")
    for key, seq in (("hidden", hidden), ("channels", channels)):
        if any(isinstance(h, bool) or not isinstance(h, (int, np.integer)) or h < 1 for h in seq):
            raise ValueError(f"model.{key} must be a list of integers ≥ 1 (got {list(seq)!r})")
    if name == "cnn" and len(channels) < 1:
        raise ValueError("model.channels must list at least one convolution width for model.name = 'cnn'")
    if isinstance(kernel_size, bool) or not isinstance(kernel_size, int) or kernel_size < 1:
        raise ValueError(f"model.kernel_size must be an integer ≥ 1 (got {kernel_size!r})")
    spec = ModelSpec(name, tuple(int(s) for s in input_shape), int(num_classes), tuple(hidden), tuple(channels), int(kernel_size))
    spec.params  # noqa: B018 - validates the architecture against the input shape
    return spec
