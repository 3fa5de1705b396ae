#!/usr/bin/env python3
"""Longrope goldens for a tiny Phi-3 (issue 21, 5.3): transformers, float64.

The weights are tests/data/archs/phi3's (made by gen_tiny_models.py); only the rope changes:
original_max_position_embeddings 64 < max_position_embeddings 1024 (Phi-3.5-mini / Phi-4-mini
style), so transformers uses the short factors while a sequence is at most 64 tokens long and the
long factors past it. Written to tests/data/archs/phi3_longrope/:
  config.json   the longrope config (the test pairs it with phi3's weights and tokenizer)
  goldens.json  prompts on both sides of the switch, and for each:
                  prompt_logprobs  log p(prompt[i+1] | prompt[:i+1]) from one forward of the
                                   whole prompt (what an echo + logprobs request scores)
                  greedy           32 tokens of model.generate(do_sample=False, use_cache=True).
                                   Prompts 1 (40 tokens), 3 (exactly 64) and 4 (63) cross 64 tokens
                                   while generating: there Phi3ForCausalLM.prepare_inputs_for_generation
                                   drops the cache once (input 65 tokens long, cache at most 64) and
                                   recomputes every key with the long factors, so generate equals a
                                   full recompute without cache at every step; this script checks
                                   that (greedy_recompute_max_logit_diff) before writing
                  greedy_margin_min  smallest top-1 margin of those steps (how near a tie)

Run: /work/venv/bin/python tools/gen_longrope_goldens.py
"""
import json
import pathlib

import numpy as np
import torch
import transformers

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "tests/data/archs/phi3"
OUT = ROOT / "tests/data/archs/phi3_longrope"
ORIG, MAX_POS, NEW_TOKENS = 64, 1024, 32


def longrope_config() -> dict:
    cfg = json.loads((SRC / "config.json").read_text())
    rot_half = (cfg["hidden_size"] // cfg["num_attention_heads"]) // 2
    cfg["max_position_embeddings"] = MAX_POS
    cfg["original_max_position_embeddings"] = ORIG
    cfg["rope_parameters"] = {
        "rope_type": "longrope", "rope_theta": 10000.0, "partial_rotary_factor": 1.0,
        "original_max_position_embeddings": ORIG,
        "short_factor": [1.0 + 0.05 * i for i in range(rot_half)],
        "long_factor": [1.0 + 0.75 * i for i in range(rot_half)],
    }
    return cfg


def log_softmax(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    cfg = longrope_config()
    (OUT / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    tmp = OUT / ".model"
    tmp.mkdir(exist_ok=True)
    (tmp / "config.json").write_text(json.dumps(cfg))
    (tmp / "model.safetensors").write_bytes((SRC / "model.safetensors").read_bytes())
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.float64)
    model.eval()
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()

    rng = np.random.default_rng(2112)
    vocab = cfg["vocab_size"]
    # 19: short side throughout (19 + 32 <= 64); 40: crosses 64 while generating; 100: long side;
    # 64: ends exactly at the switch (first token short, the rest long); 63: crosses at token 2.
    prompts = [[1] + [int(t) for t in rng.integers(7, vocab, n - 1)] for n in (19, 40, 100, 64, 63)]
    golden = {"source": "tools/gen_longrope_goldens.py (transformers %s, float64)" % transformers.__version__,
              "weights": "tests/data/archs/phi3", "original_max_position_embeddings": ORIG,
              "max_position_embeddings": MAX_POS, "prompts": prompts, "prompt_logprobs": [], "greedy": [],
              "greedy_margin_min": [], "greedy_recompute_max_logit_diff": []}
    with torch.no_grad():
        for p in prompts:
            ids = torch.tensor([p], dtype=torch.long)
            lg = model(input_ids=ids, use_cache=False).logits[0].to(torch.float64).numpy()
            lp = log_softmax(lg)
            golden["prompt_logprobs"].append([float(lp[i, p[i + 1]]) for i in range(len(p) - 1)])
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=NEW_TOKENS,
                                 min_new_tokens=NEW_TOKENS, use_cache=True, output_scores=True,
                                 return_dict_in_generate=True, pad_token_id=0, eos_token_id=None)
            toks = out.sequences[0, len(p):].tolist()
            margins = []
            for s in out.scores:
                top2 = np.sort(s[0].to(torch.float64).numpy())[-2:]
                margins.append(float(top2[1] - top2[0]))
            # The same steps without a cache: the whole sequence recomputed at each step.
            seq, diff = list(p), 0.0
            for i, t in enumerate(toks):
                lg_full = model(input_ids=torch.tensor([seq]), use_cache=False).logits[0, -1]
                diff = max(diff, float((lg_full - out.scores[i][0]).abs().max()))
                assert int(lg_full.argmax()) == t, "generate with cache differs from a full recompute"
                seq.append(t)
            golden["greedy_recompute_max_logit_diff"].append(diff)
            golden["greedy"].append(toks)
            golden["greedy_margin_min"].append(min(margins))
    (OUT / "goldens.json").write_text(json.dumps(golden) + "\n")
    print("wrote", OUT, "margins", golden["greedy_margin_min"])


if __name__ == "__main__":
    main()
