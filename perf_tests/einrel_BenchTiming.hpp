#ifndef EINREL_BENCHTIMING_HPP
#define EINREL_BENCHTIMING_HPP

// Timing shared by the benchmarks: the machine is noisy, so every figure is a median.

#include <algorithm>
#include <chrono>
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

}  // namespace einrel::bench

#endif
