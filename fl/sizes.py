"""Training-set sizes without loading the data (model §8): what calibration and planning need of D.

D, the examples per client, enters the item-level accountant (record sampling q = B/D, model §7.3).
A calibration runs before any data is loaded, so it takes D from the public class counts of each
data set and the same stratified rounding the loaders use (:func:`fl.data.load_digits`: per class
the first ``round(test_fraction·n_c)`` go to the test set; :func:`fl.validation.validation_indices`:
per class ``round(validation_fraction·n_c)`` to the validation split) and the partitions' sizes
(:mod:`fl.partition`: ⌊n/M⌋ per client, shards S·⌊n/(M·S)⌋). The synthetic task's labels are
random, so its split is computed from the generated labels (cheap: no images).
"""

from __future__ import annotations

__all__ = ["DIGITS_CLASS_COUNTS", "MNIST_TRAIN_CLASS_COUNTS", "FASHION_MNIST_TRAIN_CLASS_COUNTS", "train_class_counts",
           "train_size", "examples_per_client", "client_train_rows"]

#: scikit-learn's digits, examples per class 0..9 (1 797 in all)
DIGITS_CLASS_COUNTS = (178, 182, 177, 183, 181, 182, 181, 179, 174, 180)
#: MNIST's 60 000 training images per class 0..9
MNIST_TRAIN_CLASS_COUNTS = (5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949)
#: Fashion-MNIST's 60 000 training images: 6 000 per class
FASHION_MNIST_TRAIN_CLASS_COUNTS = (6000,) * 10


def train_class_counts(data, *, seed: int = 0) -> list[int]:
    """Training examples per class of the ``[data]`` table (before any validation split)."""
    if data.name == "fedprox":
        raise ValueError("data.name = 'fedprox' has no fixed training set (clients are generated when sampled); "
                         "its examples per client are bounded below by data.fedprox.min_size")
    if data.name == "digits":
        return [n - int(round(data.test_fraction * n)) for n in DIGITS_CLASS_COUNTS]
    if data.name == "mnist":
        return list(MNIST_TRAIN_CLASS_COUNTS)
    if data.name == "fashion-mnist":
        return list(FASHION_MNIST_TRAIN_CLASS_COUNTS)
    if data.name == "synthetic":
        import numpy as np

        from fl.data import make_synthetic

        n_test = max(1, int(round(data.test_fraction * data.synthetic_samples)))
        y = make_synthetic(seed=seed, n_train=data.synthetic_samples, n_test=n_test, num_features=data.synthetic_features,
                           num_classes=data.synthetic_classes).y_train
        return [int(c) for c in np.bincount(y, minlength=data.synthetic_classes)]
    raise ValueError(f"data.name must be one of {{digits, mnist, fashion-mnist, synthetic}} (got {data.name!r})")


def train_size(data, *, seed: int = 0) -> int:
    """Training examples a run of ``[data]`` trains on (after the stratified validation split)."""
    f = float(getattr(data, "validation_fraction", 0.0) or 0.0)
    return sum(n - (int(round(f * n)) if f > 0 else 0) for n in train_class_counts(data, seed=seed))


def examples_per_client(n: int, M: int, *, kind: str, shards_per_client: int = 2) -> int:
    """D for ``n`` training examples over M clients (:mod:`fl.partition`)."""
    if kind == "shards":
        return int(shards_per_client) * (n // (M * int(shards_per_client)))
    return n // M


def client_train_rows(D: int, validation_fraction: float) -> int:
    """D − round(f·D): the examples a population client of D examples trains on when the last round(f·D) are held
    out for validation (:class:`fl.fedprox_synthetic.FedProxSynthetic`, docs/fl.md)."""
    return int(D) - int(round(float(validation_fraction) * int(D)))
