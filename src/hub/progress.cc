#include "hub/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace oxyd::hub {

std::string format_bytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0) std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, kUnits[u]);
  return buf;
}

Progress::Progress(std::FILE* out, bool interactive, double plain_interval_s)
    : out_(out), interactive_(interactive), plain_interval_s_(plain_interval_s) {}

Progress Progress::for_stderr() { return Progress(stderr, isatty(fileno(stderr)) == 1); }

void Progress::begin(const std::string& name, int64_t total, int64_t already) {
  name_ = name;
  total_ = total;
  done_ = already;
  samples_.clear();
  samples_.emplace_back(Clock::now(), already);
  last_draw_ = Clock::now();
  if (!interactive_) {
    std::fprintf(out_, "downloading %s (%s%s)\n", name.c_str(), total >= 0 ? format_bytes(total).c_str() : "size unknown",
                 already > 0 ? (", resuming at " + format_bytes(already)).c_str() : "");
    std::fflush(out_);
  } else {
    draw(false);
  }
}

void Progress::update(int64_t done) {
  done_ = done;
  auto now = Clock::now();
  double since = std::chrono::duration<double>(now - last_draw_).count();
  if (since < (interactive_ ? 0.1 : plain_interval_s_)) return;
  samples_.emplace_back(now, done);
  while (samples_.size() > 2 && std::chrono::duration<double>(now - samples_.front().first).count() > 5.0)
    samples_.pop_front();
  last_draw_ = now;
  draw(false);
}

void Progress::end(bool ok) {
  samples_.emplace_back(Clock::now(), done_);
  if (interactive_) {
    draw(true);
  } else if (ok) {
    std::fprintf(out_, "done %s (%s)\n", name_.c_str(), format_bytes(done_).c_str());
    std::fflush(out_);
  }
  bar_visible_ = false;
}

void Progress::note(const std::string& line) {
  if (interactive_ && bar_visible_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  if (interactive_ && bar_visible_) draw(false);
  std::fflush(out_);
}

void Progress::draw(bool final_line) {
  double rate = 0;
  if (samples_.size() >= 2) {
    double dt = std::chrono::duration<double>(samples_.back().first - samples_.front().first).count();
    if (dt > 0) rate = double(samples_.back().second - samples_.front().second) / dt;
  }
  std::string eta = "--:--";
  if (rate > 0 && total_ > done_) {
    long s = long((total_ - done_) / rate);
    char b[32];
    if (s >= 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(b, sizeof b, "%02ld:%02ld", s / 60, s % 60);
    eta = b;
  }
  double frac = total_ > 0 ? std::min(1.0, double(done_) / double(total_)) : 0.0;
  std::string line;
  if (interactive_) {
    const int width = 24;
    int fill = int(frac * width);
    line = "\r\033[K" + name_ + " [" + std::string(size_t(fill), '#') + std::string(size_t(width - fill), '.') + "] ";
  } else {
    line = "  " + name_ + ": ";
  }
  char tail[128];
  std::snprintf(tail, sizeof tail, "%3.0f%% %s / %s  %s/s  ETA %s", frac * 100, format_bytes(done_).c_str(),
                format_bytes(total_).c_str(), format_bytes(int64_t(rate)).c_str(), eta.c_str());
  line += tail;
  if (!interactive_ || final_line) line += "\n";
  std::fputs(line.c_str(), out_);
  std::fflush(out_);
  bar_visible_ = interactive_ && !final_line;
}

}  // namespace oxyd::hub
