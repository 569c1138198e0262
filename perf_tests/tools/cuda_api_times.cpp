// Host time spent in each CUDA runtime and driver API call of a program, for finding where einrel's host
// work per call goes on a GPU machine without Nsight Systems (the lent machines have none). Loaded by the
// CUDA driver through CUDA_INJECTION64_PATH, it subscribes to CUPTI's API callbacks, and at exit prints
//   - per API function: calls, total, mean and largest host time, outermost calls only (a runtime call's
//     own driver calls are counted under it);
//   - the last EINREL_API_TIMELINE (default 120) outermost calls as a timeline: start relative to the
//     first shown, duration, and the gap since the previous call ended (host work outside CUDA).
// Build: nvcc -shared -Xcompiler -fPIC -o libcuda_api_times.so cuda_api_times.cpp -lcupti
// Run:   CUDA_INJECTION64_PATH=$PWD/libcuda_api_times.so PROGRAM ...   (report on stderr)
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Totals {
  long long calls = 0;
  double total = 0, largest = 0;  // microseconds
};
struct Entry {
  const char* name;
  Clock::time_point start, end;
};

std::mutex mutex;
std::map<std::string, Totals> totals;
std::vector<Entry> ring;
std::size_t next = 0, timeline = 120;
thread_local int depth = 0;
thread_local Clock::time_point entered;

void CUPTIAPI on_api(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (depth++ == 0) entered = Clock::now();
    return;
  }
  if (--depth != 0) return;
  const Clock::time_point now = Clock::now();
  const double us = std::chrono::duration<double, std::micro>(now - entered).count();
  const std::string name = std::string(domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "rt " : "drv ") + info->functionName;
  const std::lock_guard<std::mutex> lock(mutex);
  Totals& t = totals[name];
  ++t.calls;
  t.total += us;
  t.largest = std::max(t.largest, us);
  if (ring.size() < timeline)
    ring.push_back({info->functionName, entered, now});
  else
    ring[next] = {info->functionName, entered, now};
  next = (next + 1) % timeline;
}

void report() {
  const std::lock_guard<std::mutex> lock(mutex);
  std::vector<std::pair<std::string, Totals>> rows(totals.begin(), totals.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
  std::fprintf(stderr, "# CUDA API host time (outermost calls): calls, total us, mean us, largest us, function\n");
  for (const auto& [name, t] : rows)
    std::fprintf(stderr, "%10lld %12.1f %9.2f %10.1f  %s\n", t.calls, t.total, t.total / t.calls, t.largest,
                 name.c_str());
  std::fprintf(stderr, "# the last %zu calls: start us, duration us, host gap before us, function\n", ring.size());
  const std::size_t first = ring.size() < timeline ? 0 : next;
  const Clock::time_point origin = ring.empty() ? Clock::now() : ring[first].start;
  Clock::time_point previous = origin;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    const Entry& e = ring[(first + i) % ring.size()];
    auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
    std::fprintf(stderr, "%10.1f %9.2f %9.2f  %s\n", us(e.start - origin), us(e.end - e.start), us(e.start - previous),
                 e.name);
    previous = e.end;
  }
}

}  // namespace

extern "C" int InitializeInjection() {
  if (const char* n = std::getenv("EINREL_API_TIMELINE")) timeline = std::max(1, std::atoi(n));
  CUpti_SubscriberHandle subscriber;
  if (cuptiSubscribe(&subscriber, on_api, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cuda_api_times: cuptiSubscribe failed\n");
    return 0;
  }
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  std::atexit(report);
  return 1;
}
