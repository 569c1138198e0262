#ifndef EINREL_GRADCOMMAND_HPP
#define EINREL_GRADCOMMAND_HPP

#include <mpi.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace einrel::cli {

// Options of `einrel grad` (docs/cli.md).
struct GradOptions {
  std::string graph;
  std::string loss;                   // a 0-d vertex
  std::vector<std::string> wrt;       // input names
  std::optional<std::string> output;  // a .ein file; stdout on rank 0 without it
};

// Writes the gradient graph of `options.graph` (einrel::gradient_graph) in the graph language: to
// `output`, all or nothing, or to `out` on rank 0. Every rank builds it (deterministic, so every rank
// fails alike); throws Error naming the problem.
void grad_graph(MPI_Comm comm, const GradOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
