#ifndef EINREL_PIPELINEOPTIONS_HPP
#define EINREL_PIPELINEOPTIONS_HPP

#include <einrel_FailureInjection.hpp>
#include <einrel_Options.hpp>

#include <optional>
#include <utility>

namespace einrel::engine {

// The options the pipeline runs with (Session, execute): a user's Options and the test-only failure
// injection, which the public Options does not carry (einrel run and train set it from
// EINREL_TEST_INJECT_FAILURE, docs/engine.md).
struct PipelineOptions : Options {
  PipelineOptions() = default;
  // Explicit: a PipelineOptions passed where Options are taken and converted back would lose `failure`.
  explicit PipelineOptions(Options options) : Options(std::move(options)) {}
  std::optional<FailureInjection> failure;
};

}  // namespace einrel::engine

#endif
