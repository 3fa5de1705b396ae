#!/usr/bin/env python3
"""Tiny random-weight embedding and reranking models with their goldens (issue 26).

Command (from the repository root; needs torch, transformers and sentence-transformers from
tools/requirements.txt):

    .venv/bin/python tools/gen_tiny_embedders.py            # every model
    .venv/bin/python tools/gen_tiny_embedders.py --only bert roberta
    # the bert, qwen3_embed, roberta, xlmr, qwen3_rerank and roberta_rerank GGUFs and llama.cpp's outputs (llama-cpp-python, the second
    # oracle), with the llama.cpp copy inside the llama-cpp-python 0.3.36 sdist (see tools/gen_tiny_models.py):
    .venv/bin/python tools/gen_tiny_embedders.py --only none --llama-cpp /tmp/llama_cpp_python-0.3.36/vendor/llama.cpp
    .venv/bin/python tools/gen_tiny_embedders.py --only none --llama-cpp ... --gguf qwen3_rerank   # that one alone

Writes tests/data/archs/<name>/ (deterministic, seeded) in the sentence-transformers layout:
  config.json, model.safetensors (F32), vocab.txt + tokenizer files (a BERT WordPiece vocabulary;
  qwen3_embed and roberta: a byte-level BPE, which llama.cpp's converter takes;
  the tests feed token ids), modules.json, 1_Pooling/config.json, [2_Normalize/],
  sentence_bert_config.json
  goldens.json  the input sequences (token ids, token types), pooling, normalize, and per sequence
                its oracle embedding (sentence_embedding) and its last_hidden_state rows
Models:
  bert      BertModel, mean pooling + Normalize, token types 0/1 (second half of some inputs type 1)
  roberta   RobertaModel (positions from pad_token_id + 1), CLS pooling, no Normalize
  xlmr      XLMRobertaModel, mean pooling + Normalize
  qwen3_embed  Qwen3Model (decoder embedder, Qwen3-Embedding layout), last-token pooling + Normalize
  bert_rerank  BertForSequenceClassification (num_labels 1; cross-encoder): one query and five
               documents as text and as their pair encodings; goldens are the logits
  roberta_rerank  RobertaForSequenceClassification (num_labels 1) with RoBERTa's pair encoding
               <s> A </s></s> B </s>; goldens: the logits and sentence-transformers' CrossEncoder scores
  qwen3_rerank Qwen3ForCausalLM in Qwen3-Reranker's layout (README heading); goldens: the [no, yes]
               logits of the last position of each prompt-formatted pair and P(yes), by the model
               card's code
Oracle: sentence-transformers' SentenceTransformer (Transformer → Pooling → Normalize) loaded from the
written folder, run in float64 on a right-padded batch with its attention mask (so it also checks
that padding does not leak); the reranker: transformers' sequence-classification model in float64.
Every parameter is drawn wide (LayerNorm weights 1 ± 0.2, biases ± 0.1) so that no term vanishes.
"""
import argparse
import json
import os
import shutil

import numpy as np
import torch
from safetensors.torch import save_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "archs")
VOCAB = 320
LENGTHS = [1, 2, 5, 16, 17, 31, 48]
RERANK_TEXT = ("Judge whether the Document meets the requirements based on the Query and the Instruct provided. "
               "Note that the answer can only be yes or no. Given a web search query, retrieve relevant passages "
               "that answer the query. yes no yes no. What is the capital of China? The capital of China is "
               "Beijing. Explain gravity. Gravity is a force that attracts two bodies towards each other. ") * 4


# Texts for the XLM-R vocabulary: normalization (NFKC, whitespace runs), unknown characters.
XLMR_TEXTS = ["The quick brown fox jumps over the lazy dog.", "  Hello,   world!  ", "ﬁne ① Ｆｕｌｌｗｉｄｔｈ",
              "naïve café, déjà vu", "你好 world", "e-mail: john.doe@example.com", "", "A"]


def write_vocab(d):
    toks = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(VOCAB - 5)]
    with open(os.path.join(d, "vocab.txt"), "w") as f:
        f.write("\n".join(toks) + "\n")
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast
    tk = Tokenizer(models.WordPiece({t: i for i, t in enumerate(toks)}, unk_token="[UNK]"))
    tk.normalizer = normalizers.BertNormalizer(lowercase=True)
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                      special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tk.decoder = decoders.WordPiece()
    BertTokenizerFast(tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                      sep_token="[SEP]", mask_token="[MASK]").save_pretrained(d)


def write_bpe_vocab(d, specials, post=None):
    """A byte-level BPE of exactly VOCAB tokens (RoBERTa's and Qwen's kind of vocabulary, which
    llama.cpp's converter writes as a gpt2 vocabulary with merges), specials first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    for f in ("vocab.txt", "special_tokens_map.json"):
        if os.path.exists(os.path.join(d, f)):
            os.remove(os.path.join(d, f))
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator([RERANK_TEXT], trainer)
    assert tk.get_vocab_size() == VOCAB, tk.get_vocab_size()
    if post is not None:
        tk.post_processor = post
    return tk


def write_sp_vocab(d):
    """XLM-R's kind of vocabulary: a SentencePiece Unigram model (nmt_nfkc normalization, whose
    precompiled charsmap it embeds) of VOCAB - 2 pieces trained on the tokenizer corpus's texts,
    saved as sentencepiece.bpe.model beside the tokenizer.json transformers converts it to
    (fairseq ids: <s> <pad> </s> <unk>, the pieces shifted by one, <mask> last: VOCAB tokens).
    llama.cpp's converter reads the .model as a "t5" (UGM) vocabulary."""
    import tempfile
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer
    corpus = os.path.join(ROOT, "..", "tokenizer", "corpus.jsonl")
    rows = [json.loads(line) for line in open(corpus, encoding="utf-8")]
    # Latin-script texts only: 318 pieces cannot cover the corpus's CJK characters at the 0.98
    # character coverage SentencePiece allows at least (the others become <unk>, as in XLM-R).
    texts = [r["t"] for r in rows if r.get("t") and all(ord(c) < 0x250 for c in r["t"])] + [RERANK_TEXT]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "sentencepiece.bpe")
        spm.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_prefix=prefix, vocab_size=VOCAB - 2,
                                       model_type="unigram", normalization_rule_name="nmt_nfkc",
                                       num_threads=1, minloglevel=2)
        # from the folder: transformers converts the .model it finds there (a vocab_file argument
        # is not converted by transformers 5)
        tok = XLMRobertaTokenizer.from_pretrained(tmp, model_max_length=64)
        assert len(tok) == VOCAB, len(tok)
        tok.save_pretrained(d)
        shutil.copy(prefix + ".model", os.path.join(d, "sentencepiece.bpe.model"))


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name or "norm" in name.lower():
                p.copy_((1.0 + 0.2 * torch.randn(p.shape, generator=gen)) if name.endswith("weight")
                        else 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "embeddings" in name or "embed_tokens" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / np.sqrt(p.shape[-1]))


def write_st(d, pooling, normalize, max_len):
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        mods.append({"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
        os.makedirs(os.path.join(d, "2_Normalize"), exist_ok=True)
    json.dump(mods, open(os.path.join(d, "modules.json"), "w"), indent=2)
    os.makedirs(os.path.join(d, "1_Pooling"), exist_ok=True)
    pc = {"word_embedding_dimension": None, "pooling_mode_cls_token": pooling == "cls",
          "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
          "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
          "pooling_mode_lasttoken": pooling == "last", "include_prompt": True}
    return pc, {"max_seq_length": max_len, "do_lower_case": False}


def sequences(rng, lo, with_types):
    seqs, types = [], []
    for n in LENGTHS:
        ids = rng.integers(lo, VOCAB, size=n).tolist()
        seqs.append(ids)
        t = [0] * n
        if with_types and n >= 4:
            t = [0] * (n // 2) + [1] * (n - n // 2)
        types.append(t)
    return seqs, types


def padded(seqs, types, pad):
    n = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), n), pad, dtype=torch.long)
    tt = torch.zeros((len(seqs), n), dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, (s, t) in enumerate(zip(seqs, types)):
        ids[i, :len(s)] = torch.tensor(s)
        tt[i, :len(t)] = torch.tensor(t)
        mask[i, :len(s)] = 1
    return ids, tt, mask


def gen_encoder(name, cfg_cls, model_cls, pooling, normalize, seed, with_types, extra):
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = cfg_cls(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=96, hidden_act="gelu", layer_norm_eps=1e-6, **extra)
    model = model_cls(cfg).eval()
    randomize(model, gen)
    model.save_pretrained(d)
    if name == "roberta":  # RoBERTa's byte-level BPE (<s> A </s>), so that llama.cpp's converter takes it
        from tokenizers import processors
        from transformers import PreTrainedTokenizerFast
        tk = write_bpe_vocab(d, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                             processors.RobertaProcessing(("</s>", 2), ("<s>", 0)))
        PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                model_max_length=64).save_pretrained(d)
    elif name == "xlmr":
        write_sp_vocab(d)
    else:
        write_vocab(d)
    max_len = cfg.max_position_embeddings - (cfg.pad_token_id + 1 if name != "bert" else 0)
    pc, sb = write_st(d, pooling, normalize, max_len)
    pc["word_embedding_dimension"] = cfg.hidden_size
    json.dump(pc, open(os.path.join(d, "1_Pooling", "config.json"), "w"), indent=2)
    json.dump(sb, open(os.path.join(d, "sentence_bert_config.json"), "w"), indent=2)
    pad = cfg.pad_token_id if cfg.pad_token_id is not None else 0
    seqs, types = sequences(rng, 5, with_types)
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(d, device="cpu").to(torch.float64).eval()
    ids, tt, mask = padded(seqs, types, pad)
    feats = {"input_ids": ids, "attention_mask": mask}
    if with_types:
        feats["token_type_ids"] = tt
    with torch.no_grad():
        out = st.forward(dict(feats))
    emb = out["sentence_embedding"].numpy()
    hid = out["token_embeddings"].numpy()
    golden = {"pooling": pooling, "normalize": normalize, "max_len": max_len, "sequences": []}
    for i, s in enumerate(seqs):
        golden["sequences"].append({"ids": s, "types": types[i] if with_types else None,
                                    "embedding": emb[i].tolist(), "hidden": hid[i, :len(s)].reshape(-1).tolist()})
    json.dump(golden, open(os.path.join(d, "goldens.json"), "w"))
    print(name, "written", [len(s) for s in seqs])


def gen_qwen3_embed(seed=7):
    from transformers import Qwen3Config, Qwen3Model
    d = os.path.join(ROOT, "qwen3_embed")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = Qwen3Config(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, intermediate_size=96, max_position_embeddings=128,
                      rms_norm_eps=1e-6, tie_word_embeddings=True, pad_token_id=0)
    model = Qwen3Model(cfg).eval()
    randomize(model, gen)
    model.save_pretrained(d)
    from transformers import PreTrainedTokenizerFast
    tk = write_bpe_vocab(d, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"])  # Qwen's kind of vocabulary
    PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                            model_max_length=128).save_pretrained(d)
    pc, sb = write_st(d, "last", True, 128)
    pc["word_embedding_dimension"] = 64
    json.dump(pc, open(os.path.join(d, "1_Pooling", "config.json"), "w"), indent=2)
    json.dump(sb, open(os.path.join(d, "sentence_bert_config.json"), "w"), indent=2)
    json.dump({"prompts": {"query": "Instruct: Given a query, retrieve passages\nQuery:", "document": ""},
               "default_prompt_name": None}, open(os.path.join(d, "config_sentence_transformers.json"), "w"))
    seqs, types = sequences(rng, 5, False)
    from sentence_transformers import SentenceTransformer
    st = SentenceTransformer(d, device="cpu").to(torch.float64).eval()
    ids, tt, mask = padded(seqs, types, 0)
    with torch.no_grad():
        out = st.forward({"input_ids": ids, "attention_mask": mask})
    emb = out["sentence_embedding"].numpy()
    hid = out["token_embeddings"].numpy()
    golden = {"pooling": "last", "normalize": True, "max_len": 128, "sequences": []}
    for i, s in enumerate(seqs):
        golden["sequences"].append({"ids": s, "types": None, "embedding": emb[i].tolist(),
                                    "hidden": hid[i, :len(s)].reshape(-1).tolist()})
    json.dump(golden, open(os.path.join(d, "goldens.json"), "w"))
    print("qwen3_embed written")


def gen_bert_rerank(seed=11):
    from transformers import BertConfig, BertForSequenceClassification
    d = os.path.join(ROOT, "bert_rerank")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=96, hidden_act="gelu", layer_norm_eps=1e-6, max_position_embeddings=64,
                     num_labels=1)
    model = BertForSequenceClassification(cfg).eval()
    randomize(model, gen)
    model.save_pretrained(d)
    write_vocab(d)
    # One query, documents of varied length, each pair encoded by the tokenizer's pair template
    # ([CLS] query [SEP] document [SEP], token types 0 then 1).
    from transformers import BertTokenizerFast
    tok = BertTokenizerFast.from_pretrained(d)
    words = lambda n: " ".join(f"w{int(i)}" for i in rng.integers(0, VOCAB - 5, size=n))
    query = words(4)
    docs = [words(n) for n in (1, 3, 8, 20, 40)]
    enc = [tok(query, doc) for doc in docs]
    seqs = [e["input_ids"] for e in enc]
    types = [e["token_type_ids"] for e in enc]
    ids, tt, mask = padded(seqs, types, 0)
    with torch.no_grad():
        logits = model.to(torch.float64)(input_ids=ids, token_type_ids=tt, attention_mask=mask).logits.numpy()
    golden = {"pooling": "rank", "normalize": False, "max_len": 64, "query": query, "documents": docs,
              "sequences": []}
    for i, s in enumerate(seqs):
        golden["sequences"].append({"ids": s, "types": types[i], "embedding": logits[i].tolist(), "hidden": []})
    json.dump(golden, open(os.path.join(d, "goldens.json"), "w"))
    print("bert_rerank written")


def gen_roberta_rerank(seed=13):
    """RobertaForSequenceClassification (num_labels 1), a RoBERTa tokenizer (RobertaProcessing: a
    pair is <s> A </s></s> B </s>); oracle: sentence-transformers' CrossEncoder on the folder
    (its tokenizer makes the pairs; sigmoid of the one logit) and transformers' float64 logits."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast, RobertaConfig, RobertaForSequenceClassification
    d = os.path.join(ROOT, "roberta_rerank")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    gen = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=96, hidden_act="gelu", layer_norm_eps=1e-6, max_position_embeddings=66,
                        type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2, num_labels=1)
    model = RobertaForSequenceClassification(cfg).eval()
    randomize(model, gen)
    model.save_pretrained(d)
    # RoBERTa's byte-level BPE (as roberta's), which llama.cpp's converter writes with its merges
    tk = write_bpe_vocab(d, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                         processors.RobertaProcessing(("</s>", 2), ("<s>", 0)))
    PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                            cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                            model_max_length=64).save_pretrained(d)
    # words of the text the BPE was trained on (1 to 7 tokens each: 320 tokens leave ~60 merges)
    vocab_words = sorted(set(RERANK_TEXT.replace(".", " ").replace("?", " ").split()))
    words = lambda n: " ".join(vocab_words[int(i)] for i in rng.integers(0, len(vocab_words), size=n))
    query = words(3)
    docs = [words(n) for n in (1, 2, 4, 6, 8)]
    from sentence_transformers import CrossEncoder
    ce = CrossEncoder(d, device="cpu", num_labels=1)
    ce.model.to(torch.float64)
    scores = ce.predict([(query, doc) for doc in docs], convert_to_numpy=True).tolist()
    tok = PreTrainedTokenizerFast.from_pretrained(d)
    enc = [tok(query, doc) for doc in docs]
    seqs = [e["input_ids"] for e in enc]
    assert max(len(x) for x in seqs) <= 64, [len(x) for x in seqs]  # the model's positions
    nq = len(tok(query)["input_ids"]) - 2  # <s> A </s></s> B </s>
    assert seqs[0][0] == 0 and seqs[0][nq + 1:nq + 3] == [2, 2] and seqs[0][-1] == 2, seqs[0]
    ids, tt, mask = padded(seqs, [[0] * len(s) for s in seqs], 1)
    with torch.no_grad():
        logits = model.to(torch.float64)(input_ids=ids, attention_mask=mask).logits.numpy()
    sig = 1 / (1 + np.exp(-logits[:, 0]))
    assert np.max(np.abs(sig - np.asarray(scores))) < 1e-6, (sig, scores)
    golden = {"pooling": "rank", "normalize": False, "max_len": 64, "query": query, "documents": docs,
              "cross_encoder_scores": scores, "sequences": []}
    for i, s in enumerate(seqs):
        golden["sequences"].append({"ids": s, "types": None, "embedding": logits[i].tolist(), "hidden": []})
    json.dump(golden, open(os.path.join(d, "goldens.json"), "w"))
    print("roberta_rerank written")


# Qwen3-Reranker's published prompt (its model card): a system turn, the user turn with the
# instruction, query and document, and an empty thinking block; the score is P(yes) from the
# "yes"/"no" logits of the last position.
QWEN3_RERANK_PREFIX = ("<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and "
                       "the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n"
                       "<|im_start|>user\n")
QWEN3_RERANK_SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
QWEN3_RERANK_INSTRUCT = "Given a web search query, retrieve relevant passages that answer the query"


def gen_qwen3_rerank(seed=17):
    """A tiny Qwen3ForCausalLM in Qwen3-Reranker's layout (config.json says Qwen3ForCausalLM; the
    README's "# Qwen3-Reranker" heading is what marks it, as llama.cpp's converter reads it), a
    byte-level BPE with Qwen's chat tokens and "yes"/"no" in its vocabulary. Oracle: the model
    card's code in float64 (prefix + "<Instruct>: ..\\n<Query>: ..\\n<Document>: .." + suffix,
    tokenized without special tokens, left-padded batch, logits[:, -1] at [no, yes], log_softmax,
    P(yes)), and each pair alone without padding."""
    from tokenizers import Tokenizer, AddedToken, decoders, models, pre_tokenizers, trainers
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM, PreTrainedTokenizerFast
    d = os.path.join(ROOT, "qwen3_rerank")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    gen = torch.Generator().manual_seed(seed)
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=380, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator([RERANK_TEXT], trainer)
    tk.add_tokens([AddedToken("<think>", special=False, normalized=False),
                   AddedToken("</think>", special=False, normalized=False)])
    vocab = tk.get_vocab_size()
    assert "yes" in tk.get_vocab() and "no" in tk.get_vocab()
    PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                            model_max_length=256).save_pretrained(d)
    cfg = Qwen3Config(vocab_size=vocab, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, head_dim=16, intermediate_size=96, max_position_embeddings=256,
                      rms_norm_eps=1e-6, tie_word_embeddings=True, pad_token_id=0,
                      eos_token_id=tk.token_to_id("<|im_end|>"))
    model = Qwen3ForCausalLM(cfg).eval()
    randomize(model, gen)
    model.save_pretrained(d)
    with open(os.path.join(d, "README.md"), "w") as f:
        f.write("# Qwen3-Reranker (tiny, random weights)\n\nA test fixture of tools/gen_tiny_embedders.py.\n")
    tok = AutoTokenizer.from_pretrained(d, padding_side="left")
    no_id, yes_id = tok.convert_tokens_to_ids("no"), tok.convert_tokens_to_ids("yes")
    query = "What is the capital of China?"
    docs = ["The capital of China is Beijing.", "Gravity is a force that attracts two bodies towards each other.",
            "yes", "Explain gravity. " * 6, "Beijing"]
    texts = [f"<Instruct>: {QWEN3_RERANK_INSTRUCT}\n<Query>: {query}\n<Document>: {doc}" for doc in docs]
    prefix = tok.encode(QWEN3_RERANK_PREFIX, add_special_tokens=False)
    suffix = tok.encode(QWEN3_RERANK_SUFFIX, add_special_tokens=False)
    inputs = tok(texts, padding=False, truncation="longest_first", return_attention_mask=False,
                 max_length=256 - len(prefix) - len(suffix), add_special_tokens=False)
    seqs = [prefix + ids + suffix for ids in inputs["input_ids"]]
    batch = tok.pad({"input_ids": seqs}, padding=True, return_tensors="pt")
    model = model.to(torch.float64)
    with torch.no_grad():
        last = model(**batch).logits[:, -1, :]
        pair = torch.stack([last[:, no_id], last[:, yes_id]], dim=1)
        scores = torch.nn.functional.log_softmax(pair, dim=1)[:, 1].exp().tolist()
        alone = [model(input_ids=torch.tensor([s])).logits[0, -1, [no_id, yes_id]].tolist() for s in seqs]
    for (n, y), sc in zip(alone, scores):
        assert abs(1 / (1 + np.exp(n - y)) - sc) < 1e-9, (n, y, sc)
    golden = {"pooling": "rank", "normalize": False, "max_len": 256, "query": query, "documents": docs,
              "instruction": QWEN3_RERANK_INSTRUCT, "label_ids": [no_id, yes_id], "scores": scores,
              "sequences": [{"ids": s, "types": None, "embedding": a, "hidden": []} for s, a in zip(seqs, alone)]}
    json.dump(golden, open(os.path.join(d, "goldens.json"), "w"))
    print("qwen3_rerank written", [len(s) for s in seqs], scores)


def converter(llama_cpp):
    """llama.cpp's convert_hf_to_gguf from the source tree `llama_cpp` (gguf-py beside it), with
    its pre-tokenizer check patched to "default": the tiny vocabularies are not ones it knows."""
    import sys
    sys.path.insert(0, llama_cpp)
    sys.path.insert(1, os.path.join(llama_cpp, "gguf-py"))
    import convert_hf_to_gguf as conv
    from conversion import base
    base.TextModel.get_vocab_base_pre = lambda self_, tokenizer: "default"
    return conv


def convert(conv, d, outtype):
    """d/model-<OUTTYPE>.gguf by the converter (its command line, run in this process)."""
    import sys
    path = os.path.join(d, f"model-{outtype.upper()}.gguf")
    argv = sys.argv
    sys.argv = ["convert_hf_to_gguf.py", d, "--outtype", outtype, "--outfile", path, "--no-lazy"]
    try:
        conv.main()
    finally:
        sys.argv = argv
    return path


def gen_gguf(llama_cpp):
    """bert/model-F32.gguf and model-F16.gguf by llama.cpp's converter, and gguf_goldens.json:
    texts, their ids from the HF tokenizer, llama.cpp's embeddings (llama-cpp-python, pooling and
    normalisation from the GGUF) and sentence-transformers' (float64) of the same ids."""
    conv = converter(llama_cpp)
    d = os.path.join(ROOT, "bert")
    outs = {outtype: convert(conv, d, outtype) for outtype in ("f32", "f16")}
    from llama_cpp import Llama
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    rng = np.random.default_rng(5)
    texts = [" ".join(f"w{int(i)}" for i in rng.integers(0, VOCAB - 5, size=n)) for n in (1, 4, 9, 20, 33, 62)]
    ids = [tok.encode(t).ids for t in texts]
    st = SentenceTransformer(d, device="cpu").to(torch.float64).eval()
    golden = {"texts": texts, "ids": ids, "sentence_transformers": st.encode(texts).tolist(), "llama_cpp": {}}
    for outtype, path in outs.items():
        llm = Llama(model_path=path, embedding=True, verbose=False, n_ctx=64, n_batch=64, n_ubatch=64)
        for t, i in zip(texts, ids):
            assert llm.tokenize(t.encode(), add_bos=True, special=False) == i, (t, llm.tokenize(t.encode()), i)
        golden["llama_cpp"][outtype.upper()] = [llm.embed(t, normalize=True) for t in texts]
        del llm
    json.dump(golden, open(os.path.join(d, "gguf_goldens.json"), "w"))
    print("bert GGUFs and gguf_goldens.json written")


def gen_gguf_decoder_and_roberta(llama_cpp):
    """qwen3_embed/, roberta/ and xlmr/ model-F32.gguf and model-F16.gguf by llama.cpp's converter
    (pooling from 1_Pooling: last / CLS / mean; RoBERTa's and XLM-R's position rows before
    pad_token_id + 1 dropped; XLM-R's SentencePiece vocabulary as "t5"), and
    gguf_goldens.json: each golden sequence's ids and llama.cpp's embedding of exactly those ids
    (llama-cpp-python, pooling as the file says; Llama.tokenize is replaced by the ids, since the
    converter writes these WordPiece vocabularies as a merge-less gpt2 vocabulary).
    For xlmr also texts, transformers' ids of them, and the check that llama.cpp tokenizes them alike."""
    conv = converter(llama_cpp)
    from llama_cpp import Llama
    for name in ("qwen3_embed", "roberta", "xlmr"):
        d = os.path.join(ROOT, name)
        g = json.load(open(os.path.join(d, "goldens.json")))
        seqs = [s["ids"] for s in g["sequences"]]
        out = {"ids": seqs, "sentence_transformers": [s["embedding"] for s in g["sequences"]], "llama_cpp": {}}
        if name == "xlmr":  # a real SentencePiece vocabulary: texts, and transformers' ids of them
            from transformers import AutoTokenizer
            tok = AutoTokenizer.from_pretrained(d)
            out["texts"] = XLMR_TEXTS
            out["text_ids"] = [tok(t)["input_ids"] for t in XLMR_TEXTS]
        for outtype in ("f32", "f16"):
            path = convert(conv, d, outtype)
            llm = Llama(model_path=path, embedding=True, verbose=False, n_ctx=128, n_batch=128, n_ubatch=128)
            for t, ids in zip(out.get("texts", []), out.get("text_ids", [])):  # llama.cpp's UGM agrees
                assert llm.tokenize(t.encode(), add_bos=True, special=False) == ids, (t, llm.tokenize(t.encode()), ids)
            by_key = {f"seq{i}": ids for i, ids in enumerate(seqs)}
            llm.tokenize = lambda text, *a, **k: list(by_key[text.decode()])
            out["llama_cpp"][outtype.upper()] = [llm.embed(f"seq{i}", normalize=True) for i in range(len(seqs))]
            del llm
        json.dump(out, open(os.path.join(d, "gguf_goldens.json"), "w"))
        print(name, "GGUFs and gguf_goldens.json written")


def gen_gguf_roberta_rerank(llama_cpp):
    """roberta_rerank/model-F32.gguf and model-F16.gguf by llama.cpp's converter: bert, the head as
    cls (classifier.dense) and cls.output (classifier.out_proj), and no pooling_type (the folder
    has no modules.json; llama.cpp's server needs --reranking for it). gguf_goldens.json: each
    golden pair's ids, transformers' logit (goldens.json) and llama.cpp's output for exactly those
    ids with rank pooling asked for (llama-cpp-python, pooling_type 4: the raw logit)."""
    conv = converter(llama_cpp)
    from llama_cpp import LLAMA_POOLING_TYPE_RANK, Llama
    d = os.path.join(ROOT, "roberta_rerank")
    g = json.load(open(os.path.join(d, "goldens.json")))
    seqs = [s["ids"] for s in g["sequences"]]
    out = {"ids": seqs, "transformers": [s["embedding"][0] for s in g["sequences"]], "llama_cpp": {}}
    for outtype in ("f32", "f16"):
        path = convert(conv, d, outtype)
        llm = Llama(model_path=path, embedding=True, pooling_type=LLAMA_POOLING_TYPE_RANK, verbose=False,
                    n_ctx=128, n_batch=128, n_ubatch=128)
        by_key = {f"seq{i}": ids for i, ids in enumerate(seqs)}
        llm.tokenize = lambda text, *a, **k: list(by_key[text.decode()])
        out["llama_cpp"][outtype.upper()] = [llm.embed(f"seq{i}", normalize=False)[0] for i in range(len(seqs))]
        del llm
    json.dump(out, open(os.path.join(d, "gguf_goldens.json"), "w"))
    print("roberta_rerank GGUFs and gguf_goldens.json written")


def gen_gguf_qwen3_rerank(llama_cpp):
    """qwen3_rerank/model-F32.gguf and model-F16.gguf by llama.cpp's converter, which reads the
    README heading as Qwen3-Reranker: pooling_type rank, cls.output = the head's [yes, no] rows,
    classifier labels ["yes", "no"] and its "rerank" chat template with {query} / {document}. And
    gguf_goldens.json: per golden sequence (goldens.json's prompt-formatted pairs) its ids and
    llama.cpp's output for exactly those ids (llama-cpp-python, pooling rank: the softmax over
    [yes, no] of the last position, P(yes) first, which llama.cpp's server returns as the score)."""
    conv = converter(llama_cpp)
    from llama_cpp import Llama
    d = os.path.join(ROOT, "qwen3_rerank")
    g = json.load(open(os.path.join(d, "goldens.json")))
    seqs = [s["ids"] for s in g["sequences"]]
    out = {"ids": seqs, "transformers_no_yes": [s["embedding"] for s in g["sequences"]], "llama_cpp": {}}
    for outtype in ("f32", "f16"):
        path = convert(conv, d, outtype)
        llm = Llama(model_path=path, embedding=True, pooling_type=4, verbose=False, n_ctx=256, n_batch=256,
                    n_ubatch=256)
        by_key = {f"seq{i}": ids for i, ids in enumerate(seqs)}
        llm.tokenize = lambda text, *a, **k: list(by_key[text.decode()])
        out["llama_cpp"][outtype.upper()] = [llm.embed(f"seq{i}", normalize=False)[:2] for i in range(len(seqs))]
        del llm
    json.dump(out, open(os.path.join(d, "gguf_goldens.json"), "w"))
    print("qwen3_rerank GGUFs and gguf_goldens.json written", out["llama_cpp"]["F32"])


def main():
    from transformers import (BertConfig, BertModel, RobertaConfig, RobertaModel, XLMRobertaConfig,
                              XLMRobertaModel)
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--llama-cpp", help="llama.cpp source tree (convert_hf_to_gguf.py): also write the GGUFs")
    ap.add_argument("--gguf", nargs="*", default=["bert", "twins", "qwen3_rerank", "roberta_rerank"],
                    help="with --llama-cpp, which GGUFs: bert, twins (qwen3_embed, roberta, xlmr), qwen3_rerank, "
                         "roberta_rerank")
    a = ap.parse_args()
    jobs = {
        "bert": lambda: gen_encoder("bert", BertConfig, BertModel, "mean", True, 1, True,
                                    {"max_position_embeddings": 64, "type_vocab_size": 2}),
        "roberta": lambda: gen_encoder("roberta", RobertaConfig, RobertaModel, "cls", False, 2, False,
                                       {"max_position_embeddings": 66, "type_vocab_size": 1, "pad_token_id": 1}),
        "xlmr": lambda: gen_encoder("xlmr", XLMRobertaConfig, XLMRobertaModel, "mean", True, 3, False,
                                    {"max_position_embeddings": 66, "type_vocab_size": 1, "pad_token_id": 1}),
        "qwen3_embed": gen_qwen3_embed,
        "bert_rerank": gen_bert_rerank,
        "roberta_rerank": gen_roberta_rerank,
        "qwen3_rerank": gen_qwen3_rerank,
    }
    for k, f in jobs.items():
        if not a.only or k in a.only:
            f()
    if a.llama_cpp:
        if "bert" in a.gguf:
            gen_gguf(a.llama_cpp)
        if "twins" in a.gguf:
            gen_gguf_decoder_and_roberta(a.llama_cpp)
        if "qwen3_rerank" in a.gguf:
            gen_gguf_qwen3_rerank(a.llama_cpp)
        if "roberta_rerank" in a.gguf:
            gen_gguf_roberta_rerank(a.llama_cpp)


if __name__ == "__main__":
    main()
