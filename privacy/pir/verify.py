"""Exhaustive privacy check of the submodel-PIR scheme on tiny parameters (model §9.6).

Guarantee checked (source eq. of §II, per iteration): for every database i and every value of
the data — the model B_t, the updates Δ_{t−1}, Δ_t — and of the past state (a_{t−1}, earlier
shares), the view of DB_i at iteration t,

    (stored B̃_t, exclusive part c_{t−1,i}, query Q_{t,i}, upload U_t, new exclusive part c_{t,i}),

has the same distribution over the client's randomness whatever row d is trained. The check
enumerates *all* of that randomness and compares the exact counts (no statistics). Conditioning
on the data and the past is the strong form: it gives I(d; view) = 0 for any prior on the data
that is independent of d (the index, not the data, is protected).

The randomness splits into independent blocks: the PIR permutations (which alone determine the
query) and the upload randomness α_t (with the additive shares in "shared" mode), which alone
(given data and past) determine (U_t, c_{t,i}); the stored data is fixed by the past. The joint
distribution given d is therefore the product of the blocks' distributions, and equality for
every block is equality of the joint; each block is enumerated exhaustively.

:func:`check_two_iterations` runs the same enumeration over two consecutive iterations and
:func:`linkage_attack` is the explicit attack that shows why it fails (the next client's upload
removes a_t = α_t − e_d, the current one added α_t).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np


from . import sun_jafar as sj
from .field import PrimeField
from .mds import SplitMDSCode
from .submodel import exclusive_parts, masked_upload, pollution, validate_parameters

__all__ = ["CheckResult", "exhaustive_feasible", "check_queries", "check_uploads", "check_two_iterations",
           "check_uploads_uniform_update", "linkage_attack", "shared_direction", "TINY"]

TINY = {"r": 2, "s": 4, "N": 2, "q": 7}  # smallest case with β > 0; q = 7 ≥ r + s for the (6, 6) code
_MAX_QUERY_ENUM = 10_000
_MAX_UPLOAD_ENUM = 200_000


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one exhaustive comparison: ``passed`` iff every compared distribution is equal."""

    component: str
    passed: bool
    enumerated: int  # randomness values enumerated per (row, database, conditioning case)
    cases: int  # conditioning cases compared (data × past state × database)
    detail: str


def _distribution(rows: np.ndarray) -> tuple:
    """Exact empirical distribution of the rows of an int array: (sorted unique rows, counts)."""
    rows = rows.reshape(rows.shape[0], -1)
    if rows.size and 0 <= rows.min() and rows.max() < 256:  # one byte string per row: fast exact unique
        keys = np.ascontiguousarray(rows.astype(np.uint8)).view(f"V{rows.shape[1]}").ravel()
        u, c = np.unique(keys, return_counts=True)
        return u.tobytes(), c.tobytes(), rows.shape[1]
    u, c = np.unique(rows, axis=0, return_counts=True)
    return u.tobytes(), c.tobytes(), u.shape


def exhaustive_feasible(*, r: int, s: int, N: int, q: int, exclusive: str = "mds") -> bool:
    """Whether the exhaustive check fits the limits at these parameters (s = N^r: one segment)."""
    L = sj.subpacketization(r, N)
    if s != L or math.factorial(L) ** r > _MAX_QUERY_ENUM:
        return False
    extra = (N - 1) * r if exclusive == "shared" else 0
    return q ** (r + extra) <= _MAX_UPLOAD_ENUM and q ** r <= 1000


def check_queries(*, r: int, N: int) -> CheckResult:
    """Every query Q_{t,n} over all (N^r!)^r permutation tuples, for every row d and database n."""
    L = sj.subpacketization(r, N)
    if math.factorial(L) ** r > _MAX_QUERY_ENUM:
        raise ValueError(f"exhaustive query check needs (N^r)!^r ≤ {_MAX_QUERY_ENUM} (r = {r}, N = {N})")
    perm_sets = list(itertools.product(list(itertools.permutations(range(L))), repeat=r))
    per_d = []
    for d in range(r):
        qs = [sj.build_queries(r, N, d, perms).queries for perms in perm_sets]
        per_d.append([_distribution(np.stack([q[n] for q in qs])) for n in range(N)])
    passed = all(per_d[d][n] == per_d[0][n] for d in range(r) for n in range(N))
    return CheckResult("queries", passed, len(perm_sets), N,
                       f"Sun–Jafar queries, r={r}, N={N}, L={L}: all {len(perm_sets)} permutation tuples per row")


def _data_cases(field: PrimeField, r: int, s: int, streams) -> list:
    """(B_t, Δ_{t−1}, Δ_t): every combination of a zero and a nonzero update."""
    rng = streams("pir-verify-data")
    B = field.random(rng, (r, s))
    x, y = field.random(rng, s), field.random(rng, s)
    x[0] = y[1] = 1  # nonzero
    zero = np.zeros(s, np.int64)
    return [(B, dp, dt) for dp in (zero, x) for dt in (zero, y)]


def _all_vectors(q: int, n: int) -> np.ndarray:
    """Every vector of F_q^n, [q^n, n] int64."""
    return np.array(list(itertools.product(range(q), repeat=n)), dtype=np.int64).reshape(-1, n)


def check_uploads(*, r: int, s: int, N: int, q: int, streams, exclusive: str = "mds") -> CheckResult:
    """Upload-side view (B̃_t, c_{t−1,i}, U_t, c_{t,i}) for every d, database, data case and past a_{t−1}."""
    r, s, N = validate_parameters(r=r, s=s, N=N, q=q, exclusive=exclusive)
    F = PrimeField(q)
    code = SplitMDSCode(F, r + s if exclusive == "mds" else s, N)
    n_extra = (N - 1) * r if exclusive == "shared" else 0
    if q ** (r + n_extra) > _MAX_UPLOAD_ENUM or q ** r > 1000:
        raise ValueError(f"exhaustive upload check too large at q = {q}, r = {r}, N = {N}")
    rand = _all_vectors(q, r + n_extra)  # α_t and the N − 1 shares of a_t
    alpha = rand[:, :r]
    shares = rand[:, r:].reshape(-1, N - 1, r) if exclusive == "shared" else None
    past_shares = F.random(streams("pir-verify-past"), (N - 1, r)) if exclusive == "shared" else None
    failures, cases = [], 0
    for ci, (B, d_prev, d_now) in enumerate(_data_cases(F, r, s, streams)):
        new_parts = [exclusive_parts(F, code, exclusive, pollution(F, alpha, d), d_now, shares) for d in range(r)]
        for a_prev in _all_vectors(q, r):
            stored = F.add(B, F.outer(a_prev, d_prev))
            old = exclusive_parts(F, code, exclusive, a_prev, d_prev, past_shares)
            U = masked_upload(F, alpha, d_now, a_prev, d_prev).reshape(len(alpha), -1)
            for i in range(N):
                dists = []
                for d in range(r):
                    new = new_parts[d][i]
                    fixed = np.broadcast_to(np.concatenate([stored.ravel(), old[i]]), (len(alpha), stored.size + old[i].size))
                    dists.append(_distribution(np.concatenate([fixed, U, new], axis=1)))
                cases += 1
                if any(x != dists[0] for x in dists[1:]):
                    failures.append((ci, tuple(a_prev), i))
    detail = (f"exclusive={exclusive}, r={r}, s={s}, N={N}, q={q}: {len(rand)} randomness values × {cases} cases "
              f"(4 data cases: Δ_(t−1), Δ_t each zero or not; all a_(t−1); every database)")
    if failures:
        bad_cases = sorted({f[0] for f in failures})
        detail += (f"; distributions differ in {len(failures)} cases, data cases {bad_cases} "
                   f"(0: both updates zero, 1: Δ_t ≠ 0 only, 2: Δ_(t−1) ≠ 0 only, 3: both)")
    return CheckResult(f"uploads ({exclusive})", not failures, len(rand), cases, detail)


def check_uploads_uniform_update(*, r: int, s: int, N: int, q: int, exclusive: str = "mds") -> CheckResult:
    """The most favourable prior for the source: the first iteration's update Δ_1 uniform on F_q^s
    and unknown to the database, enumerated together with α_1; view (U_1, c_{1,i}) for every d."""
    r, s, N = validate_parameters(r=r, s=s, N=N, q=q, exclusive=exclusive)
    if exclusive != "mds":
        raise ValueError("the shared mode is private for every fixed update (check_uploads), hence for any prior")
    if q ** (r + s) > _MAX_UPLOAD_ENUM:
        raise ValueError(f"uniform-update check too large at q = {q}, r = {r}, s = {s}")
    F = PrimeField(q)
    code = SplitMDSCode(F, r + s, N)
    rand = _all_vectors(q, r + s)
    alpha, delta = rand[:, :r], rand[:, r:]
    zero_r, zero_s = np.zeros(r, np.int64), np.zeros(s, np.int64)
    U = masked_upload(F, alpha, delta, zero_r, zero_s).reshape(len(rand), -1)
    differ = 0
    for i in range(N):
        dists = [_distribution(np.concatenate(
            [U, exclusive_parts(F, code, exclusive, pollution(F, alpha, d), delta, None)[i]], axis=1)) for d in range(r)]
        differ += any(x != dists[0] for x in dists[1:])
    return CheckResult("uploads (mds), uniform update", differ == 0, len(rand), N,
                       f"r={r}, s={s}, N={N}, q={q}: (U_1, c_(1,i)) over all (α_1, Δ_1); differs at {differ} of {N} databases")


def check_two_iterations(*, r: int, s: int, N: int, q: int, streams) -> CheckResult:
    """Uploads (U_t, U_{t+1}) of two consecutive clients, enumerated over (α_t, α_{t+1}), for each
    d_t with d_{t+1} = 0 fixed, data fixed (Δ_t, Δ_{t+1} nonzero, iteration t the first)."""
    r, s, N = validate_parameters(r=r, s=s, N=N, q=q)
    F = PrimeField(q)
    if q ** (2 * r) > _MAX_UPLOAD_ENUM:
        raise ValueError(f"two-iteration check too large at q = {q}, r = {r}")
    _, _, d_now = _data_cases(F, r, s, streams)[3]
    d_next = np.roll(d_now, 1)
    both = _all_vectors(q, 2 * r)
    zero_r, zero_s = np.zeros(r, np.int64), np.zeros(s, np.int64)
    U1 = masked_upload(F, both[:, :r], d_now, zero_r, zero_s).reshape(len(both), -1)
    dists = []
    for d in range(r):
        a_t = pollution(F, both[:, :r], d)
        U2 = F.sub(F.mul(both[:, r:, None], d_next), F.mul(a_t[:, :, None], d_now)).reshape(len(both), -1)
        dists.append(_distribution(np.concatenate([U1, U2], axis=1)))
    passed = all(x == dists[0] for x in dists[1:])
    return CheckResult("two consecutive uploads", passed, len(both), 1,
                       f"r={r}, s={s}, q={q}: (U_t, U_(t+1)) over all (α_t, α_(t+1)) with the updates fixed")


def _coefficients(field: PrimeField, U: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple:
    """(x, y) with U = x·firstᵀ + y·secondᵀ, for linearly independent first, second ∈ F_q^s."""
    for j1, j2 in itertools.combinations(range(len(first)), 2):
        M = np.array([[first[j1], first[j2]], [second[j1], second[j2]]], dtype=np.int64)
        if (int(M[0, 0]) * int(M[1, 1]) - int(M[0, 1]) * int(M[1, 0])) % field.q:
            XY = field.matmul(U[:, [j1, j2]], field.inverse(M))
            return XY[:, 0], XY[:, 1]
    raise ValueError("the two update directions are linearly dependent")


def _nullspace(field: PrimeField, A: np.ndarray) -> np.ndarray:
    """Basis [k, n] of {x : A·x = 0} over F_q, by reduced row echelon form."""
    A = field.array(A).copy()
    m, n = A.shape
    pivots, row = [], 0
    for col in range(n):
        nz = np.nonzero(A[row:, col])[0] if row < m else []
        if len(nz) == 0:
            continue
        piv = row + int(nz[0])
        A[[row, piv]] = A[[piv, row]]
        A[row] = np.mod(A[row] * field.inv_scalar(A[row, col]), field.q)
        f = A[:, col].copy()
        f[row] = 0
        A = np.mod(A - np.mod(f[:, None] * A[row][None, :], field.q), field.q)
        pivots.append(col)
        row += 1
    basis = []
    for free in (c for c in range(n) if c not in pivots):
        x = np.zeros(n, np.int64)
        x[free] = 1
        for i, pc in enumerate(pivots):
            x[pc] = (-A[i, free]) % field.q
        basis.append(x)
    return np.array(basis, dtype=np.int64).reshape(-1, n)


def shared_direction(field: PrimeField, U_a: np.ndarray, U_b: np.ndarray) -> np.ndarray:
    """A vector spanning rowspace(U_a) ∩ rowspace(U_b) (ValueError unless it is one-dimensional).

    For consecutive uploads U_t, U_{t+1} this is the direction of Δ_t, seen without knowing any update.
    """
    stacked = np.concatenate([U_a, field.sub(0, U_b)], axis=0)  # x·U_a = y·U_b  ⇔  [x, y]·[U_a; −U_b] = 0
    null = _nullspace(field, stacked.T)
    V = field.matmul(null[:, : len(U_a)], U_a) if len(null) else np.zeros((0, U_a.shape[1]), np.int64)
    V = V[np.any(V, axis=1)]
    if len(V) == 0 or V.shape[1] - len(_nullspace(field, V)) != 1:
        raise ValueError("the row spaces of the two uploads do not meet in exactly one dimension")
    return V[0]


def linkage_attack(field: PrimeField, U_t: np.ndarray, U_next: np.ndarray, v_prev, v_t: np.ndarray,
                   v_next: np.ndarray) -> int | None:
    """Row d_t read off two consecutive uploads, given the directions v of the updates.

    v_prev, v_t, v_next are any nonzero multiples of Δ_{t−1}, Δ_t, Δ_{t+1} (v_prev = None when
    Δ_{t−1} = 0): the database knows the updates, or finds their directions as intersections of
    the row spaces of consecutive uploads (:func:`shared_direction`). With v_t = λ·Δ_t,
    U_t = α_t·Δ_tᵀ − a_{t−1}·Δ_{t−1}ᵀ gives α_t/λ, U_{t+1} = α_{t+1}·Δ_{t+1}ᵀ − a_t·Δ_tᵀ gives
    −a_t/λ, and their sum is e_{d_t}/λ: one nonzero entry, at d_t. Returns d_t, or None when the
    sum does not have exactly one nonzero entry (degenerate draws).
    """
    if v_prev is None or not np.any(v_prev):
        j = int(np.nonzero(v_t)[0][0])
        x = field.mul(U_t[:, j], field.inv_scalar(v_t[j]))
    else:
        x, _ = _coefficients(field, U_t, v_t, v_prev)
    _, y = _coefficients(field, U_next, v_next, v_t)
    nz = np.nonzero(field.add(x, y))[0]
    return int(nz[0]) if len(nz) == 1 else None
