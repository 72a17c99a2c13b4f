"""Data sets for the federated-learning experiments (model §8).

Three sources, all returned as a :class:`Dataset` with pixels (or features) scaled to [0, 1]
and integer labels:

``fashion-mnist`` / ``mnist``
    IDX files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each raw or ``.gz``), searched in
    this order: an explicit directory; ``$FLORAS_DATA/<name>``; for Fashion-MNIST also
    ``/usr/share/datasets/fashion-mnist`` (Debian package ``dataset-fashion-mnist``) and
    Keras's cache ``~/.keras/datasets/fashion-mnist``. MNIST is not packaged anywhere: the
    user supplies its IDX files (same names) in a directory of their choice.
``digits``
    scikit-learn's bundled 8×8 digits (1797 images, always available), split into train and
    test sets by a seeded, stratified permutation from the stream ``(seed, "digits-split")``.
``synthetic``
    A seeded Gaussian-mixture classification task for fast tests: class c has a mean
    μ_c ~ N(0, I)·separation, and a sample is μ_c + N(0, I); features are then affinely
    mapped to [0, 1] by the training set's per-feature min and max.

Shapes and dtypes: images are ``[n, H, W, 1] float32`` in [0, 1], feature vectors
``[n, F] float32`` in [0, 1]; labels are ``[n] int32`` in ``[0, num_classes)``.
"""

from __future__ import annotations

import gzip
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from phy.randomness import stream

__all__ = [
    "DATASETS",
    "Dataset",
    "IDX_FILES",
    "load_dataset",
    "load_digits",
    "load_idx_dataset",
    "make_synthetic",
    "read_idx",
    "idx_search_path",
]

DATASETS = ("fashion-mnist", "mnist", "digits", "synthetic")

#: File stems of the IDX format (Fashion-MNIST and MNIST share them).
IDX_FILES = {
    "x_train": "train-images-idx3-ubyte",
    "y_train": "train-labels-idx1-ubyte",
    "x_test": "t10k-images-idx3-ubyte",
    "y_test": "t10k-labels-idx1-ubyte",
}

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


@dataclass(frozen=True)
class Dataset:
    """A labelled train/test pair.

    Attributes
    ----------
    name : str
    x_train, x_test : float32 arrays ``[n, *input_shape]`` in [0, 1]
    y_train, y_test : int32 arrays ``[n]``
    num_classes : int
    source : str
        Where the data came from (a repo-independent description, e.g. the directory of the
        IDX files or "scikit-learn digits").
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int
    source: str

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])


def read_idx(path: Path) -> np.ndarray:
    """Read one IDX file (raw or gzip-compressed, detected by its magic bytes)."""
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4 : 4 + 4 * ndim])
    offset = 4 + 4 * ndim
    count = int(np.prod(dims)) if dims else 1
    if len(raw) - offset != count * dtype.itemsize:
        raise ValueError(f"{path}: IDX header promises {dims} items of {dtype} but the file holds {len(raw) - offset} bytes")
    return np.frombuffer(raw, dtype=dtype, count=count, offset=offset).reshape(dims)


def _find_file(directory: Path, stem: str) -> Path | None:
    for candidate in (directory / stem, directory / (stem + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def idx_search_path(name: str, data_dir: str | os.PathLike | None = None) -> list[Path]:
    """Directories searched for the IDX files of ``name``, in order (see module docstring)."""
    dirs: list[Path] = []
    if data_dir is not None:
        dirs.append(Path(data_dir).expanduser())
    env = os.environ.get("FLORAS_DATA")
    if env:
        dirs.append(Path(env).expanduser() / name)
    if name == "fashion-mnist":
        dirs.append(Path("/usr/share/datasets/fashion-mnist"))
        dirs.append(Path("~/.keras/datasets/fashion-mnist").expanduser())
    return dirs


def load_idx_dataset(name: str, data_dir: str | os.PathLike | None = None) -> Dataset:
    """Load Fashion-MNIST or MNIST from IDX files (search order: :func:`idx_search_path`)."""
    if name not in ("fashion-mnist", "mnist"):
        raise ValueError(f"data.name must be 'fashion-mnist' or 'mnist' for IDX files (got {name!r})")
    searched = idx_search_path(name, data_dir)
    for directory in searched:
        files = {key: _find_file(directory, stem) for key, stem in IDX_FILES.items()}
        if all(files.values()):
            arrays = {key: read_idx(path) for key, path in files.items()}
            for split in ("train", "test"):
                x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
                if x.ndim != 3 or y.ndim != 1 or x.shape[0] != y.shape[0]:
                    raise ValueError(f"{directory}: {split} images {x.shape} and labels {y.shape} do not match")
            y_train = arrays["y_train"].astype(np.int32)
            y_test = arrays["y_test"].astype(np.int32)
            num_classes = int(max(y_train.max(), y_test.max())) + 1
            return Dataset(
                name=name,
                x_train=(arrays["x_train"].astype(np.float32) / 255.0)[..., None],
                y_train=y_train,
                x_test=(arrays["x_test"].astype(np.float32) / 255.0)[..., None],
                y_test=y_test,
                num_classes=num_classes,
                source=f"IDX files in {directory.name}/",
            )
    where = ", ".join(str(d) for d in searched) or "(no directory)"
    if name == "fashion-mnist":
        how = (
            "install the Debian package 'dataset-fashion-mnist' (apt-get install dataset-fashion-mnist), "
            "or put the four IDX files (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], "
            "t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]) in $FLORAS_DATA/fashion-mnist "
            "or in the directory given by data.dir"
        )
    else:
        how = (
            "no package ships MNIST: put its four IDX files (train-images-idx3-ubyte[.gz], "
            "train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz]) "
            "in $FLORAS_DATA/mnist or in the directory given by data.dir"
        )
    raise ValueError(f"data.name = {name!r}: IDX files not found (searched {where}); {how}")


def load_digits(*, seed: int, test_fraction: float = 0.25) -> Dataset:
    """scikit-learn's 8×8 digits, split by a seeded stratified permutation.

    Pixels (0..16) are divided by 16. For every class c the indices of c are permuted by the
    stream ``(seed, "digits-split")`` and the first ``round(test_fraction·n_c)`` go to the
    test set. Shapes: ``[n, 8, 8, 1] float32``.
    """
    from sklearn.datasets import load_digits as sk_load_digits

    if not 0.0 < test_fraction < 1.0:
        raise ValueError(f"data.test_fraction must be in (0, 1) (got {test_fraction})")
    bunch = sk_load_digits()
    images = (bunch.images.astype(np.float32) / 16.0)[..., None]
    labels = bunch.target.astype(np.int32)
    rng = stream(seed, "digits-split")
    test_idx, train_idx = [], []
    for c in range(10):
        idx = np.flatnonzero(labels == c)
        idx = idx[rng.permutation(idx.size)]
        n_test = int(round(test_fraction * idx.size))
        test_idx.append(idx[:n_test])
        train_idx.append(idx[n_test:])
    train = np.sort(np.concatenate(train_idx))
    test = np.sort(np.concatenate(test_idx))
    return Dataset("digits", images[train], labels[train], images[test], labels[test], 10, "scikit-learn digits")


def make_synthetic(
    *, seed: int, n_train: int = 2000, n_test: int = 500, num_features: int = 20, num_classes: int = 4, separation: float = 1.5
) -> Dataset:
    """Seeded Gaussian-mixture task (see module docstring). Shapes ``[n, num_features] float32``."""
    for name, value, low in (("n_train", n_train, 1), ("n_test", n_test, 1), ("num_features", num_features, 1), ("num_classes", num_classes, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"data.synthetic_{name} must be an integer ≥ {low} (got {value!r})")
    rng = stream(seed, "synthetic-data")
    means = rng.standard_normal((num_classes, num_features)) * separation

    def draw(n):
        y = rng.integers(0, num_classes, size=n)
        return means[y] + rng.standard_normal((n, num_features)), y.astype(np.int32)

    x_train, y_train = draw(n_train)
    x_test, y_test = draw(n_test)
    lo, hi = x_train.min(axis=0), x_train.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    scale = lambda x: np.clip((x - lo) / span, 0.0, 1.0).astype(np.float32)  # noqa: E731
    return Dataset("synthetic", scale(x_train), y_train, scale(x_test), y_test, num_classes, "synthetic Gaussian mixture")


def load_dataset(
    name: str,
    *,
    seed: int,
    data_dir: str | os.PathLike | None = None,
    test_fraction: float = 0.25,
    synthetic_samples: int = 2000,
    synthetic_features: int = 20,
    synthetic_classes: int = 4,
) -> Dataset:
    """Load the data set ``name`` ∈ :data:`DATASETS`."""
    if name in ("fashion-mnist", "mnist"):
        return load_idx_dataset(name, data_dir)
    if name == "digits":
        return load_digits(seed=seed, test_fraction=test_fraction)
    if name == "synthetic":
        n_test = max(1, int(round(test_fraction * synthetic_samples)))
        return make_synthetic(
            seed=seed, n_train=synthetic_samples, n_test=n_test, num_features=synthetic_features, num_classes=synthetic_classes
        )
    raise ValueError(f"data.name must be one of {{{', '.join(DATASETS)}}} (got {name!r})")
