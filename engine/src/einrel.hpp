#ifndef EINREL_HPP
#define EINREL_HPP

// einrel for a simulation code: the one header to include (docs/library.md).
//
//   einrel::Graph, einrel::Dtype, einrel::EinsumOptions   build a graph of EinSum vertices in code
//   einrel::read_graph_file, einrel::parse_graph            or read one in the graph language
//   einrel::builders::*                                      ready-made graphs (matrix chains, layers)
//   einrel::Program<ExecutionSpace>                           plan once on a communicator, execute many times
//   einrel::Options                                           how it plans and runs (as `einrel run` does)
//   einrel::local_piece, einrel::LocalPiece, einrel::Box      the host code's own pieces of a tensor
//   einrel::partition::planner_names()                       the planners Options::planner may name
//   einrel::node_local_rank                                  a rank's index on its node (device selection)
//   einrel::Error                                            what every failure throws
//
// Everything else is installed under einrel/detail/ and may change between versions.
#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_Error.hpp>
#include <einrel_Graph.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_HostEnvironment.hpp>
#include <einrel_Options.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Program.hpp>

namespace einrel {

// How a Program plans and runs its graph: the pipeline's options, the same as `einrel run`'s.
using Options = engine::Options;
using ProgramOptions = engine::Options;  // its name before the pipeline's options were one

}  // namespace einrel

#endif
