"""Federated submodel learning with PIR: storage, one client iteration, the multi-iteration
simulation (Kim & Lee; model §9.6).

Stored-matrix form (source §II). The true model B_t ∈ F_q^{r×s} (row l = submodel l) is not
stored; every database holds the same matrix

    B̃_t = B_t + a_{t−1}·Δ_{t−1}ᵀ,        a_{t−1} = α_{t−1} − e_p,

where p is the row trained at iteration t−1, Δ_{t−1} = B_{t,p} − B_{t−1,p} its update and
α_{t−1} ∈ F_q^r the coefficient vector (row l of B̃_t is B_{t−1,l} + α_{t−1,l}·Δ_{t−1}, the
source's form). Database i also holds its exclusive part c_{t−1,i} of M_{t−1} = (a_{t−1},
Δ_{t−1}) (r + s symbols). Initially a_0 = 0, Δ_0 = 0 (B̃_1 = B_1).

Iteration t of client L_t, who trains row d (source §III, reconstructed):

1. download every c_{t−1,i} and decode M_{t−1} (r + s symbols in total);
2. retrieve row d of B̃_t privately with the Sun–Jafar scheme (s·(1 + β) symbols) and correct
   it: B_{t,d} = B̃_{t,d} − a_{t−1,d}·Δ_{t−1} (s multiplications);
3. train: Δ_t = B_{t+1,d} − B_{t,d} (the caller's update function; not counted);
4. draw α_t uniform on F_q^r, upload to every database U_t = α_t·Δ_tᵀ − a_{t−1}·Δ_{t−1}ᵀ (r·s
   symbols to each of the N databases, 2rs multiplications); each database adds it:
   B̃_{t+1} = B̃_t + U_t = B_{t+1} + a_t·Δ_tᵀ with a_t = α_t − e_d;
5. upload the new exclusive data, the parts of M_t = (a_t, Δ_t).

Choice (the source's equations are lost): α_t is uniform on F_q^r. The source fixes α_{t,d} = 1
with the other entries distinct; with that choice the upload's column factor α_t shows d to
anyone who knows Δ_t (docs/submodel_pir.md).

Exclusive data (``exclusive``):
- "mds" (the source): M_t coded with the non-systematic (r+s, r+s) Vandermonde code and cut into
  N parts (r + s symbols in total). The exhaustive check shows the part stored at one database,
  together with U_t, depends on d whenever Δ_t ≠ 0 (privacy.pir.verify).
- "shared" (this project's correction): a_t is split into N additive shares (r symbols each,
  N − 1 of them uniform) and Δ_t is coded with the (s, s) code and cut into N parts: N·r + s
  symbols; each database's part is independent of d.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field

import numpy as np


from . import sun_jafar as sj
from .field import PrimeField
from .mds import SplitMDSCode, check_field_fits

__all__ = ["EXCLUSIVE_MODES", "validate_parameters", "masked_upload", "pollution", "exclusive_parts",
           "IterationRecord", "SubmodelPIRSystem", "simulate"]

EXCLUSIVE_MODES = ("mds", "shared")


def _int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
        raise ValueError(f"{name} must be an integer ≥ {lo} (got {v!r})")
    return int(v)


def validate_parameters(*, r, s, N, q: int | None = None, exclusive: str = "mds") -> tuple[int, int, int]:
    """Check r ≥ 1, s ≥ 1, N ≥ 2, exclusive mode and (if q is given) that F_q fits the MDS code."""
    r, s, N = _int("r", r, 1), _int("s", s, 1), _int("N", N, 2)
    if exclusive not in EXCLUSIVE_MODES:
        raise ValueError(f"exclusive must be one of {EXCLUSIVE_MODES} (got {exclusive!r})")
    if q is not None:
        n = r + s if exclusive == "mds" else s
        check_field_fits(q, n, what=f"({n}, {n}) MDS code of the exclusive data")
    return r, s, N


@dataclass(frozen=True)
class IterationRecord:
    """What iteration t did and cost. Symbols are elements of F_q.

    download / upload : dict part → symbols; query_indices : symbol indices sent in the queries
    (not in the source's totals); client_mults : field multiplications of the client (training
    excluded); db_additions : additions of all databases (answers + update); views : per database,
    dict(stored, exclusive_old, queries, upload, exclusive_new), when kept. ``update`` is Δ_t (the
    client's own; kept for analysis).
    """

    t: int
    d: int
    recovered: np.ndarray
    true_row: np.ndarray
    update: np.ndarray
    download: dict
    upload: dict
    query_indices: int
    client_mults: int
    db_additions: int
    views: list | None = dc_field(default=None, repr=False)

    @property
    def total_symbols(self) -> int:
        return sum(self.download.values()) + sum(self.upload.values())


def masked_upload(field: PrimeField, alpha, delta, a_prev, delta_prev) -> np.ndarray:
    """U_t = α_t·Δ_tᵀ − a_{t−1}·Δ_{t−1}ᵀ [r, s] (α_t [M, r] and Δ_t [M, s] may be batches → [M, r, s])."""
    alpha = np.asarray(alpha, np.int64)
    first = field.mul(alpha[..., :, None], np.asarray(delta, np.int64)[..., None, :])
    return field.sub(first, field.outer(a_prev, delta_prev))


def pollution(field: PrimeField, alpha, d: int) -> np.ndarray:
    """a_t = α_t − e_d (α_t [r] or a batch [M, r])."""
    a = np.array(alpha, dtype=np.int64, copy=True)
    a[..., d] = (a[..., d] - 1) % field.q
    return a


def exclusive_parts(field: PrimeField, code: SplitMDSCode, mode: str, a, delta, shares) -> list:
    """Exclusive parts c_{t,1..N} of M_t = (a_t, Δ_t) (a_t [r] or a batch [M, r]; "mds": Δ_t [s] or [M, s]).

    "mds": the (r+s, r+s) code of (a_t, Δ_t), cut into N parts. "shared": part i is
    (share_i, i-th part of the (s, s) code of Δ_t), shares [N−1, r] (or [M, N−1, r]) uniform and
    the last share a_t − Σ shares.
    """
    a = np.asarray(a, np.int64)
    delta = np.asarray(delta, np.int64)
    if mode == "mds":
        msg = np.concatenate([a, np.broadcast_to(delta, a.shape[:-1] + delta.shape[-1:])], axis=-1)
        coded = field.matmul(np.atleast_2d(msg), code.G.T)
        coded = coded[0] if a.ndim == 1 else coded
        return [p.copy() for p in np.array_split(coded, code.N, axis=-1)]
    shares = np.asarray(shares, np.int64)
    last = field.sub(a, np.sum(shares, axis=-2) if shares.shape[-2] else 0)
    all_shares = np.concatenate([shares, last[..., None, :]], axis=-2)
    coded = code.encode(delta)
    return [np.concatenate([all_shares[..., i, :], np.broadcast_to(coded[i], a.shape[:-1] + coded[i].shape)], axis=-1)
            for i in range(code.N)]


class SubmodelPIRSystem:
    """N databases holding B̃_t and their exclusive parts; ``iterate`` runs one client."""

    def __init__(self, *, r: int, s: int, N: int, q: int, streams, exclusive: str = "mds",
                 initial: np.ndarray | None = None):
        self.r, self.s, self.N = validate_parameters(r=r, s=s, N=N, q=q, exclusive=exclusive)
        sj.check_subpacketization(self.s, self.r, self.N)
        self.field = PrimeField(q)
        if not callable(streams):
            raise ValueError("streams must be a callable (purpose, *indices) -> numpy Generator, e.g. "
                             "functools.partial(phy.randomness.stream, seed)")
        self.streams = streams
        self.exclusive = exclusive
        self.code = SplitMDSCode(self.field, self.r + self.s if exclusive == "mds" else self.s, self.N)
        if initial is None:
            initial = self.field.random(self.streams("pir-initial-model"), (self.r, self.s))
        self.B_true = self.field.array(initial).copy()
        if self.B_true.shape != (self.r, self.s):
            raise ValueError(f"initial model must have shape ({self.r}, {self.s})")
        zero_a, zero_d = np.zeros(self.r, np.int64), np.zeros(self.s, np.int64)
        init_parts = self.encode_exclusive(zero_a, zero_d, self.draw_shares(self.streams("pir-initial-shares")))
        self.stored = [self.B_true.copy() for _ in range(self.N)]
        self.exclusive_parts = init_parts
        self.t = 0

    # -- exclusive data -------------------------------------------------------------------------
    def draw_shares(self, rng: np.random.Generator) -> np.ndarray | None:
        """The N − 1 uniform additive shares [N−1, r] of a_t ("shared" mode; None for "mds")."""
        return None if self.exclusive == "mds" else self.field.random(rng, (self.N - 1, self.r))

    def encode_exclusive(self, a: np.ndarray, delta: np.ndarray, shares: np.ndarray | None) -> list:
        """Parts c_{t,1..N} of M_t = (a_t, Δ_t); see :func:`exclusive_parts`."""
        return exclusive_parts(self.field, self.code, self.exclusive, a, delta, shares)

    def decode_exclusive(self, parts: list) -> tuple[np.ndarray, np.ndarray]:
        """(a_t, Δ_t) from all N parts."""
        if self.exclusive == "mds":
            m = self.code.decode(parts)
            return m[: self.r], m[self.r:]
        a = np.mod(np.sum([p[: self.r] for p in parts], axis=0), self.field.q)
        return a, self.code.decode([p[self.r:] for p in parts])

    # -- one client ----------------------------------------------------------------------------
    def iterate(self, d: int, update_fn, *, keep_views: bool = False) -> IterationRecord:
        """Run client L_t who trains row ``d``; ``update_fn(t, d, row) -> Δ_t`` [s] in F_q."""
        d = int(d)
        if not 0 <= d < self.r:
            raise ValueError(f"d must be in [0, {self.r}) (got {d})")
        F, r, s, N = self.field, self.r, self.s, self.N
        rng = self.streams("pir-client", self.t)
        mults0 = F.mults
        # 1. exclusive data of the previous iteration
        old_parts = [p.copy() for p in self.exclusive_parts]
        a_prev, delta_prev = self.decode_exclusive(old_parts)
        # 2. Sun–Jafar retrieval of row d, segment by segment (L = N^r columns each)
        L = sj.subpacketization(r, N)
        row = np.empty(s, np.int64)
        queries = [[] for _ in range(N)]
        pir_symbols = db_adds = 0
        for seg in range(s // L):
            cols = slice(seg * L, (seg + 1) * L)
            perms = [rng.permutation(L) for _ in range(r)]
            qy = sj.build_queries(r, N, d, perms)
            answers = [sj.answer(F, qy.queries[n], self.stored[n][:, cols]) for n in range(N)]
            row[cols] = sj.decode(F, qy, answers, L)
            for n in range(N):
                Qn = qy.queries[n].copy()
                Qn[Qn >= 0] += seg * L
                queries[n].append(Qn)
                db_adds += int(np.sum(np.maximum((qy.queries[n] >= 0).sum(axis=1) - 1, 0)))
            pir_symbols += sum(len(A) for A in answers)
        queries = [np.concatenate(qn) for qn in queries]
        recovered = F.sub(row, F.mul(a_prev[d], delta_prev))
        true_row = self.B_true[d].copy()
        # 3. training (the caller's update; not counted)
        delta = F.array(update_fn(self.t, d, recovered))
        if delta.shape != (s,):
            raise ValueError(f"update must have shape ({s},) (got {delta.shape})")
        # 4. masked update of every row, to every database
        alpha = F.random(rng, r)
        upload = masked_upload(F, alpha, delta, a_prev, delta_prev)
        # 5. new exclusive data: M_t = (a_t, Δ_t), a_t = α_t − e_d
        new_parts = self.encode_exclusive(pollution(F, alpha, d), delta, self.draw_shares(rng))
        client_mults = F.mults - mults0
        views = None
        if keep_views:
            views = [dict(stored=self.stored[n].copy(), exclusive_old=old_parts[n], queries=queries[n],
                          upload=upload.copy(), exclusive_new=new_parts[n].copy()) for n in range(N)]
        for n in range(N):
            self.stored[n] = F.add(self.stored[n], upload)
        db_adds += N * r * s
        self.exclusive_parts = new_parts
        self.B_true[d] = F.add(self.B_true[d], delta)
        self.t += 1
        return IterationRecord(
            t=self.t, d=d, recovered=recovered, true_row=true_row, update=delta.copy(),
            download={"exclusive": int(sum(p.size for p in old_parts)), "pir": int(pir_symbols)},
            upload={"update": int(N * upload.size), "exclusive": int(sum(p.size for p in new_parts))},
            query_indices=int(sum(int((Q >= 0).sum()) for Q in queries)),
            client_mults=int(client_mults), db_additions=int(db_adds), views=views)

    def consistent(self) -> bool:
        """All databases hold the same B̃, and B̃ − a·Δᵀ (from the exclusive data) is the true model."""
        if any(not np.array_equal(self.stored[0], S) for S in self.stored[1:]):
            return False
        mults = self.field.mults
        a, delta = self.decode_exclusive(self.exclusive_parts)
        B = self.field.sub(self.stored[0], self.field.outer(a, delta))
        self.field.mults = mults  # a check, not part of the scheme's cost
        return bool(np.array_equal(B, self.B_true))


def simulate(*, r: int, s: int, N: int, q: int, iterations: int, streams, exclusive: str = "mds",
             rows=None, keep_views: bool = False) -> tuple[SubmodelPIRSystem, list[IterationRecord]]:
    """Run ``iterations`` clients; client t trains row rows[t] (default: keyed uniform draws) and
    its update Δ_t is a keyed uniform vector of F_q^s (a stand-in for training)."""
    iterations = _int("iterations", iterations, 1)
    system = SubmodelPIRSystem(r=r, s=s, N=N, q=q, streams=streams, exclusive=exclusive)
    if rows is None:
        rows = [int(system.streams("pir-row", t).integers(0, system.r)) for t in range(iterations)]

    def update_fn(t, d, row):
        return system.field.random(system.streams("pir-update", t), system.s)

    records = []
    for t in range(iterations):
        records.append(system.iterate(int(rows[t]), update_fn, keep_views=keep_views))
        if not np.array_equal(records[-1].recovered, records[-1].true_row) or not system.consistent():
            raise RuntimeError(f"iteration {t}: the client's row or the databases are inconsistent")
    return system, records
