#!/usr/bin/env python3
"""Trains a small Unigram (SentencePiece-style, T5-like pipeline) vocabulary with Hugging Face
`tokenizers` on the golden corpus, so the Unigram model has a real tokenizer.json to be checked
against (none of the shipped vocabularies is Unigram). Writes tests/data/tokenizer/unigram/
{tokenizer.json, tokenizer_config.json}. Pipeline: Metaspace (always, split) pre-tokenizer,
Unigram with <unk>, Metaspace decoder, template "A </s>".

Command (from the repository root, before tools/gen_tokenizer_goldens.py):
  /work/venv/bin/python tools/gen_tokenizer_unigram.py
"""
import json
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers


def main():
    out_dir = os.path.join("tests", "data", "tokenizer", "unigram")
    os.makedirs(out_dir, exist_ok=True)
    texts = []
    with open(os.path.join("tests", "data", "tokenizer", "corpus.jsonl"), encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            if "t" in j and len(j["t"]) < 4096:
                texts.append(j["t"])
    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(vocab_size=8000, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", shrinking_factor=0.75, max_piece_length=12)
    tok.train_from_iterator(texts * 3, trainer=trainer)
    # The trainer leaves the added-token ids out of step with the model vocabulary (which puts the
    # special tokens at 0..2): realign them to the model ids, as a SentencePiece conversion has.
    j = json.loads(tok.to_str())
    # The trainer also repeats the special pieces further down the vocabulary: rename those copies.
    # Scores rounded to multiples of 1/1024: exact in float32 (as a SentencePiece .model and a GGUF
    # store them), exact through JSON's decimal text, and path sums are exact in float64.
    piece_ids = {}
    for i, p in enumerate(j["model"]["vocab"]):
        p[1] = round(p[1] * 1024) / 1024
        if p[0] in piece_ids:
            p[0] = f"<dup_{i}>"
        piece_ids[p[0]] = i
    for a in j["added_tokens"]:
        a["id"] = piece_ids[a["content"]]
    j["added_tokens"].sort(key=lambda a: a["id"])
    tok = Tokenizer.from_str(json.dumps(j))
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", piece_ids["</s>"])])
    assert tok.token_to_id("</s>") == 1 and tok.encode("a</s>").ids[-2:] == [1, 1], tok.encode("a</s>").ids
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>",
                   "tokenizer_class": "T5TokenizerFast"}, f, indent=1)
    print(out_dir, tok.get_vocab_size())


if __name__ == "__main__":
    main()
