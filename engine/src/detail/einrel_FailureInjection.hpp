#ifndef EINREL_FAILUREINJECTION_HPP
#define EINREL_FAILUREINJECTION_HPP

#include <optional>
#include <string>

namespace einrel::engine {

// The phases of a run where a failure can be injected: reading an input, a vertex's operand exchange, the
// last step of an operand's synthesized collective sequence (inside execute_reshard, after the earlier
// steps' MPI calls), its kernels, its reduction of partials, writing an output.
enum class Phase { read, redistribute, collective, kernels, reduce, write };
const char* phase_name(Phase phase);

// Test-only (docs/engine.md): rank `rank` throws Error when it reaches `phase` of the vertex named `vertex`
// (an input for read, an output for write), so that every phase's agreement on failure can be tested.
struct FailureInjection {
  static constexpr int every_rank = -1;  // RANK written `all`: every rank fails at once
  int rank = 0;
  std::string vertex;
  Phase phase = Phase::kernels;
};

// Parses "RANK:VERTEX:PHASE" (the EINREL_TEST_INJECT_FAILURE variable; RANK may be `all`); throws Error
// when malformed.
FailureInjection parse_failure_injection(const std::string& text);

// Throws Error("injected failure ...") when `failure` names this rank, vertex and phase.
void inject(const std::optional<FailureInjection>& failure, int rank, const std::string& vertex, Phase phase);

}  // namespace einrel::engine

#endif
