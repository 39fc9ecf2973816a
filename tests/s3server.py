"""A real S3-compatible server on 127.0.0.1 for the test session (moto's standalone server).

:func:`start` runs ``python -m moto.server`` as a child process on a free
loopback port and waits until it answers; the session fixture in
tests/conftest.py stops it at the end. Every test gets its own prefix in one
bucket, so the server starts once per session. Fake credentials are set for
the whole session (see tests/conftest.py), so no test can reach a real
account, and the endpoint is always loopback.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass

BUCKET = "emberbench-test"


@dataclass
class Server:
    """A running server: its endpoint URL and process."""

    endpoint: str
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def start(timeout: float = 30.0) -> Server:
    """Start the server and create the test bucket; raises RuntimeError with a one-line reason."""
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(f"moto[server] and boto3 are not installed ({exc.name}); install the test extra") from None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"the moto S3 server did not start on {endpoint}") from None
            time.sleep(0.05)
    server = Server(endpoint, proc)
    try:
        from emberbench.store.s3_client import make_client

        make_client(endpoint, "us-east-1").create_bucket(Bucket=BUCKET)
    except Exception as exc:
        server.stop()
        raise RuntimeError(f"the moto S3 server on {endpoint} refused a bucket: {exc}") from None
    return server
