#!/usr/bin/env python3
"""Golden files for tests/quant: every weight format decoded and encoded by independent oracles.

Command (from the repository root; writes tests/data/quant/*.bin, about 0.6 MB, deterministic):

    /work/venv/bin/python tools/gen_quant_goldens.py

Oracles:
  * gguf-py (PyPI `gguf` 0.19, gguf.quants): dequantize of F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
    Q2_K..Q6_K, IQ4_NL, IQ4_XS, MXFP4; quantize of F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, MXFP4.
  * ggml's own C reference code (ggml-quants.c, compiled here with gcc -O2 -ffp-contract=off from the
    llama.cpp copy inside the PyPI sdist of llama-cpp-python 0.3.36, fetched with
    `pip download llama-cpp-python==0.3.36 --no-deps --no-binary :all:` unless --ggml-src points at an
    unpacked ggml/ folder): the encoders gguf-py lacks (Q8_1, Q8_K, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
    IQ4_NL, IQ4_XS) and the Q8_K decoder. Nothing of it is committed.
  * ml_dtypes (PyPI): F8_E4M3 and F8_E5M2 decoding, every one of the 256 codes.
Matmul goldens: y = x · dequant(w)ᵀ in float64 numpy on the oracle's dequantized weights.

File layout (little endian): b"OXQG", u32 version=1, u32 dtype (oxyd DType id = ggml id),
u32 kind (0 dequant: u8[num_bytes] then f32[num_elems]; 1 quant: f32[num_elems] then u8[num_bytes]),
u32 num_elems, u32 num_bytes, u32 oracle (0 gguf-py, 1 ggml C, 2 ml_dtypes).
matmul.bin: b"OXQM", u32 num_cases, then per case u32 dtype, m, n, k, num_w_bytes,
f32 x[m*k], u8 w[num_w_bytes], f32 y[m*n].
bulk.bin (encoders on 262144 values each, too many to commit; the test regenerates the same inputs
from an integer LCG, see lcg_inputs): b"OXQB", u32 version=1, u32 num_formats, then per format
u32 dtype, num_elems, seed, blocks_per_hash, num_hashes, oracle, u64 fnv1a64[num_hashes] (one per
blocks_per_hash blocks of the oracle's output bytes).
"""
from __future__ import annotations

import argparse
import ctypes
import pathlib
import struct
import subprocess
import sys
import tarfile
import tempfile

import ml_dtypes
import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "quant"
LLAMA_CPP_PYTHON = "llama-cpp-python==0.3.36"
ORACLE_GGUF_PY, ORACLE_GGML, ORACLE_ML_DTYPES = 0, 1, 2

# name: (oxyd DType id, block elems, block bytes)
FORMATS = {
    "F32": (0, 1, 4), "F16": (1, 1, 2), "BF16": (30, 1, 2),
    "Q4_0": (2, 32, 18), "Q4_1": (3, 32, 20), "Q5_0": (6, 32, 22), "Q5_1": (7, 32, 24),
    "Q8_0": (8, 32, 34), "Q8_1": (9, 32, 36),
    "Q2_K": (10, 256, 84), "Q3_K": (11, 256, 110), "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176),
    "Q6_K": (14, 256, 210), "Q8_K": (15, 256, 292),
    "IQ4_NL": (20, 32, 18), "IQ4_XS": (23, 256, 136), "MXFP4": (39, 32, 17),
    "F8_E4M3": (1000, 1, 1), "F8_E5M2": (1001, 1, 1),
}
# Byte offsets of the f16 scale fields in each block (patched to chosen finite values).
F16_SCALES = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0], "Q8_1": [0, 2],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
    "IQ4_NL": [0], "IQ4_XS": [0],
}
GGUF_DEQUANT = ["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4"]
GGUF_QUANT = ["F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "MXFP4"]
GGML_QUANT = ["Q8_1", "Q8_K", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"]


# ---------------------------------------------------------------- ggml C reference (oracle only)
STUBS = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
void ggml_abort(const char * file, int line, const char * fmt, ...) { fprintf(stderr, "ggml_abort %s:%d\n", file, line); abort(); }
size_t ggml_row_size(int type, int64_t ne) { abort(); }
const char * ggml_type_name(int type) { abort(); }
size_t ggml_type_size(int type) { abort(); }
"""


def build_ggml(ggml_src: pathlib.Path | None, work: pathlib.Path) -> ctypes.CDLL:
    if ggml_src is None:
        subprocess.run([sys.executable, "-m", "pip", "download", LLAMA_CPP_PYTHON, "--no-deps", "--no-binary",
                        ":all:", "-d", str(work)], check=True, stdout=subprocess.DEVNULL)
        sdist = next(work.glob("llama_cpp_python-*.tar.gz"))
        with tarfile.open(sdist) as tf:
            members = [m for m in tf.getmembers() if "/vendor/llama.cpp/ggml/" in m.name]
            tf.extractall(work, members=members, filter="data")
        ggml_src = next(work.glob("llama_cpp_python-*/vendor/llama.cpp/ggml"))
    (work / "stubs.c").write_text(STUBS)
    lib = work / "libggml_quants_ref.so"
    subprocess.run(["gcc", "-O2", "-fPIC", "-shared", "-std=gnu11", "-ffp-contract=off",
                    f"-I{ggml_src}/include", f"-I{ggml_src}/src", f"-I{ggml_src}/src/ggml-cpu",
                    str(ggml_src / "src" / "ggml-quants.c"), str(work / "stubs.c"), "-lm", "-o", str(lib)],
                   check=True)
    return ctypes.CDLL(str(lib))


def ggml_quantize(lib: ctypes.CDLL, name: str, x: np.ndarray) -> np.ndarray:
    _, qk, bb = FORMATS[name]
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.zeros(x.size // qk * bb, dtype=np.uint8)
    fn = getattr(lib, f"quantize_row_{name.lower().replace('_k', '_K')}_ref")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn(x.ctypes.data, out.ctypes.data, x.size)
    if name == "Q8_K":  # ggml leaves bsums unset for an all-zero block; they are the sums of zeros
        blocks = out.reshape(-1, bb)
        zero = blocks[:, :4].view(np.float32).ravel() == 0
        blocks[zero, 260:] = 0
    if name == "IQ4_NL":  # ggml packs uninitialised indices for an all-zero block (d = 0); we write 0
        blocks = out.reshape(-1, bb)
        blocks[np.abs(x.reshape(-1, qk)).max(axis=1) < 1e-15, 2:] = 0
    return out


def ggml_dequantize(lib: ctypes.CDLL, name: str, raw: np.ndarray) -> np.ndarray:
    _, qk, bb = FORMATS[name]
    n = raw.size // bb * qk
    out = np.zeros(n, dtype=np.float32)
    fn = getattr(lib, f"dequantize_row_{name.lower().replace('_k', '_K')}")
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    fn(np.ascontiguousarray(raw).ctypes.data, out.ctypes.data, n)
    return out


# ---------------------------------------------------------------- inputs
def finite_f16_bits(rng: np.random.Generator, k: int) -> np.ndarray:
    bits = rng.integers(0, 1 << 16, size=k, dtype=np.uint32).astype(np.uint16)
    bad = (bits & 0x7C00) == 0x7C00  # inf / NaN exponent
    bits[bad] &= 0xBFFF  # clear the top exponent bit: a large finite value instead
    return bits


def random_blocks(rng: np.random.Generator, name: str, num_blocks: int) -> np.ndarray:
    """Random bytes with NaN-free scales: block 0 all zero, block 1 zero scale, block 2 huge, block 3
    subnormal, the rest moderate or any finite f16 (negative included)."""
    _, _, bb = FORMATS[name]
    raw = rng.integers(0, 256, size=(num_blocks, bb), dtype=np.uint16).astype(np.uint8)
    raw[0] = 0
    for b in range(1, num_blocks):
        if name == "MXFP4":
            raw[b, 0] = [0, 1, 2, 127, 254, 255][b - 1] if b <= 6 else rng.integers(90, 160)
            continue
        if name == "Q8_K":
            d = [0.0, 3.0e30, 1.0e-40, -0.5][b - 1] if b <= 4 else float(rng.normal() * 10.0 ** rng.uniform(-6, 2))
            raw[b, 0:4] = np.frombuffer(np.float32(d).tobytes(), dtype=np.uint8)
            continue
        for off in F16_SCALES[name]:
            if b == 1:
                v = np.float16(0.0).view(np.uint16)
            elif b == 2:
                v = np.float16(65504.0 if off == F16_SCALES[name][0] else -30000.0).view(np.uint16)
            elif b == 3:
                v = np.uint16(rng.integers(1, 0x400))  # f16 subnormal
            elif b % 2 == 0:
                v = finite_f16_bits(rng, 1)[0]
            else:
                v = np.float16(rng.normal() * 10.0 ** rng.uniform(-4, 0)).view(np.uint16)
            raw[b, off:off + 2] = np.frombuffer(np.uint16(v).tobytes(), dtype=np.uint8)
    return raw.reshape(-1)


def float_blocks(rng: np.random.Generator, qk: int, num_blocks: int) -> np.ndarray:
    """Quantizer inputs: one pattern per block, edge cases first."""
    out = []
    for b in range(num_blocks):
        p = b % 14
        if p == 0:
            x = np.zeros(qk)
        elif p == 1:
            x = rng.normal(size=qk)
        elif p == 2:
            x = rng.normal(size=qk) * 1e-3
        elif p == 3:
            x = rng.normal(size=qk) * 1e3
        elif p == 4:
            x = rng.normal(size=qk) * 1e-8
        elif p == 5:
            x = rng.uniform(0.1, 2.0, size=qk)
        elif p == 6:
            x = -rng.uniform(0.1, 2.0, size=qk)
        elif p == 7:
            x = np.full(qk, 0.7)
        elif p == 8:
            x = rng.normal(size=qk) * 0.01
            x[rng.integers(qk)] = 5.0
        elif p == 9:
            x = rng.integers(-16, 17, size=qk) * 0.5  # exact halves: rounding ties
        elif p == 10:
            x = np.where(rng.uniform(size=qk) < 0.9, 0.0, rng.normal(size=qk))
        elif p == 11:
            x = rng.standard_t(2.0, size=qk)
        elif p == 12:
            x = rng.normal(size=qk) + 3.0  # offset: exercises the min of the asymmetric formats
        else:
            x = rng.normal(size=qk) * 10.0 ** rng.uniform(-4, 2)
        out.append(x)
    return np.concatenate(out).astype(np.float32)


def f16_inputs(rng: np.random.Generator) -> np.ndarray:
    a = finite_f16_bits(rng, 1024).view(np.float16).astype(np.float32)
    # exact midpoints between neighbouring f16 values: round-to-nearest-even ties
    lo = finite_f16_bits(rng, 256) & 0x7BFE
    mid = (lo.view(np.float16).astype(np.float64) + (lo + 1).view(np.float16).astype(np.float64)) / 2
    edges = np.array([0.0, -0.0, 65504.0, 65519.99, 65520.0, 1e6, -1e6, 6e-8, 3e-8, 2.9e-8, 1e-10,
                      5.96e-8, 6.1e-5, -6.1e-5], dtype=np.float64)
    x = np.concatenate([a, mid, edges, rng.normal(size=766 - edges.size) * 10.0 ** rng.uniform(-8, 5, 766 - edges.size)])
    return x.astype(np.float32)


def bf16_inputs(rng: np.random.Generator) -> np.ndarray:
    bits = rng.integers(0, 1 << 32, size=2048, dtype=np.uint64).astype(np.uint32)
    bits[(bits & 0x7F800000) == 0x7F800000] &= 0xBFFFFFFF  # finite
    bits[:256] = (bits[:256] & 0xFFFF0000) | 0x8000  # exact ties
    return bits.view(np.float32)


def lcg_inputs(seed: int, n: int) -> np.ndarray:
    """Exactly representable floats from a 64-bit LCG, reproduced bit for bit by tests/quant
    (quant_bulk_test.cc). Per 32 values a scale 2^(e-15), e in [-23, 0], and a pattern: plain
    16-bit ints, offset (all positive), sparse, tiny ints (rounding ties), all negative, zeros."""
    mask = (1 << 64) - 1
    state = seed

    def nxt() -> int:
        nonlocal state
        state = (state * 6364136223846793005 + 1442695040888963407) & mask
        return state >> 33

    vals = np.empty(n, dtype=np.int64)
    exps = np.empty(n, dtype=np.int64)
    for g in range(n // 32):
        r = nxt()
        e, kind = -(r % 24), (r >> 8) % 6
        for i in range(32):
            r = nxt()
            v = (r & 0xFFFF) - 32768
            if kind == 1:
                v += 3 * 32768
            elif kind == 2:
                v = v if (r >> 16) % 8 == 0 else 0
            elif kind == 3:
                v >>= 12
            elif kind == 4:
                v = -abs(v)
            elif kind == 5:
                v = 0
            vals[32 * g + i], exps[32 * g + i] = v, e - 15
    return (vals.astype(np.float64) * np.exp2(exps.astype(np.float64))).astype(np.float32)


def fnv1a64(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & ((1 << 64) - 1)
    return h


# ---------------------------------------------------------------- writers
def write_case(path: pathlib.Path, name: str, kind: int, num_elems: int, raw: np.ndarray, floats: np.ndarray,
               oracle: int) -> None:
    dtype_id = FORMATS[name][0]
    raw = np.ascontiguousarray(raw, dtype=np.uint8)
    floats = np.ascontiguousarray(floats, dtype=np.float32)
    assert floats.size == num_elems
    with open(path, "wb") as f:
        f.write(b"OXQG" + struct.pack("<6I", 1, dtype_id, kind, num_elems, raw.size, oracle))
        if kind == 0:
            f.write(raw.tobytes() + floats.tobytes())
        else:
            f.write(floats.tobytes() + raw.tobytes())


def gguf_type(name: str) -> T:
    return getattr(T, name)


def dequant_oracle(lib: ctypes.CDLL, name: str, raw: np.ndarray) -> tuple[np.ndarray, int]:
    if name in GGUF_DEQUANT:
        return quants.dequantize(raw, gguf_type(name)).astype(np.float32).ravel(), ORACLE_GGUF_PY
    if name == "Q8_K":
        return ggml_dequantize(lib, name, raw), ORACLE_GGML
    if name == "F8_E4M3":
        return raw.view(ml_dtypes.float8_e4m3fn).astype(np.float32), ORACLE_ML_DTYPES
    if name == "F8_E5M2":
        return raw.view(ml_dtypes.float8_e5m2).astype(np.float32), ORACLE_ML_DTYPES
    raise ValueError(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ggml-src", type=pathlib.Path, help="an unpacked llama.cpp ggml/ folder (skips the download)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        lib = build_ggml(args.ggml_src, pathlib.Path(tmp))
        rng = np.random.default_rng(20261202)

        # Decoding: random blocks of every format.
        for name in GGUF_DEQUANT + ["Q8_K"]:
            _, qk, _ = FORMATS[name]
            if qk == 1:
                continue
            raw = random_blocks(rng, name, 64 if qk == 32 else 16)
            y, oracle = dequant_oracle(lib, name, raw)
            write_case(OUT / f"dequant_{name}.bin", name, 0, y.size, raw, y, oracle)
        f16 = finite_f16_bits(rng, 2048)
        f16[:6] = [0x0000, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0xFBFF]
        write_case(OUT / "dequant_F16.bin", "F16", 0, 2048, f16.view(np.uint8),
                   quants.dequantize(f16.view(np.uint8), T.F16).ravel(), ORACLE_GGUF_PY)
        bf16 = (bf16_inputs(rng).view(np.uint32) >> 16).astype(np.uint16)
        write_case(OUT / "dequant_BF16.bin", "BF16", 0, bf16.size, bf16.view(np.uint8),
                   quants.dequantize(bf16.view(np.uint8), T.BF16).ravel(), ORACLE_GGUF_PY)
        for name in ["F8_E4M3", "F8_E5M2"]:
            raw = np.concatenate([np.arange(256, dtype=np.uint8), rng.integers(0, 256, 256).astype(np.uint8)])
            y, oracle = dequant_oracle(lib, name, raw)
            write_case(OUT / f"dequant_{name}.bin", name, 0, raw.size, raw, y, oracle)

        # Encoding.
        for name in GGUF_QUANT + GGML_QUANT:
            _, qk, _ = FORMATS[name]
            if name == "F16":
                x = f16_inputs(rng)
            elif name == "BF16":
                x = bf16_inputs(rng)
            else:
                x = float_blocks(rng, qk, 64 if qk == 32 else 16)
            if name in GGUF_QUANT:
                with np.errstate(over="ignore"):
                    q = quants.quantize(x, gguf_type(name))
                q, oracle = np.ascontiguousarray(q).view(np.uint8).ravel(), ORACLE_GGUF_PY
                if name in ("Q4_0", "Q8_0", "MXFP4"):  # the two oracles must agree where both exist
                    assert np.array_equal(q, ggml_quantize(lib, name, x)), name
            else:
                q, oracle = ggml_quantize(lib, name, x), ORACLE_GGML
            write_case(OUT / f"quant_{name}.bin", name, 1, x.size, q, x, oracle)

        # Reference matmul: one small case per weight format, y in float64 from the oracle dequant.
        cases = []
        for name in ["F32", "F16", "BF16", "F8_E4M3"] + GGUF_DEQUANT[2:] + ["Q8_K"]:
            _, qk, bb = FORMATS[name]
            m, n = 3, 5
            k = 64 if qk == 1 else 2 * qk
            if name == "F32":
                raw = rng.normal(size=n * k).astype(np.float32).view(np.uint8)
                wf = raw.view(np.float32)
            elif name in ("F16", "BF16"):
                src = rng.normal(size=n * k).astype(np.float32)
                raw = np.ascontiguousarray(quants.quantize(src, gguf_type(name))).view(np.uint8).ravel()
                wf, _ = dequant_oracle(lib, name, raw)
            elif name == "F8_E4M3":
                raw = rng.normal(size=n * k).astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
                wf, _ = dequant_oracle(lib, name, raw)
            else:
                raw = random_blocks(rng, name, n * k // qk + 8)[8 * bb:]  # past the edge-case blocks: finite y
                wf, _ = dequant_oracle(lib, name, raw)
            x = rng.normal(size=(m, k)).astype(np.float32)
            y = (x.astype(np.float64) @ wf.reshape(n, k).astype(np.float64).T).astype(np.float32)
            cases.append(struct.pack("<5I", FORMATS[name][0], m, n, k, raw.size) + x.tobytes() + raw.tobytes()
                         + y.tobytes())
        with open(OUT / "matmul.bin", "wb") as f:
            f.write(b"OXQM" + struct.pack("<I", len(cases)) + b"".join(cases))

        # Bulk encoder check: many blocks, committed as hashes only.
        records = []
        for name in GGUF_QUANT + GGML_QUANT:
            dtype_id, qk, bb = FORMATS[name]
            n, seed, per_hash = 262144, 1000 + dtype_id, 4096 // qk  # 64 hashes per format
            x = lcg_inputs(seed, n)
            if name in GGUF_QUANT:
                with np.errstate(over="ignore"):
                    q, oracle = np.ascontiguousarray(quants.quantize(x, gguf_type(name))).view(np.uint8).ravel(), ORACLE_GGUF_PY
            else:
                q, oracle = ggml_quantize(lib, name, x), ORACLE_GGML
            chunk = per_hash * bb
            hashes = [fnv1a64(q[i:i + chunk].tobytes()) for i in range(0, q.size, chunk)]
            records.append(struct.pack("<6I", dtype_id, n, seed, per_hash, len(hashes), oracle)
                           + struct.pack(f"<{len(hashes)}Q", *hashes))
        with open(OUT / "bulk.bin", "wb") as f:
            f.write(b"OXQB" + struct.pack("<2I", 1, len(records)) + b"".join(records))
    total = sum(p.stat().st_size for p in OUT.glob("*.bin"))
    print(f"wrote {len(list(OUT.glob('*.bin')))} files, {total} bytes to {OUT}")


if __name__ == "__main__":
    main()
