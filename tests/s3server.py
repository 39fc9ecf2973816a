"""A real S3-compatible server on 127.0.0.1 for the test session (moto's standalone server).

:func:`start` runs ``python -m moto.server`` as a child process on a free
loopback port and waits until it answers; the session fixture in
tests/conftest.py stops it at the end. Every test gets its own prefix in one
bucket, so the server starts once per session. Fake credentials are set for
the whole session (see tests/conftest.py), so no test can reach a real
account, and the endpoint is always loopback.

The multi-host rig (tests/rig) runs the same server on its S3 host as
``python -m tests.s3server --host ADDRESS --port PORT``: it prints
``ready ENDPOINT`` once the bucket exists, then serves until SIGTERM, with
moto's request log (one line per request, with the client's address) on stderr.
"""

from __future__ import annotations

import argparse
import signal
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


def start(timeout: float = 30.0, *, host: str = "127.0.0.1", port: int = 0, log: int | None = subprocess.DEVNULL) -> Server:
    """Start the server and create the test bucket; raises RuntimeError with a one-line reason.

    Args:
        host: the address to serve on.
        port: the port, or 0 for one free now.
        log: where moto's output goes (a file descriptor; None: this process's stdout and stderr).
    """
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as exc:
        raise RuntimeError(f"moto[server] and boto3 are not installed ({exc.name}); install the test extra") from None
    if port == 0:
        with socket.socket() as sock:
            sock.bind((host, 0))
            port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", host, "-p", str(port)],
                            stdout=log, stderr=log)
    endpoint = f"http://{host}:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), 0.2).close()
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


def main(argv: list[str] | None = None) -> None:
    """Serve on ``--host``/``--port`` until SIGTERM or SIGINT (the rig's S3 host)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    server = start(host=args.host, port=args.port, log=None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"ready {server.endpoint}", flush=True)
    try:
        server.process.wait()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
