#ifndef EINREL_MATRIXCHAINCOMMAND_HPP
#define EINREL_MATRIXCHAINCOMMAND_HPP

#include <einrel_Dtype.hpp>
#include <einrel_Graph.hpp>
#include <einrel_RunCommand.hpp>

#include <mpi.h>

#include <ostream>

namespace einrel::cli {

// Options of `einrel matrix-chain` (docs/cli.md): the chain (A×B) + (C×(D×E)) at scale S, square or
// skewed (eindecomp.txt §9, experiment 1), run like `einrel run --random SEED` on it.
struct MatrixChainOptions {
  Extent scale = 0;
  bool skewed = false;
  Dtype dtype = Dtype::f64;
  RunOptions run;  // graph names the chain; random_seed defaults to 1; no input or output files
};

// The floating-point operations of one evaluation of `graph`: per EinSum vertex, the product of all its
// label extents (one ⊗ per join tuple element) plus the ⊕ that combine them (the same count less the
// output's elements), so 2mnk − mn for an m×k by k×n product; an elementwise vertex counts its elements.
double graph_flops(const Graph& graph);

// Collective over comm: builds the chain, runs it on the engine (every rank generating only its own
// blocks), prints the run summary and then "matrix-chain: ... GFLOP/s ..." on rank 0.
void run_matrix_chain(MPI_Comm comm, const MatrixChainOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
