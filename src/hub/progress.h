// Download progress on stderr: a live one-line bar (bytes, rate, ETA) redrawn at most 10×/s when
// stderr is a terminal; otherwise a plain line every few seconds and at the end, so logs stay
// readable. Rate is a moving average over the last few seconds of the current file.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <utility>

namespace oxyd::hub {

class Progress {
 public:
  /// interactive: redraw a bar in place; else print a line every plain_interval_s seconds.
  Progress(std::FILE* out, bool interactive, double plain_interval_s = 5.0);
  /// Chooses interactive mode when `out` is a terminal.
  static Progress for_stderr();

  void begin(const std::string& name, int64_t total_bytes, int64_t already_bytes);
  void update(int64_t done_bytes);
  void end(bool ok);
  void note(const std::string& line);  // a message that does not break the bar

 private:
  void draw(bool final_line);
  using Clock = std::chrono::steady_clock;
  std::FILE* out_;
  bool interactive_;
  double plain_interval_s_;
  std::string name_;
  int64_t total_ = 0, done_ = 0;
  Clock::time_point last_draw_{};
  std::deque<std::pair<Clock::time_point, int64_t>> samples_;
  bool bar_visible_ = false;
};

/// "1.50 GiB", "512.0 KiB", "17 B" (binary units, labelled as such).
std::string format_bytes(int64_t bytes);

}  // namespace oxyd::hub
