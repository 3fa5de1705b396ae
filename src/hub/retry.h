// Retry with exponential backoff for transient hub failures (connection drops, timeouts, 429,
// 5xx). Attempts that made progress (bytes arrived) reset the count, so a flaky but moving link
// is not abandoned; a dead one fails after max_attempts.
#pragma once

#include <string>

namespace oxyd::hub {

struct RetryPolicy {
  int max_attempts = 6;         // consecutive failures without progress before giving up
  double base_delay_s = 1.0;    // delay after the first failure; doubles each time
  double max_delay_s = 30.0;

  /// Delay before retry number `failures` (1-based), honouring a Retry-After value if given.
  double delay_s(int failures, const std::string& retry_after = "") const;
};

/// Sleeps for `seconds` (fractions allowed).
void sleep_seconds(double seconds);

}  // namespace oxyd::hub
