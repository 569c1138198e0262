#ifndef EINREL_ITERATECOMMAND_HPP
#define EINREL_ITERATECOMMAND_HPP

#include <einrel_RunCommand.hpp>

#include <mpi.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace einrel::cli {

// Options of `einrel iterate` (docs/cli.md): the graph, --input/--random, --output, --report and the planning
// options in `run`; then the iteration's own.
struct IterateOptions {
  RunOptions run;
  int steps = 0;                                           // the step to stop after, counted from the start
  std::vector<std::pair<std::string, std::string>> carry;  // (input P, vertex P_next): P_next becomes P
  std::optional<std::string> until;                        // a 0-d output: stop once |value| < tolerance
  double tolerance = 0;
  std::optional<std::string> checkpoint;  // HDF5 file rewritten every checkpoint_every steps
  int checkpoint_every = 0;
  std::optional<std::string> restart;  // a checkpoint to resume from
};

// Collective: runs a step graph again and again (docs/cli.md "iterate"): planned once with the carried pairs
// (each P lives where P_next is made, so the values stay distributed between steps), executed until `steps`
// steps are done or the 0-d output `until` falls below `tolerance` in absolute value. Where a carried P is
// block-sparse, its shape is measured after every step (engine::measure_shape on the tiles of its first
// shape, tiles below --screen dropped) and each step is planned anew for those shapes, every input moved into
// its plan's layouts (docs/sparse.md "Iterations"). Every
// `checkpoint_every` steps the carried values (as they enter the next step, a sparse one with its mask) and the
// step count go to the checkpoint file, written anew each time (all or nothing); `restart` resumes from such a
// file on any number of ranks, reading the carried values from it and every other input as at the start. After
// the last step, --output gets the graph's outputs of that step and the carried values. Every failure is every
// rank's, with no file left.
void iterate_graph(MPI_Comm comm, const IterateOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
