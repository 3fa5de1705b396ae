"""pytest fixtures: servers started per module (stopped with SIGTERM at module end, exit code 0
required), and after every test a check that each running server is still alive and healthy —
"the server keeps serving after every error" holds for the whole suite, not one test."""
from __future__ import annotations

import pytest

import oracle
from server import Server

_live: list[Server] = []


@pytest.fixture(scope="session")
def llama_tok_dir(tmp_path_factory):
    return oracle.make_llama_tok_dir(tmp_path_factory.mktemp("models"))


@pytest.fixture(scope="module")
def start_server():
    started: list[Server] = []

    def start(model, *flags, **kw) -> Server:
        s = Server(str(model), *flags, **kw).start()
        started.append(s)
        _live.append(s)
        return s

    yield start
    errors = []
    for s in started:
        _live.remove(s)
        rc = s.stop()
        if rc != 0:
            errors.append(f"{s.name}: exit code {rc} after SIGTERM (0 expected)\n{s.tail()}")
    assert not errors, "\n".join(errors)


@pytest.fixture(autouse=True)
def servers_survive():
    yield
    for s in _live:
        assert s.alive(), f"{s.name} died (exit {s.proc.returncode})\n{s.tail()}"
        r = s.get("/health", headers={})
        assert r.status_code == 200, f"{s.name} /health → {r.status_code} {r.text}\n{s.tail()}"


def pytest_sessionfinish(session, exitstatus):
    """A module whose every test skipped (test_gemma.py without its model) exits 77, which
    e2e.cmake maps to a visible ctest "Skipped", not a pass."""
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus == 0 and tr is not None and not tr.stats.get("passed") and tr.stats.get("skipped"):
        session.exitstatus = 77
