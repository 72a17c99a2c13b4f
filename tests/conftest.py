import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("MPLBACKEND", "Agg")
# no test reads a calibration another command stored on disk (scenarios/store/calibrations.py); the store's own tests
# point it at a temporary directory
os.environ["FLORAS_CALIBRATION_CACHE"] = "off"

try:  # property-based tests (tests/test_properties.py): bounded, deterministic by default
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", max_examples=30, deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("thorough", max_examples=1000, deadline=None)
    settings.load_profile(os.environ.get("FLORAS_HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is in the test extra; without it those tests are skipped
    pass
