#!/usr/bin/env python3
"""Writes the GGUF test fixtures under tests/data/gguf/ with gguf-py (the oracle) and, next to
each, a JSON description of what gguf-py's GGUFReader sees in it (version, alignment, data
offset, every key with its type chain and value, every tensor with ne, type, offset and data).
tests/loader/gguf_test.cc reads the GGUFs with our reader and compares against the JSON, and
rebuilds all_types.gguf with our GgufWriter from the JSON "input" values and requires the exact
bytes gguf-py wrote.

Run from the repository root:  /work/venv/bin/python tools/gen_gguf_fixtures.py
"""
import importlib.metadata
import json
import os
import sys

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType as VT, GGMLQuantizationType as QT

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "gguf")

# key -> (input value, type chain). Scalars: [type]; arrays: [ARRAY, elem...].
KV = [
    ("test.u8", 200, [VT.UINT8]),
    ("test.i8", -100, [VT.INT8]),
    ("test.u16", 60000, [VT.UINT16]),
    ("test.i16", -30000, [VT.INT16]),
    ("test.u32", 4000000000, [VT.UINT32]),
    ("test.i32", -2000000000, [VT.INT32]),
    ("test.f32", 3.14159, [VT.FLOAT32]),
    ("test.bool", True, [VT.BOOL]),
    ("test.bool_false", False, [VT.BOOL]),
    ("test.string", "h\u00e9llo\nworld \u2713", [VT.STRING]),
    ("test.empty_string", "", [VT.STRING]),
    ("test.u64", 2**63 + 5, [VT.UINT64]),
    ("test.i64", -(2**62) - 7, [VT.INT64]),
    ("test.f64", 2.718281828459045, [VT.FLOAT64]),
    ("test.arr_u8", [1, 2, 255], [VT.ARRAY, VT.UINT8]),
    ("test.arr_i8", [-128, 0, 127], [VT.ARRAY, VT.INT8]),
    ("test.arr_u16", [0, 65535], [VT.ARRAY, VT.UINT16]),
    ("test.arr_i16", [-32768, 32767], [VT.ARRAY, VT.INT16]),
    ("test.arr_u32", [7, 4294967295], [VT.ARRAY, VT.UINT32]),
    ("test.arr_i32", [-5, 6, -7, 8], [VT.ARRAY, VT.INT32]),
    ("test.arr_f32", [0.5, -1.25, 1e-6], [VT.ARRAY, VT.FLOAT32]),
    ("test.arr_bool", [True, False, True], [VT.ARRAY, VT.BOOL]),
    ("test.arr_str", ["a", "", "\u00fc\u00df", "<0x0A>", "\u2581the"], [VT.ARRAY, VT.STRING]),
    ("test.arr_u64", [0, 2**64 - 1], [VT.ARRAY, VT.UINT64]),
    ("test.arr_i64", [-(2**63), 2**63 - 1], [VT.ARRAY, VT.INT64]),
    ("test.arr_f64", [1.0 / 3.0, -2.5e300], [VT.ARRAY, VT.FLOAT64]),
    ("test.nested_i32", [[1, 2], [3], [4, 5, 6]], [VT.ARRAY, VT.ARRAY, VT.INT32]),
    ("test.nested_str", [["x", "y"], ["z"]], [VT.ARRAY, VT.ARRAY, VT.STRING]),
    ("llama.block_count", 2, [VT.UINT32]),
    ("llama.rope.freq_base", 500000.0, [VT.FLOAT32]),
    ("llama.feed_forward_length", [64, 96], [VT.ARRAY, VT.INT32]),
]


def pattern(n, seed):
    return np.array([(i * 37 + seed * 11 + 5) % 256 for i in range(n)], dtype=np.uint8)


# (name, kind, HF shape or byte shape, qtype)
def tensors():
    out = []
    out.append(("t.f32", np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1, None, None))
    out.append(("t.f16", np.array([1.0, -2.0, 0.333, 65504], dtype=np.float16), None, None))
    out.append(("t.bf16", pattern(8, 1).view(np.uint16).reshape(2, 2), [2, 2], QT.BF16))
    out.append(("t.q8_0", pattern(2 * 34, 2).reshape(2, 34), None, QT.Q8_0))
    out.append(("t.q4_k", pattern(144, 3).reshape(1, 144), None, QT.Q4_K))
    out.append(("t.q6_k", pattern(2 * 210, 4).reshape(2, 210), None, QT.Q6_K))
    out.append(("t.mxfp4", pattern(17, 5).reshape(1, 17), None, QT.MXFP4))
    out.append(("t.i8", np.array([-3, 0, 5, 127, -128], dtype=np.int8), None, None))
    out.append(("t.i16", np.array([-300, 301], dtype=np.int16), None, None))
    out.append(("t.i32", np.array([1, -2, 3], dtype=np.int32), None, None))
    out.append(("t.i64", np.array([2**40, -1], dtype=np.int64), None, None))
    out.append(("t.f64", np.array([1.5, -0.1], dtype=np.float64), None, None))
    out.append(("blk.0.attn_q.weight", np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 2, 3), None, None))
    out.append(("t.4d", np.arange(6, dtype=np.float32).reshape(1, 2, 1, 3), None, None))
    return out


def write_all_types(path, alignment=None):
    w = gguf.GGUFWriter(path, "llama")
    if alignment:
        w.add_custom_alignment(alignment)
    for key, val, types in KV:
        if types[0] == VT.ARRAY:
            w.add_key_value(key, val, VT.ARRAY, sub_type=types[1])
        else:
            w.add_key_value(key, val, types[0])
    for name, arr, raw_shape, qt in tensors():
        w.add_tensor(name, arr, raw_shape=raw_shape, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def flatten(v):
    if isinstance(v, list):
        return [y for x in v for y in flatten(x)]
    return [v]


def describe(path, kv_inputs):
    r = GGUFReader(path)
    version = int(r.fields["GGUF.version"].parts[-1][0])
    d = {"file": os.path.basename(path), "version": version, "alignment": int(r.alignment),
         "data_offset": int(r.data_offset), "kv": [], "tensors": []}
    for name, f in r.fields.items():
        if name.startswith("GGUF."):
            continue
        e = {"key": name, "types": [t.name for t in f.types], "value": f.contents()}
        if e["types"][0] == "ARRAY":
            e["value"] = f.contents()  # gguf-py flattens nested arrays
        if name in kv_inputs:
            e["input"] = kv_inputs[name]
            got = e["value"] if isinstance(e["value"], list) else [e["value"]]
            want = flatten(kv_inputs[name])
            if any(isinstance(x, float) for x in want):
                want = [float(np.float32(x)) if "FLOAT32" in e["types"] else x for x in want]
            assert got == want, (name, got, want)
        d["kv"].append(e)
    for t in r.tensors:
        d["tensors"].append({
            "name": t.name, "ggml_type": int(t.tensor_type), "ne": [int(x) for x in t.shape],
            "offset": int(t.data_offset) - int(r.data_offset), "nbytes": int(t.n_bytes),
            "data_hex": bytes(np.asarray(t.data).tobytes()).hex()})
    return d


def main():
    os.makedirs(OUT, exist_ok=True)
    inputs = {k: v for k, v, _ in KV}
    descs = []

    p = os.path.join(OUT, "all_types.gguf")
    write_all_types(p)
    descs.append(describe(p, inputs))

    p = os.path.join(OUT, "align64.gguf")
    write_all_types(p, alignment=64)
    descs.append(describe(p, inputs))

    # v2: identical layout to v3 (v3 only added big-endian files); gguf-py writes v3, so patch.
    src = os.path.join(OUT, "all_types.gguf")
    b = bytearray(open(src, "rb").read())
    assert b[4:8] == (3).to_bytes(4, "little")
    b[4:8] = (2).to_bytes(4, "little")
    p = os.path.join(OUT, "v2.gguf")
    open(p, "wb").write(b)
    descs.append(describe(p, inputs))

    # A split set: one tensor per shard, as llama.cpp's gguf-split / convert --split-max-tensors.
    base = os.path.join(OUT, "split.gguf")
    w = gguf.GGUFWriter(base, "llama", split_max_tensors=1)
    w.add_uint32("llama.block_count", 1)
    w.add_string("general.name", "split test")
    for i in range(3):
        w.add_tensor(f"blk.0.w{i}", np.full((2, 4), i + 0.25, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    for i in range(3):
        descs.append(describe(os.path.join(OUT, f"split-{i + 1:05d}-of-00003.gguf"), {}))

    # Typed values back into JSON: keep the type chain so C++ can rebuild exact GgufValues.
    with open(os.path.join(OUT, "fixtures.json"), "w") as f:
        json.dump({"generator": "tools/gen_gguf_fixtures.py", "gguf_py": importlib.metadata.version("gguf"),
                   "files": descs}, f, indent=None, ensure_ascii=True)
    print("wrote", len(descs), "descriptions to", OUT)


if __name__ == "__main__":
    sys.exit(main())
