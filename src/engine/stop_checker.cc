// StopChecker (see stop_checker.h). No stop string can start before emitted_: such a start would
// have been a held-back prefix or an earlier full match, so every search begins at emitted_.
#include "engine/stop_checker.h"

#include <algorithm>

namespace oxyd::engine {

StopChecker::StopChecker(std::vector<std::string> stop_strings, bool include_stop)
    : stops_(std::move(stop_strings)), include_stop_(include_stop) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopChecker::append(std::string_view delta) {
  if (stopped_) return {};
  text_.append(delta);
  // The stop that completes first (as if bytes arrived one by one); on equal ends the longer one,
  // whose start is earlier. So the cut does not depend on how the text was chunked.
  size_t first = std::string::npos, first_end = std::string::npos;
  for (const auto& s : stops_) {
    const size_t pos = text_.find(s, emitted_);
    if (pos == std::string::npos) continue;
    if (pos + s.size() < first_end || (pos + s.size() == first_end && pos < first)) {
      first = pos;
      first_end = pos + s.size();
      matched_ = s;
    }
  }
  if (first != std::string::npos) {
    stopped_ = true;
    const size_t cut = include_stop_ ? first_end : first;
    std::string out = text_.substr(emitted_, cut - emitted_);
    emitted_ = cut;
    return out;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  const size_t avail = text_.size() - emitted_;
  for (const auto& s : stops_)
    for (size_t k = std::min(s.size() - 1, avail); k > hold; --k)
      if (std::string_view(text_).substr(text_.size() - k) == std::string_view(s).substr(0, k)) {
        hold = k;
        break;
      }
  std::string out = text_.substr(emitted_, avail - hold);
  emitted_ += out.size();
  return out;
}

std::string StopChecker::append_unchecked(std::string_view delta) {
  if (stopped_) return {};
  std::string out = text_.substr(emitted_);  // a tail held back by an earlier append()
  out.append(delta);
  text_.append(delta);
  emitted_ = text_.size();
  return out;
}

std::string StopChecker::flush() {
  if (stopped_) return {};
  std::string out = text_.substr(emitted_);
  emitted_ = text_.size();
  return out;
}

}  // namespace oxyd::engine
