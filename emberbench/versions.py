"""Every format version EMBERBench reads or writes, in one place.

A reader refuses a version it does not know; a writer always writes the
version named here. Changing what a format means requires changing its
version here, and nowhere else.
"""

from __future__ import annotations

SIMULATOR_VERSION = "0.2.0"
OBSERVATION_VERSION = "1.0"
METRICS_VERSION = "1.0"
SCENARIO_FORMAT_VERSION = "1.0"
SUITE_FORMAT_VERSION = "1.0"
SUITE_VERSION = "1.0.0"
RECORD_VERSION = "1.0"
MANIFEST_VERSION = "1.0"
RESULT_VERSION = "1.0"
STATISTICS_VERSION = "1.0"
PAIRING_VERSION = "1.0"
VIEWER_DATA_VERSION = "1.0"
REPORT_FILES_VERSION = "1.0"

__all__ = [
    "MANIFEST_VERSION",
    "METRICS_VERSION",
    "OBSERVATION_VERSION",
    "PAIRING_VERSION",
    "RECORD_VERSION",
    "RESULT_VERSION",
    "SCENARIO_FORMAT_VERSION",
    "SIMULATOR_VERSION",
    "STATISTICS_VERSION",
    "SUITE_FORMAT_VERSION",
    "SUITE_VERSION",
    "REPORT_FILES_VERSION",
    "VIEWER_DATA_VERSION",
]
