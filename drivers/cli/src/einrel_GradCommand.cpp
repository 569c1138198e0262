#include <einrel_AtomicFile.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_GradCommand.hpp>
#include <einrel_Gradient.hpp>
#include <einrel_GraphFile.hpp>

namespace einrel::cli {

void grad_graph(MPI_Comm user_comm, const GradOptions& options, std::ostream& out) {
  const std::string text = print_graph(gradient_graph(read_graph_file(options.graph), options.loss, options.wrt));
  const comm::Communicator comm(user_comm);
  // Rank 0 writes; a failure there (an unwritable path) is every rank's.
  comm::collectively(comm, [&] {
    if (comm.rank() != 0) return;
    if (!options.output) {
      out << text;
      return;
    }
    io::AtomicFile file(*options.output);
    file.write_text(text);
    file.commit();
  });
}

}  // namespace einrel::cli
