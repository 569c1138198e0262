#include <einrel_Error.hpp>
#include <einrel_FailureInjection.hpp>

#include <array>

namespace einrel::engine {
namespace {

constexpr std::array<Phase, 6> phases = {Phase::read,    Phase::redistribute, Phase::collective,
                                         Phase::kernels, Phase::reduce,       Phase::write};

}  // namespace

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::read:
      return "read";
    case Phase::redistribute:
      return "redistribute";
    case Phase::collective:
      return "collective";
    case Phase::kernels:
      return "kernels";
    case Phase::reduce:
      return "reduce";
    case Phase::write:
      return "write";
  }
  return "unknown";
}

FailureInjection parse_failure_injection(const std::string& text) {
  const auto first = text.find(':'), last = text.rfind(':');
  auto malformed = [&] {
    return Error("failure injection '" + text +
                 "' is not RANK:VERTEX:PHASE with RANK a rank or 'all' and PHASE one of read, redistribute, "
                 "collective, kernels, reduce, write");
  };
  if (first == std::string::npos || first == last || first == 0 || last == first + 1) throw malformed();
  FailureInjection f;
  const std::string rank = text.substr(0, first);
  if (rank == "all") {
    f.rank = FailureInjection::every_rank;
  } else {
    std::size_t used = 0;
    try {
      f.rank = std::stoi(rank, &used);
    } catch (const std::exception&) {
      throw malformed();
    }
    if (used != rank.size() || f.rank < 0) throw malformed();
  }
  f.vertex = text.substr(first + 1, last - first - 1);
  const std::string phase = text.substr(last + 1);
  for (Phase p : phases)
    if (phase == phase_name(p)) {
      f.phase = p;
      return f;
    }
  throw malformed();
}

void inject(const std::optional<FailureInjection>& failure, int rank, const std::string& vertex, Phase phase) {
  if (failure && (failure->rank == rank || failure->rank == FailureInjection::every_rank) &&
      failure->vertex == vertex && failure->phase == phase)
    throw Error("injected failure on rank " + std::to_string(rank) + " at " + phase_name(phase) + " of '" + vertex +
                "' (EINREL_TEST_INJECT_FAILURE)");
}

}  // namespace einrel::engine
