"""Transmit-side normalization and server-side de-normalization (model §2).

Two rules:

``paper``
    μ_k = mean of the d entries of x_k; C_max = max_k ‖x_k − μ_k·1‖₂ over the K scheduled
    clients; s_k = C·(x_k − μ_k·1)/C_max, so ‖s_k‖₂ ≤ C. De-normalization:
    x̂ = (C_max/C)·ŝ + (Σ_k μ_k)·1. C_max depends on every scheduled client's data: the
    sensitivity of model §7 holds only if C_max is treated as public (listed by the
    privacy report).
``clip``
    A fixed public clip norm R: s_k = (C/R)·clip_R(x_k − μ_k·1), clip_R(v) = v·min(1, R/‖v‖₂).
    De-normalization: x̂ = (R/C)·ŝ + (Σ_k μ_k)·1. μ_k is sent on the control channel and is
    released unprotected.

Units: x_k is in model units; s_k is in transmit-amplitude units (√W) with ‖s_k‖₂ ≤ C and
per-symbol average power ‖s_k‖²/d ≤ P when C = √(d·P) (the default, model §2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NORMALIZATIONS", "Normalized", "RowFactors", "ClippedRows", "normalize", "row_factors", "clipped_rows",
           "denormalize", "signal_energy"]

NORMALIZATIONS = ("paper", "clip")


@dataclass(frozen=True)
class Normalized:
    """Normalized transmit vectors and the side information sent on the control channel.

    Attributes
    ----------
    s : [K, d] float64
        Normalized vectors s_k, ‖s_k‖₂ ≤ C.
    mu : [K] float64
        Per-client means μ_k (model units).
    scale : float
        Factor that maps ŝ back to model units: C_max/C (``paper``) or R/C (``clip``).
        0 when every centred update is zero (nothing to transmit).
    energy : [K] float64 or None
        ‖s_k‖² [W·symbol] = factor_k²·‖x_k − μ_k·1‖², from the centred norms the factors came from (the
        transmit power's numerator, ‖s_k‖²/d per symbol, without another pass over s); None if not known.
    """

    s: np.ndarray
    mu: np.ndarray
    scale: float
    energy: np.ndarray | None = None


@dataclass(frozen=True)
class RowFactors:
    """The normalization in factored form: s_k = factor_k·(x_k − μ_k·1), without forming s.

    factor : [K] float64 (C/C_max for ``paper``, (C/R)·min(1, R/‖x_k − μ_k‖) for ``clip``; zeros when
    every centred update is zero); mu : [K] float64; scale : float (as :class:`Normalized`).
    """

    factor: np.ndarray
    mu: np.ndarray
    scale: float


def _check(x: np.ndarray, C: float) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 1:
        raise ValueError(f"updates must be a K×d array with K ≥ 1, d ≥ 1 (got shape {x.shape})")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0 (got {C})")
    return x


def _factors(norms: np.ndarray, *, rule: str, C: float, clip_norm: float | None) -> tuple[np.ndarray, float]:
    """Row factors and de-normalization scale from the centred norms ‖x_k − μ_k·1‖₂."""
    if rule == "paper":
        c_max = float(norms.max())
        if c_max == 0.0:
            return np.zeros_like(norms), 0.0
        return np.full_like(norms, C / c_max), c_max / C
    if rule == "clip":
        if clip_norm is None or not (np.isfinite(clip_norm) and clip_norm > 0):
            raise ValueError(f"clip_norm must be a finite number > 0 for rule 'clip' (got {clip_norm})")
        factor = np.minimum(1.0, clip_norm / np.maximum(norms, np.finfo(float).tiny))
        return factor * (C / clip_norm), clip_norm / C
    raise ValueError(f"normalization must be one of {NORMALIZATIONS} (got {rule!r})")


def normalize(x: np.ndarray, *, rule: str, C: float, clip_norm: float | None = None) -> Normalized:
    """Normalize the K×d updates ``x`` by ``rule`` ∈ {"paper", "clip"} to norm bound ``C``."""
    x = _check(x, C)
    if not np.all(np.isfinite(x)):
        raise ValueError("updates must be finite")
    mu = x.mean(axis=1)
    centred = x - mu[:, None]
    # row by row: the same pairwise sums as np.linalg.norm(centred, axis=1) without a K×d temporary
    norms2 = np.array([np.add.reduce(row * row) for row in centred])
    factor, scale = _factors(np.sqrt(norms2), rule=rule, C=C, clip_norm=clip_norm)
    centred *= factor[:, None]  # in place: the centred copy becomes s (one K×d buffer, not two)
    return Normalized(centred, mu, scale, energy=signal_energy(factor, norms2))


def signal_energy(factor, norms2):
    """‖s_k‖² = f_k²·‖x_k − μ_k·1‖² (model §2: s_k = f_k·(x_k − μ_k·1)) from the factor and the centred squared
    norm; it equals Σ_i s_{k,i}² up to rounding (the last bits), without reading s."""
    factor = np.asarray(factor, dtype=np.float64)
    return factor * factor * np.asarray(norms2, dtype=np.float64)


def row_factors(x: np.ndarray, *, rule: str, C: float, clip_norm: float | None = None) -> RowFactors:
    """:func:`normalize` in factored form: no K×d temporary, the same factors and means bit for bit.

    Each row's mean and centred norm are computed as :func:`normalize` computes them (the row's pairwise sum,
    and the pairwise sum of its centred squares leaf by leaf of numpy's tree, :func:`pairwise_plan`), while the
    row is in cache, so a row's factor does not depend on which other rows share the array: a receiver that
    streams chunks of any size gets the concatenation's numbers. Non-finite updates raise ValueError.
    """
    x = _check(x, C)
    plan = pairwise_plan(x.shape[1], PAIRWISE_LEAF)
    leaf = np.empty(min(x.shape[1], PAIRWISE_LEAF))
    mu, norms2 = np.empty(x.shape[0]), np.empty(x.shape[0])
    for j, row in enumerate(x):
        mu[j] = _row_mean(row)
        norms2[j] = _centred_square_sum(row, mu[j], plan, leaf)
    factor, scale = _factors(np.sqrt(norms2), rule=rule, C=C, clip_norm=clip_norm)
    return RowFactors(factor, mu, scale)


class ClippedRows:
    """:func:`normalize` of a chunk under the ``clip`` rule, one row at a time (:func:`clipped_rows`).

    ``for j, s in self`` yields each selected row j (``rows``, in order) with s_j = factor_j·(x_j − μ_j·1) in one
    reused [d] buffer (valid until the next step), the same numbers as ``normalize(x, rule="clip", ...).s[j]``
    bit for bit. Each row is read from memory once: its mean, its centred norm (leaf by leaf of numpy's pairwise
    tree, :func:`pairwise_plan`) and s_j are computed while it is in cache, instead of three passes over the
    whole chunk. mu : [c] float64, every row's mean (the selected rows' filled as they are yielded, complete once
    the iteration has ended; the others at construction); factor : [rows.size] likewise; energy : [rows.size]
    ‖s_j‖² (:func:`signal_energy`, the same as :func:`normalize`'s) likewise; scale : float (R/C).
    A non-finite element makes its row's mean non-finite: the row is then checked element by element and
    ValueError("updates must be finite") raised, when the row is reached.
    """

    def __init__(self, x: np.ndarray, *, C: float, clip_norm: float, rows: np.ndarray):
        self.x, self.rows, self.C, self.clip_norm = x, rows, C, clip_norm
        _, self.scale = _factors(np.zeros(0), rule="clip", C=C, clip_norm=clip_norm)  # checks clip_norm
        self.mu = np.empty(x.shape[0])
        self.factor = np.empty(rows.size)
        self.energy = np.empty(rows.size)  # ‖s_j‖² of the selected rows (signal_energy), filled as they are yielded
        others = np.ones(x.shape[0], dtype=bool)
        others[rows] = False
        for j in np.flatnonzero(others).tolist():
            self.mu[j] = _row_mean(x[j])

    def __iter__(self):
        buf, leaf = np.empty(self.x.shape[1]), self.leaf_buffer()
        for i, j in enumerate(self.rows.tolist()):
            f = self.compute(i, leaf)
            np.subtract(self.x[j], self.mu[j], out=buf)
            buf *= f
            yield j, buf

    def leaf_buffer(self) -> np.ndarray:
        """Scratch for :meth:`compute` (one per thread)."""
        return np.empty(min(self.x.shape[1], PAIRWISE_LEAF))

    def compute(self, i: int, leaf: np.ndarray) -> float:
        """μ_j, f_j and ‖s_j‖² of the i-th selected row j from that row alone (stored; f_j returned). Rows are
        independent, so threads may compute different rows at once (:mod:`phy.row_pass`)."""
        j = int(self.rows[i])
        row = self.x[j]
        m = self.mu[j] = _row_mean(row)
        norm2 = _centred_square_sum(row, m, pairwise_plan(row.size, PAIRWISE_LEAF), leaf)
        f = self.factor[i] = _factors(np.sqrt(np.array([norm2])), rule="clip", C=self.C,
                                      clip_norm=self.clip_norm)[0][0]
        self.energy[i] = signal_energy(f, norm2)
        return f


def _row_mean(row: np.ndarray) -> float:
    """``x.mean(axis=1)``'s entry for one contiguous row (the same pairwise sum, divided by d); a non-finite mean
    with a non-finite element raises ValueError (an overflowing sum of finite elements does not)."""
    m = np.add.reduce(row) / row.size
    if not np.isfinite(m) and not np.all(np.isfinite(row)):
        raise ValueError("updates must be finite")
    return m


PAIRWISE_LEAF = 32_768  # elements of a leaf of the centred-norm tree: 256 KiB, a core's L2 holds it (clipped_rows)


def pairwise_plan(n: int, leaf: int):
    """numpy's pairwise summation tree of n contiguous float64 values, cut where a node has ≤ ``leaf`` values.

    ``np.add.reduce`` over a contiguous vector splits n > 128 values at m = ⌊n/2⌋ rounded down to a multiple of
    8 and adds the two halves' sums (numpy's ``pairwise_sum``); a node of ≤ ``leaf`` values (leaf ≥ 128) is one
    reduce of its segment. Returns ``(start, length)`` for a leaf, ``(left, right)`` for a node. Summing the
    leaves with ``np.add.reduce`` and the nodes with ``+`` gives ``np.add.reduce`` of the whole vector bit for bit
    (tests/test_streaming.py checks it at every length it uses)."""
    if leaf < 128:
        raise ValueError(f"leaf must be ≥ 128 (numpy's pairwise block; got {leaf})")

    def node(start: int, length: int):
        if length <= leaf:
            return (start, length)
        m = length // 2
        m -= m % 8
        return (node(start, m), node(start + m, length - m))

    key = (n, leaf)
    if key not in _plans:
        _plans[key] = node(0, n)
    return _plans[key]


_plans: dict = {}


def _centred_square_sum(row: np.ndarray, mu: float, plan, buf: np.ndarray) -> float:
    """Σ_i (row_i − μ)² as ``np.add.reduce((row − μ)²)``, bit for bit, one leaf of ``plan`` at a time in ``buf``
    (the centred leaf is squared and summed while it is in cache instead of three passes over a [d] vector)."""
    a, b = plan
    if isinstance(a, tuple):
        return _centred_square_sum(row, mu, a, buf) + _centred_square_sum(row, mu, b, buf)
    t = buf[:b]
    np.subtract(row[a:a + b], mu, out=t)
    np.multiply(t, t, out=t)
    return np.add.reduce(t)


def clipped_rows(x: np.ndarray, *, C: float, clip_norm: float, rows: np.ndarray | None = None) -> ClippedRows:
    """The ``clip`` rule of :func:`normalize` row by row, for the streaming receivers (model §2).

    s_j = (C/R)·min(1, R/‖x_j − μ_j·1‖₂)·(x_j − μ_j·1), μ_j the mean of row j, for the rows ``rows`` (all when
    None; μ for every row). The same operations as :func:`normalize` in the same order (the mean over each row,
    the centred row, the pairwise sum of its squares, the factor, the product), so the same numbers bit for bit,
    but without its two c×d temporaries, and each selected row read from memory once (:class:`ClippedRows`).
    Non-finite updates raise ValueError (through the row means, :func:`_row_mean`), so the stream need not read
    the chunk once more for them (:func:`phy.aggregation.stream_chunks` ``finite=False``).
    """
    x = _check(x, C)
    sel = np.arange(x.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
    return ClippedRows(x, C=C, clip_norm=clip_norm, rows=sel)


def denormalize(s_hat: np.ndarray, normalized: Normalized, *, mu_sum: float | None = None) -> np.ndarray:
    """x̂ = scale·ŝ + (Σ μ_k)·1 (model §2). ``mu_sum`` overrides Σ_k μ_k (e.g. admitted clients only)."""
    total_mu = float(normalized.mu.sum()) if mu_sum is None else float(mu_sum)
    return normalized.scale * np.asarray(s_hat, dtype=np.float64) + total_mu
