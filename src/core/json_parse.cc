#include "core/json_parse.h"

#include "core/error.h"
#include "core/file_util.h"

namespace oxyd {

using nlohmann::json;

std::string json_depth_message(const std::string& source) {
  return source + ": arrays/objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
}

json parse_json_bounded(std::string_view text, const std::string& source, const json::parser_callback_t& cb) {
  const json::parser_callback_t guard = [&](int depth, json::parse_event_t ev, json& parsed) {
    if ((ev == json::parse_event_t::object_start || ev == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth)
      throw Error(ErrorCode::INVALID_ARGUMENT, json_depth_message(source));
    return cb ? cb(depth, ev, parsed) : true;
  };
  try {
    return json::parse(text.begin(), text.end(), guard);
  } catch (const json::exception& e) {
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    if (const size_t close = what.find("] "); what.rfind("[json.exception.", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    if (what.size() > kMaxJsonErrorBytes) what = what.substr(0, kMaxJsonErrorBytes) + "...";
    throw Error(ErrorCode::INVALID_ARGUMENT, source + ": not valid JSON: " + what);
  }
}

json read_json_file(const std::string& path) { return parse_json_bounded(read_text_file(path), path); }

}  // namespace oxyd
