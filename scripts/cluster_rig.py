#!/usr/bin/env python3
"""The multi-host test rig: a Ray cluster and an S3 server on test hosts in network namespaces.

    scripts/cluster_rig.py up [--workers N] [--foreground]   build it (tearing down what an earlier rig left)
    scripts/cluster_rig.py status                            what is up, with pids
    scripts/cluster_rig.py exec [--timeout S] HOST -- CMD... run a command on a host (s3, head, w1.., client)
    scripts/cluster_rig.py down                              tear everything down

Needs root and iproute2. ``up`` returns once every service answers and
leaves the rig up (``--foreground`` keeps it up until Ctrl-C or SIGTERM,
then tears it down). The rig is described in docs/cluster.md; the code is
tests/rig, importable as ``from tests.rig import Rig``.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.rig import Rig, RigConfig, RigError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cluster_rig.py", description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", default="ebrig", help="namespace name prefix (default: ebrig)")
    parser.add_argument("--subnet", default="10.213.47.0/24", help="the rig's private /24")
    parser.add_argument("--root", type=Path, default=None, help="state and host folders (default /tmp/PREFIX-rig)")
    parser.add_argument("--keep-files", action="store_true", help="keep logs and host folders on teardown")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="build the rig")
    up.add_argument("--workers", type=int, default=2)
    up.add_argument("--network-only", action="store_true", help="hosts and network, no S3 server or Ray")
    up.add_argument("--foreground", action="store_true", help="stay until Ctrl-C or SIGTERM, then tear down")
    sub.add_parser("down", help="tear the rig down")
    sub.add_parser("status", help="print the rig's hosts and processes as JSON")
    run = sub.add_parser("exec", help="run a command on a host")
    run.add_argument("--timeout", type=float, default=3600.0, help="seconds before the command is killed")
    run.add_argument("host")
    run.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    config = RigConfig(prefix=args.prefix, subnet=args.subnet, root=args.root,
                       workers=getattr(args, "workers", 2), services=not getattr(args, "network_only", False), keep_files=args.keep_files)
    try:
        if args.command == "up":
            rig = Rig(config)
            rig.up(owned=args.foreground)
            print(json.dumps(rig.status(), indent=1))
            if args.foreground:
                try:
                    signal.pause()  # SIGTERM: the rig's handler tears down; Ctrl-C: below
                finally:
                    rig.down()
        elif args.command == "down":
            Rig(config).down()
        elif args.command == "status":
            print(json.dumps(Rig(config).status(), indent=1))
        else:
            cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
            if not cmd:
                parser.error("exec needs a command after the host")
            proc = Rig.attach(config).run(args.host, cmd, timeout=args.timeout)
            sys.stdout.write(proc.stdout)
            sys.stderr.write(proc.stderr)
            return proc.returncode
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
