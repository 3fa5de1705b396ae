"""A real `oxydllm start` process for the e2e tests, plus small raw-HTTP helpers.

Server starts the binary on 127.0.0.1 with --port 0, waits for the stderr line
`oxydllm: listening on http://HOST:PORT`, and on stop() sends SIGTERM and requires a clean exit
(graceful shutdown is part of the contract). Its stderr is kept for failure messages.
Not a fixture: conftest.py and the test modules decide how many servers run and with which flags.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import select
import signal
import socket
import shutil
import subprocess
import tempfile
import threading
import time

try:  # the openai SDK depends on httpx2 (httpx before it)
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx
import openai

E2E_DIR = pathlib.Path(__file__).resolve().parent
ROOT = E2E_DIR.parent.parent
ARCHS = ROOT / "tests" / "data" / "archs"
TEST_DATA = ROOT / "tests" / "data"
BIN = pathlib.Path(os.environ.get("OXYDLLM_BIN", ROOT / "build" / "bin" / "oxydllm"))
CHAT_TEMPLATE = E2E_DIR / "chat_template.jinja"
LISTEN_RE = re.compile(r"oxydllm: listening on (http://[^\s:]+:(\d+))")
START_TIMEOUT_S = 120


class Server:
    def __init__(self, model: str, *flags: str, api_key: str | None = None, name: str = "server"):
        self.model_arg, self.flags, self.api_key, self.name = model, list(flags), api_key, name
        self.proc: subprocess.Popen | None = None
        self.log: list[str] = []
        self.url = ""
        self.model_id = ""
        self.home = ""

    def start(self) -> "Server":
        if not BIN.exists():
            raise RuntimeError(f"{BIN}: no oxydllm binary (build the `oxydllm` target first)")
        # An empty model store and HF cache: /v1/models lists only --model, whatever the machine holds.
        self.home = tempfile.mkdtemp(prefix="oxyd-e2e-home-")
        cmd = [str(BIN), "start", "--host", "127.0.0.1", "--port", "0", "--model", self.model_arg,
               "--models-dir", os.path.join(self.home, "models"), *self.flags]
        if "--kv-dtype" not in self.flags and "--kv-quant" not in self.flags:
            cmd += ["--kv-dtype", "f32"]  # the oracles compare token for token: the F32 cache
        if self.api_key:
            cmd += ["--api-key", self.api_key]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OXYDLLM_", "HF_", "HUGGINGFACE_"))}
        env.update(HOME=self.home, HF_HUB_CACHE=os.path.join(self.home, "hf"), XDG_CACHE_HOME=self.home)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, errors="replace", env=env)
        ready = threading.Event()

        def pump():
            assert self.proc and self.proc.stderr
            for line in self.proc.stderr:
                self.log.append(line.rstrip("\n"))
                m = LISTEN_RE.search(line)
                if m and not ready.is_set():
                    self.url = m.group(1)
                    ready.set()
            ready.set()  # EOF: the process ended

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(START_TIMEOUT_S) or not self.url:
            self.kill()
            raise RuntimeError(f"{self.name} did not print the listening line: {' '.join(cmd)}\n{self.tail()}")
        models = self.get("/v1/models").json()["data"]
        self.model_id = models[0]["id"]
        return self

    def tail(self, n: int = 40) -> str:
        return "\n".join(self.log[-n:])

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def client(self, **kw) -> openai.OpenAI:
        kw.setdefault("api_key", self.api_key or "unused")
        kw.setdefault("max_retries", 0)
        kw.setdefault("timeout", 120)
        return openai.OpenAI(base_url=self.url + "/v1", **kw)

    def get(self, path: str, **kw) -> httpx.Response:
        return httpx.get(self.url + path, headers=kw.pop("headers", self.headers()), timeout=60, **kw)

    def post(self, path: str, body=None, **kw) -> httpx.Response:
        headers = kw.pop("headers", self.headers())
        if body is not None and not isinstance(body, (bytes, str)):
            kw["json"] = body
        elif body is not None:
            kw["content"] = body
            headers = {"Content-Type": "application/json", **headers}
        return httpx.post(self.url + path, headers=headers, timeout=120, **kw)

    def metrics(self) -> "Metrics":
        r = self.get("/metrics")
        assert r.status_code == 200, r.text
        return Metrics(r.text)

    def stop(self, timeout_s: float = 30) -> int:
        """SIGTERM; returns the exit code (the caller asserts 0), -999 when it had to be killed."""
        if self.proc is None:
            return 0
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
                rc = -999
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)
        return rc

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        if self.home:
            shutil.rmtree(self.home, ignore_errors=True)

    def raw(self, request: bytes, timeout_s: float = 60) -> tuple[int, bytes]:
        """Sends bytes on a fresh socket and returns the status code and the whole response. The
        head goes first; if the server answers before the body is sent (413 from Content-Length),
        the body is never sent, so a reset cannot swallow that answer."""
        host, port = self.url.removeprefix("http://").rsplit(":", 1)
        head, sep, body = request.partition(b"\r\n\r\n")
        with socket.create_connection((host, int(port)), timeout=timeout_s) as s:
            try:
                s.sendall(head + sep)
                if not select.select([s], [], [], 1.0 if len(body) > 1 << 20 else 0)[0]:
                    s.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
            data = b""
            try:
                while chunk := s.recv(65536):
                    data += chunk
                    if _complete(data):
                        break
            except (ConnectionResetError, socket.timeout):
                pass
        m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
        return (int(m.group(1)) if m else -1), data


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return m is not None and len(body) >= int(m.group(1))


def raw_request(server: Server, path: str, body: bytes, extra_headers: str = "") -> bytes:
    auth = f"Authorization: Bearer {server.api_key}\r\n" if server.api_key else ""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n{auth}"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra_headers}\r\n")
    return head.encode() + body


class Metrics:
    """Prometheus text format: value(name, **labels) sums the samples whose labels include the given ones."""
    LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
    LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

    def __init__(self, text: str):
        self.text = text
        self.samples: list[tuple[str, dict, float]] = []
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            m = self.LINE.match(line)
            assert m, f"bad metrics line: {line!r}"
            self.samples.append((m.group(1), dict(self.LABEL.findall(m.group(2) or "")), float(m.group(3))))

    def has(self, name: str) -> bool:
        return any(n == name for n, _, _ in self.samples)

    def value(self, name: str, **labels) -> float:
        return sum(v for n, ls, v in self.samples
                   if n == name and all(ls.get(k) == str(w) for k, w in labels.items()))

    def matching(self, name: str, pred) -> float:
        return sum(v for n, ls, v in self.samples if n == name and pred(ls))


def sse_events(resp: httpx.Response) -> tuple[list[dict], bool]:
    """Reads a whole SSE response: (the JSON events in order, whether the last data line was [DONE]).
    Asserts every data line is JSON or [DONE] and nothing follows [DONE]."""
    events, done = [], False
    for line in resp.iter_lines():
        if not line.startswith("data:"):
            assert line == "" or line.startswith(":"), f"unexpected SSE line {line!r}"
            continue
        assert not done, "data after [DONE]"
        payload = line[5:].strip()
        if payload == "[DONE]":
            done = True
        else:
            events.append(json.loads(payload))
    return events, done


def stream_post(server: Server, path: str, body: dict) -> tuple[int, list[dict], bool]:
    with httpx.stream("POST", server.url + path, json=body, headers=server.headers(), timeout=120) as r:
        if r.status_code != 200:
            r.read()
            return r.status_code, [r.json()], False
        assert r.headers.get("content-type", "").startswith("text/event-stream"), r.headers
        events, done = sse_events(r)
        return 200, events, done


def wait_until(pred, timeout_s: float = 30, step_s: float = 0.1):
    end = time.monotonic() + timeout_s
    while True:
        v = pred()
        if v or time.monotonic() > end:
            return v
        time.sleep(step_s)
