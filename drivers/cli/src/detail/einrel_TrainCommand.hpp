#ifndef EINREL_TRAINCOMMAND_HPP
#define EINREL_TRAINCOMMAND_HPP

#include <einrel_RunCommand.hpp>

#include <mpi.h>

#include <ostream>
#include <string>
#include <vector>

namespace einrel::cli {

// Options of `einrel train` (docs/cli.md): the graph, --input, --output, --report and the planning options
// in `run` (--input holds the parameters' initial values and the data); then the training's own.
struct TrainOptions {
  RunOptions run;
  std::string loss;                 // a 0-d vertex
  std::vector<std::string> params;  // inputs updated by SGD
  double lr = 0;
  int steps = 0;
};

// Collective: plain SGD, W <- W - lr dL/dW, for `steps` steps. The step (forward, backward, update) is one
// graph (sgd_step_graph) planned once and executed by the engine every step; each updated W comes back in
// the layout the next step reads W in, so parameters stay distributed between steps. Writes the parameters
// after the last step to --output as root datasets named like them, the report (losses before each update,
// seconds per step) to --report, and a summary on rank 0. Every failure is every rank's, with no file left.
void train_graph(MPI_Comm comm, const TrainOptions& options, std::ostream& out);

}  // namespace einrel::cli

#endif
