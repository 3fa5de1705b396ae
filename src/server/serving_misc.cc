// The small endpoints: GET /v1/models, GET /v1/models/{id} (ids contain '/'), GET
// /v1/models/running (oxydLLM's), GET /metrics, and llama.cpp-server's POST /tokenize
// {content, add_special=false, parse_special=true, with_pieces=false} → {tokens},
// POST /detokenize {tokens} → {content}, POST /apply-template {messages, ...} → {prompt}.
// Those three take an optional "model"; without it they use the --model (or only loaded) model.
#include <algorithm>

#include "server/serving.h"

#include "server/http_framing.h"

namespace oxyd::server {

using protocol::ApiError;
using protocol::json;

namespace {

ModelLease acquire_for(ServingContext& ctx, const json& body, RequestInfo& info) {
  std::string id;
  if (body.contains("model") && !body["model"].is_null()) {
    if (!body["model"].is_string()) throw protocol::bad_request("'model' must be a string", "model");
    id = body["model"].get<std::string>();
  } else {
    id = ctx.models.default_model();
    if (id.empty()) throw protocol::bad_request("'model' is required (no default model is loaded)", "model");
  }
  info.model = id;
  if (ctx.draining) throw shutdown_error();
  ModelLease lease = ctx.models.acquire(id);
  info.model = lease.id();
  return lease;
}

}  // namespace

void handle_models(ServingContext& ctx, const httplib::Request&, httplib::Response& res, RequestInfo&) {
  send_json(res, 200, ctx.models.list());
}

void handle_model(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const std::string id = req.matches.size() > 1 ? std::string(req.matches[1]) : "";
  info.model = id;
  if (id == "running") {
    json all = ctx.models.list();
    json data = json::array();
    for (auto& m : all["data"])
      if (m.value("loaded", false)) data.push_back(m);
    send_json(res, 200, json{{"object", "list"}, {"data", std::move(data)}});
    return;
  }
  auto m = ctx.models.find(id);
  if (!m)
    throw ApiError(404, "invalid_request_error", "The model '" + http::escape_controls(id) + "' does not exist", "model", "model_not_found");
  send_json(res, 200, *m);
}

void handle_metrics(ServingContext& ctx, const httplib::Request&, httplib::Response& res, RequestInfo&) {
  std::vector<ModelGauges> gauges;
  for (auto& [id, m] : ctx.models.loaded()) {
    ModelGauges g;
    g.model = id;
    g.stats = m->stats();
    g.weights_bytes = m->weights_bytes();
    g.kv_cache_bytes = m->kv_cache_bytes();
    g.kv_cache_dtype = std::string(kv_format_name(m->kv_format()));
    gauges.push_back(std::move(g));
  }
  res.status = 200;
  res.set_content(ctx.metrics.render(gauges), "text/plain; version=0.0.4; charset=utf-8");
}

void handle_tokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  const protocol::TokenizeRequest tr = protocol::parse_tokenize_request(body);
  ModelLease lease = acquire_for(ctx, body, info);
  const auto& tok = lease->tokenizer();
  const std::vector<int32_t> ids = tok.encode(tr.content, tr.add_special, tr.parse_special);
  std::vector<std::string> pieces;
  if (tr.with_pieces)
    for (int32_t id : ids) pieces.push_back(tok.decode({id}, false));
  if (tr.vllm && !tr.with_pieces) return send_json(res, 200, protocol::tokenize_response_vllm(ids, lease->max_context_len()));
  send_json(res, 200, protocol::tokenize_response(ids, tr.with_pieces ? &pieces : nullptr));
}

void handle_detokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  const std::vector<int32_t> ids = protocol::parse_detokenize_request(body);
  ModelLease lease = acquire_for(ctx, body, info);
  const auto& tok = lease->tokenizer();
  // The model's rows: ids past the tokenizer (vocabulary padding, e.g. Qwen2's) decode to
  // nothing, as Hugging Face decodes them; only ids past every row are an error.
  const int64_t vocab = std::max<int64_t>(int64_t(tok.vocab_size()), lease->config().vocab_size);
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab)
      throw protocol::bad_request("tokens[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                                      " is outside the vocabulary [0, " + std::to_string(vocab) + ")",
                                  "tokens[" + std::to_string(i) + "]");
  send_json(res, 200, protocol::detokenize_response(tok.decode(ids, false)));
}

void handle_apply_template(ServingContext& ctx, const httplib::Request& req, httplib::Response& res,
                           RequestInfo& info) {
  json body = parse_json_body(req);
  ModelLease lease = acquire_for(ctx, body, info);
  body["model"] = lease.id();
  const protocol::ChatRequest cr = protocol::parse_chat_request(body);  // validates messages/tools
  send_json(res, 200, protocol::apply_template_response(lease->render_chat(chat_template_inputs(ctx, cr))));
}

}  // namespace oxyd::server
