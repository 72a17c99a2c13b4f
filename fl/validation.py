"""A validation split carved from the training data, for choosing hyper-parameters (never the test set).

``carve_validation`` removes a stratified fraction of the training examples (per class c, the
first ``round(fraction·n_c)`` of a permutation drawn from the stream ``(seed, "validation-split")``)
and keeps them apart. A run with ``data.validation_fraction > 0`` trains on the rest; with
``data.evaluate_on = "validation"`` its evaluation columns (``test_loss``, ``test_accuracy``)
are measured on the validation examples and the test set is not touched at all (model §10:
learning rates are chosen on a validation split).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from phy.randomness import stream

__all__ = ["validation_indices", "carve_validation"]


def validation_indices(y_train: np.ndarray, *, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(kept training indices, validation indices), both sorted; stratified by label."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"data.validation_fraction must be in (0, 1) (got {fraction})")
    y = np.asarray(y_train)
    rng = stream(seed, "validation-split")
    val, keep = [], []
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        idx = idx[rng.permutation(idx.size)]
        n_val = int(round(fraction * idx.size))
        val.append(idx[:n_val])
        keep.append(idx[n_val:])
    return np.sort(np.concatenate(keep)), np.sort(np.concatenate(val))


def carve_validation(data, *, fraction: float, seed: int, evaluate_on: str = "test"):
    """The :class:`fl.data.Dataset` without its validation examples; with ``evaluate_on =
    "validation"`` its test arrays are the validation examples instead of the test set."""
    keep, val = validation_indices(data.y_train, fraction=fraction, seed=seed)
    out = dataclasses.replace(data, x_train=data.x_train[keep], y_train=data.y_train[keep])
    if evaluate_on == "validation":
        out = dataclasses.replace(out, x_test=data.x_train[val], y_test=data.y_train[val],
                                  source=f"{data.source}; evaluated on a {fraction:g} validation split of the training data")
    elif evaluate_on != "test":
        raise ValueError(f"data.evaluate_on must be one of {{test, validation}} (got {evaluate_on!r})")
    return out
