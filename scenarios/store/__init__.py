"""The results store: every write of a result, and every read of one by ``figures/``.

* :mod:`.files`: atomic writes (unique temporary, fsync, rename) and output-location checks;
* :mod:`.lock`: one writer per run directory and per sweep directory (``fcntl.flock``);
* :mod:`.runs`: the run-directory and sweep-manifest layout, reading, and the verification
  that a run marked finished is complete;
* :mod:`.verify`: the check that a run marked finished is whole, and each run's status;
* :mod:`.records`: the experiment records the figures read (``matched.json``) and the threat-model text;
* :mod:`.summary`: per-grid-point summaries and the stored privacy statements.

No TensorFlow, no dask, no numpy: only the standard library.
"""

from scenarios.store.files import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    check_output_location,
    json_safe,
    remove_stale_temporaries,
    storage_error,
)
from scenarios.errors import StorageError
from scenarios.store.lock import LOCK_NAME, DirectoryLock
from scenarios.store.records import MATCHED_RECORD
from scenarios.store.runs import (
    CHECKPOINT,
    CLASSES,
    CONFIG,
    DAMAGED_TAG,
    DONE,
    DONE_FORMAT,
    ERROR,
    MANIFEST,
    METRICS,
    PERSONAL,
    RUN_RECORD,
    SUMMARY,
    manifest_identity,
    quarantine,
    read_class_accuracy,
    read_config,
    read_json,
    read_manifest,
    read_metric_rows,
    read_metrics,
    read_personal,
    to_float,
)
from scenarios.store.verify import done_record, is_finished, run_status, verify_run, write_done
from scenarios.store.summary import (
    SUMMARY_METRICS,
    format_summary,
    privacy_statement,
    split_statements,
    summarize,
    write_summary,
)

__all__ = [
    "atomic_write_bytes", "atomic_write_json", "atomic_write_text", "check_output_location", "json_safe",
    "remove_stale_temporaries", "storage_error", "LOCK_NAME", "DirectoryLock", "CHECKPOINT", "CONFIG", "DONE",
    "ERROR", "MANIFEST", "METRICS", "RUN_RECORD", "SUMMARY", "is_finished", "manifest_identity", "read_config",
    "read_json", "read_manifest", "read_metric_rows", "read_metrics", "read_personal", "PERSONAL", "read_class_accuracy", "CLASSES", "run_status", "to_float", "verify_run",
    "DAMAGED_TAG", "DONE_FORMAT", "done_record", "quarantine", "write_done",
    "MATCHED_RECORD", "StorageError",
    "SUMMARY_METRICS", "format_summary", "privacy_statement", "split_statements", "summarize", "write_summary",
]
