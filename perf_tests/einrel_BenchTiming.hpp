#ifndef EINREL_BENCHTIMING_HPP
#define EINREL_BENCHTIMING_HPP

// Timing shared by the benchmarks: the machine is noisy, so every figure is a median.

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace einrel::bench {

// Median wall time of `reps` calls of f (the caller warms up first where that matters).
template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Median wall times of `reps` calls of f and of g, called alternately after one warm-up call of each, so
// that a slow spell of the machine falls on both sides.
template <class F, class G>
std::pair<double, double> alternating_median_seconds(int reps, F&& f, G&& g) {
  f();
  g();
  std::vector<double> tf, tg;
  for (int r = 0; r < reps; ++r) {
    tf.push_back(median_seconds(1, f));
    tg.push_back(median_seconds(1, g));
  }
  std::sort(tf.begin(), tf.end());
  std::sort(tg.begin(), tg.end());
  return {tf[tf.size() / 2], tg[tg.size() / 2]};
}

}  // namespace einrel::bench

#endif
