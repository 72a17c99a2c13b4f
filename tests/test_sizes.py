"""fl.sizes predicts D (examples per client) exactly as loading, splitting and partitioning produce it."""

from types import SimpleNamespace

import numpy as np
import pytest

from fl.data import load_dataset
from fl.partition import make_partition
from fl.sizes import DIGITS_CLASS_COUNTS, examples_per_client, train_size
from fl.validation import carve_validation


def test_digits_class_counts_are_scikit_learns():
    from sklearn.datasets import load_digits

    assert tuple(np.bincount(load_digits().target)) == DIGITS_CLASS_COUNTS


@pytest.mark.parametrize("name, test_fraction, validation, kind, M", [
    ("digits", 0.25, 0.0, "iid", 100), ("digits", 0.25, 0.1, "shards", 20), ("digits", 0.3, 0.0, "dirichlet", 7),
    ("digits", 0.1, 0.25, "iid", 13), ("synthetic", 0.25, 0.0, "iid", 50), ("synthetic", 0.2, 0.15, "shards", 9),
])
def test_examples_per_client_as_the_run_has_them(name, test_fraction, validation, kind, M):
    data = SimpleNamespace(name=name, test_fraction=test_fraction, validation_fraction=validation,
                           synthetic_samples=1000, synthetic_features=5, synthetic_classes=3)
    ds = load_dataset(name, seed=4, test_fraction=test_fraction, synthetic_samples=1000, synthetic_features=5,
                      synthetic_classes=3)
    if validation:
        ds = carve_validation(ds, fraction=validation, seed=4)
    assert train_size(data, seed=4) == ds.y_train.size
    part = make_partition(ds.y_train, M, kind=kind, seed=4, shards_per_client=2, alpha=0.5)
    assert examples_per_client(ds.y_train.size, M, kind=kind, shards_per_client=2) == part.shape[1]
