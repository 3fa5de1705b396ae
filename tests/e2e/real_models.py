"""The real models some e2e tests run on, fetched from PyPI by scripts/test_models.sh into the
build's test-models/ folder (OXYD_TEST_MODELS_DIR, which e2e.cmake sets; tests/real_models.h is
the C++ twin). An environment variable names another copy. Paths may not exist: callers skip."""
from __future__ import annotations

import os
import pathlib

from server import ROOT


def _real(env: str, name: str) -> pathlib.Path:
    if os.environ.get(env):
        return pathlib.Path(os.environ[env])
    return pathlib.Path(os.environ.get("OXYD_TEST_MODELS_DIR", str(ROOT / "build" / "test-models"))) / name


def gemma3_270m_gguf() -> pathlib.Path:
    return _real("OXYD_GEMMA3_270M_GGUF", "gemma-3-270m-q4_k_m.gguf")


def minilm_dir() -> pathlib.Path:
    return _real("OXYD_MINILM_DIR", "all-MiniLM-L6-v2")


def missing(path: pathlib.Path) -> str:
    return f"real model not found at {path} (run scripts/test_models.sh, or set the variable tests/e2e/real_models.py names for it)"
