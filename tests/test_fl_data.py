"""Data sets and partitions (model §1, §8): loaders, sizes, disjointness, label skew."""

import gzip
import struct

import numpy as np
import pytest

from fl.data import load_dataset, load_digits, load_idx_dataset, make_synthetic, read_idx
from fl.partition import (
    dirichlet_partition,
    iid_partition,
    label_histograms,
    make_partition,
    shard_partition,
    summarize_partition,
)
from phy.randomness import stream


def _write_idx(path, array, *, compress):
    codes = {np.dtype(np.uint8): 0x08}
    header = bytes([0, 0, codes[array.dtype], array.ndim]) + struct.pack(">" + "I" * array.ndim, *array.shape)
    data = header + array.tobytes()
    path.write_bytes(gzip.compress(data) if compress else data)


def _fake_idx_dir(directory, *, compress, n_train=12, n_test=5):
    rng = stream(0, "test-idx")
    directory.mkdir(parents=True)
    arrays = {
        "train-images-idx3-ubyte": rng.integers(0, 256, size=(n_train, 28, 28)).astype(np.uint8),
        "train-labels-idx1-ubyte": rng.integers(0, 10, size=n_train).astype(np.uint8),
        "t10k-images-idx3-ubyte": rng.integers(0, 256, size=(n_test, 28, 28)).astype(np.uint8),
        "t10k-labels-idx1-ubyte": rng.integers(0, 10, size=n_test).astype(np.uint8),
    }
    for stem, arr in arrays.items():
        _write_idx(directory / (stem + (".gz" if compress else "")), arr, compress=compress)
    return arrays


@pytest.mark.parametrize("compress", [False, True])
def test_idx_loader_reads_raw_and_gzip(tmp_path, compress):
    arrays = _fake_idx_dir(tmp_path / "d", compress=compress)
    ds = load_idx_dataset("mnist", tmp_path / "d")
    assert ds.x_train.shape == (12, 28, 28, 1) and ds.x_train.dtype == np.float32
    np.testing.assert_array_equal(ds.x_train[..., 0], arrays["train-images-idx3-ubyte"].astype(np.float32) / 255.0)
    np.testing.assert_array_equal(ds.y_test, arrays["t10k-labels-idx1-ubyte"])
    assert 0.0 <= ds.x_test.min() and ds.x_test.max() <= 1.0


def test_idx_search_uses_floras_data_and_explains_when_missing(tmp_path, monkeypatch):
    _fake_idx_dir(tmp_path / "mnist", compress=True)
    monkeypatch.setenv("FLORAS_DATA", str(tmp_path))
    assert load_idx_dataset("mnist").x_train.shape[0] == 12
    monkeypatch.setenv("FLORAS_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="IDX files not found.*train-images-idx3-ubyte"):
        load_idx_dataset("mnist")


def test_read_idx_rejects_truncated_file(tmp_path):
    p = tmp_path / "x"
    _write_idx(p, np.zeros((3, 2), np.uint8), compress=False)
    p.write_bytes(p.read_bytes()[:-1])
    with pytest.raises(ValueError, match="IDX header promises"):
        read_idx(p)


def _fashion_mnist_present() -> bool:
    from fl.data import IDX_FILES, _find_file, idx_search_path

    return any(all(_find_file(d, stem) for stem in IDX_FILES.values()) for d in idx_search_path("fashion-mnist"))


@pytest.mark.skipif(not _fashion_mnist_present(),
                    reason="Fashion-MNIST IDX files not installed (apt-get install dataset-fashion-mnist, "
                           "or put them in $FLORAS_DATA/fashion-mnist); .ci/run installs them")
def test_fashion_mnist_from_the_installed_package():
    # Debian's dataset-fashion-mnist (installed by .ci/run) or another location of the search path.
    ds = load_dataset("fashion-mnist", seed=0)
    assert ds.x_train.shape == (60000, 28, 28, 1) and ds.x_test.shape == (10000, 28, 28, 1)
    assert ds.num_classes == 10
    np.testing.assert_array_equal(np.bincount(ds.y_train), np.full(10, 6000))
    assert 0.0 <= ds.x_train.min() and ds.x_train.max() == 1.0


def test_digits_split_is_seeded_stratified_and_complete():
    a, b, c = load_digits(seed=1), load_digits(seed=1), load_digits(seed=2)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    assert not np.array_equal(a.y_train, c.y_train) or not np.array_equal(a.x_train, c.x_train)
    assert a.y_train.size + a.y_test.size == 1797 and a.x_train.shape[1:] == (8, 8, 1)
    counts_test = np.bincount(a.y_test, minlength=10)
    counts_all = counts_test + np.bincount(a.y_train, minlength=10)
    np.testing.assert_array_equal(counts_test, np.round(0.25 * counts_all).astype(int))
    assert a.x_train.max() == 1.0


def test_synthetic_task_is_seeded():
    a, b = make_synthetic(seed=3, n_train=50, n_test=20), make_synthetic(seed=3, n_train=50, n_test=20)
    np.testing.assert_array_equal(a.x_train, b.x_train)
    assert a.x_train.shape == (50, 20) and a.x_train.min() >= 0.0 and a.x_train.max() <= 1.0


def _labels(n=6000, classes=10, seed=0):
    return stream(seed, "test-labels").integers(0, classes, size=n).astype(np.int32)


def _check_disjoint_equal(part, n):
    flat = part.ravel()
    assert np.unique(flat).size == flat.size and flat.min() >= 0 and flat.max() < n


def test_iid_partition_sizes_disjoint_and_seeded():
    y = _labels(1003)
    p = iid_partition(y, 10, seed=4)
    assert p.shape == (10, 100)
    _check_disjoint_equal(p, y.size)
    np.testing.assert_array_equal(p, iid_partition(y, 10, seed=4))
    assert not np.array_equal(p, iid_partition(y, 10, seed=5))


def test_shard_partition_two_sorted_shards_per_client():
    y = _labels(6000)
    M, S = 100, 2
    p = shard_partition(y, M, seed=1, shards_per_client=S)
    z = 6000 // (M * S)
    assert p.shape == (M, S * z)
    _check_disjoint_equal(p, y.size)
    shards = y[p].reshape(M, S, z)
    # every shard is a run of the label-sorted list: its labels are non-decreasing
    assert np.all(np.diff(shards, axis=2) >= 0)
    # with 600 examples per label and shards of 30, a shard spans ≤ 2 labels, a client ≤ 2·S
    hist = label_histograms(y, p, 10)
    assert ((hist > 0).sum(axis=1) <= 2 * S).all()
    summary = summarize_partition(y, p, 10)
    assert summary["labels_per_client"]["mean"] <= 2.5 and summary["examples_per_client"] == S * z
    np.testing.assert_array_equal(p, make_partition(y, M, kind="shards", seed=1, shards_per_client=S))


@pytest.mark.parametrize("alpha", [0.1, 10.0])
def test_dirichlet_partition_label_skew_matches_dirichlet_multinomial(alpha):
    # Client m's label counts are Dirichlet-multinomial(D, α·1_C) as long as no class has run out:
    # E Σ_c (n_c/D − 1/C)² = (1 − 1/C)(αC + D)/(D(αC + 1)). Here 10 classes of 5000 and M·D = n, so
    # the last clients fill from what remains; the first half of the clients (25 000 slots, about
    # 2 500 per class) draws unconstrained with overwhelming probability. Tolerance: 4 standard
    # errors of the mean over those 100 independent clients.
    C, M = 10, 200
    y = np.repeat(np.arange(C), 5000).astype(np.int32)
    y = y[stream(0, "test-perm").permutation(y.size)]
    p = dirichlet_partition(y, M, seed=2, alpha=alpha)
    D = 250
    assert p.shape == (M, D)
    _check_disjoint_equal(p, y.size)
    frac = label_histograms(y, p, C)[: M // 2] / D
    stat = ((frac - 1.0 / C) ** 2).sum(axis=1)
    expected = (1 - 1 / C) * (alpha * C + D) / (D * (alpha * C + 1))
    se = stat.std(ddof=1) / np.sqrt(stat.size)
    assert abs(stat.mean() - expected) < 4 * se, (stat.mean(), expected, se)
    np.testing.assert_array_equal(p, dirichlet_partition(y, M, seed=2, alpha=alpha))


def test_partitions_reject_bad_parameters():
    y = _labels(100)
    with pytest.raises(ValueError, match="partition.clients"):
        iid_partition(y, 0, seed=0)
    with pytest.raises(ValueError, match="partition.alpha"):
        dirichlet_partition(y, 5, seed=0, alpha=0.0)
    with pytest.raises(ValueError, match="partition.kind"):
        make_partition(y, 5, kind="pathological", seed=0)


@pytest.mark.parametrize("kind", ["iid", "shards", "dirichlet"])
def test_sixty_thousand_examples_over_six_thousand_clients(kind):
    # Fashion-MNIST's training set size and label counts (6 000 per class) over M = 6 000 clients:
    # D = ⌊60 000/6 000⌋ = 10 (iid, dirichlet) and S·⌊n/(M·S)⌋ = 2·5 = 10 (shards), disjoint.
    y = np.repeat(np.arange(10), 6000).astype(np.int32)
    y = y[stream(0, "test-perm").permutation(y.size)]
    p = make_partition(y, 6000, kind=kind, seed=3, shards_per_client=2, alpha=0.5)
    assert p.shape == (6000, 10)
    _check_disjoint_equal(p, y.size)


def test_too_many_clients_are_refused_naming_the_key():
    # D = ⌊n/M⌋ ≥ 1 needs M ≤ n; shards need M·S ≤ n (one example per shard at least)
    y = _labels(600)
    assert make_partition(y, 600, kind="iid", seed=0).shape == (600, 1)
    for kind, M in (("iid", 601), ("dirichlet", 601), ("shards", 301)):
        with pytest.raises(ValueError, match=r"partition.clients = \d+ is too large for 600 training examples"):
            make_partition(y, M, kind=kind, seed=0, shards_per_client=2, alpha=1.0)
