"""Partitions of a training set over M clients (model §1, §8).

Every client receives the same number D of examples (model §1 choice: equal sizes); a
partition is an ``[M, D] int64`` array of row indices into the training set, disjoint
across clients. The remaining ``n − M·D`` examples are unused. All partitions are pure
functions of (labels, M, parameters, seed), drawn from the stream ``(seed, "partition")``.

``iid``
    A uniform permutation of the n examples; client m gets entries ``[m·D, (m+1)·D)``,
    D = ⌊n/M⌋.
``shards`` (model §8)
    Keep ``M·S·z`` examples (z = ⌊n/(M·S)⌋, S shards per client) chosen uniformly, sort them by
    label (ties in random order), cut the sorted list into M·S shards of z consecutive
    examples, and give each client S shards chosen by a uniform permutation of the shards.
    D = S·z. With S = 2 each client sees at most 4 labels and typically 2.
``dirichlet``
    Client m draws class proportions p_m ~ Dir(α·1_C) and fills its D = ⌊n/M⌋ slots by
    multinomial draws from p_m restricted to the classes that still have unassigned examples
    (the shortfall of an exhausted class is redrawn from the remaining ones); within a class
    examples are taken in a random order. Small α gives strong label skew; α → ∞ approaches
    IID.

Placement (``partition.placement``, model §8): "random" keeps client m on row m (the rows are
already in random order). "by-distance" ties labels to position: given one key per client (its
distance to the base station in the cell's drop, model §5.1), the client with the k-th smallest key
receives the row with the k-th smallest mean label (ties: the lower row index first), so near
clients hold the low labels and far clients the high ones. With one shard per client each label
occupies one ring of the cell; with two, a client's mean label orders it and a label is spread over
the rings its partners' labels put it in. The rows themselves are unchanged.
"""

from __future__ import annotations

import numpy as np

from phy.randomness import stream

__all__ = ["PARTITIONS", "PLACEMENTS", "place_by_order", "iid_partition", "shard_partition", "dirichlet_partition", "make_partition", "label_histograms", "summarize_partition"]

PARTITIONS = ("iid", "shards", "dirichlet")
PLACEMENTS = ("random", "by-distance")


def _check_m(labels: np.ndarray, M: int, per_client_min: int = 1) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be a 1-D array (got shape {labels.shape})")
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)) or M < 1:
        raise ValueError(f"partition.clients must be an integer ≥ 1 (got {M!r})")
    if labels.size < M * per_client_min:
        raise ValueError(
            f"partition.clients = {M} is too large for {labels.size} training examples "
            f"(need at least {per_client_min} per client)"
        )
    return labels


def iid_partition(labels: np.ndarray, M: int, *, seed: int) -> np.ndarray:
    """Uniform random split into M equal parts; returns ``[M, ⌊n/M⌋] int64``."""
    labels = _check_m(labels, M)
    D = labels.size // M
    perm = stream(seed, "partition").permutation(labels.size)
    return perm[: M * D].reshape(M, D).astype(np.int64)


def shard_partition(labels: np.ndarray, M: int, *, seed: int, shards_per_client: int = 2) -> np.ndarray:
    """Label-sorted shards, ``shards_per_client`` per client (model §8); returns ``[M, D] int64``."""
    if isinstance(shards_per_client, bool) or not isinstance(shards_per_client, (int, np.integer)) or shards_per_client < 1:
        raise ValueError(f"partition.shards_per_client must be an integer ≥ 1 (got {shards_per_client!r})")
    labels = _check_m(labels, M, per_client_min=shards_per_client)
    S = int(shards_per_client)
    z = labels.size // (M * S)
    rng = stream(seed, "partition")
    kept = rng.permutation(labels.size)[: M * S * z]
    # Stable sort by label of a randomly ordered subset: ties end up in random order.
    ordered = kept[np.argsort(labels[kept], kind="stable")]
    shards = ordered.reshape(M * S, z)
    assignment = rng.permutation(M * S).reshape(M, S)
    return shards[assignment].reshape(M, S * z).astype(np.int64)


def dirichlet_partition(labels: np.ndarray, M: int, *, seed: int, alpha: float) -> np.ndarray:
    """Dirichlet(α) label skew with equal client sizes (module docstring); ``[M, ⌊n/M⌋] int64``."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"partition.alpha must be a finite number > 0 (got {alpha!r})")
    labels = _check_m(labels, M)
    D = labels.size // M
    rng = stream(seed, "partition")
    classes = np.unique(labels)
    pools = [np.flatnonzero(labels == c) for c in classes]
    pools = [p[rng.permutation(p.size)] for p in pools]
    remaining = np.array([p.size for p in pools], dtype=np.int64)
    taken = np.zeros_like(remaining)
    out = np.empty((M, D), dtype=np.int64)
    for m in range(M):
        p = rng.dirichlet(np.full(classes.size, float(alpha)))
        counts = np.zeros(classes.size, dtype=np.int64)
        need = D
        while need > 0:
            avail = remaining - counts
            w = np.where(avail > 0, p, 0.0)
            if w.sum() <= 0.0:  # every class the client likes is exhausted: fall back to availability
                w = avail.astype(np.float64)
            draw = rng.multinomial(need, w / w.sum())
            draw = np.minimum(draw, avail)
            counts += draw
            need = D - int(counts.sum())
        row = [pools[c][taken[c] : taken[c] + counts[c]] for c in range(classes.size)]
        taken += counts
        remaining -= counts
        out[m] = np.concatenate(row)
    return out


def make_partition(labels: np.ndarray, M: int, *, kind: str, seed: int, shards_per_client: int = 2, alpha: float = 0.5) -> np.ndarray:
    """Dispatch on ``kind`` ∈ :data:`PARTITIONS`."""
    if kind == "iid":
        return iid_partition(labels, M, seed=seed)
    if kind == "shards":
        return shard_partition(labels, M, seed=seed, shards_per_client=shards_per_client)
    if kind == "dirichlet":
        return dirichlet_partition(labels, M, seed=seed, alpha=alpha)
    raise ValueError(f"partition.kind must be one of {{{', '.join(PARTITIONS)}}} (got {kind!r})")


def place_by_order(labels: np.ndarray, partition: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The partition's rows given out in label order along ``key`` (module docstring: "by-distance").

    Returns ``out [M, D]`` with ``out[c] = partition[r_k]`` for the client c of the k-th smallest ``key``
    (ties: lower identity first) and r_k the row of the k-th smallest mean label (ties: lower row first).
    """
    partition = np.asarray(partition)
    key = np.asarray(key, dtype=np.float64)
    if key.shape != (partition.shape[0],) or not np.all(np.isfinite(key)):
        raise ValueError(f"placement needs one finite key per client ({partition.shape[0]}; got shape {key.shape})")
    mean_label = np.asarray(labels)[partition].mean(axis=1)
    rows = np.argsort(mean_label, kind="stable")
    clients = np.argsort(key, kind="stable")
    out = np.empty_like(partition)
    out[clients] = partition[rows]
    return out


def label_histograms(labels: np.ndarray, partition: np.ndarray, num_classes: int) -> np.ndarray:
    """``[M, num_classes] int64``: entry (m, c) counts client m's examples of label c."""
    y = np.asarray(labels)[np.asarray(partition)]
    M = y.shape[0]
    hist = np.zeros((M, num_classes), dtype=np.int64)
    np.add.at(hist, (np.repeat(np.arange(M), y.shape[1]), y.ravel()), 1)
    return hist


def summarize_partition(labels: np.ndarray, partition: np.ndarray, num_classes: int) -> dict:
    """Summary of the per-client label histograms (for config.json and reports).

    Returns a dict with ``clients`` (M), ``examples_per_client`` (D), ``labels_per_client``
    (min / mean / max number of distinct labels a client holds), ``max_label_share`` (mean
    over clients of the largest label's fraction) and ``histograms`` (the M×C counts as lists).
    """
    hist = label_histograms(labels, partition, num_classes)
    distinct = (hist > 0).sum(axis=1)
    share = hist.max(axis=1) / hist.sum(axis=1)
    return {
        "clients": int(hist.shape[0]),
        "examples_per_client": int(partition.shape[1]),
        "labels_per_client": {"min": int(distinct.min()), "mean": float(distinct.mean()), "max": int(distinct.max())},
        "max_label_share": float(share.mean()),
        "histograms": hist.tolist(),
    }
