#!/usr/bin/env python3
"""llama.cpp's quantization names of general.file_type (gguf-py's LlamaFileType), for
tests/hub/quant_name_test.cc (issue 21, 5.5): `list` / `show` name a GGUF's quantization from
general.file_type (checked against its tensors), so the table must say what llama.cpp says.

Run: python3 tools/gen_ftype_names.py [--gguf-py DIR]   (DIR: llama.cpp's gguf-py; default: the
installed gguf package) -> tests/data/hub/ftype_names.json  {"15": "Q4_K_M", ...}
Only gguf/constants.py is loaded (no numpy needed).
"""
import argparse
import importlib.util
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf-py", type=pathlib.Path, default=None)
    args = ap.parse_args()
    if args.gguf_py:
        path = args.gguf_py / "gguf" / "constants.py"
    else:
        spec = importlib.util.find_spec("gguf")
        path = pathlib.Path(spec.origin).parent / "constants.py"
    spec = importlib.util.spec_from_file_location("gguf_constants", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = {}
    for e in mod.LlamaFileType:
        if e.name == "GUESSED":
            continue
        names[str(int(e.value))] = e.name.replace("MOSTLY_", "").replace("ALL_", "")
    out = ROOT / "tests/data/hub/ftype_names.json"
    out.write_text(json.dumps({"source": "gguf-py LlamaFileType (" + str(path.parent.parent.parent.name) + ")",
                               "names": names}, indent=1) + "\n")
    print("wrote", out, len(names), "names")


if __name__ == "__main__":
    main()
