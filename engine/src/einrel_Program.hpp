#ifndef EINREL_PROGRAM_HPP
#define EINREL_PROGRAM_HPP

#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Error.hpp>
#include <einrel_ExecutionReport.hpp>
#include <einrel_Graph.hpp>
#include <einrel_HostEnvironment.hpp>
#include <einrel_Options.hpp>
#include <einrel_PlanChoice.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Schedule.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace einrel {

// One rank's piece of a tensor in the host code's own decomposition: the global box it covers and its
// elements in C order over that box, in memory the host code owns. einrel reads input pieces and writes
// output pieces during Program::execute and never keeps or frees them beyond it.
template <class Scalar, class MemorySpace>
struct LocalPiece {
  using view_type = Kokkos::View<Scalar*, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  Box box;
  view_type data;
};

// The piece of `box` held in `view`: any contiguous C-order (LayoutRight) view whose rank and extents are
// the box's, e.g. the Kokkos::View<double**> of a slab. A view of const elements can be an input only
// (einrel never writes input pieces). Throws Error on another rank, shape or layout.
template <class View>
LocalPiece<typename View::non_const_value_type, typename View::memory_space> local_piece(const Box& box,
                                                                                         const View& view) {
  using Scalar = typename View::non_const_value_type;
  static_assert(View::rank <= 1 || std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "einrel::local_piece: the view must be LayoutRight (C order)");
  if (static_cast<std::size_t>(View::rank) != box.lo.size())
    throw Error("a rank-" + std::to_string(View::rank) + " view cannot hold box " + to_string(box.lo) + ".." +
                to_string(box.hi));
  const auto extents = box.extents();
  for (std::size_t d = 0; d < extents.size(); ++d)
    if (static_cast<Extent>(view.extent(d)) != extents[d])
      throw Error("view '" + view.label() + "' has extent " + std::to_string(view.extent(d)) + " along dimension " +
                  std::to_string(d) + " but its box " + to_string(box.lo) + ".." + to_string(box.hi) + " has " +
                  std::to_string(extents[d]));
  if (!view.span_is_contiguous()) throw Error("view '" + view.label() + "' is not contiguous");
  using Unmanaged = typename LocalPiece<Scalar, typename View::memory_space>::view_type;
  return {box, Unmanaged(const_cast<Scalar*>(view.data()), static_cast<std::size_t>(box.size()))};
}

namespace engine {
template <class ExecutionSpace>
class ProgramState;
}  // namespace engine

// A graph planned once for a communicator and executed many times (a host code's time loop): the plan,
// the schedule, the layouts of the host code's pieces, every redistribution plan between them and
// einrel's layouts, einrel's copies of pieces that are not whole grid cells, and the exchange buffers are
// made on the first execute and reused by every later one.
//
// Inputs and outputs are handed over as LocalPieces in the host code's decomposition (set_input,
// set_output: any non-overlapping cover of the tensor by boxes); every output is also available in
// einrel's own layout (output()). A piece whose box is exactly one cell of the refined cover (a slab of a
// slab decomposition) is used in place; others are copied through einrel's cells.
//
// Program is compiled inside the library for each Kokkos backend einrel was built with (the extern
// template declarations below): a host file that uses it compiles only this header. Scalar is float or
// double.
template <class ExecutionSpace = Kokkos::DefaultExecutionSpace>
class Program {
 public:
  using execution_space = ExecutionSpace;
  using memory_space = typename ExecutionSpace::memory_space;
  template <class Scalar>
  using Piece = LocalPiece<Scalar, memory_space>;
  template <class Scalar>
  using Distributed = redistribute::DistributedTensorRelation<Scalar, memory_space>;

  // Collective over comm: checks the host environment (check_host_environment), duplicates comm, and sets
  // up the pipeline: the plan within options.memory_limit, the schedule, this rank's steps, the memory
  // estimate and the node's memory check. The same Error on every rank for a bad graph, planner, p or memory
  // limit. `options`: how the graph is planned and run, the same as `einrel run`'s (einrel::Options).
  // A sparse input (docs/sparse.md) whose shape the graph does not bind takes it from its pieces: the cells
  // of the refined cover that no rank's piece holds are its absent blocks. The graph is then planned at the
  // first execute, once every rank's pieces are known.
  Program(MPI_Comm comm, Graph graph, const engine::Options& options = {});
  ~Program();
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;

  const Graph& graph() const;
  // The plan: each vertex's partition vector (Plan::partitions[v].str(), e.g. "{i:2,j:1,k:2}") and p.
  const partition::Plan& plan() const;
  // The plan with what its choice found: which planner proposed it, its estimated makespan
  // (estimated_seconds()), the schedule it was costed on and that schedule's dry run.
  const engine::FittedPlan& fitted() const;
  // Each vertex's layout, shape and transitions on this communicator.
  const engine::Schedule& schedule() const;
  const comm::Communicator& comm() const;
  // The dry run of the schedule: what each rank moves and holds, and the memory estimate.
  const engine::Traffic& estimate() const;
  // Whether the graph is planned: at construction, or, where sparse inputs take their shapes from their
  // pieces, at the first execute.
  bool planned() const;

  // Local: this rank's pieces of input `name` for the next executions (the views must stay valid through
  // them; the host code may change their elements between executions). Throws Error when `name` is not an
  // input of the graph, Scalar is not its dtype, or a piece has another rank than the tensor.
  template <class Scalar>
  void set_input(const std::string& name, std::vector<Piece<Scalar>> pieces) {
    bind(name, true, PieceList(std::move(pieces)));
  }
  // Local: where this rank wants its pieces of output `name` written after each execution.
  template <class Scalar>
  void set_output(const std::string& name, std::vector<Piece<Scalar>> pieces) {
    bind(name, false, PieceList(std::move(pieces)));
  }

  // Collective over the communicator: runs the graph once on the pieces set last, writes the outputs set
  // with set_output into their pieces, and returns what the engine measured on this rank. The first call
  // also gathers every rank's boxes and makes the layouts, plans and blocks later calls reuse. Throws the
  // same Error on every rank when any rank fails: an input without pieces, pieces that do not cover a
  // tensor or overlap, boxes that differ from the first execution's, or any failure of the engine.
  const engine::EngineResult<memory_space>& execute(const ExecutionSpace& exec);
  const engine::EngineResult<memory_space>& execute();

  // Collective over the communicator: what the last execution measured on every rank (per rank floats sent,
  // received and read, peak block and allocator bytes, tuples, flops; per vertex the slowest rank's times
  // and the floats moved; outputs holding NaN or ±Inf), the same on every rank. Throws Error before the
  // first execution.
  engine::ExecutionReport last_report() const;

  // Local: output `name` of the last execution in einrel's layout (this rank's blocks). Throws Error before
  // the first execution, for a name that is not an output, or for another dtype.
  template <class Scalar>
  const Distributed<Scalar>& output(const std::string& name) const {
    return std::get<Distributed<Scalar>>(output_value(name, dtype_of<Scalar>()));
  }

  // How many executions completed.
  int executions() const;

 private:
  template <class Scalar>
  using PieceVector = std::vector<Piece<Scalar>>;
  using PieceList = std::variant<PieceVector<float>, PieceVector<double>>;

  void bind(const std::string& name, bool input, PieceList pieces);
  const engine::AnyDistributed<memory_space>& output_value(const std::string& name, Dtype dtype) const;

  std::unique_ptr<engine::ProgramState<ExecutionSpace>> state_;
};

// Compiled in the library (einrel_Program.cpp), once per enabled backend.
#ifdef KOKKOS_ENABLE_SERIAL
extern template class Program<Kokkos::Serial>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
extern template class Program<Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
extern template class Program<Kokkos::Cuda>;
#endif

}  // namespace einrel

#endif
