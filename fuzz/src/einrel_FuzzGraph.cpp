// Fuzz target: the `.ein` parser and its validation, the printer's round trip, and planning of what parses
// (what `einrel plan` does with a graph file). An einrel::Error is the expected answer to a bad graph;
// anything else (a crash, a sanitizer report, another exception, a round trip that changes the graph) is a
// finding.
#include <einrel_Error.hpp>
#include <einrel_FuzzInput.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_PlanChoice.hpp>

#include <cstdlib>
#include <iostream>

namespace {

// Planning is linear in the graph but the dry run walks every block: small graphs and block counts keep
// each input within milliseconds.
constexpr std::size_t max_planned_vertices = 32;
constexpr int ranks = 4;

void check_round_trip(const einrel::Graph& graph) {
  const std::string printed = einrel::print_graph(graph);
  const std::string again = einrel::print_graph(einrel::parse_graph(printed, "printed.ein"));
  if (again != printed) {
    std::cerr << "print_graph/parse_graph round trip differs:\n" << printed << "---\n" << again;
    std::abort();
  }
}

void plan(const einrel::Graph& graph) {
  einrel::engine::Options options;
  options.procs = ranks;
  (void)einrel::engine::choose_plan(graph, ranks, options);  // schedules and dry-runs every candidate
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const einrel::Graph graph = einrel::parse_graph(einrel::fuzz::as_text(data, size), "fuzz.ein");
    check_round_trip(graph);
    if (graph.size() <= max_planned_vertices) plan(graph);
  } catch (const einrel::Error&) {
  }
  return 0;
}
