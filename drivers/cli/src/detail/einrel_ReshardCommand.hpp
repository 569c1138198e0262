#ifndef EINREL_RESHARDCOMMAND_HPP
#define EINREL_RESHARDCOMMAND_HPP

#include <einrel_Dtype.hpp>
#include <einrel_Reshard.hpp>
#include <einrel_ReshardRun.hpp>

#include <mpi.h>

#include <ostream>
#include <string>

namespace einrel::cli {

// Options of `einrel reshard` (docs/cli.md): the texts as given on the command line.
struct ReshardOptions {
  std::string mesh;             // "x=4,y=6"
  std::string from, to;         // "[3{x}12,2{y}12]", "[12,3{x}12] sum{y}"
  Dtype dtype = Dtype::f64;     // the element size of the byte figures
  std::string format = "text";  // text or json
  bool execute = false;         // run it under MPI on this data (measure_reshard) and check every element
  int repetitions = 5;          // --execute: runs of each method
};

// Parses the mesh and both types and synthesizes the redistribution. Errors are one line naming the option
// and the column ("--from:1:7: expected ...", "--to:1:9: global extent 24 of dimension 1 is not the
// array's 12 ..."), or synthesize_reshard's.
redistribute::mesh::ReshardPlan plan_reshard(const ReshardOptions& options);

// One line per step (op, axes over the user's mesh, dims, the type after it over the prime-factored mesh,
// its local shape, cost), then the totals beside allgather+slice's, in elements and bytes of `dtype`.
// With `run`, what --execute measured follows.
std::string reshard_text(const redistribute::mesh::ReshardPlan& plan, Dtype dtype, const ReshardRun* run = nullptr);
// {"schema_version", "mesh", "from", "to", "dtype", "steps": [{"op", "axes", "dims", "type", "local_shape", "cost"}],
// "cost", "memory_height", "source_local_size", "target_local_size", "naive_cost", "synthesis_seconds"
// [, "execute": {"ranks", "repetitions", "synthesized_seconds", "naive_seconds", "point_to_point_seconds"
// (null for a pending reduction), "mismatches"}]}.
std::string reshard_json(const redistribute::mesh::ReshardPlan& plan, Dtype dtype, const ReshardRun* run = nullptr);

// `einrel reshard`: every rank plans (deterministic, so every rank fails alike); with --execute every rank
// runs it (collective; the communicator must have the mesh's size); rank 0 prints. Throws Error, after
// printing, when an element of the target differs from what it must be.
void run_reshard(MPI_Comm comm, const ReshardOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
