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
VIEWER_DATA_VERSION = "1.1"
REPORT_FILES_VERSION = "1.0"
RECIPE_FORMAT_VERSION = "1.0"
GENERATOR_VERSION = "1.0"
GENERATION_FORMAT_VERSION = "1.0"
CALIBRATION_FORMAT_VERSION = "1.0"
COMMITMENT_FORMAT_VERSION = "1.0"
REVEAL_FORMAT_VERSION = "1.0"
RUN_INFO_VERSION = "1.2"
RUN_HEADER_VERSION = 1
RUN_SIDECAR_VERSION = "1.0"
OUTPUT_LOCK_VERSION = 1
RUN_CATALOG_VERSION = "1.0"
CATALOG_INDEX_VERSION = "1.0"
MODEL_CACHE_VERSION = "1.0"
KEYRING_VERSION = "1.0"
KNOWN_SUITES_VERSION = "1.0"
ATTESTATION_PAYLOAD_TYPE = "application/vnd.in-toto+json"
"""The DSSE payload type of an attestation: an in-toto Statement (the statement says which)."""
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
RUN_PROVENANCE_PREDICATE = "https://emberbench.invalid/predicates/run-provenance/v1"
"""The predicate type of a run's attestation; the major version is its last path component (in-toto's rule)."""

__all__ = [
    "ATTESTATION_PAYLOAD_TYPE",
    "CALIBRATION_FORMAT_VERSION",
    "CATALOG_INDEX_VERSION",
    "COMMITMENT_FORMAT_VERSION",
    "GENERATION_FORMAT_VERSION",
    "GENERATOR_VERSION",
    "KEYRING_VERSION",
    "KNOWN_SUITES_VERSION",
    "MANIFEST_VERSION",
    "METRICS_VERSION",
    "MODEL_CACHE_VERSION",
    "OBSERVATION_VERSION",
    "OUTPUT_LOCK_VERSION",
    "PAIRING_VERSION",
    "RECIPE_FORMAT_VERSION",
    "RECORD_VERSION",
    "RESULT_VERSION",
    "REVEAL_FORMAT_VERSION",
    "RUN_CATALOG_VERSION",
    "RUN_HEADER_VERSION",
    "RUN_INFO_VERSION",
    "RUN_PROVENANCE_PREDICATE",
    "RUN_SIDECAR_VERSION",
    "SCENARIO_FORMAT_VERSION",
    "SIMULATOR_VERSION",
    "STATEMENT_TYPE",
    "STATISTICS_VERSION",
    "SUITE_FORMAT_VERSION",
    "SUITE_VERSION",
    "REPORT_FILES_VERSION",
    "VIEWER_DATA_VERSION",
]
