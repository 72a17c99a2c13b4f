"""One noisy Adam step of PriFedSync's clients, K clients at once (model §9.4; Zheng et al. 2021 §4, Algorithm 2).

Client k, batch b of B examples, flat parameters w ``[d]``:

    g_i  = ∇_w CE(softmax(f(w; x_i)), y_i)                       per-example gradient, i ∈ b
    ḡ_i  = g_i · min(1, C / ‖g_i‖₂)                                clipped: ‖ḡ_i‖₂ ≤ C
    g̃    = (Σ_i ḡ_i + σ C ξ) / B,   ξ ~ N(0, I_d)                  the privatised gradient (std σC/B per coordinate)
    g̃'   = g̃ + λ_wd w                                              weight decay (L2, on the released iterate)
    m ← β₁ m + (1 − β₁) g̃',  v ← β₂ v + (1 − β₂) g̃'²,  τ ← τ + 1
    w ← w − η · (m / (1 − β₁^τ)) / (√(v / (1 − β₂^τ)) + ε̂)        Adam (Kingma & Ba 2015)

Everything after g̃ is a deterministic function of the noisy gradients and of w (post-processing).

Per-example gradients: every example gets its own copy of its client's parameters (the K·B copies
stacked on the leading axis, as :class:`fl.training.VectorizedTrainer` stacks clients), so the gradient
of the summed loss with respect to the copies is the stack of per-example gradients — plain batched
matmuls, no vectorized_map and no grouped convolution (MLP only; the CNN is refused by the
configuration). Memory: K·B·d floats per step.
"""

from __future__ import annotations

__all__ = ["unflatten", "per_example_gradients", "clip_examples", "privatise", "adam_update"]


def unflatten(spec, flat):
    """``[K, d]`` → the list of ``[K, *shape]`` parameter tensors of ``spec``."""
    import tensorflow as tf

    K = tf.shape(flat)[0]
    parts = tf.split(flat, [p.size for p in spec.params], axis=1)
    return [tf.reshape(t, tf.concat([[K], p.shape], axis=0)) for t, p in zip(parts, spec.params)]


def per_example_gradients(spec, flat, x, y):
    """Per-example gradients ``[K, B, d]`` and losses ``[K, B]`` of clients' parameters ``flat [K, d]`` on
    ``x [K, B, *input]``, ``y [K, B]`` (cross-entropy in nats)."""
    import tensorflow as tf

    K, B = tf.shape(x)[0], tf.shape(x)[1]
    rep = tf.repeat(flat, B, axis=0)  # [K·B, d]: example (k, i) → row k·B + i
    xe = tf.reshape(x, tf.concat([[K * B, 1], tf.shape(x)[2:]], axis=0))
    ye = tf.reshape(y, [K * B, 1])
    with tf.GradientTape() as tape:
        tape.watch(rep)
        logits = spec.logits(unflatten(spec, rep), xe)  # [K·B, 1, classes]
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ye, logits=logits)[:, 0]
        total = tf.reduce_sum(loss)
    g = tape.gradient(total, rep)
    return tf.reshape(g, [K, B, -1]), tf.reshape(loss, [K, B])


def clip_examples(grads, clip_norm):
    """ḡ_i = g_i · min(1, C/‖g_i‖₂) over the last axis; returns (clipped, norms before clipping)."""
    import tensorflow as tf

    norms = tf.norm(grads, axis=-1)
    factor = tf.minimum(1.0, clip_norm / tf.maximum(norms, 1e-30))
    return grads * factor[..., None], norms


def privatise(clipped, noise, *, clip_norm, noise_multiplier):
    """g̃ = (Σ_i ḡ_i + σ C ξ) / B for ``clipped [K, B, d]`` and standard normal ``noise [K, d]``."""
    import tensorflow as tf

    B = tf.cast(tf.shape(clipped)[1], clipped.dtype)
    return (tf.reduce_sum(clipped, axis=1) + noise_multiplier * clip_norm * noise) / B


def adam_update(w, m, v, tau, g, *, lr, beta1, beta2, eps, weight_decay):
    """One Adam step per client (rows of ``w, m, v [K, d]``, step counts ``tau [K]``); returns (w, m, v, τ)."""
    import tensorflow as tf

    g = g + weight_decay * w
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * tf.square(g)
    tau = tau + 1.0
    m_hat = m / (1.0 - tf.pow(beta1, tau))[:, None]
    v_hat = v / (1.0 - tf.pow(beta2, tau))[:, None]
    return w - lr * m_hat / (tf.sqrt(v_hat) + eps), m, v, tau
