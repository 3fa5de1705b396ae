#include "hub/retry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

namespace oxyd::hub {

double RetryPolicy::delay_s(int failures, const std::string& retry_after) const {
  double d = base_delay_s * std::pow(2.0, std::max(0, failures - 1));
  if (!retry_after.empty()) {
    char* end = nullptr;
    double ra = std::strtod(retry_after.c_str(), &end);
    if (end && *end == '\0' && ra >= 0) d = ra;
  }
  return std::min(d, max_delay_s);
}

void sleep_seconds(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace oxyd::hub
