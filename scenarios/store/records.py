"""Records of an experiment that the figures read beside its runs, and the text they carry.

:data:`MATCHED_RECORD` is the matched comparison's record in its sweep directory (written by
``floras matched``; each planned point carries its ``threat_model``). Each point's threat model is
its scheme's wiring row's text (:mod:`scenarios.config.schemes`), stored with the point.
"""

from __future__ import annotations

__all__ = ["MATCHED_RECORD"]

MATCHED_RECORD = "matched.json"
