"""Experiments made of many runs: sweep files (:mod:`.sweep_file`), their execution (:mod:`.sweep`,
:mod:`.executors`, :mod:`.identical`), the matched comparison (:mod:`.matched`,
:mod:`.matched_accountants`, :mod:`.matched_timing`) and learning-rate tuning (:mod:`.tune`)."""
