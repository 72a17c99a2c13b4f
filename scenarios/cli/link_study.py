"""``floras link`` studies: several SNRs, one CSV row per (SNR, scheme), and each scheme's one-round ε.

The ε column is the scheme's own run accountant (its wiring row, :mod:`scenarios.config.schemes`)
for a single round's release: rounds = 1, every client of the round in the population (K = M, no
sampling amplification), δ = 1e-5, client level, the link's neighbouring relation and [phy] table.
Schemes without privacy noise (or whose noise parameter is unset) leave the cell empty. FLORAS also
fills ``epsilon_link``, the link-level bound of :mod:`privacy.link` for that round (at the link's SNR, L,
CSIT, cell drop of the link's seed and pilot blocks; empty where it is not defined, e.g. a re-dropped cell).
With per-block pilots the ε is the per-round curve of model §7.2 as without them (K = M: no sampling; model §9.5,
"Several pilots"). With ``phy.floras.privacy_bound = "law"`` (``--set``) FLORAS's ε is the PLD of the law given the
pilots (model §5.1, "FLORAS's ε with offsets"; minutes per SNR to draw); with chip-timing offsets and N > K under
the default "auto" the cell stays empty (no other bound is derived there).
"""

from __future__ import annotations

import csv
import io
import math

__all__ = ["CSV_HEADER", "csv_rows", "csv_text", "one_round", "one_round_epsilon"]

CSV_HEADER = ("snr_db", "scheme", "nmse_mean", "nmse_median", "nmse_db", "clipped_nmse_mean", "clipped_nmse_db",
              "channel_uses_mean", "epsilon", "epsilon_link")

ONE_ROUND_DELTA = 1e-5


def one_round_epsilon(phy, *, scheme: str, K: int, d: int, relation: str = "replace") -> float | None:
    """ε of one round's release of ``scheme`` with the [phy] table ``phy`` (a PhyConfig): K = M, T = 1, δ = 1e-5."""
    return one_round(phy, scheme=scheme, K=K, d=d, relation=relation)[0]


def one_round(phy, *, scheme: str, K: int, d: int, relation: str = "replace", seed: int = 0):
    """(ε, ε_link) of one round of ``scheme`` (K = M, T = 1, δ = 1e-5; ε_link for FLORAS only, else None);
    ``seed`` is the link's seed (the cell drop the link simulated)."""
    from dataclasses import replace

    from scenarios.config import scenario_from_dict
    from scenarios.config.schemes import scheme_accountant, wiring

    if wiring(scheme).accountant is None:
        return None, None
    priv = {"delta": ONE_ROUND_DELTA, "relation": relation, "level": "client"}
    if scheme == "floras" and phy.of("floras").privacy_bound == "law":  # asked for: the law's PLD (minutes to draw)
        priv["accountant"] = "pld"
    data = {"partition": {"clients": K}, "training": {"clients_per_round": K},
            "phy": replace(phy, scheme=scheme).to_dict(), "privacy": priv, "run": {"rounds": 1, "seed": int(seed)}}
    try:
        acc = scheme_accountant(scenario_from_dict(data, resolve=False), d=d, D=1)
    except ValueError:  # e.g. a noise multiplier left unset, or a FLORAS option without a derived ε
        return None, None
    if acc is None:
        return None, None
    eps_link = None
    if getattr(acc, "link", None) is not None:
        from privacy.link_epsilon import floras_link_epsilon

        eps_link = floras_link_epsilon(acc, rounds=1)[0]
    return float(acc.epsilon(rounds=1)), eps_link


def csv_rows(blocks: list[tuple[float, dict, dict]]) -> list[tuple]:
    """Rows of :data:`CSV_HEADER` from (snr_db, per-scheme results, per-scheme one-round (ε, ε_link)) blocks."""
    rows = []
    for snr, results, eps in blocks:
        for name, s in results.items():
            c, cdb = s.get("clipped_nmse", {}), s.get("clipped_nmse_db", {})
            rows.append((snr, name, s["nmse"]["mean"], s["nmse"].get("median"), s.get("nmse_db", {}).get("mean"),
                         c.get("mean"), cdb.get("mean"), s["channel_uses"]["mean"], *eps.get(name, (None, None))))
    return rows


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v) if isinstance(v, float) else str(v)


def csv_text(rows: list[tuple]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for row in rows:
        w.writerow([_cell(v) for v in row])
    return buf.getvalue()
