"""The worked example scheme of docs/extending.md ("local-gaussian"), registered only by the tests:
its aggregator (phy), its mechanism (privacy) and its wiring row (scenarios)."""

from . import aggregator, mechanism, wiring  # noqa: F401
