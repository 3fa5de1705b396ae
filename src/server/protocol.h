// The OpenAI wire format, with no engine or model knowledge: parse + validate request bodies into
// plain structs (every bad field → ApiError 400 naming the field and what is allowed), and build
// response bodies and SSE chunks exactly as OpenAI shapes them. llama.cpp-server shapes for
// /tokenize, /detokenize and /apply-template.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "grammar/grammar.h"
#include "sample/sampler.h"

namespace oxyd::server::protocol {

using json = nlohmann::ordered_json;

/// An error the client sees: HTTP status + OpenAI error body {"error":{message,type,param,code}}.
struct ApiError : std::runtime_error {
  ApiError(int status, std::string type, const std::string& message, std::string param = "", std::string code = "")
      : std::runtime_error(message), status(status), message(message), type(std::move(type)), param(std::move(param)),
        code(std::move(code)) {}
  int status;
  std::string message;  // whole, even past a NUL from the request (what() stops at the first one)
  std::string type;   // invalid_request_error | authentication_error | not_found_error | rate_limit_error | server_error ...
  std::string param;  // the offending field, "" → null
  std::string code;   // e.g. "invalid_api_key", "model_not_found", "context_length_exceeded"; "" → null
};
ApiError bad_request(const std::string& message, const std::string& param = "", const std::string& code = "");
/// The one place an oxyd::Error becomes an HTTP status: INVALID_ARGUMENT 400, NOT_FOUND 404,
/// UNSUPPORTED 400, OUT_OF_MEMORY 507→ reported as 500 server_error, IO/INTERNAL 500.
ApiError from_error(const Error& e);
std::string error_body(const ApiError& e);

/// Sampling and stop fields shared by chat and completions.
struct CommonParams {
  std::string model;
  sample::SamplingParams sampling;       // temperature default 1.0 as OpenAI; seed; logit_bias ids
  std::optional<int32_t> max_tokens;     // max_completion_tokens beats max_tokens
  int32_t n = 1;                         // 1..128
  std::vector<std::string> stop;         // string or array of up to 16 non-empty strings
  std::vector<int32_t> stop_token_ids;   // extension (vLLM)
  bool ignore_eos = false;               // extension (vLLM)
  bool skip_special_tokens = true;       // extension (vLLM)
  int32_t min_tokens = 0;                // extension (vLLM): no EOS/stop before this many tokens
  bool include_stop_str_in_output = false;  // extension (vLLM)
  /// Top-level fields this server does not read (accepted, as OpenAI clients send new ones; the
  /// server lists them at debug log level).
  std::vector<std::string> unknown_fields;
  bool stream = false;
  bool include_usage = false;            // stream_options.include_usage (only with stream)
  std::optional<double> timeout_s;       // extension: per-request timeout
  /// Structured output (response_format json_object / json_schema, vLLM guided_* and
  /// structured_outputs); grammar_param names the field it came from (for a 400).
  grammar::GrammarSpec grammar;
  std::string grammar_param;
};

struct ChatRequest {
  CommonParams common;
  /// Validated, non-empty. Normalized for a chat template (protocol_chat.cc): content always a
  /// string (text parts joined with "\n", as vLLM and llama.cpp), "developer" → "system",
  /// tool_calls[].function.arguments parsed to an object when it is a JSON object string.
  json messages;
  json tools;                            // null or validated array of {"type":"function","function":{name,...}}
  json tool_choice;                      // null | "none" | "auto" | "required" | {"type":"function","function":{"name"}}
  bool parallel_tool_calls = true;       // OpenAI's default
  json chat_template_kwargs = json::object();  // includes enable_thinking / reasoning_effort when given top-level
  bool add_generation_prompt = true;
  bool logprobs = false;
  int32_t top_logprobs = 0;              // 0..20, needs logprobs
};

struct CompletionRequest {
  CommonParams common;
  /// One entry per prompt: text, or token ids when the prompt was given as ids.
  struct Prompt { std::string text; std::vector<int32_t> ids; bool is_ids = false; };
  std::vector<Prompt> prompts;           // string | [string] | [int] | [[int]]; common.max_tokens 16 when absent
  bool echo = false;
  std::optional<int32_t> logprobs;       // 0..5 (OpenAI); up to 20 accepted
};

/// Throw ApiError(400) on anything malformed; unknown fields are ignored as OpenAI does (and
/// named in common.unknown_fields).
ChatRequest parse_chat_request(const json& body);
CompletionRequest parse_completion_request(const json& body);
/// Parses the body text; invalid JSON / invalid UTF-8 / nesting deeper than 64 → ApiError 400.
json parse_body(const std::string& body);

// ---- responses --------------------------------------------------------------------------------

struct TokenLogprob {
  std::string token;                          // the token's text (may be a partial UTF-8 piece)
  std::vector<uint8_t> bytes;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;  // text, logprob (with bytes computed from text)
};

struct Usage {
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  /// completion_tokens_details.reasoning_tokens; -1: not reported (a model without reasoning).
  int64_t reasoning_tokens = -1;
};

struct ChatChoice {
  int32_t index = 0;
  std::string content;                     // null in the message when empty and there are tool calls
  std::string finish_reason;               // "stop" | "length" | "tool_calls" | ...
  std::optional<std::vector<TokenLogprob>> logprobs;
  std::string reasoning;                   // message.reasoning_content (and its alias reasoning) when not empty
  json tool_calls;                         // null or [{"id","type":"function","function":{"name","arguments"}}]
};

struct CompletionChoice {
  int32_t index = 0;
  std::string text;
  std::string finish_reason;
  /// OpenAI legacy logprobs: tokens, token_logprobs (null for the first echoed prompt token),
  /// top_logprobs (list of {text: logprob}), text_offset.
  std::optional<std::vector<TokenLogprob>> logprobs;
  int32_t first_logprob_null = 0;          // leading entries whose token_logprob is null (echoed BOS)
  /// text_offset of the first token (characters, Python len): 0 for the first chunk of a response,
  /// the number of characters already sent for later streamed chunks.
  int64_t text_offset_start = 0;
};

json chat_completion(const std::string& id, int64_t created, const std::string& model,
                     const std::vector<ChatChoice>& choices, const Usage& usage);
json text_completion(const std::string& id, int64_t created, const std::string& model,
                     const std::vector<CompletionChoice>& choices, const Usage& usage);

/// One streamed chat.completion.chunk: role delta ("role":"assistant","content":""), content,
/// reasoning or tool-call delta, or the final empty delta with finish_reason. usage is null in every chunk when the
/// client asked for include_usage (OpenAI sends "usage":null), absent otherwise.
struct ChatDelta {
  int32_t index = 0;
  bool role = false;
  std::optional<std::string> content;
  std::optional<std::string> reasoning;    // delta.reasoning_content (and delta.reasoning)
  json tool_calls;                         // null or [{"index", "id"?, "type"?, "function":{"name"?, "arguments"}}]
  std::optional<std::string> finish_reason;
  std::optional<std::vector<TokenLogprob>> logprobs;
};
json chat_chunk(const std::string& id, int64_t created, const std::string& model, const ChatDelta& d, bool include_usage);
json chat_usage_chunk(const std::string& id, int64_t created, const std::string& model, const Usage& usage);
json completion_chunk(const std::string& id, int64_t created, const std::string& model, const CompletionChoice& c,
                      bool include_usage);
json completion_usage_chunk(const std::string& id, int64_t created, const std::string& model, const Usage& usage);
// ---- llama.cpp-server extras: /tokenize, /detokenize, /apply-template ---------------------------

struct TokenizeRequest {
  std::string content;         // llama.cpp's "content", or vLLM's "prompt"
  bool add_special = false;    // llama.cpp's defaults; vLLM's add_special_tokens (true) with "prompt"
  bool parse_special = true;
  bool with_pieces = false;
  bool vllm = false;           // the body used vLLM's "prompt": answer count + max_model_len too
};
/// Needs exactly one of "content" (llama.cpp) or "prompt" (vLLM): neither or both → 400.
TokenizeRequest parse_tokenize_request(const json& body);
/// {"tokens":[ids]}, or with pieces {"tokens":[{"id":i,"piece":p}]} where p is the piece's text
/// when it is valid UTF-8 and its byte values otherwise (llama.cpp). pieces->size() == ids.size().
json tokenize_response(const std::vector<int32_t>& ids, const std::vector<std::string>* pieces);
/// vLLM's shape: {"count": n, "max_model_len": ctx, "tokens": [ids], "token_strs": null}.
json tokenize_response_vllm(const std::vector<int32_t>& ids, int32_t max_model_len);
/// {"tokens":[ids]} → the ids (each >= 0; absent → none, as llama.cpp).
std::vector<int32_t> parse_detokenize_request(const json& body);
json detokenize_response(const std::string& content);        // {"content": ...}
/// /apply-template takes a chat body (parse_chat_request) and answers {"prompt": ...}.
json apply_template_response(const std::string& prompt);

// ---- /v1/embeddings (OpenAI) and /v1/rerank (Cohere / Jina shape) -------------------------------

struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> texts;           // input as text (a string or a list of strings)
  std::vector<std::vector<int32_t>> ids;    // input as token ids (a list of ids or of id lists)
  bool is_ids = false;
  bool base64 = false;                      // encoding_format "base64" (default "float")
  std::optional<int64_t> dimensions;        // Matryoshka: the first d values, L2-renormalised
  bool truncate = false;                    // oxydLLM: cut inputs over the model's maximum instead of 400
  std::string prompt_name;                  // oxydLLM: a sentence-transformers prompt ("query") to prepend
  std::optional<double> timeout_s;          // extension "timeout": per-request deadline (≤ --request-timeout)
};
/// 400 naming the field for anything malformed: input missing, empty, of another type, a negative id.
EmbeddingRequest parse_embedding_request(const json& body);
/// rows: [n, dim] row-major. {"object":"list","data":[{"object":"embedding","index":i,"embedding":
/// [floats] or base64 of the little-endian float32 bytes}],"model","usage":{prompt_tokens,total_tokens}}.
json embedding_response(const std::string& model, const std::vector<float>& rows, int64_t dim, bool base64,
                        int64_t prompt_tokens);

struct RerankRequest {
  std::string model;
  std::string query;
  std::vector<std::string> documents;  // strings, or objects {"text": ...} (Cohere)
  std::optional<int64_t> top_n;
  bool return_documents = false;
  bool truncate = false;               // oxydLLM, as EmbeddingRequest
  std::optional<double> timeout_s;     // as EmbeddingRequest
};
RerankRequest parse_rerank_request(const json& body);
/// {"id","model","results":[{"index","relevance_score"[,"document":{"text"}]}] (best first, top_n of
/// them),"usage":{"prompt_tokens","total_tokens"}} — the shape llama.cpp's and vLLM's servers answer.
json rerank_response(const std::string& model, const RerankRequest& r, const std::vector<float>& scores,
                     int64_t prompt_tokens);

/// "data: <json>\n\n"; sse_done() = "data: [DONE]\n\n".
std::string sse(const json& j);
std::string sse_done();

/// Random ids: "chatcmpl-<24 alnum>", "cmpl-<24 alnum>".
std::string new_id(const std::string& prefix);

}  // namespace oxyd::server::protocol
