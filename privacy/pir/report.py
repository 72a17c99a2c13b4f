"""What ``floras pir`` computes: the cost table and the verification (model §9.6).

Pure functions returning plain dicts (JSON-ready) and their text form; the command module only
parses options and prints.
"""

from __future__ import annotations

import itertools

import numpy as np

from .costs import client_multiplications, cost_row, scheme_symbols
from .field import ARITHMETIC_MAX_BITS, prime_for_bits
from .submodel import simulate, validate_parameters
from .sun_jafar import check_subpacketization
from .verify import (TINY, check_queries, check_two_iterations, check_uploads, check_uploads_uniform_update,
                     exhaustive_feasible,
                     linkage_attack, shared_direction)

__all__ = ["GUARANTEE", "LINK_CONVENTION", "validate_request", "cost_table", "verify_all", "format_costs",
           "format_verification", "VERIFY_MAX_RS"]

VERIFY_MAX_RS = 1100  # r + s for --verify (the client inverts an (r+s)×(r+s) code matrix once)

GUARANTEE = ("hides the index d of the trained submodel from each single database within one iteration "
             "(information-theoretic, no ε) when the exclusive data is secret-shared ('pir_shared'); the "
             "source's MDS exclusive data ('pir') leaks d once the update is nonzero; across iterations "
             "a database that keeps the uploads recovers every earlier d (linkage); update values are not hidden")
LINK_CONVENTION = ("bits = symbols·log2 q at the Shannon rate ½·log2(1 + |h|²·P/σ²) per real channel use "
                   "(model §5 digital uplink, SNR = P/σ²), |h|² ~ Exp(1) admitted iff ≥ g_th; expected airtime "
                   "of an admitted client by numerical integration (scipy quad), ⌈·⌉ ignored (< 1 use per "
                   "transfer); downloads over the same link (a reciprocal-link choice)")


def validate_request(*, rs: list, ss: list, Ns: list, field_bits: int, snr_dbs: list, g_th: float,
                     verify: bool, iterations: int) -> int:
    """Validate every option before any work; returns q."""
    q = prime_for_bits(field_bits)
    for r, s, N in itertools.product(rs, ss, Ns):
        validate_parameters(r=r, s=s, N=N, q=q)
    for x in snr_dbs:
        if not np.isfinite(x):
            raise ValueError(f"snr-db must be finite (got {x!r})")
    if not (np.isfinite(g_th) and g_th > 0):
        raise ValueError(f"g-th must be a finite number > 0 (got {g_th!r})")
    if verify:
        if len(rs) * len(ss) * len(Ns) != 1:
            raise ValueError("--verify takes a single --r, --s and --N")
        if isinstance(iterations, bool) or not isinstance(iterations, int) or not 1 <= iterations <= 1000:
            raise ValueError(f"iterations must be an integer in [1, 1000] (got {iterations!r})")
        check_subpacketization(ss[0], rs[0], Ns[0])
        if rs[0] + ss[0] > VERIFY_MAX_RS:
            raise ValueError(f"--verify needs r + s ≤ {VERIFY_MAX_RS} (got {rs[0] + ss[0]}); "
                             "the cost formulas hold for any size")
    return q


def cost_table(*, rs, ss, Ns, q: int, snr_dbs, g_th: float, rate) -> list[dict]:
    """One :func:`privacy.pir.costs.cost_row` per (r, s, N, SNR); ``rate`` the link's rate function."""
    return [cost_row(r=r, s=s, N=N, q=q, snr_db=x, g_th=g_th, rate=rate)
            for r, s, N, x in itertools.product(rs, ss, Ns, snr_dbs)]


def _attack_on(system, records) -> dict:
    """Linkage attack by database 0 on the simulated uploads, knowing nothing of the updates."""
    F, T = system.field, len(records)
    if system.r < 2 or system.s < 3 or T < 4:
        return {"ran": False, "reason": "needs r ≥ 2, s ≥ 3 and ≥ 4 iterations"}
    U = [rc.views[0]["upload"] for rc in records]
    hits = tried = 0
    for t in range(1, T - 2):
        tried += 1
        try:
            v = [shared_direction(F, U[k], U[k + 1]) for k in (t - 1, t, t + 1)]
            hits += linkage_attack(F, U[t], U[t + 1], *v) == records[t].d
        except ValueError:
            pass
    return {"ran": True, "recovered": hits, "of": tried,
            "note": "rows d_t recovered by one database from four consecutive uploads, updates unknown to it"}


def verify_all(*, r: int, s: int, N: int, field_bits: int, iterations: int, streams) -> dict:
    """Functional simulation (both exclusive-data modes), counted vs formula costs, exhaustive checks."""
    bits = min(field_bits, ARITHMETIC_MAX_BITS)
    q = prime_for_bits(bits)
    out = {"simulation_field": {"q": q, "bits": bits,
                                "note": "" if bits == field_bits else
                                f"simulated in the largest prime below 2^{bits}: arithmetic needs q < 2^31"}}
    for mode in ("mds", "shared"):
        system, recs = simulate(r=r, s=s, N=N, q=q, iterations=iterations, streams=streams, exclusive=mode,
                                keep_views=(mode == "mds"))
        formula = scheme_symbols(r=r, s=s, N=N, exclusive=mode)
        counted = {"download_exclusive": recs[-1].download["exclusive"], "download_pir": recs[-1].download["pir"],
                   "upload_update": recs[-1].upload["update"], "upload_exclusive": recs[-1].upload["exclusive"]}
        counted["total"] = sum(counted.values())
        out[mode] = {
            "iterations": len(recs), "rows_trained": [rc.d for rc in recs],
            "recovered_exactly": all(np.array_equal(rc.recovered, rc.true_row) for rc in recs),
            "databases_consistent": system.consistent(),
            "counted_symbols": counted,
            "formula_symbols": {k: float(formula[k]) for k in counted},
            "counted_equals_formula": all(float(formula[k]) == v for k, v in counted.items()),
            "same_every_iteration": len({rc.total_symbols for rc in recs}) == 1,
            "client_mults_counted": recs[-1].client_mults,
            "client_mults_formula": client_multiplications(r=r, s=s, exclusive=mode),
            "query_indices": recs[-1].query_indices,
        }
        if mode == "mds":
            out["linkage_attack"] = _attack_on(system, recs)
    own = exhaustive_feasible(r=r, s=s, N=N, q=q) and exhaustive_feasible(r=r, s=s, N=N, q=q, exclusive="shared")
    tiny = dict(r=r, s=s, N=N, q=q) if own else dict(TINY)
    checks = [check_queries(r=tiny["r"], N=tiny["N"])]
    checks += [check_uploads(**tiny, exclusive=m, streams=streams) for m in ("mds", "shared")]
    if tiny["q"] ** (tiny["r"] + tiny["s"]) <= 200_000:
        checks.append(check_uploads_uniform_update(**tiny))
    if tiny["r"] >= 2:
        checks.append(check_two_iterations(**tiny, streams=streams))
    out["exhaustive"] = {"parameters": tiny,
                         "note": "given parameters" if own else "given parameters too large to enumerate; tiny case",
                         "checks": [c.__dict__ for c in checks]}
    return out


def _n(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"


def format_costs(rows: list[dict]) -> str:
    first = rows[0]
    lines = [f"federated submodel learning with PIR (model §9.6), per iteration; symbols of F_q, q = {first['q']} "
             f"({first['symbol_bits']:.2f} bits/symbol)",
             f"  guarantee: {GUARANTEE}",
             f"  link: {LINK_CONVENTION}; g_th = {first['g_th']} (P(admitted) = {first['p_admitted']:.3f})",
             "  symbols: pir = 2r + (3 + β + rN)·s; pir_shared = 2Nr + (3 + β + rN)·s; naive = rs(N + 1)",
             f"  {'r':>4} {'s':>8} {'N':>3} {'SNR dB':>7} | {'pir':>12} {'pir_shared':>12} {'naive':>12} "
             f"{'naive−pir':>11} | {'pir uses':>13} {'naive uses':>13} | {'pir mults':>12}"]
    for w in rows:
        lines.append(f"  {w['r']:>4} {w['s']:>8} {w['N']:>3} {w['snr_db']:>7g} | {_n(w['pir']['total']):>12} "
                     f"{_n(w['pir_shared']['total']):>12} {_n(w['naive']['total']):>12} "
                     f"{_n(w['difference']['symbols_naive_minus_pir']):>11} | {w['pir']['channel_uses']['total']:>13,.0f} "
                     f"{w['naive']['channel_uses']['total']:>13,.0f} | {w['pir']['client_mults']:>12,}")
    return "\n".join(lines)


def format_verification(v: dict) -> str:
    f = v["simulation_field"]
    lines = [f"verification (simulation over F_{f['q']}{'; ' + f['note'] if f['note'] else ''}):"]
    for mode in ("mds", "shared"):
        m = v[mode]
        lines.append(f"  functional [{mode}]: {m['iterations']} iterations, rows {m['rows_trained'][:12]}"
                     f"{'…' if m['iterations'] > 12 else ''}: recovered exactly: {m['recovered_exactly']}; "
                     f"databases consistent: {m['databases_consistent']}")
        lines.append(f"    symbols counted {m['counted_symbols']['total']:,} vs formula "
                     f"{m['formula_symbols']['total']:,.2f}: equal: {m['counted_equals_formula']}; client mults "
                     f"{m['client_mults_counted']:,} (formula {m['client_mults_formula']:,}); query indices "
                     f"{m['query_indices']:,} (not in the totals)")
    a = v["linkage_attack"]
    lines.append("  linkage attack: " + (f"{a['recovered']}/{a['of']} {a['note']}" if a["ran"] else
                                          f"not run ({a['reason']})"))
    e = v["exhaustive"]
    lines.append(f"  exhaustive privacy check at {e['parameters']} ({e['note']}):")
    for c in e["checks"]:
        lines.append(f"    {c['component']:<30} {'SAME distribution for every d' if c['passed'] else 'DEPENDS on d':<30} "
                     f"{c['detail']}")
    return "\n".join(lines)
