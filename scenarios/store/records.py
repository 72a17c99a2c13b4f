"""Records of an experiment that the figures read beside its runs, and the text they carry.

:data:`MATCHED_RECORD` is the matched comparison's record in its sweep directory (written by
``floras matched``; each planned point carries its ``threat_model``). :data:`THREAT_MODELS` is the
threat model each scheme's ε covers: the text calibrations record and the figures fall back to
for a curve whose point does not carry it.
"""

from __future__ import annotations

__all__ = ["MATCHED_RECORD", "THREAT_MODELS"]

MATCHED_RECORD = "matched.json"
#: the threat model each scheme's ε covers (CONTRACT; model §10)
THREAT_MODELS = {
    "floras": "T1 only (output observer)",
    "central-gaussian": "trusted server; outputs only",
    "analog-gaussian": "T1 and a single-antenna base station",
    "ddgauss": "the server, given secure aggregation",
    "sqsgd": "any observer (T1 and T2)",
    "ideal": "none (no privacy noise)",
    "channel-inversion": "none (no privacy noise)",
}
