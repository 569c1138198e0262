#ifndef EINREL_RUNDATA_HPP
#define EINREL_RUNDATA_HPP

// What `einrel run` and `einrel train` share between the graph file and the engine: where each input's
// data comes from, reading every rank's blocks of the inputs in the schedule's layouts, and writing
// distributed values into one HDF5 file.

#include <einrel_Communicator.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_FailureInjection.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_ParallelHdf5.hpp>
#include <einrel_Planner.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_Session.hpp>

#include <Kokkos_Core.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace einrel::cli {

using Exec = Kokkos::DefaultExecutionSpace;
using Memory = Exec::memory_space;
using Values = std::vector<std::optional<engine::AnyDistributed<Memory>>>;
using Session = engine::Session<Exec>;
using Sources = std::map<std::string, io::DatasetSource>;

// The HDF5 dataset of every input of `graph` (--input, --bind), or none with --random; the inputs in `given` (a
// restart's carried values) from there whatever the options say. Throws Error for conflicting or missing sources
// and bindings of names that are no input.
Sources input_sources(const Graph& graph, const RunOptions& options, Sources given = {});

// Collective: binds the block shape of every sparse input of `graph` (docs/sparse.md "Where shapes come
// from"): with `random_seed`, a random shape of --random-density over blocks of edge --sparse-tile; else the
// mask or norms dataset next to its source, or with --drop-zero-blocks the blocks of that edge that are all
// zero in it. Throws the same Error on every rank for a sparse input with none.
void bind_input_shapes(const comm::Communicator& comm, Graph& graph, const Sources& sources,
                       const std::optional<std::uint64_t>& random_seed, const SparseOptions& options);

// Collective over `files`' communicator: opens every input of `graph` read from a file in `sources`, checking its type
// and shape (io::InputFiles::open); they stay open for an InputLoader's reads. Called before planning, so that a wrong
// input is named before a plan is sought (an error such as a memory limit no plan fits would hide it).
void open_input_files(io::InputFiles& files, const Graph& graph, const Sources& sources);

// The test-only EINREL_TEST_INJECT_FAILURE, parsed (docs/engine.md).
std::optional<engine::FailureInjection> failure_injection();

// Host memory holding a block's elements: the block's own when the host can read it, else a mirror.
template <class Scalar>
auto host_view(const Tensor<Scalar, Memory>& block) {
  return compat::create_host_mirror_uninitialized(block.view());
}
template <class Scalar>
using HostBlock = decltype(host_view(std::declval<const Tensor<Scalar, Memory>&>()));

// Reads the inputs' values from `sources`, or, for an input without one, makes counter-based random values
// with options.random_seed (the same values whatever the layout): every input into its schedule layout before a run, an
// input again into another layout or a streamed input's blocks during one (engine::InputReads::again), or whole tensors
// for --check.
class InputLoader {
 public:
  // Reads files through `files` (collective over its communicator), which must outlive the loader.
  InputLoader(io::InputFiles& files, const Graph& graph, const Sources& sources, const RunOptions& options);

  // Collective: this rank's blocks of every input, in the session's schedule's layouts (others empty),
  // but for streamed inputs (engine::Schedule::streamed), whose sources are opened and checked only.
  Values load(const Session& session);
  // The engine's reader of inputs read again or streamed (it refers to this loader).
  engine::InputReader<Memory> reader();
  // Fills `blocks` (this rank's, each with its box in the tensor) with input v's values: collectively
  // (none on some ranks), or locally on this rank from a source opened before (engine::ReadCall).
  template <class Scalar>
  void fill(VertexId v, const engine::BoxedBlocks<Scalar, Memory>& blocks, engine::ReadCall call);

 private:
  const Graph& graph_;
  const Sources& sources_;
  const RunOptions& options_;
  io::InputFiles& files_;
  std::map<VertexId, std::uint32_t> streams_;  // an input's index among the graph's inputs: its random stream
};

// Collective: the value of a 0-d vertex on every rank (its one block lives on one rank).
double scalar_value(const comm::Communicator& comm, const engine::AnyDistributed<Memory>& value);

// (dataset name, vertex) for every output of the graph, named like the vertex.
std::vector<std::pair<std::string, VertexId>> outputs_by_name(const Graph& graph);

// Test-only failure injection at the write phase of each listed dataset (on this rank; call it inside
// `collectively` before write_values).
void inject_at_write(const engine::PipelineOptions& options, int rank,
                     const std::vector<std::pair<std::string, VertexId>>& datasets);

// Collective: writes `values` of the listed vertices as root datasets of a new HDF5 file `path` (all or
// nothing), each block written by the first site that holds it. A block-sparse value's absent blocks read
// as zeros. A vertex v with masked[v] (one entry per vertex, or none) gets its mask next to it ("NAME.mask",
// docs/sparse.md: one entry per block of its layout's grid, 0 where absent), absent blocks or not. Each of
// `scalars` is a 0-d f64 dataset beside them (what `einrel iterate` records in a checkpoint).
void write_values(const comm::Communicator& comm, const Graph& graph, const Values& values,
                  const std::vector<std::pair<std::string, VertexId>>& datasets, const std::string& path,
                  const std::vector<bool>& masked = {},
                  const std::vector<std::pair<std::string, double>>& scalars = {});

}  // namespace einrel::cli

#endif
