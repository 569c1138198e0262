#ifndef EINREL_HPP
#define EINREL_HPP

// einrel for a simulation code: the one header to include (docs/library.md). Its surface, stable between
// minor versions:
//
//   einrel::Graph, Dtype, EinsumOptions, VertexId          build a graph of EinSum vertices in code
//   einrel::JoinOp, AggOp, MapOp (MapOp::abs(), ...)        the ops of an EinSum
//   einrel::read_graph_file, parse_graph, print_graph       a graph in the graph language
//   einrel::builders::*                                     ready-made graphs (matrix chains, layers)
//   einrel::gradient_graph, append_gradient                 reverse-mode gradients of a graph
//   einrel::BlockGrid, BlockShape                           the block shapes of sparse inputs
//   einrel::Program<ExecutionSpace>                         plan once on a communicator, execute many times
//   einrel::Options                                         how it plans and runs (as `einrel run` does)
//   einrel::local_piece, LocalPiece, Box                    the host code's own pieces of a tensor
//   einrel::engine::EngineResult, ExecutionReport           what an execution measured (execute, last_report)
//   einrel::partition::planner_names(), Plan                the planners Options::planner may name; a plan
//   einrel::node_local_rank                                 a rank's index on its node (device selection)
//   einrel::Error                                           what every failure throws
//
// These are the public headers, installed at the top of include/; every other header is installed under
// include/einrel/detail/ and may change between versions.
#include <einrel_BlockGrid.hpp>
#include <einrel_BlockShape.hpp>
#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Error.hpp>
#include <einrel_ExecutionReport.hpp>
#include <einrel_Gradient.hpp>
#include <einrel_Graph.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_HostEnvironment.hpp>
#include <einrel_Ops.hpp>
#include <einrel_Options.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Program.hpp>

namespace einrel {

// How a Program plans and runs its graph: the pipeline's options, the same as `einrel run`'s.
using Options = engine::Options;

}  // namespace einrel

#endif
