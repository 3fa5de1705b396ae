"""tool_choice "required" / a named function forced by grammar, and "auto" calls kept
schema-valid (issue 25), on tiny random-weight models (tiny_random.py) over real tokenizers with
real chat templates: Hermes/Qwen <tool_call> (Qwen 2.5 template, Qwen 3 tokenizer), Qwen3-Coder
XML <function=N><parameter=P> (its template, Qwen 3 tokenizer), Llama 3.1 JSON (Llama 3.1
tokenizer), Mistral [TOOL_CALLS] pre-v11 list and v11+ name[ARGS] (their templates, Llama 2
tokenizer with [TOOL_CALLS] as a special token, [ARGS] as text), Granite <|tool_call|> (a special
token likewise), Gemma 4 call:N{k:<|"|>v<|"|>} (its template, Gemma 3 tokenizer with its markers as
special tokens) and gpt-oss harmony (its tokenizer: the markers are special tokens). Sampled at temperature 1, n=4: every output must be a call, read
back into message.tool_calls (and streamed delta.tool_calls), with arguments that validate against
the tool's schema (jsonschema, the oracle). The schemas bound every string and array: a random
model never closes an unbounded one."""
from __future__ import annotations

import json

import jsonschema
import pytest

from server import Server, TEST_DATA, stream_post
from tiny_random import make_tiny_llama

TEMPLATES = TEST_DATA / "chat_templates"
# name: (tokenizer folder, vocab size, stop ids, chat template)
MODELS = {
    "hermes": ("qwen3", 151936, [151645, 151643], "Qwen-Qwen2.5-7B-Instruct.jinja"),
    "qwen3_coder": ("qwen3", 151936, [151645, 151643], "Qwen3-Coder.jinja"),
    "llama3": ("llama3_1", 128256, [128001, 128008, 128009], "meta-llama-Llama-3.1-8B-Instruct.jinja"),
    "mistral": ("llama2", 32000, [2], "mistralai-Mistral-7B-Instruct-v0.3.jinja"),
    "mistral_v11": ("llama2", 32000, [2], "Mistral-Small-3.2-24B-Instruct-2506.jinja"),
    "granite": ("llama2", 32000, [2], "ibm-granite-granite-3.3-2B-Instruct.jinja"),
    "harmony": ("gptoss", 201088, [200002, 200012], "openai-gpt-oss-120b.jinja"),
    "gemma4": ("gemma3", 262208, [1, 106], "google-gemma-4-it.jinja"),
}
# Models whose call opener is one token: under "auto" a +100 logit_bias on it makes every choice
# open a call (a random model rarely would), from where the grammar must keep the call valid.
AUTO_OPENERS = {"hermes": "<tool_call>", "qwen3_coder": "<tool_call>", "llama3": "<|python_tag|>",
                "gemma4": "<|tool_call>", "mistral": "[TOOL_CALLS]", "mistral_v11": "[TOOL_CALLS]",
                "granite": "<|tool_call|>"}
# Models whose opener is several tokens: the tiny model is built to write it (tiny_random's chain)
# after the generation prompt's last token, the grammar's trigger being the opener's text.
# Harmony: "<|start|>assistant" then "<|channel|>commentary to=" (5 tokens), then "functions.N ...".
AUTO_CHAINS = {"harmony": ("<|start|>assistant", "<|channel|>commentary to=")}
# The committed Llama 3.1 tokenizer is the base model's, whose reserved ids 128008 / 128010 the
# Instruct model's tokenizer names <|eom_id|> / <|python_tag|> (meta-llama/Llama-3.1-8B-Instruct,
# tokenizer.json added_tokens): the tiny model gets those names. Gemma 4's vocabulary holds its
# call markers as special tokens, the Gemma 3 one does not: three of its unused tokens take their
# names (so the grammar and the parser meet the markers as special tokens, as with Gemma 4).
# Mistral's v3 vocabulary has [TOOL_CALLS] as control token 5 and Granite 3's has <|tool_call|> as
# a special token; the Llama 2 vocabulary the tiny models use has neither: two byte pieces of
# control characters (<0x02>, id 5, and <0x03>) take their names.
RENAMED = {"llama3": {128008: "<|eom_id|>", 128010: "<|python_tag|>"},
           "gemma4": {6: "<|tool_call>", 7: "<tool_call|>", 8: '<|"|>'},
           "mistral": {5: "[TOOL_CALLS]"}, "mistral_v11": {5: "[TOOL_CALLS]"}, "granite": {6: "<|tool_call|>"}}


def rename_special_tokens(model_dir, names: dict[int, str]) -> None:
    """Renames tokens (ids to new texts) in tokenizer.json and tokenizer_config.json, marked special:
    added tokens in place; a vocabulary piece that is not one becomes an added token too."""
    if not names:
        return
    path = model_dir / "tokenizer.json"
    t = json.loads(path.read_text())
    vocab = t["model"].get("vocab")
    by_id = {v: k for k, v in vocab.items()} if isinstance(vocab, dict) else {}
    added = {a["id"]: a for a in t["added_tokens"]}
    for i, name in names.items():
        if i not in added:
            added[i] = {"id": i, "content": by_id[i], "single_word": False, "lstrip": False, "rstrip": False,
                        "normalized": False, "special": True}
            t["added_tokens"].append(added[i])
        a = added[i]
        if by_id.get(i) == a["content"]:
            del vocab[a["content"]]
            vocab[name] = i
        a["content"], a["special"] = name, True
    t["added_tokens"].sort(key=lambda a: a["id"])
    path.write_text(json.dumps(t))
    path = model_dir / "tokenizer_config.json"
    c = json.loads(path.read_text())
    for i, name in names.items():
        c.setdefault("added_tokens_decoder", {}).setdefault(str(i), {}).update(
            content=name, special=True, lstrip=False, rstrip=False, normalized=False, single_word=False)
    path.write_text(json.dumps(c))


SCHEMAS = {
    "get_weather": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 6},
                                                     "unit": {"enum": ["c", "f"]},
                                                     "days": {"type": "integer", "minimum": 1, "maximum": 7}},
                    "required": ["city", "unit", "days"], "additionalProperties": False},
    "tag_items": {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 4},
                                                            "maxItems": 2},
                                                   "ok": {"type": "boolean"}},
                  "required": ["tags", "ok"], "additionalProperties": False},
}
TOOLS = [{"type": "function", "function": {"name": n, "description": f"The {n} tool.", "parameters": s}}
         for n, s in SCHEMAS.items()]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
N = 4


def opener_chain(key: str) -> list[int] | None:
    """AUTO_CHAINS[key] as token ids: the prompt's last token, then the opener's tokens."""
    if key not in AUTO_CHAINS:
        return None
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(TEST_DATA / "tokenizers" / MODELS[key][0] / "tokenizer.json"))
    prompt_end, opener = AUTO_CHAINS[key]
    return tok.encode(prompt_end, add_special_tokens=False).ids[-1:] + tok.encode(opener, add_special_tokens=False).ids


@pytest.fixture(scope="module", params=list(MODELS))
def srv(request, tmp_path_factory):
    tok, vocab, eos, template = MODELS[request.param]
    d = make_tiny_llama(tmp_path_factory.mktemp(request.param), tok, vocab, eos, chain=opener_chain(request.param))
    rename_special_tokens(d, RENAMED.get(request.param, {}))
    s = Server(str(d), "--chat-template", str(TEMPLATES / template), name=f"tiny+{request.param}").start()
    s.key, s.dir = request.param, d
    yield s
    assert s.stop() == 0, s.tail()


def body(srv, choice, **kw):
    return {"model": srv.model_id, "messages": MESSAGES, "tools": TOOLS, "tool_choice": choice, "temperature": 1,
            "n": N, "max_tokens": 400, "seed": 7, "parallel_tool_calls": False, **kw}


def check_calls(calls, names, where):
    assert calls, f"{where}: no tool call"
    for c in calls:
        assert c["type"] == "function" and c["id"], where
        assert c["function"]["name"] in names, (where, c)
        jsonschema.validate(json.loads(c["function"]["arguments"]), SCHEMAS[c["function"]["name"]])


def whole(srv, choice, names, **kw):
    r = srv.post("/v1/chat/completions", body(srv, choice, **kw))
    assert r.status_code == 200, r.text
    choices = r.json()["choices"]
    assert len(choices) == N
    for ch in choices:
        m = ch["message"]
        where = f"{srv.key} {choice}: {json.dumps(m)}"
        assert ch["finish_reason"] == "tool_calls", where
        check_calls(m["tool_calls"], names, where)
        assert not m.get("content"), where
    return choices


def streamed(srv, choice, names):
    status, events, done = stream_post(srv, "/v1/chat/completions", body(srv, choice, stream=True))
    assert status == 200 and done, events
    calls: dict[int, dict[int, dict]] = {}
    finish, content = {}, {}
    for e in events:
        for ch in e.get("choices", []):
            i = ch["index"]
            d = ch.get("delta", {})
            content[i] = content.get(i, "") + (d.get("content") or "")
            for tc in d.get("tool_calls") or []:
                c = calls.setdefault(i, {}).setdefault(tc["index"], {"id": "", "type": "", "function": {"name": "", "arguments": ""}})
                if tc.get("id"):
                    assert not c["id"], "the id is sent once"
                    c["id"], c["type"] = tc["id"], tc["type"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    assert not c["function"]["name"], "the name is sent once"
                    c["function"]["name"] = fn["name"]
                c["function"]["arguments"] += fn.get("arguments") or ""
            if ch.get("finish_reason"):
                finish[i] = ch["finish_reason"]
    assert sorted(finish) == list(range(N))
    for i in range(N):
        where = f"{srv.key} {choice} stream {i}: {calls.get(i)} {content.get(i)!r}"
        assert finish[i] == "tool_calls", where
        check_calls([calls[i][k] for k in sorted(calls.get(i, {}))], names, where)
        assert not content[i], where


def test_required_is_always_a_valid_call(srv):
    whole(srv, "required", set(SCHEMAS))


def test_named_function_is_always_that_call(srv):
    for name in SCHEMAS:
        for ch in whole(srv, {"type": "function", "function": {"name": name}}, {name}):
            assert len(ch["message"]["tool_calls"]) == 1


def test_forced_calls_stream_as_tool_call_deltas(srv):
    streamed(srv, "required", set(SCHEMAS))
    streamed(srv, {"type": "function", "function": {"name": "tag_items"}}, {"tag_items"})


def test_forced_choice_and_response_format_conflict(srv):
    b = body(srv, "required", response_format={"type": "json_object"})
    r = srv.post("/v1/chat/completions", b)
    assert r.status_code == 400 and r.json()["error"]["param"] == "tool_choice", r.text


def test_auto_call_arguments_follow_the_schema(srv):
    """Under auto, once the opener (AUTO_OPENERS, AUTO_CHAINS) is written, the call follows the schema."""
    if srv.key in AUTO_CHAINS:
        whole(srv, "auto", set(SCHEMAS))
        return
    assert srv.key in AUTO_OPENERS, srv.key
    from tokenizers import Tokenizer
    text = AUTO_OPENERS[srv.key]
    opener = Tokenizer.from_file(str(srv.dir / "tokenizer.json")).token_to_id(text)
    assert opener is not None, text
    whole(srv, "auto", set(SCHEMAS), logit_bias={str(opener): 100})
