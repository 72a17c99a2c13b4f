"""Execution of one scenario run: :mod:`scenarios.runs.run` (training, ε, metrics) and
:mod:`scenarios.runs.run_dir` (the run directory: its files, provenance and disk estimate)."""
