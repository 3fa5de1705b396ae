#!/usr/bin/env python3
"""Hugging Face's `special` flag of the added tokens of the real tokenizers the tests use, for
tests/tokenizer/media_placeholder_test.cc (issue 21, 5.2): every token our decoder hides as a
placeholder for a non-text input must be one Hugging Face's decode(skip_special_tokens=True) hides
too. Gemma 3's 6,242 `<unusedN>` tokens (all non-special, none a placeholder) are left out.

Run: python3 tools/gen_added_token_flags.py [--tokenizers DIR]   (DIR/<family>/tokenizer.json;
default tests/data/tokenizers) -> tests/data/tokenizer/added_token_flags.json
"""
import argparse
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAMILIES = ["gemma3", "llama2", "llama3", "llama3_1", "qwen3", "gptoss", "deepseek_v3"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokenizers", type=pathlib.Path, default=ROOT / "tests/data/tokenizers")
    args = ap.parse_args()
    out = {}
    for fam in FAMILIES:
        tok = json.loads((args.tokenizers / fam / "tokenizer.json").read_text())
        out[fam] = [[a["content"], bool(a["special"])] for a in tok["added_tokens"]
                    if not re.fullmatch(r"<unused[0-9]+>", a["content"])]
    path = ROOT / "tests/data/tokenizer/added_token_flags.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=0) + "\n")
    print("wrote", path, {k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
