// The small endpoints: GET /v1/models, GET /v1/models/{id} (ids contain '/'), GET
// /v1/models/running (oxydLLM's), GET /metrics, and llama.cpp-server's POST /tokenize
// {content, add_special=false, parse_special=true, with_pieces=false} → {tokens},
// POST /detokenize {tokens} → {content}, POST /apply-template {messages, ...} → {prompt}.
// Those three take an optional "model"; without it they use the --model (or only loaded) model.
#include "server/serving.h"

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

bool bool_field(const json& body, const char* name, bool dflt) {
  if (!body.contains(name) || body[name].is_null()) return dflt;
  if (!body[name].is_boolean()) throw protocol::bad_request(std::string("'") + name + "' must be a boolean", name);
  return body[name].get<bool>();
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
    throw ApiError(404, "invalid_request_error", "The model '" + id + "' does not exist", "model", "model_not_found");
  send_json(res, 200, *m);
}

void handle_metrics(ServingContext& ctx, const httplib::Request&, httplib::Response& res, RequestInfo&) {
  std::vector<ModelGauges> gauges;
  for (auto& [id, m] : ctx.models.loaded()) {
    ModelGauges g;
    g.model = id;
    g.stats = m->engine().stats();
    g.weights_bytes = m->weights_bytes();
    g.kv_cache_bytes = m->kv_cache_bytes();
    gauges.push_back(std::move(g));
  }
  res.status = 200;
  res.set_content(ctx.metrics.render(gauges), "text/plain; version=0.0.4; charset=utf-8");
}

void handle_tokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  if (!body.contains("content") || !body["content"].is_string())
    throw protocol::bad_request("'content' is required and must be a string", "content");
  const bool add_special = bool_field(body, "add_special", false);
  const bool parse_special = bool_field(body, "parse_special", true);
  const bool with_pieces = bool_field(body, "with_pieces", false);
  ModelLease lease = acquire_for(ctx, body, info);
  const auto& tok = lease->tokenizer();
  const std::vector<int32_t> ids = tok.encode(body["content"].get<std::string>(), add_special, parse_special);
  json tokens = json::array();
  for (int32_t id : ids) {
    if (with_pieces) tokens.push_back(json{{"id", id}, {"piece", tok.decode({id}, false)}});
    else tokens.push_back(id);
  }
  send_json(res, 200, json{{"tokens", std::move(tokens)}});
}

void handle_detokenize(ServingContext& ctx, const httplib::Request& req, httplib::Response& res, RequestInfo& info) {
  const json body = parse_json_body(req);
  if (!body.contains("tokens") || !body["tokens"].is_array())
    throw protocol::bad_request("'tokens' is required and must be an array of token ids", "tokens");
  ModelLease lease = acquire_for(ctx, body, info);
  const auto& tok = lease->tokenizer();
  const int64_t vocab = int64_t(tok.vocab_size());
  std::vector<int32_t> ids;
  for (const auto& t : body["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      throw protocol::bad_request("'tokens' must hold token ids in [0, " + std::to_string(vocab) + "), found " +
                                      t.dump(), "tokens");
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  send_json(res, 200, json{{"content", tok.decode(ids, false)}});
}

void handle_apply_template(ServingContext& ctx, const httplib::Request& req, httplib::Response& res,
                           RequestInfo& info) {
  json body = parse_json_body(req);
  ModelLease lease = acquire_for(ctx, body, info);
  body["model"] = lease.id();
  const protocol::ChatRequest cr = protocol::parse_chat_request(body);  // validates messages/tools
  chat::ChatTemplateInputs in;
  in.messages = cr.messages;
  if (!cr.tools.is_null()) in.tools = cr.tools;
  in.add_generation_prompt = cr.add_generation_prompt;
  in.kwargs = cr.chat_template_kwargs;
  send_json(res, 200, json{{"prompt", lease->render_chat(std::move(in))}});
}

}  // namespace oxyd::server
