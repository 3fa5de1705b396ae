"""Errors: the SDK's typed exceptions (status, param, code) for bad parameters and unknown models,
raw HTTP for what the SDK cannot send (malformed JSON, invalid UTF-8, a 10 MB body, 100k-deep
nesting, negative numbers), and --api-key auth on a second server. After every test the conftest
checks that each server is alive and /health answers 200."""
from __future__ import annotations

import json

import openai
import pytest

from server import CHAT_TEMPLATE, raw_request

MSG = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, "--chat-template", str(CHAT_TEMPLATE), name="llama_tok+template")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def assert_error_body(resp, status, param=None):
    assert resp.status_code == status, f"{resp.status_code} {resp.text[:300]}"
    err = resp.json()["error"]
    assert set(err) >= {"message", "type", "param", "code"}, err
    assert isinstance(err["message"], str) and err["message"]
    if param is not None:  # "prompt" or a path into it, as OpenAI writes "messages[0].content"
        assert err["param"] is not None and (err["param"] == param or err["param"].startswith(param + "[")), err
    return err


def test_unknown_model_is_404(srv, client):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="no-such-model", messages=MSG, max_tokens=2)
    assert e.value.status_code == 404 and e.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client.completions.create(model="no-such-model", prompt="x", max_tokens=2)


@pytest.mark.parametrize("field,value", [
    ("temperature", "hot"), ("temperature", -1), ("temperature", 3.5), ("max_tokens", "ten"),
    ("max_tokens", -5), ("max_tokens", 2.5), ("n", 0), ("n", -1), ("top_p", 1.5), ("top_p", -0.1),
    ("top_logprobs", 50), ("top_logprobs", -1), ("stop", 7), ("seed", "x"), ("stream", "yes"),
    ("frequency_penalty", 9), ("presence_penalty", -9), ("logit_bias", [1, 2]),
])
def test_bad_chat_parameter_is_400_naming_it(srv, client, field, value):
    kw = {"logprobs": True} if field == "top_logprobs" else {}
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=srv.model_id, messages=MSG, **kw, extra_body={field: value})
    assert e.value.status_code == 400
    assert e.value.param == field, f"param {e.value.param!r} for {field}={value!r}: {e.value.message}"


@pytest.mark.parametrize("body", [
    {"messages": MSG},                                         # no model
    {"model": 5, "messages": MSG},
    {"model": "M", "messages": []},
    {"model": "M", "messages": "hello"},
    {"model": "M"},
    {"model": "M", "messages": [{"role": "user"}]},
    {"model": "M", "messages": [{"role": "wizard", "content": "x"}]},
    {"model": "M", "messages": [{"content": "no role"}]},
    {"model": "M", "messages": [{"role": "user", "content": 42}]},
])
def test_bad_messages_are_400(srv, body):
    body = {**body, "model": srv.model_id} if body.get("model") == "M" else body
    assert_error_body(srv.post("/v1/chat/completions", body), 400)


@pytest.mark.parametrize("body,param", [
    ({"prompt": []}, "prompt"), ({"prompt": [[]]}, "prompt"), ({"prompt": [1, "a"]}, "prompt"),
    ({"prompt": [999999]}, "prompt"), ({"prompt": [-3]}, "prompt"), ({"prompt": "x", "logprobs": -1}, "logprobs"),
    ({"prompt": "x", "logprobs": 100}, "logprobs"), ({"prompt": "x", "echo": "yes"}, "echo"),
    ({"prompt": "x", "max_tokens": -1}, "max_tokens"),
])
def test_bad_completion_parameter_is_400(srv, body, param):
    assert_error_body(srv.post("/v1/completions", {"model": srv.model_id, **body}), 400, param)


@pytest.mark.parametrize("raw", [b"{", b"{\"model\": }", b"", b"null", b"[1,2]", b"\"str\"",
                                 b"{\"model\": \"m\", \"prompt\": \"x\"} trailing", b"{'single': 'quotes'}"])
def test_malformed_json_is_400(srv, raw):
    for path in ("/v1/chat/completions", "/v1/completions"):
        assert_error_body(srv.post(path, raw), 400)


def test_invalid_utf8_body_is_400(srv):
    body = b'{"model": "%s", "prompt": "bad \xff\xfe bytes \xc3", "max_tokens": 2}' % srv.model_id.encode()
    status, data = srv.raw(raw_request(srv, "/v1/completions", body))
    assert status == 400, data[:300]
    head, _, payload = data.partition(b"\r\n\r\n")
    assert "error" in json.loads(payload)
    msgs = b'{"model": "%s", "messages": [{"role": "user", "content": "\xed\xa0\x80"}]}' % srv.model_id.encode()
    status, data = srv.raw(raw_request(srv, "/v1/chat/completions", msgs))
    assert status == 400, data[:300]


def test_ten_megabyte_body_is_413(srv):
    pad = b"a" * (10 * 1024 * 1024)
    body = b'{"model": "%s", "prompt": "%s"}' % (srv.model_id.encode(), pad)
    status, data = srv.raw(raw_request(srv, "/v1/completions", body))
    assert status == 413, data[:300]


def test_deeply_nested_json_is_400_and_server_survives(srv):
    depth = 100_000
    for path in ("/v1/chat/completions", "/v1/completions", "/tokenize"):
        assert_error_body(srv.post(path, b"[" * depth + b"]" * depth), 400)
        nested = b'{"model": "m", "messages": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}"
        assert_error_body(srv.post(path, nested), 400)


def test_negative_and_huge_numbers(srv):
    for body in ({"max_tokens": -2147483649}, {"max_tokens": 1e308}, {"n": 10**30}, {"temperature": -1e-9},
                 {"top_k": -7}, {"seed": 1.5}, {"max_tokens": "NaN"}, {"top_p": -0.5}):
        r = srv.post("/v1/completions", {"model": srv.model_id, "prompt": "x", **body})
        assert_error_body(r, 400)
    r = srv.post("/v1/completions", b'{"model": "%s", "prompt": "x", "max_tokens": NaN}' % srv.model_id.encode())
    assert_error_body(r, 400)


def test_tokenize_endpoints_reject_garbage(srv):
    assert_error_body(srv.post("/tokenize", {"content": 5}), 400)
    assert_error_body(srv.post("/detokenize", {"tokens": ["a"]}), 400)
    assert_error_body(srv.post("/detokenize", {"tokens": [10**12]}), 400)
    assert_error_body(srv.post("/apply-template", {"messages": 3}), 400)


def test_server_serves_after_errors(srv, client):
    r = client.chat.completions.create(model=srv.model_id, messages=MSG, max_tokens=3, temperature=0)
    assert r.choices[0].finish_reason in ("length", "stop")


# ---- auth --------------------------------------------------------------------------------------

KEY = "sk-e2e-secret"


@pytest.fixture(scope="module")
def auth_srv(start_server, llama_tok_dir):
    return start_server(llama_tok_dir, api_key=KEY, name="llama_tok+api-key")


def test_api_key(auth_srv):
    ok = auth_srv.client()
    assert ok.completions.create(model=auth_srv.model_id, prompt="hi", max_tokens=2).choices
    for bad in ("wrong-key", KEY + "x", KEY[:-1]):
        with pytest.raises(openai.AuthenticationError) as e:
            auth_srv.client(api_key=bad).completions.create(model=auth_srv.model_id, prompt="hi", max_tokens=2)
        assert e.value.status_code == 401
    r = auth_srv.post("/v1/completions", {"model": auth_srv.model_id, "prompt": "hi"}, headers={})
    assert_error_body(r, 401)
    assert auth_srv.get("/v1/models", headers={}).status_code == 401
    assert auth_srv.get("/health", headers={}).status_code == 200  # health stays open
