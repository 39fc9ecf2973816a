"""The multi-host test rig: test hosts in network namespaces on one machine (docs/cluster.md).

``scripts/cluster_rig.py`` is its command line; ``tests/multihost`` its tests.
"""

from tests.s3server import BUCKET

from .errors import RigError, RigUnavailable
from .rig import Rig, RigConfig

__all__ = ["BUCKET", "Rig", "RigConfig", "RigError", "RigUnavailable"]
