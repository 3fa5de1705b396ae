"""Structured output (issue 25): response_format json_schema (strict and not) and json_object on
/v1/chat/completions and /v1/completions, vLLM's guided_regex / guided_choice / guided_grammar,
the openai SDK's chat.completions.parse with a pydantic model, and the 400 for a schema that does
not compile. Model: the tiny random Llama with the real Llama 2 tokenizer, sampled at
temperature 1: every output must parse and validate (jsonschema, the oracle), so the schemas
bound every string and array (a random model never closes an unbounded string)."""
from __future__ import annotations

import json
import re
from typing import Literal

import jsonschema
import openai
import pydantic
import pytest

from server import CHAT_TEMPLATE

MESSAGES = [{"role": "user", "content": "Describe a person as JSON."}]
SHORT = {"type": "string", "maxLength": 6}
SCHEMAS = {
    "flat": {"type": "object", "properties": {"name": SHORT, "age": {"type": "integer", "minimum": 0, "maximum": 120},
                                              "ok": {"type": "boolean"}},
             "required": ["name", "age", "ok"], "additionalProperties": False},
    "nested": {"type": "object", "properties": {
        "owner": {"type": "object", "properties": {"id": {"type": "integer", "minimum": -5, "maximum": 99999},
                                                   "tags": {"type": "array", "items": SHORT, "maxItems": 3}},
                  "required": ["id", "tags"], "additionalProperties": False},
        "kind": {"enum": ["cat", "dog", 3, None]},
        "v": {"const": "x"}},
        "required": ["owner", "kind", "v"], "additionalProperties": False},
    "refs_anyof": {"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0, "maximum": 9},
                                                                     "y": {"type": "integer", "minimum": 0, "maximum": 9}},
                                    "required": ["x", "y"], "additionalProperties": False}},
                   "type": "object",
                   "properties": {"a": {"$ref": "#/$defs/pt"},
                                  "b": {"anyOf": [{"$ref": "#/$defs/pt"}, {"type": "null"}, SHORT]},
                                  "pts": {"type": "array", "items": {"$ref": "#/$defs/pt"}, "minItems": 1, "maxItems": 2}},
                   "required": ["a", "b", "pts"], "additionalProperties": False},
    "pattern_number": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
                                                        "p": {"type": "number", "minimum": 0, "maximum": 1}},
                       "required": ["code"], "additionalProperties": False},
}


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), name="llama_tok+template")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def rf(schema, strict=True):
    return {"type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": strict}}


@pytest.mark.parametrize("name", list(SCHEMAS))
@pytest.mark.parametrize("strict", [True, False])
def test_chat_json_schema_always_validates(srv, client, name, strict):
    schema = SCHEMAS[name]
    r = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, response_format=rf(schema, strict),
                                       temperature=1.0, seed=7, n=4, max_tokens=400)
    assert len(r.choices) == 4
    for c in r.choices:
        assert c.finish_reason == "stop", c.message.content
        jsonschema.validate(json.loads(c.message.content), schema)


@pytest.mark.parametrize("name", ["flat", "nested"])
def test_completions_json_schema_always_validates(srv, client, name):
    schema = SCHEMAS[name]
    r = client.completions.create(model=srv.model_id, prompt="JSON:", temperature=1.0, seed=3, n=4, max_tokens=400,
                                  extra_body={"response_format": rf(schema)})
    for c in r.choices:
        assert c.finish_reason == "stop", c.text
        jsonschema.validate(json.loads(c.text), schema)


def test_streamed_json_schema_validates(srv, client):
    schema = SCHEMAS["nested"]
    text, finish = "", None
    for ev in client.chat.completions.create(model=srv.model_id, messages=MESSAGES, response_format=rf(schema),
                                             temperature=1.0, seed=11, max_tokens=400, stream=True):
        if ev.choices:
            text += ev.choices[0].delta.content or ""
            finish = ev.choices[0].finish_reason or finish
    assert finish == "stop"
    jsonschema.validate(json.loads(text), schema)


def test_json_object_is_an_object(srv, client, llama_tok_dir):
    """Any JSON object: keys are unbounded strings, so a random model is steered to close them
    with logit_bias on '"' and '}' (an API feature; the grammar still decides what is allowed)."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(str(llama_tok_dir / "tokenizer.json"))
    bias = {str(tok.token_to_id(t)): 30 for t in ['"', "}", "▁}", "]"] if tok.token_to_id(t) is not None}
    for api in ("chat", "completions"):
        for seed in range(3):
            kw = dict(model=srv.model_id, temperature=1.0, seed=seed, max_tokens=300, logit_bias=bias)
            if api == "chat":
                r = client.chat.completions.create(messages=MESSAGES, response_format={"type": "json_object"}, **kw)
                text, finish = r.choices[0].message.content, r.choices[0].finish_reason
            else:
                r = client.completions.create(prompt="JSON:", extra_body={"response_format": {"type": "json_object"}}, **kw)
                text, finish = r.choices[0].text, r.choices[0].finish_reason
            assert finish == "stop", text
            assert isinstance(json.loads(text), dict), text


class Pet(pydantic.BaseModel):
    kind: Literal["cat", "dog"]
    age: int = pydantic.Field(ge=0, le=30)
    name: str = pydantic.Field(max_length=8)


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(max_length=8)
    pets: list[Pet] = pydantic.Field(max_length=2)
    verified: bool


def test_sdk_parse_with_pydantic(srv, client):
    for seed in range(4):
        r = client.chat.completions.parse(model=srv.model_id, messages=MESSAGES, response_format=Person,
                                          temperature=1.0, seed=seed, max_tokens=400)
        msg = r.choices[0].message
        assert r.choices[0].finish_reason == "stop", msg.content
        assert isinstance(msg.parsed, Person)
        assert msg.parsed == Person.model_validate_json(msg.content)


def test_guided_regex_choice_grammar(srv, client):
    for seed in range(3):
        r = client.completions.create(model=srv.model_id, prompt="Code:", temperature=1.0, seed=seed, max_tokens=50,
                                      extra_body={"guided_regex": "[A-Z]{3}-[0-9]{2,4}"})
        assert re.fullmatch("[A-Z]{3}-[0-9]{2,4}", r.choices[0].text), r.choices[0].text
        r = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, temperature=1.0, seed=seed, max_tokens=20,
                                           extra_body={"guided_choice": ["yes", "no", "maybe so"]})
        assert r.choices[0].message.content in ("yes", "no", "maybe so")
        r = client.completions.create(model=srv.model_id, prompt="Bits:", temperature=1.0, seed=seed, max_tokens=50,
                                      extra_body={"guided_grammar": 'root ::= "<" bit+ ">"\nbit ::= "0" | "1"'})
        assert re.fullmatch("<[01]+>", r.choices[0].text) or r.choices[0].finish_reason == "length", r.choices[0].text


def test_invalid_schema_is_openai_400(srv, client):
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": 5}}}
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=srv.model_id, messages=MESSAGES, response_format=bad, max_tokens=5)
    err = e.value.body
    assert e.value.status_code == 400 and err["code"] == "invalid_json_schema" and err["param"] == "response_format"
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=srv.model_id, messages=MESSAGES, max_tokens=5,
                                       response_format={"type": "json_schema", "json_schema": {"schema": {}}})
    assert e.value.body["param"] == "response_format.json_schema.name"
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=srv.model_id, prompt="x", max_tokens=5, extra_body={"guided_regex": "a(b"})
    with pytest.raises(openai.BadRequestError):  # two constraints at once
        client.chat.completions.create(model=srv.model_id, messages=MESSAGES, max_tokens=5,
                                       response_format={"type": "json_object"}, extra_body={"guided_regex": "a"})


def test_unconstrained_requests_unchanged(srv, client):
    """A request without a grammar is sampled as before: greedy text equals that of response_format text."""
    a = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, temperature=0, max_tokens=12)
    b = client.chat.completions.create(model=srv.model_id, messages=MESSAGES, temperature=0, max_tokens=12,
                                       response_format={"type": "text"})
    assert a.choices[0].message.content == b.choices[0].message.content
