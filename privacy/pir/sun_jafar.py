"""Capacity-achieving PIR from N replicated, non-colluding databases (Sun & Jafar, "The Capacity
of Private Information Retrieval", IEEE Trans. IT 63(7), 2017, arXiv:1602.09134, §IV).

K messages W_1..W_K of L = N^K symbols each (here: the K = r rows of the stored matrix, one
segment of N^r columns at a time), desired message θ. The client draws an independent uniformly
random permutation π_k of [L] for every message and builds, for every database n, blocks of
k-sums (sums of one symbol of each of k distinct messages), k = 1..K:

- block 1: one fresh symbol of every message (desired included);
- block k ≥ 2, subset S of k messages:
  * θ ∉ S: (N−1)^{k−1} sums of fresh undesired symbols (message symmetry);
  * θ ∈ S: for every other database n' and every (k−1)-sum of S∖{θ} that n' returns in block
    k−1 (side information), that sum plus a fresh desired symbol: (N−1)·(N−1)^{k−2} sums.

Every sum a database sees has the same shape whatever θ is, and within one database each
message's symbols are distinct, so with the π_k uniform the query is a uniformly random filling
of a θ-independent shape: the query is independent of θ (checked exhaustively in
:mod:`privacy.pir.verify`). Download: N·Σ_k C(K,k)(N−1)^{k−1} = L·(1 + 1/N + … + 1/N^{K−1})
symbols, i.e. L·(1 + β) with β = Σ_{k=1}^{K−1} N^{−k} (the capacity). Answers are sums only (no
multiplications); decoding subtracts one side-information answer per desired symbol.

A query for database n is an int64 array [D_n, K]: entry (j, k) is the index of the symbol of
message k in sum j, or −1 when message k is absent from sum j.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from .field import PrimeField

__all__ = ["subpacketization", "download_per_segment", "capacity_beta", "SunJafarQuery",
           "build_queries", "answer", "decode", "check_subpacketization"]


def subpacketization(K: int, N: int) -> int:
    """L = N^K symbols per message per PIR segment."""
    return int(N) ** int(K)


def capacity_beta(K: int, N: int) -> Fraction:
    """β = Σ_{k=1}^{K−1} N^{−k} (exact), so that download = L·(1 + β) per L desired symbols."""
    return sum((Fraction(1, int(N) ** k) for k in range(1, int(K))), Fraction(0))


def download_per_segment(K: int, N: int) -> int:
    """Symbols downloaded per segment: N·Σ_{k=1}^{K} C(K,k)(N−1)^{k−1} = N^K + N^{K−1} + … + N."""
    return sum(int(N) ** k for k in range(1, int(K) + 1))


def check_subpacketization(s: int, K: int, N: int) -> None:
    """ValueError unless s is a multiple of N^K (the Sun–Jafar subpacketization)."""
    L = subpacketization(K, N)
    if s % L != 0:
        shown = str(L) if L <= s else f"{N}^{K} > s"  # N^r may have more digits than Python prints
        raise ValueError(f"s = {s} does not fit the Sun–Jafar subpacketization: s must be a multiple of "
                         f"N^r = {shown} for the functional PIR (the cost formulas hold for any s)")


@dataclass(frozen=True)
class SunJafarQuery:
    """The client's queries for one segment and its private decoding plan.

    queries : list of N arrays [D_n, K] int64 (what database n receives).
    plan : [L, 5] int64 rows (n, j, n', j', idx): desired symbol idx = A_n[j] − A_{n'}[j']
        (n' = −1: no side information, idx = A_n[j]).
    """

    queries: list
    plan: np.ndarray


def build_queries(K: int, N: int, theta: int, perms) -> SunJafarQuery:
    """Queries for message ``theta`` ∈ [0, K) given the K permutations ``perms[k]`` of [N^K]."""
    if not 0 <= theta < K:
        raise ValueError(f"theta must be in [0, {K}) (got {theta})")
    nxt = [0] * K
    sums: list[list[dict]] = [[] for _ in range(N)]
    undesired: dict[tuple, list[int]] = {}
    plan = []

    def fresh(k: int) -> int:
        nxt[k] += 1
        return nxt[k] - 1

    for size in range(1, K + 1):
        for n in range(N):
            for S in combinations(range(K), size):
                if theta in S:
                    rest = tuple(k for k in S if k != theta)
                    if not rest:
                        v = fresh(theta)
                        plan.append((n, len(sums[n]), -1, -1, v))
                        sums[n].append({theta: v})
                        continue
                    for n2 in range(N):
                        if n2 == n:
                            continue
                        for j2 in undesired[(n2, rest)]:
                            v = fresh(theta)
                            plan.append((n, len(sums[n]), n2, j2, v))
                            sums[n].append({**sums[n2][j2], theta: v})
                else:
                    for _ in range((N - 1) ** (size - 1)):
                        undesired.setdefault((n, S), []).append(len(sums[n]))
                        sums[n].append({k: fresh(k) for k in S})
    queries = []
    for n in range(N):
        Q = np.full((len(sums[n]), K), -1, dtype=np.int64)
        for j, sm in enumerate(sums[n]):
            for k, v in sm.items():
                Q[j, k] = perms[k][v]
        queries.append(Q)
    plan_arr = np.array(plan, dtype=np.int64)
    plan_arr[:, 4] = np.asarray(perms[theta], dtype=np.int64)[plan_arr[:, 4]]
    return SunJafarQuery(queries, plan_arr)


def answer(field: PrimeField, query: np.ndarray, W: np.ndarray) -> np.ndarray:
    """A database's answer [D] to ``query`` [D, K] over its messages W [K, L]: sums, no products."""
    mask = query >= 0
    vals = W[np.arange(W.shape[0])[None, :], np.where(mask, query, 0)]
    return np.mod(np.where(mask, vals, 0).sum(axis=1), field.q)


def decode(field: PrimeField, q: SunJafarQuery, answers: list[np.ndarray], L: int) -> np.ndarray:
    """The desired message [L] from the N answers."""
    out = np.full(L, -1, dtype=np.int64)
    for n, j, n2, j2, idx in q.plan:
        a = answers[n][j]
        out[idx] = a if n2 < 0 else (a - answers[n2][j2]) % field.q
    if np.any(out < 0):
        raise RuntimeError("decoding plan does not cover every desired symbol")
    return out
