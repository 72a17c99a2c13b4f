"""Batched-CNN forms compared by ``benchmarks/fl_round.py`` (docs/fl.md, "Batched CNN kernels").

Each is a batched convolution ``conv(h [K, B, H, W, C_in], kernel [K, kh, kw, C_in, C_out]) ->
[K, B, H, W, C_out]`` ("same" padding, stride 1) for :meth:`fl.models.ModelSpec.logits`'s ``conv``
argument; ``None`` stands for the library's own form (one network per client).
"""

from __future__ import annotations


def _grouped_conv(h, kernel):
    """Clients side by side on the channel axis, one grouped conv2d (its gradient needs oneDNN on CPU)."""
    import tensorflow as tf

    Kc, B, H, W, cin = h.shape
    k, c = kernel.shape[1], kernel.shape[-1]
    B = tf.shape(h)[1]
    xi = tf.reshape(tf.transpose(h, [1, 2, 3, 0, 4]), [B, H, W, Kc * cin])
    wi = tf.reshape(tf.transpose(kernel, [1, 2, 3, 0, 4]), [k, k, cin, Kc * c])
    y = tf.nn.conv2d(xi, wi, strides=1, padding="SAME")
    return tf.transpose(tf.reshape(y, [B, H, W, Kc, c]), [3, 0, 1, 2, 4])


def _depthwise_conv(h, kernel):
    """A depthwise conv2d (channel multiplier C_out) over [B, H, W, K·C_in], summed over C_in."""
    import tensorflow as tf

    Kc, _, H, W, cin = h.shape
    k, c = kernel.shape[1], kernel.shape[-1]
    B = tf.shape(h)[1]
    xi = tf.reshape(tf.transpose(h, [1, 2, 3, 0, 4]), [B, H, W, Kc * cin])
    wi = tf.reshape(tf.transpose(kernel, [1, 2, 0, 3, 4]), [k, k, Kc * cin, c])
    y = tf.nn.depthwise_conv2d(xi, wi, strides=[1, 1, 1, 1], padding="SAME")
    y = tf.reduce_sum(tf.reshape(y, [B, H, W, Kc, cin, c]), axis=4)
    return tf.transpose(y, [3, 0, 1, 2, 4])


def _patches_conv(h, kernel):
    """im2col (tf.image.extract_patches) and one batched matrix product over the client axis."""
    import tensorflow as tf

    Kc, _, H, W, cin = h.shape
    k, c = kernel.shape[1], kernel.shape[-1]
    B = tf.shape(h)[1]
    cols = tf.image.extract_patches(tf.reshape(h, [Kc * B, H, W, cin]), sizes=[1, k, k, 1], strides=[1, 1, 1, 1],
                                    rates=[1, 1, 1, 1], padding="SAME")
    y = tf.matmul(tf.reshape(cols, [Kc, B * H * W, k * k * cin]), tf.reshape(kernel, [Kc, k * k * cin, c]))
    return tf.reshape(y, [Kc, B, H, W, c])


def _unrolled_conv(h, kernel):
    """One plain conv2d per client, stacked (the rest of the network batched over K·B)."""
    import tensorflow as tf

    return tf.stack([tf.nn.conv2d(h[k], kernel[k], strides=1, padding="SAME") for k in range(kernel.shape[0])])


def conv_candidates():
    """Batched-CNN kernels compared in the CNN row; None is the library's (one network per client)."""
    return {"per_client_networks (fl.models)": None, "unrolled_conv2d_only": _unrolled_conv, "grouped_conv2d": _grouped_conv,
            "depthwise_sum": _depthwise_conv, "im2col_patches_matmul": _patches_conv}
