#!/usr/bin/env python3
"""Independent numpy oracle for the KV-cache head-vector quantizer (src/core/kv_quant.h,
FEATURES-REFERENCE.md §1.11): writes tests/data/kv_quant/golden.json, which
tests/core/kv_quant_test.cc compares against (codes exactly, values to 1e-6).

Command (from the repository root):
    /work/venv/bin/python tools/kv_quant_oracle.py

What it implements, from the spec, not from the C++:
* Lloyd-Max levels of N(0, 1) with 2^b levels: Lloyd's iteration (thresholds = midpoints,
  levels = conditional means) where every conditional mean is a numerical integral of the
  density on a fine grid (trapezoid rule over [-12, 12]), not a closed form.
* signs: s_i = -1 if bit 63 of the i-th splitmix64 output is set, else +1 (state seeded
  0x6b765f7369676e73, advanced by 0x9e3779b97f4a7c15 before each output).
* rotation R = H·D/√d with H the Sylvester Hadamard matrix (built by Kronecker products) when d is
  a power of two, else R = D.
* codes: index of the nearest level to √d·(R·x/‖x‖)_i (ties to the lower), packed b bits each,
  LSB-first, after the f32 norm; reconstruction ‖x‖·Rᵀ·(level/√d).
* 5, 6 and 8 bits, uniform: z = R·x, L = 2^(b-1) - 1, scale = max|z_i| / L (as f32), c_i = z_i /
  scale rounded to the nearest integer (ties to even); after the f32 scale, 8 bits store c_i as
  int8 bytes, 5 and 6 bits c_i + L packed LSB-first; reconstruction Rᵀ·(c·scale).
"""
import json
import os

import numpy as np

SEED = 0x6B765F7369676E73
MASK = (1 << 64) - 1


def lloyd_max(bits, iters=2000):
    n = 1 << bits
    x = np.linspace(-12.0, 12.0, 2_400_001)
    pdf = np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi)
    # cumulative integrals of pdf and x·pdf on the grid (trapezoid), for interval means
    dx = x[1] - x[0]
    cum_p = np.concatenate([[0.0], np.cumsum((pdf[1:] + pdf[:-1]) * 0.5 * dx)])
    xp = x * pdf
    cum_xp = np.concatenate([[0.0], np.cumsum((xp[1:] + xp[:-1]) * 0.5 * dx)])

    def integral(cum, a, b):
        return np.interp(b, x, cum) - np.interp(a, x, cum)

    c = np.quantile(np.random.default_rng(0).standard_normal(200_000), (np.arange(n) + 0.5) / n)
    for _ in range(iters):
        t = np.concatenate([[-12.0], (c[1:] + c[:-1]) / 2, [12.0]])
        new = np.array([integral(cum_xp, t[k], t[k + 1]) / integral(cum_p, t[k], t[k + 1]) for k in range(n)])
        if np.max(np.abs(new - c)) < 1e-14:
            c = new
            break
        c = new
    return c


def signs(d):
    state, out = SEED, []
    for _ in range(d):
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append(-1.0 if z >> 63 else 1.0)
    return np.array(out)


def rotation(d):
    D = np.diag(signs(d))
    if d & (d - 1):
        return D
    H = np.array([[1.0]])
    while H.shape[0] < d:
        H = np.kron(H, np.array([[1.0, 1.0], [1.0, -1.0]]))
    return H @ D / np.sqrt(d)


def quantize(x, bits, levels):
    d = x.size
    R = rotation(d)
    norm = np.linalg.norm(x)
    y = R @ (x / norm) * np.sqrt(d)
    codes = np.argmin(np.abs(y[:, None] - levels[None, :]), axis=1)  # first (lower) on a tie
    nbytes = (d * bits + 7) // 8
    bitstring = 0
    for i, c in enumerate(codes):
        bitstring |= int(c) << (i * bits)
    packed = list(np.float32(norm).tobytes()) + list(bitstring.to_bytes(nbytes, "little"))
    recon = np.float32(norm) * (R.T @ (levels[codes] / np.sqrt(d)))
    return codes, packed, recon, float(np.float32(norm))


def quantize_uniform(x, bits):
    """5, 6 and 8 bits: z = R x; L = 2^(bits-1) - 1; scale = f32(max |z| / L); c = round(z / scale)
    (ties to even) in -L..L: 8 bits an int8 byte each, 5 and 6 bits c + L packed LSB-first."""
    d = x.size
    R = rotation(d)
    z = R @ x
    L = (1 << (bits - 1)) - 1
    scale = np.float32(np.max(np.abs(z)) / L)
    codes = np.clip(np.rint(z / np.float64(scale)), -L, L).astype(int) if scale > 0 else np.zeros(d, int)
    if bits == 8:
        body = [int(c) & 0xFF for c in codes]
    else:
        bitstring = 0
        for i, c in enumerate(codes):
            bitstring |= int(c + L) << (i * bits)
        body = list(bitstring.to_bytes((d * bits + 7) // 8, "little"))
    recon = R.T @ (codes.astype(np.float64) * np.float64(scale))
    return codes, list(scale.tobytes()) + body, recon, float(scale)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = {"levels": {}, "cases": []}
    levels = {b: lloyd_max(b) for b in (2, 3, 4)}
    for b in (2, 3, 4):
        out["levels"][str(b)] = levels[b].tolist()
    rng = np.random.default_rng(20261202)
    for d in (64, 128, 80):  # 80: not a power of two (sign-only rotation)
        out.setdefault("signs", {})[str(d)] = signs(d).astype(int).tolist()
        for b in (2, 3, 4):
            for v in range(3):
                x = (rng.standard_normal(d) * (0.2 + v)).astype(np.float32)
                if v == 2:
                    x[::7] += 3.0  # an outlier-heavy vector
                codes, packed, recon, norm = quantize(x.astype(np.float64), b, levels[b])
                out["cases"].append({"head_dim": d, "bits": b, "x": x.tolist(), "norm": norm,
                                     "codes": codes.tolist(), "packed": packed, "recon": recon.tolist()})
        for b in (5, 6, 8):  # uniform codes ("norm" holds the scale)
            for v in range(3):
                x = (rng.standard_normal(d) * (0.2 + v)).astype(np.float32)
                if v == 2:
                    x[::7] += 3.0
                codes, packed, recon, scale = quantize_uniform(x.astype(np.float64), b)
                out["cases"].append({"head_dim": d, "bits": b, "x": x.tolist(), "norm": scale,
                                     "codes": codes.tolist(), "packed": packed, "recon": recon.tolist()})
    path = os.path.join(root, "tests", "data", "kv_quant", "golden.json")
    with open(path, "w") as f:
        json.dump(out, f)
    print(f"wrote {path}: {len(out['cases'])} cases; levels " +
          ", ".join(f"{b}-bit {np.round(levels[b][len(levels[b]) // 2:], 4).tolist()}" for b in (2, 3, 4)))


if __name__ == "__main__":
    main()
