#!/usr/bin/env python3
"""llama.cpp's own tokenization of the corpus under every tokenizer.ggml.pre value it recognises.

For each value below (the list in llama.cpp's src/llama-vocab.cpp; tests/tokenizer/gguf_pre_test.cc
checks that it is the list src/tokenizer/llamacpp_pre.cc knows), a GGUF is written: the file
tests/data/tokenizer/gguf/smollm2.gguf (SmolLM2's byte-level BPE, 49,152 tokens, 48,900 merges,
every tokenizer.* key as in the real file) with only the tokenizer.ggml.pre string changed.
llama-cpp-python (vocab_only) then tokenizes every "t" text of tests/data/tokenizer/corpus.jsonl:
  p = llama_tokenize(add_special=False, parse_special=False)   user text
  f = llama_tokenize(add_special=True,  parse_special=True)    engine-rendered text
The test builds the same GGUF in memory (tokens, types, merges, ids of smollm2.gguf + the pre value)
and compares.

Output: tests/data/tokenizer/gguf_pre_llamacpp.json
  {"llama_cpp_python": version, "num_texts": N, "base": {"p": [[ids] per text]},
   "groups": [{"pres": [values with identical output], "p": {text index: ids where != base},
               "f": {text index: ids where f != [bos if add_bos] + p}, "add_bos": bool,
               "hp"/"hf": HF ids with the published pattern where they differ (HF_PATTERN values only)}]}
Values whose file llama.cpp refuses to load are listed under "refused" with the message.

Command (repository root; needs llama-cpp-python, gguf, numpy):
  python tools/gen_gguf_pre_goldens.py
"""
import argparse
import json
import os
import struct
import tempfile

import gguf
import llama_cpp

# Every tokenizer.ggml.pre value llama.cpp's vocabulary loader accepts for BPE vocabularies.
PRES = [
    "default", "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
    "jina-v5-nano", "jais-2", "dbrx", "smaug-bpe", "deepseek-llm", "deepseek-v3", "hunyuan-dense", "joyai-llm",
    "hy_v4", "spark2_5", "youtu", "deepseek-coder", "falcon", "starcoder", "refact", "command-r", "smollm",
    "codeshell", "exaone", "minerva-7b", "mellum2", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat",
    "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum", "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe",
    "exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling", "qwen2", "deepseek-r1-qwen", "kormo",
    "f2llmv2", "megrez", "stablelm2", "hunyuan", "solar-open", "grok-2", "qwen35", "poro-chat", "bloom",
    "gpt3-finnish", "chatglm-bpe", "glm4", "glm5", "viking", "tekken", "chameleon", "gpt-4o", "llama4",
    "kanana2", "talkie", "minimax-m2", "granite-embed-multi-97m", "tiny_aya", "cohere2moe", "kimi-k2",
    "superbpe", "bailingmoe", "bailingmoe2", "llada-moe", "seed-coder", "ufakzeka", "afmoe", "laguna",
    "exaone-moe", "sarvam-moe", "gemma4", "granite-embed-multi-311m", "minicpm5", "whitespace",
]


def read_texts(root):
    out = []
    with open(os.path.join(root, "tests/data/tokenizer/corpus.jsonl")) as f:
        for line in f:
            j = json.loads(line)
            if "t" in j:
                out.append(j["t"])
    return out


def base_bytes(root):
    """smollm2.gguf split around its tokenizer.ggml.pre value: (before, after header, tensor data)."""
    raw = open(os.path.join(root, "tests/data/tokenizer/gguf/smollm2.gguf"), "rb").read()
    key = b"tokenizer.ggml.pre"
    k = raw.index(struct.pack("<Q", len(key)) + key) + 8 + len(key)
    assert struct.unpack_from("<I", raw, k)[0] == 8  # string
    n = struct.unpack_from("<Q", raw, k + 4)[0]
    val = k + 12
    name = raw.rindex(struct.pack("<Q", 5) + b"dummy") + 13  # the one tensor's info, then n_dims...
    header_end = name + 4 + 8 + 4 + 8
    data = raw[-32:]  # 4 bytes of f32 zero, padded to the 32-byte alignment
    return raw[:k + 4], raw[val + n:header_end], data


def write(parts, pre, path):
    """The same file with tokenizer.ggml.pre = pre (the header re-padded to the alignment)."""
    head, tail, data = parts
    v = pre.encode()
    hdr = head + struct.pack("<Q", len(v)) + v + tail
    pad = (-len(hdr)) % 32
    with open(path, "wb") as f:
        f.write(hdr + b"\0" * pad + data)


def run(path, texts):
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    add_bos = llama_cpp.llama_vocab_get_add_bos(llm._model.vocab)
    ps, fs = [], []
    for t in texts:
        b = t.encode()
        ps.append(llm.tokenize(b, add_bos=False, special=False))
        fs.append(llm.tokenize(b, add_bos=True, special=True))
    del llm
    return bool(add_bos), ps, fs


# Values for which we run the family's published tokenizer.json pattern (Unicode classes) instead of
# llama.cpp's approximation of it (src/tokenizer/llamacpp_pre.h, unicode_regex). For these the golden
# also holds Hugging Face `tokenizers` ids on the same vocabulary with that pattern (Split, Isolated,
# then ByteLevel without regex) where they differ from llama.cpp's: "hp" (plain), "hf" (special).
GPT4O = ("[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
         "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
DEEPSEEK_V3 = ["\\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
               "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"]
HF_PATTERN = {p: [GPT4O] for p in ("gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2")}
HF_PATTERN.update({p: DEEPSEEK_V3 for p in ("deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4")})


def hf_pattern_ids(root, patterns, texts, add_bos, bos):
    from tokenizers import AddedToken, Regex, Tokenizer, models, pre_tokenizers
    r = gguf.GGUFReader(os.path.join(root, "tests/data/tokenizer/gguf/smollm2.gguf"))
    tokens = r.fields["tokenizer.ggml.tokens"].contents()
    types = r.fields["tokenizer.ggml.token_type"].contents()
    merges = [tuple(m.split(" ", 1)) for m in r.fields["tokenizer.ggml.merges"].contents()]
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in patterns] +
        [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t, ty in zip(tokens, types) if ty == int(gguf.TokenType.CONTROL)])
    out = []
    for t in texts:
        tok.encode_special_tokens = True
        p = tok.encode(t, add_special_tokens=False).ids
        tok.encode_special_tokens = False
        f = ([bos] if add_bos else []) + tok.encode(t, add_special_tokens=False).ids
        out.append((p, f))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="just these values")
    ap.add_argument("--raw", default="", help="append raw results (JSON lines) here instead of writing the golden")
    ap.add_argument("--merge", nargs="*", default=[], help="build the golden from these --raw files")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    texts = read_texts(root)
    bos = int(gguf.GGUFReader(os.path.join(root, "tests/data/tokenizer/gguf/smollm2.gguf"))
              .fields["tokenizer.ggml.bos_token_id"].contents())
    results, refused = {}, {}
    if args.merge:
        for fn in args.merge:
            with open(fn) as f:
                for line in f:
                    r = json.loads(line)
                    if "refused" in r:
                        refused[r["pre"]] = r["refused"]
                    else:
                        results[r["pre"]] = (r["add_bos"], r["p"], r["f"])
        pres = [p for p in PRES if p in results]
    else:
        parts = base_bytes(root)
        pres = list(dict.fromkeys(args.only or PRES))
        with tempfile.TemporaryDirectory() as tmp:
            for pre in pres:
                path = os.path.join(tmp, "v.gguf")
                write(parts, pre, path)
                try:
                    add_bos, ps, fs = run(path, texts)
                    rec = {"pre": pre, "add_bos": add_bos, "p": ps, "f": fs}
                    results[pre] = (add_bos, ps, fs)
                except Exception as e:  # llama.cpp refuses the file
                    refused[pre] = str(e)
                    rec = {"pre": pre, "refused": str(e)}
                if args.raw:
                    with open(args.raw, "a") as f:
                        f.write(json.dumps(rec) + "\n")
                print(pre, "refused" if pre in refused else "ok", flush=True)
        if args.raw:
            return
    base = results["smollm"][1]
    groups = []
    for pre in pres:
        if pre not in results:
            continue
        add_bos, ps, fs = results[pre]
        # Published-pattern values form their own groups: their golden also holds HF's ids ("hp"/"hf"),
        # which the test expects from them, while a value with the same llama.cpp output that we run
        # with llama.cpp's pattern (tiny_aya next to gpt-4o) is held to llama.cpp's ids.
        key = json.dumps([add_bos, ps, fs, HF_PATTERN.get(pre)])
        for g in groups:
            if g["key"] == key:
                g["pres"].append(pre)
                break
        else:
            pd = {str(i): p for i, (p, b) in enumerate(zip(ps, base)) if p != b}
            fd = {str(i): f for i, (f, p) in enumerate(zip(fs, ps)) if f != ([bos] if add_bos else []) + p}
            groups.append({"key": key, "pres": [pre], "add_bos": add_bos, "p": pd, "f": fd})
    for g in groups:
        pats = {json.dumps(HF_PATTERN.get(p)) for p in g["pres"]}
        assert len(pats) == 1, g["pres"]  # a group is all published-pattern values or none
        if HF_PATTERN.get(g["pres"][0]):
            add_bos, ps, fs = results[g["pres"][0]]
            hp, hf = {}, {}
            for i, (p, f) in enumerate(hf_pattern_ids(root, HF_PATTERN[g["pres"][0]], texts, add_bos, bos)):
                if p != ps[i]:
                    hp[str(i)] = p
                derived = fs[i] if str(i) in g["f"] else ([bos] if add_bos else []) + p
                if f != derived:
                    hf[str(i)] = f
            g["hp"], g["hf"] = hp, hf
            print(g["pres"], "published pattern (HF) differs from llama.cpp on", len(hp), "plain,", len(hf), "special")
    for g in groups:
        del g["key"]
        print(g["pres"], "p differs from smollm on", len(g["p"]), "f special on", len(g["f"]))
    out = {"llama_cpp_python": llama_cpp.__version__, "num_texts": len(texts), "base": {"p": base},
           "groups": groups, "refused": refused}
    dst = os.path.join(root, "tests/data/tokenizer/gguf_pre_llamacpp.json")
    with open(dst, "w") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")
    print("wrote", dst, os.path.getsize(dst), "bytes")


if __name__ == "__main__":
    main()
