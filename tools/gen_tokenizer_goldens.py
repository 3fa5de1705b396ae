#!/usr/bin/env python3
"""Golden token ids for tests/tokenizer, from Hugging Face `tokenizers` (the oracle).

Writes tests/data/tokenizer/corpus.jsonl (the input strings, >= 2,000, written to find bugs) and
tests/data/tokenizer/<vocab>.out.jsonl: one line per corpus line,
  {"p": ids, "pt": text, "f": ids, "ft": text}   ("pt" omitted when equal to the input string,
                                                  "ft" omitted when equal to "pt")
  p  = encode(s, add_special_tokens=False) with encode_special_tokens=True   (user text: specials
       written in the text stay plain text)        pt = decode(p, skip_special_tokens=False)
  f  = encode(s, add_special_tokens=True) with special tokens parsed (engine-rendered text)
       ft = decode(f, skip_special_tokens=True); "f"/"ft" are omitted for strings over 4 KB.
Invalid UTF-8 corpus entries are stored as {"hex": ...}; both the oracle and oxydllm see them
with every maximal invalid subpart replaced by U+FFFD (bytes.decode("utf-8", "replace")).
Variants (tests/data/tokenizer/variants.json): real vocabularies with their normalizer /
pre-tokenizer / decoder / post-processor / added-token flags replaced by other configurations
tokenizer.json can declare (Metaspace, Whitespace, Digits, Punctuation, NFKC, StripAccents,
Split behaviours, lstrip/rstrip/single_word...), so every supported component is checked against
the oracle even where no shipped vocabulary uses it. Their goldens (variant_<name>.out.jsonl,
records carry the corpus index "i") cover every third corpus string under 4 KB.
Truncation and padding declared in a tokenizer.json are switched off (the engine never uses them).

Command (from the repository root):
  /work/venv/bin/python tools/gen_tokenizer_goldens.py --tests tests
"""
import argparse
import json
import os
import random
import shutil

from tokenizers import Tokenizer

VOCABS = {
    "qwen3": "data/tokenizers/qwen3",
    "llama3": "data/tokenizers/llama3",
    "llama3_1": "data/tokenizers/llama3_1",
    "gemma3": "data/tokenizers/gemma3",
    "gptoss": "data/tokenizers/gptoss",
    "llama2": "data/tokenizers/llama2",
    "deepseek_v3": "data/tokenizers/deepseek_v3",
    "minilm": None,  # committed: tests/data/tokenizer/minilm
    "unigram": None,  # committed: tests/data/tokenizer/unigram (tools/gen_tokenizer_unigram.py)
    # the tiny XLM-R's (tools/gen_tiny_embedders.py): XLM-R's kind, a SentencePiece Unigram with
    # the Precompiled normalizer (charsmap), WhitespaceSplit + Metaspace
    "xlmr": "data/archs/xlmr",
}

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! How are you doing today?",
    "It was the best of times, it was the worst of times, it was the age of wisdom.",
    "In 1969, Neil Armstrong became the first person to walk on the Moon.",
    "She said: \"I don't know what you're talking about,\" and left.",
    "Mr. Smith's car isn't here; they'll be late, we've heard, and I'd wait.",
    "WHY ARE YOU SHOUTING? I'M NOT SHOUTING! YOU'RE SHOUTING!",
    "e-mail me at john.doe@example.com or visit https://example.org/path?q=1&r=2#frag.",
    "Prices rose 3.5% in Q3 2023, to $1,234,567.89 (up from $999.99).",
    "The rain in Spain stays mainly in the plain.",
    "Colorless green ideas sleep furiously.",
    "To be, or not to be, that is the question:",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
    "  leading spaces and trailing spaces  ",
    "Tabs\tbetween\twords\tand a newline\nthen another\r\nwindows line.",
    "A sentence with a very long word: pneumonoultramicroscopicsilicovolcanoconiosis.",
    "Antidisestablishmentarianism, supercalifragilisticexpialidocious, floccinaucinihilipilification.",
    "camelCaseIdentifier snake_case_identifier kebab-case-identifier SCREAMING_SNAKE",
    "He said 'hello' and she said 'goodbye', then they'd both laughed.",
    "Curly quotes: “double” and ‘single’ and don’t and it’s and ‘80s.",
    "Ellipsis… em—dash – en-dash; «guillemets» „German“ quotes.",
    "I'll, you'll, he'll, she'll, we'll, they'll; I've, you've; I'm; I'd; can't; won't; shan't.",
    "I'LL YOU'VE HE'S SHE'D WE'RE THEY'M",
    "The year 2024 had 366 days; 10000 × 10000 = 100000000.",
    "Café naïve résumé coöperate jalapeño façade Ångström Øre œuvre.",
    "Straße, Maßstab, GROSS, Fußgängerübergänge.",
    "İstanbul, ılık, IŞIK, Diyarbakır.",
    "ΟΔΥΣΣΕΥΣ Οδυσσεύς σοφός ΣΟΦΟΣ ς σ Σ",
    "Москва — столица России. Привет, как дела?",
    "Où est la bibliothèque ? Ça va très bien, merci !",
    "¿Dónde está el baño? ¡Qué día tan bonito!",
]

CODE = [
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\n",
    "#include <iostream>\nint main() {\n  std::cout << \"Hello\" << std::endl;\n  return 0;\n}\n",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v);\n}\n",
    "const add = (a, b) => a + b;\nconsole.log(`sum: ${add(1, 2)}`);\n",
    "SELECT id, name FROM users WHERE age >= 18 AND name LIKE '%son' ORDER BY id DESC;",
    "<html>\n<body>\n<div class=\"main\"><p>Hi &amp; bye</p></div>\n</body>\n</html>",
    "{\"key\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true, \"c\": -1.5e-10}}",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do echo \"$f\"; done\n",
    "    if (x == y) {\n        return;\n    }\n\n\n    // comment\n",
    "x = [i**2 for i in range(100) if i % 3 == 0]  # squares",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "public static void main(String[] args) { System.out.println(args.length); }",
    "\\begin{equation} E = mc^2 \\end{equation} $\\alpha + \\beta_{i}^{2}$",
    "a->b; c::d; e<<=f; g>>=h; i!==j; k||l; m&&n; o??p; q?.r; s**t; u//v",
    "    \t  \n\t\t\tindented(with, tabs)\n",
    "---\ntitle: Test\ntags: [a, b]\n---\n# Heading\n\n* item 1\n* item 2\n\n```python\nprint(1)\n```\n",
]

MULTILINGUAL = [
    "我爱自然语言处理。今天天气很好，我们去公园散步吧！",
    "机器学习是人工智能的一个分支，它使计算机能够从数据中学习。",
    "日本語のテキストです。ひらがな、カタカナ、漢字が混ざっています。",
    "東京都は日本の首都です。ラーメンが大好き！",
    "한국어 텍스트입니다. 안녕하세요, 만나서 반갑습니다.",
    "مرحبا بالعالم! كيف حالك اليوم؟ اللغة العربية جميلة.",
    "שלום עולם! מה שלומך היום? עברית היא שפה יפה.",
    "नमस्ते दुनिया! आप कैसे हैं? हिन्दी एक सुंदर भाषा है।",
    "สวัสดีครับ ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "Tiếng Việt có nhiều dấu: ả ã ạ ấ ầ ẩ ẫ ậ ắ ằ ẳ ẵ ặ.",
    "ქართული ენა, Հայերեն, ትግርኛ, ᠮᠣᠩᠭᠣᠯ",
    "Ελληνικά: Η γλώσσα μου έδωσαν ελληνική.",
    "বাংলা ভাষা, தமிழ் மொழி, తెలుగు, ಕನ್ನಡ, മലയാളം",
    "混合 mixed テキスト text 한국어 123 العربية",
    "中文标点：，。！？；：“”‘’（）《》【】",
    "全角文字：ＡＢＣ　１２３　！？",
    "𠀀𠀁𪚥 rare CJK extension B characters 𠮷野家",
]

EMOJI = [
    "👍", "👍🏽", "👍🏿 thumbs", "👨‍👩‍👧‍👦 family", "🏳️‍🌈", "🇫🇷🇩🇪🇯🇵", "1️⃣2️⃣#️⃣",
    "🫠🫡🥹 newer emoji", "❤️ ♥ ❤", "🤷‍♀️🤷🏻‍♂️", "👩🏾‍💻 coder", "😀😃😄😁😆😅🤣😂",
    "I ❤️ 🍕 and 🍣!", "🧑‍🤝‍🧑", "☺︎ ☺️ text vs emoji presentation", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland",
]

COMBINING = [
    "e\u0301", "a\u0308o\u0308u\u0308", "\u1e9b\u0323", "n\u0303", "A\u030a", "\u0041\u0300\u0301\u0302",
    "Cafe\u0301 vs Café", "\u00c5 vs A\u030a vs \u212b", "ﬁ ﬂ ﬀ ligatures", "① ② ⑩ ⅷ ½ ¾ ² ³",
    "™ ℃ ℉ № ㎞ ㏄", "\u1100\u1161\u11a8 decomposed hangul", "각 composed hangul",
    "x\u0336s\u0336t\u0336r\u0336i\u0336k\u0336e\u0336", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dalgo",
    "\u0915\u094d\u0937", "\u0e01\u0e34\u0e4a", "ｶﾀｶﾅ halfwidth", "\u00ad soft\u00adhyphen",
    "zero\u200bwidth\u200cnon\u200djoiner", "bidi \u202eevil\u202c text", "\ufeffBOM at start",
    "\u2028line sep\u2029para sep", "nbsp\u00a0here\u3000ideographic\u2009thin\u202fnarrow",
]

SPECIAL_LOOKALIKES = [
    "<|im_start|>", "<|im_end|>", "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<|endoftext|>", "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>user<|end_header_id|>",
    "<s>", "</s>", "<s>[INST] hi [/INST]", "<unk>", "<pad>", "<bos>", "<eos>", "<start_of_turn>user\nhi<end_of_turn>",
    "<mask>", "[multimodal]", "<unused0>", "<image_soft_token>", "<start_of_image>",
    "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>hi<｜Assistant｜>", "<｜tool▁calls▁begin｜>",
    "<|startoftext|>", "<|return|>", "<|channel|>analysis<|message|>x<|end|>", "<|constrain|>json",
    "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "<think>\nhmm\n</think>", "<tool_call>{}</tool_call>",
    "<0x41>", "<0xFF>", "▁", "▁▁▁", "▁hello▁world", "<|reserved_special_token_5|>", "<|fim_prefix|>",
    "< |im_end| >", "<|im_end", "|im_end|>", "<<|im_end|>>", "<|IM_END|>", "<|im_end|><|im_end|>",
    " <|im_end|> ", "text<|im_end|>text", "<s><s></s></s>", "<table><tr><td>x</td></tr></table>",
    "\n\n\n<b>bold</b>\t\t\t", "<|reserved_200000|>", "<|endofprompt|>", "<end_of_turn>\n<start_of_turn>model\n",
]

INVALID = [
    b"\xff", b"\xfe\xff", b"abc\x80def", b"\xed\xa0\x80", b"\xed\xbf\xbf lone surrogates \xed\xa0\xbd\xed\xb8\x80",
    b"\xf0\x9f\x98", b"truncated emoji \xf0\x9f\x98 end", b"\xc0\xaf overlong", b"\xe0\x80\xaf",
    b"\xf4\x90\x80\x80 beyond", b"\xf8\x88\x80\x80\x80", b"\xc3", b"\xc3\x28", b"\xa0\xa1",
    b"\xe2\x28\xa1", b"\xe2\x82\x28", b"\xf0\x28\x8c\xbc", b"\xf0\x90\x28\xbc", b"mixed \xe6\x97 ok \xe6\x97\xa5",
    b"\x80\x80\x80\x80", b"valid \xc3\xa9 then \xc3",
]


def numbers(rng):
    out = []
    for n in range(1, 41):
        out.append("".join(rng.choice("0123456789") for _ in range(n)))
    out += ["0", "00", "007", "3.14159265358979", "-42", "+1", "1e10", "6.022e23", "0x1F", "0b1010",
            "1,000,000", "1.000.000,50", "12:30:45", "2024-02-29", "+1 (555) 123-4567", "192.168.0.1",
            "v1.2.3-rc.4", "50%", "$5", "€10", "¥100", "3rd", "21st", "1/2", "٣٤٥ Arabic-Indic",
            "१२३ Devanagari", "१२3 mixed", "๑๒๓ Thai", "１２３ fullwidth", "Ⅻ roman", "1" * 100, "9" * 1001]
    return out


def whitespace(rng):
    out = []
    for n in [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100]:
        out += [" " * n, "\t" * n, "\n" * n, "a" + " " * n + "b", "a" + "\n" * n + "b", " " * n + "x",
                "x" + " " * n, "\r\n" * n]
    for _ in range(60):
        s = "".join(rng.choice([" ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u3000", "\v", "\f", "x", "ab", "."])
                    for _ in range(rng.randint(1, 30)))
        out.append(s)
    return out


def controls():
    return [chr(c) for c in range(0, 128)] + ["\x00abc\x00", "a\x7fb", "\x1b[31mred\x1b[0m", "\u0085 NEL",
                                               "\u009f", "\U000e0001 tag", "\U0010fffd private", "\ue000 pua",
                                               "\ufffd replacement", "\ufffe\uffff nonchar"]


def random_mix(rng, pools, count):
    out = []
    seps = ["", " ", "  ", "\n", "\t", ", ", ". ", "\n\n", " - ", "'", "_", "/"]
    flat = [s for p in pools for s in p]
    for _ in range(count):
        k = rng.randint(1, 5)
        parts = []
        for _ in range(k):
            s = rng.choice(flat)
            if len(s) > 12 and rng.random() < 0.6:
                a = rng.randrange(len(s))
                b = min(len(s), a + rng.randint(1, 40))
                s = s[a:b]
            parts.append(s)
            parts.append(rng.choice(seps))
        out.append("".join(parts))
    return out


def random_codepoints(rng, count):
    blocks = [(0x20, 0x7e), (0xa0, 0x24f), (0x370, 0x3ff), (0x400, 0x4ff), (0x590, 0x6ff), (0x900, 0x97f),
              (0xe00, 0xe7f), (0x1100, 0x11ff), (0x3040, 0x30ff), (0x4e00, 0x9fff), (0xac00, 0xd7a3),
              (0x1f300, 0x1faff), (0x2000, 0x206f), (0x300, 0x36f), (0xff00, 0xffef), (0x20000, 0x2a6df)]
    out = []
    for _ in range(count):
        s = []
        for _ in range(rng.randint(1, 25)):
            lo, hi = rng.choice(blocks)
            c = rng.randint(lo, hi)
            if 0xd800 <= c <= 0xdfff:
                continue
            s.append(chr(c))
            if rng.random() < 0.2:
                s.append(" ")
        out.append("".join(s))
    return out


def big_string(rng, pools, size):
    flat = [s for p in pools for s in p if "<" not in s and "[" not in s and "▁" not in s]
    parts, n = [], 0
    while n < size:
        s = rng.choice(flat) + rng.choice([" ", "\n", "\n\n", "  ", "\t", ""])
        parts.append(s)
        n += len(s.encode())
    return "".join(parts)


def build_corpus():
    rng = random.Random(20260202)
    texts = [""]
    texts += PROSE + CODE + MULTILINGUAL + EMOJI + COMBINING + SPECIAL_LOOKALIKES
    texts += numbers(rng) + whitespace(rng) + controls()
    texts += [w.capitalize() for w in "the of and to in is was for that with as on by at from".split()]
    texts += ["a" * n for n in (1, 2, 63, 64, 65, 300)] + ["!" * 50, "_" * 80, "ab" * 200, "?!" * 33]
    pools = [PROSE, CODE, MULTILINGUAL, EMOJI, COMBINING, SPECIAL_LOOKALIKES, numbers(rng)]
    texts += random_mix(rng, pools, 1200)
    texts += random_codepoints(rng, 400)
    texts.append(big_string(rng, [PROSE, CODE, MULTILINGUAL, EMOJI, COMBINING], 100 * 1024))
    entries = [{"t": t} for t in texts] + [{"hex": b.hex()} for b in INVALID]
    return entries


SP = "\u2581"
SPM_DECODER = {"type": "Sequence", "decoders": [
    {"type": "Replace", "pattern": {"String": SP}, "content": " "}, {"type": "ByteFallback"}, {"type": "Fuse"},
    {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}


def qwen_added_flags(base):
    out = []
    for a in base["added_tokens"]:
        a = dict(a)
        if a["content"] == "<think>":
            a["lstrip"] = True
        if a["content"] == "</think>":
            a["rstrip"] = True
        if a["content"] == "<tool_call>":
            a["single_word"] = True
        if a["content"] == "<|im_start|>":
            a["normalized"] = True
        out.append(a)
    return out


VARIANTS = {
    "llama2_metaspace_first": ("llama2", lambda b: {
        "normalizer": None,
        "pre_tokenizer": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "first", "split": False},
        "decoder": SPM_DECODER}),
    "llama2_metaspace_always_split": ("llama2", lambda b: {
        "normalizer": {"type": "NFKC"},
        "pre_tokenizer": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "always", "split": True},
        "decoder": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "always", "split": True}}),
    "minilm_whitespace_digits": ("minilm", lambda b: {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": True},
            {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Whitespace"}, {"type": "Digits", "individual_digits": True}]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": False}}),
    "minilm_nfd_punctuation": ("minilm", lambda b: {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"}, {"type": "Punctuation", "behavior": "Contiguous"},
            {"type": "Digits", "individual_digits": False}]},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 102], "cls": ["[CLS]", 101]}}),
    "minilm_bert_cased": ("minilm", lambda b: {
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": False,
                       "strip_accents": None, "lowercase": False}}),
    "qwen3_gpt2_bytelevel": ("qwen3", lambda b: {
        "normalizer": {"type": "NFKD"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}}),
    "qwen3_split_behaviors": ("qwen3", lambda b: {
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFKC"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "\\s+"}, "behavior": "MergedWithNext", "invert": False},
            {"type": "Split", "pattern": {"String": "e"}, "behavior": "MergedWithPrevious", "invert": False},
            {"type": "Split", "pattern": {"Regex": "[0-9]+"}, "behavior": "Contiguous", "invert": True},
            {"type": "Split", "pattern": {"String": "x"}, "behavior": "Removed", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}}),
    "qwen3_added_flags": ("qwen3", lambda b: {"added_tokens": qwen_added_flags(b)}),
    "unigram_byte_fallback": ("unigram", lambda b: {
        "normalizer": {"type": "NFKC"},
        "pre_tokenizer": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "first", "split": False},
        "decoder": SPM_DECODER,
        "model": dict(b["model"], byte_fallback=True,
                      vocab=b["model"]["vocab"] + [[f"<0x{i:02X}>", -30.0] for i in range(256)])}),
}


def entry_text(e):
    return e["t"] if "t" in e else bytes.fromhex(e["hex"]).decode("utf-8", "replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default="tests", help="the folder holding data/tokenizers (default: tests)")
    ap.add_argument("--minilm", default=None, help="dir with MiniLM tokenizer.json to (re)copy")
    ap.add_argument("--only", nargs="*", help="write only these vocabularies' goldens, on the committed "
                    "corpus.jsonl (no variants)")
    args = ap.parse_args()
    out_dir = os.path.join("tests", "data", "tokenizer")
    os.makedirs(out_dir, exist_ok=True)
    if args.minilm:
        os.makedirs(os.path.join(out_dir, "minilm"), exist_ok=True)
        for f in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(args.minilm, f), os.path.join(out_dir, "minilm", f))
    if args.only:
        with open(os.path.join(out_dir, "corpus.jsonl"), encoding="utf-8") as f:
            entries = [json.loads(line) for line in f]
    else:
        entries = build_corpus()
        with open(os.path.join(out_dir, "corpus.jsonl"), "w", encoding="utf-8") as f:
            for e in entries:
                f.write(json.dumps(e, ensure_ascii=False) + "\n")
    texts = [entry_text(e) for e in entries]
    print(f"corpus: {len(texts)} strings")
    for name, rel in VOCABS.items():
        if args.only and name not in args.only:
            continue
        d = os.path.join(args.tests, rel) if rel else os.path.join(out_dir, name)
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()
        with open(os.path.join(out_dir, f"{name}.out.jsonl"), "w", encoding="utf-8") as f:
            for t in texts:
                tok.encode_special_tokens = True
                p = tok.encode(t, add_special_tokens=False).ids
                pt = tok.decode(p, skip_special_tokens=False)
                rec = {"p": p}
                if pt != t:
                    rec["pt"] = pt
                if len(t.encode()) <= 4096:
                    tok.encode_special_tokens = False
                    fids = tok.encode(t, add_special_tokens=True).ids
                    rec["f"] = fids
                    ft = tok.decode(fids, skip_special_tokens=True)
                    if ft != pt:
                        rec["ft"] = ft
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"{name}: done")

    if args.only:
        return
    variants = {}
    for vname, (base, fn) in VARIANTS.items():
        d = os.path.join(args.tests, VOCABS[base]) if VOCABS[base] else os.path.join(out_dir, base)
        base_json = json.load(open(os.path.join(d, "tokenizer.json"), encoding="utf-8"))
        override = fn(base_json)
        variants[vname] = {"base": base, "override": override}
        merged = dict(base_json)
        merged.update(override)
        tok = Tokenizer.from_str(json.dumps(merged))
        tok.no_truncation()
        tok.no_padding()
        with open(os.path.join(out_dir, f"variant_{vname}.out.jsonl"), "w", encoding="utf-8") as f:
            for i, t in enumerate(texts):
                if i % 3 or len(t.encode()) > 4096:
                    continue
                tok.encode_special_tokens = True
                p = tok.encode(t, add_special_tokens=False).ids
                tok.encode_special_tokens = False
                fids = tok.encode(t, add_special_tokens=True).ids
                f.write(json.dumps({"i": i, "p": p, "pt": tok.decode(p, skip_special_tokens=False), "f": fids,
                                    "ft": tok.decode(fids, skip_special_tokens=True)}, ensure_ascii=False) + "\n")
        print(f"variant {vname}: done")
    with open(os.path.join(out_dir, "variants.json"), "w", encoding="utf-8") as f:
        json.dump(variants, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
