"""A local OpenAI-compatible chat-completions server for the tests, with a deterministic "model" and faults.

Run as ``python -m tests.model_server``: it serves on a free port of
127.0.0.1 and prints ``PORT <n>`` on its first line of output. :func:`start`
does that as a child process and waits for the line; the session fixture in
tests/conftest.py stops it at the end.

``POST /v1/chat/completions`` answers from the last user message, which the
adapter fills with the observation's JSON. What the "model" does is chosen
per request by the model name, ``ANSWER[+OPTION...]``:

ANSWER
    ``greedy``: the built-in greedy policy's moves, as a JSON object;
    ``fenced``: the same inside a Markdown code fence;
    ``stay``: everyone stays;
    ``prose``: a sentence, not JSON;
    ``list``: a JSON list;
    ``length``: the greedy object cut in half, ``finish_reason: "length"``;
    ``missing``: the greedy object without its last person;
    ``nocontent``: ``content: null``.

OPTION (faults apply to the first N attempts of each distinct request body,
so a retry of the same request eventually gets through; ``x*`` means always)
    ``429xN``, ``500xN``, ``503xN``, ``401xN``: that HTTP status (an OpenAI error body);
    ``timeoutxN``: answer only after 1.5 s (longer than the tests' client timeout);
    ``cutxN``: promise the whole body, send half of it, close the connection;
    ``malformedxN``: HTTP 200 with a body that is not JSON;
    ``ra<S>``: send ``Retry-After: <S>`` with 429 and 5xx; ``ram<MS>``: ``retry-after-ms``;
    ``lat<MS>``: wait MS milliseconds before every answer;
    ``tag<ANY>``: nothing (makes a model name unique to a test).

``usage`` is deterministic: a quarter of the characters of the messages, and
of the reply. ``GET /log?model=NAME`` returns every request received for a
model name, in arrival order: the raw body, the Authorization header, the
arrival time (``time.monotonic`` of the server), the status answered and the
usage reported. Only the standard library and EMBERBench itself are used.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HANG_SECONDS = 1.5
_FAULT_RE = re.compile(r"(429|500|503|401|timeout|cut|malformed)x(\d+|\*)")


def _greedy(observation: dict[str, Any]) -> dict[str, str]:
    from emberbench.sim.observation import ExitView, Observation, PersonView
    from emberbench.policies import GreedyPolicy

    obs = Observation(step=observation["step"], max_steps=observation["max_steps"], height=observation["height"],
                      width=observation["width"], grid=tuple(observation["grid"]),
                      exits=tuple(ExitView(e["id"], e["row"], e["col"]) for e in observation["exits"]),
                      people=tuple(PersonView(p["id"], p["row"], p["col"]) for p in observation["people"]))
    return dict(GreedyPolicy()(obs))


def answer(kind: str, observation: dict[str, Any]) -> tuple[str | None, str]:
    """The model's text and finish reason for ``kind``."""
    if kind == "stay":
        return json.dumps({p["id"]: "stay" for p in observation["people"]}), "stop"
    if kind == "prose":
        return "Everyone should calmly walk north, I think.", "stop"
    if kind == "list":
        return json.dumps([p["id"] for p in observation["people"]]), "stop"
    if kind == "nocontent":
        return None, "stop"
    moves = _greedy(observation)
    if kind == "greedy":
        return json.dumps(moves), "stop"
    if kind == "fenced":
        return "```json\n" + json.dumps(moves, indent=1) + "\n```", "stop"
    if kind == "length":
        text = json.dumps(moves)
        return text[: len(text) // 2], "length"
    if kind == "missing":
        return json.dumps(dict(list(moves.items())[:-1])), "stop"
    raise ValueError(f"unknown answer kind {kind!r}")


@dataclass
class Behaviour:
    """What a model name asks of the server."""

    kind: str
    faults: dict[str, int | None]  # fault -> attempts it applies to (None: always)
    retry_after: str | None = None
    retry_after_ms: str | None = None
    latency: float = 0.0

    @classmethod
    def parse(cls, model: str) -> Behaviour:
        kind, *options = model.split("+")
        b = cls(kind, {})
        for option in options:
            if (m := _FAULT_RE.fullmatch(option)) is not None:
                b.faults[m.group(1)] = None if m.group(2) == "*" else int(m.group(2))
            elif option.startswith("ram"):
                b.retry_after_ms = option[3:]
            elif option.startswith("ra"):
                b.retry_after = option[2:]
            elif option.startswith("lat"):
                b.latency = int(option[3:]) / 1000.0
            elif not option.startswith("tag"):
                raise ValueError(f"unknown option {option!r}")
        return b


class State:
    """What the server remembers: attempts per request body, and the log per model name."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.attempts: dict[str, int] = {}
        self.log: dict[str, list[dict[str, Any]]] = {}

    def arrive(self, model: str, body: bytes, auth: str | None) -> tuple[int, dict[str, Any]]:
        """Count an attempt of this body (1-based) and log it."""
        digest = hashlib.sha256(body).hexdigest()
        with self.lock:
            n = self.attempts[digest] = self.attempts.get(digest, 0) + 1
            entry = {"body": body.decode("utf-8"), "auth": auth, "t": time.monotonic(), "status": None,
                     "usage": None}
            self.log.setdefault(model, []).append(entry)
        return n, entry


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Headers and body are written separately: without this each answer waits for the
        # client's delayed acknowledgement (about 40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None, *,
              declared: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if declared is None else declared))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/log":
            self._send(404, b'{"error":{"message":"not found"}}')
            return
        model = urllib.parse.parse_qs(url.query).get("model", [""])[0]
        with STATE.lock:
            data = json.dumps(STATE.log.get(model, [])).encode()
        self._send(200, data)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path != "/v1/chat/completions":
            self._send(404, b'{"error":{"message":"no such route"}}')
            return
        try:
            request = json.loads(body)
            behaviour = Behaviour.parse(request["model"])
        except (ValueError, KeyError) as exc:
            self._send(400, json.dumps({"error": {"message": f"bad request: {exc}"}}).encode())
            return
        attempt, entry = STATE.arrive(request["model"], body, self.headers.get("Authorization"))
        if behaviour.latency:
            time.sleep(behaviour.latency)
        fault = next((f for f, n in behaviour.faults.items() if n is None or attempt <= n), None)
        try:
            self._answer(request, behaviour, fault, entry, body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (a timeout): nothing to answer

    def _answer(self, request: dict[str, Any], behaviour: Behaviour, fault: str | None, entry: dict[str, Any],
                body: bytes) -> None:
        if fault in ("429", "500", "503", "401"):
            status = int(fault)
            entry["status"] = status
            headers = {}
            if status != 401 and behaviour.retry_after is not None:
                headers["Retry-After"] = behaviour.retry_after
            if status != 401 and behaviour.retry_after_ms is not None:
                headers["retry-after-ms"] = behaviour.retry_after_ms
            message = {"429": "rate limited", "500": "internal error", "503": "overloaded",
                       "401": "invalid api key"}[fault]
            self._send(status, json.dumps({"error": {"message": message, "type": "test"}}).encode(), headers)
            return
        if fault == "timeout":
            entry["status"] = "timeout"
            time.sleep(HANG_SECONDS)
        if fault == "malformed":
            entry["status"] = "malformed"
            self._send(200, b'{"id": "x", "choices": [{"message": ')
            return
        user = [m for m in request["messages"] if m.get("role") == "user"][-1]["content"]
        content, finish = answer(behaviour.kind, json.loads(user))
        prompt_chars = sum(len(m.get("content") or "") for m in request["messages"])
        usage = {"prompt_tokens": prompt_chars // 4 + 1, "completion_tokens": len(content or "") // 4 + 1}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        reply = {"id": "chatcmpl-" + hashlib.sha256(body).hexdigest()[:16], "object": "chat.completion",
                 "created": 0, "model": request["model"],
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": finish}],
                 "usage": usage}
        data = json.dumps(reply).encode()
        if fault == "cut":
            entry["status"] = "cut"
            self.close_connection = True
            self._send(200, data[: len(data) // 2], declared=len(data))
            return
        if fault != "timeout":
            entry["status"] = 200
            entry["usage"] = usage
        self._send(200, data)


def serve() -> None:
    """Serve on a free loopback port until killed; print ``PORT <n>`` first."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


@dataclass
class ModelServer:
    """A running test server: its base URL (``.../v1``) and process."""

    base_url: str
    process: subprocess.Popen[bytes]

    def log(self, model: str) -> list[dict[str, Any]]:
        """Every request the server received for ``model``, in arrival order."""
        root = self.base_url.rsplit("/v1", 1)[0]
        with urllib.request.urlopen(f"{root}/log?model={urllib.parse.quote(model)}", timeout=10) as reply:
            return json.loads(reply.read())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def start(timeout: float = 30.0) -> ModelServer:
    """Start the server as a child process; raises RuntimeError with a one-line reason."""
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "tests.model_server"], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    line = [b""]

    def read() -> None:
        line[0] = proc.stdout.readline()  # type: ignore[union-attr]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    match = re.fullmatch(rb"PORT (\d+)\n", line[0])
    if match is None:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"the test model server did not start (it printed {line[0][:80]!r})")
    port = int(match.group(1))
    try:
        socket.create_connection(("127.0.0.1", port), 5).close()
    except OSError as exc:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"the test model server on port {port} refuses connections: {exc}") from None
    return ModelServer(f"http://127.0.0.1:{port}/v1", proc)


if __name__ == "__main__":
    serve()
