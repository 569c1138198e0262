#ifndef EINREL_PROGRAMSTATE_HPP
#define EINREL_PROGRAMSTATE_HPP

#include <einrel_BoxCopy.hpp>
#include <einrel_Cover.hpp>
#include <einrel_HostEnvironment.hpp>
#include <einrel_KokkosCompat.hpp>
#include <einrel_Planner.hpp>
#include <einrel_Program.hpp>
#include <einrel_Session.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

namespace einrel::engine {

// What einrel::Program holds and does (einrel_Program.hpp states the contracts): the graph, the pipeline
// (Session), the host code's pieces of each input and output, and, from the first execution, the refined
// covers of those pieces, the redistribution plans between them and einrel's layouts, and einrel's copies of
// pieces that are not whole cells. Compiled once per enabled backend inside the library (einrel_Program.cpp).
template <class ExecutionSpace>
class ProgramState {
 public:
  using memory_space = typename ExecutionSpace::memory_space;
  template <class Scalar>
  using Piece = LocalPiece<Scalar, memory_space>;
  template <class Scalar>
  using Distributed = redistribute::DistributedTensorRelation<Scalar, memory_space>;

  // Collective over comm. Where a sparse input takes its shape from its pieces, planning waits for the
  // first execute.
  ProgramState(MPI_Comm comm, Graph graph, const Options& options)
      : comm_(checked(comm)), graph_(std::move(graph)), options_(options) {
    if (!shapes_from_pieces()) session_.emplace(comm_, graph_, PipelineOptions(options_));
  }

  const Graph& graph() const { return session_ ? session_->graph() : graph_; }
  const partition::Plan& plan() const { return session().plan(); }
  const FittedPlan& fitted() const { return session().fitted(); }
  const Schedule& schedule() const { return session().schedule(); }
  const comm::Communicator& comm() const { return comm_; }
  const Traffic& estimate() const { return session().estimate(); }
  bool planned() const { return session_.has_value(); }

  // Local.
  template <class Scalar>
  void bind(const std::string& name, bool input, std::vector<Piece<Scalar>> pieces) {
    const VertexId v = vertex_of(name);
    const Vertex& vertex = graph().vertex(v);
    if (input != vertex.is_input())
      throw Error("'" + name + "' is " + (input ? "not an input" : "an input, not an output") + " of the graph");
    if (!input && std::find(graph().outputs().begin(), graph().outputs().end(), v) == graph().outputs().end())
      throw Error("'" + name + "' is not an output of the graph");
    if (dtype_of<Scalar>() != vertex.dtype)
      throw Error("'" + name + "' is " + std::string(dtype_name(vertex.dtype)) + ", not " +
                  std::string(dtype_name(dtype_of<Scalar>())));
    for (const auto& p : pieces)
      if (p.box.lo.size() != vertex.bound.size() || p.box.hi.size() != vertex.bound.size())
        throw Error("a piece of '" + name + "' has a box of rank " + std::to_string(p.box.lo.size()) +
                    " but the tensor has rank " + std::to_string(vertex.bound.size()));
    if (!binding(v)) binding(v) = Binding<Scalar>{input, {}, {}, {}, {}, {}, {}};
    std::get<Binding<Scalar>>(*binding(v)).pieces = std::move(pieces);
  }

  // Collective: one execution on the pieces set last; the first also gathers every rank's boxes and makes
  // the layouts, plans and blocks later ones reuse.
  const EngineResult<memory_space>& execute(const ExecutionSpace& exec) {
    comm::collectively(comm_, [&] { check_bindings(); });
    if (!session_) plan_with_piece_shapes();
    result_.reset();          // the last outputs' blocks go back to the pool for this execution
    session_->prepare(exec);  // the first time, with options.warm_memory: every block the executions take
    if (!prepared_) prepare();
    std::vector<std::optional<AnyDistributed<memory_space>>> values(graph().size());
    for (VertexId v = 0; v < graph().size(); ++v)
      if (graph().vertex(v).is_input()) values[v] = import_input(exec, v);
    result_ = session_->execute(exec, std::move(values));
    for (VertexId v : graph().outputs())
      if (bound(v)) export_output(exec, v);
    compat::fence(exec, "einrel::Program: outputs written");
    ++executions_;
    return *result_;
  }

  // Collective.
  ExecutionReport last_report() const {
    comm::collectively(comm_, [&] {
      if (!result_) throw Error("no execution to report: call execute first");
    });
    return session_->report(ExecutionSpace{}, *result_);
  }

  // Local: output `name` of the last execution, which must be of `dtype`.
  const AnyDistributed<memory_space>& output(const std::string& name, Dtype dtype) const {
    const VertexId v = vertex_of(name);
    if (!result_ || !result_->values[v]) throw Error("'" + name + "' is not an output of the last execution");
    if (dtype != graph().vertex(v).dtype) throw Error("output '" + name + "' is not of that dtype");
    return *result_->values[v];
  }

  int executions() const { return executions_; }

 private:
  // One host-code tensor: its pieces, then (from the first execution) the refined cover, the plan between it
  // and einrel's layout, einrel's cell blocks that are not a whole piece, and for inputs the target blocks.
  // One cell of a cover on this rank: in piece `piece`, at `corner` of it. A cell that is the whole piece is
  // used in place (no block); any other has a block of einrel's that the piece is copied into or out of.
  template <class Scalar>
  struct CellPlace {
    std::size_t piece;
    Key key;
    std::vector<Extent> corner;
    std::optional<Tensor<Scalar, memory_space>> block;
  };

  template <class Scalar>
  struct Binding {
    using scalar_type = Scalar;
    bool input = true;
    std::vector<Piece<Scalar>> pieces;
    std::vector<Box> boxes;  // those of the first execution
    std::optional<redistribute::BlockLayout> cover;
    std::optional<redistribute::RedistributionPlan> plan;
    std::vector<CellPlace<Scalar>> cells;       // this rank's cells of the cover, in piece order
    std::optional<Distributed<Scalar>> target;  // inputs: the schedule's layout
  };
  using AnyBinding = std::variant<Binding<float>, Binding<double>>;

  // Whether Kokkos threads compute while einrel calls MPI (any backend but Serial).
  static constexpr bool runs_threads() {
#ifdef KOKKOS_ENABLE_SERIAL
    return !std::is_same_v<ExecutionSpace, Kokkos::Serial>;
#else
    return true;
#endif
  }

  static comm::Communicator checked(MPI_Comm comm) {
    check_host_environment(runs_threads());
    return comm::Communicator(comm);
  }

  const Session<ExecutionSpace>& session() const {
    if (!session_)
      throw Error("the graph is planned at the first execute: its sparse inputs take their shapes from their pieces");
    return *session_;
  }

  // Whether a sparse input has no shape bound: it takes it from its pieces.
  bool shapes_from_pieces() const {
    return std::any_of(graph_.vertices().begin(), graph_.vertices().end(),
                       [](const Vertex& v) { return v.sparse && !v.shape; });
  }

  // Collective: binds every sparse input without a shape to the cells its pieces hold (all ranks' boxes,
  // gathered), then plans the graph.
  void plan_with_piece_shapes() {
    for (VertexId v = 0; v < graph_.size(); ++v) {
      const Vertex& vertex = graph_.vertex(v);
      if (!vertex.sparse || vertex.shape) continue;
      const auto all =
          redistribute::gather_boxes(comm_, std::visit([](const auto& b) { return boxes_of(b.pieces); }, *binding(v)),
                                     options_.max_message_elements);
      comm::collectively(comm_, [&] {
        try {
          const redistribute::BlockLayout cover = redistribute::cover_layout(vertex.bound, all, true);
          std::vector<bool> present;
          for (Extent b = 0; b < cover.grid().num_blocks(); ++b) present.push_back(!cover.placement().absent(b));
          graph_.bind_shape(v, BlockShape(cover.grid(), std::move(present)));
        } catch (const Error& e) {
          throw Error("the pieces of '" + vertex.name + "': " + e.what());
        }
      });
    }
    session_.emplace(comm_, graph_, PipelineOptions(options_));
  }

  // Vertex v's binding, found by name: the graph a session runs may be the sliced one (FittedPlan::sliced),
  // whose vertices are numbered otherwise than the graph given.
  std::optional<AnyBinding>& binding(VertexId v) { return bindings_[graph().vertex(v).name]; }
  const std::optional<AnyBinding>& binding(VertexId v) const {
    static const std::optional<AnyBinding> none;
    const auto found = bindings_.find(graph().vertex(v).name);
    return found != bindings_.end() ? found->second : none;
  }
  bool bound(VertexId v) const { return binding(v).has_value(); }

  VertexId vertex_of(const std::string& name) const {
    const auto v = graph().find(name);
    if (!v) throw Error("the graph has no tensor '" + name + "'");
    return *v;
  }

  void check_bindings() const {
    for (VertexId v = 0; v < graph().size(); ++v) {
      const Vertex& vertex = graph().vertex(v);
      if (vertex.is_input() && !bound(v))
        throw Error("input '" + vertex.name + "' has no pieces on rank " + std::to_string(comm_.rank()) +
                    " (set_input, with an empty list on a rank that holds none of it)");
      if (!prepared_ || !bound(v)) continue;
      std::visit(
          [&](const auto& b) {
            if (!b.cover)
              throw Error("'" + vertex.name + "' got pieces on rank " + std::to_string(comm_.rank()) +
                          " after the first execution; a new binding needs a new Program");
            if (boxes_of(b.pieces) != b.boxes)
              throw Error("the pieces of '" + vertex.name + "' on rank " + std::to_string(comm_.rank()) +
                          " cover other boxes than at the first execution; a new decomposition needs a new Program");
          },
          *binding(v));
    }
  }

  // Collective: the covers, plans and blocks of every binding (in vertex order on every rank).
  void prepare() {
    for (VertexId v = 0; v < graph().size(); ++v) {
      if (bound_on_every_rank(v)) std::visit([&](auto& b) { prepare_binding(v, b); }, *binding(v));
    }
    prepared_ = true;
  }

  // Collective: whether every rank has pieces of v (all or none of them must have).
  bool bound_on_every_rank(VertexId v) const {
    const int mine[2] = {bound(v) ? 1 : 0, bound(v) ? 0 : 1};  // the minima say "all" and "none"
    int least[2];
    MPI_Request request;
    comm::complete(MPI_Iallreduce(mine, least, 2, MPI_INT, MPI_MIN, comm_.get(), &request), request, "MPI_Iallreduce");
    const bool all = least[0] == 1, none = least[1] == 1;
    comm::collectively(comm_, [&] {
      if (!all && !none)
        throw Error("'" + graph().vertex(v).name + "' has pieces on some ranks only: call set_output on every rank " +
                    "(with an empty list where a rank holds none of it)");
    });
    return all;
  }

  template <class Scalar>
  void prepare_binding(VertexId v, Binding<Scalar>& b) {
    const Vertex& vertex = graph().vertex(v);
    // A first execution that failed after preparing this binding prepared it already: start afresh.
    b.cells.clear();
    b.cover.reset();
    b.plan.reset();
    b.target.reset();
    b.boxes = boxes_of(b.pieces);
    const auto all = redistribute::gather_boxes(comm_, b.boxes, options_.max_message_elements);
    comm::collectively(comm_, [&] {
      try {
        b.cover = redistribute::cover_layout(vertex.bound, all, vertex.sparse);
      } catch (const Error& e) {
        throw Error("the pieces of '" + vertex.name + "': " + e.what());
      }
      const auto& layout = schedule().layout(v);
      const redistribute::ExchangeLimits limits = session_->options().exchange_limits();
      b.plan = b.input ? redistribute::RedistributionPlan(*b.cover, layout, comm_.rank(), sizeof(Scalar), limits)
                       : redistribute::RedistributionPlan(layout, *b.cover, comm_.rank(), sizeof(Scalar), limits);
      const BlockGrid& grid = b.cover->grid();
      for (std::size_t i = 0; i < b.pieces.size(); ++i)
        for (Extent id : redistribute::cells_in(*b.cover, b.boxes[i])) {
          const Key key = grid.key(id);
          const Box cell = grid.box(key);
          CellPlace<Scalar> place{i, key, std::vector<Extent>(cell.lo.size()), std::nullopt};
          for (std::size_t d = 0; d < cell.lo.size(); ++d) place.corner[d] = cell.lo[d] - b.boxes[i].lo[d];
          if (!(cell == b.boxes[i]))
            place.block =
                Tensor<Scalar, memory_space>::uninitialized("einrel::Program/" + vertex.name + "/cell", cell.extents());
          b.cells.push_back(std::move(place));
        }
      if (b.input) b.target = Distributed<Scalar>::allocate("einrel::Program/" + vertex.name, comm_, layout);
    });
  }

  // This rank's cells of b's cover as a relation: pieces used in place where a piece is one cell, einrel's
  // blocks elsewhere; `copy(piece, block, corner)` is called for each of the latter.
  template <class Scalar, class Copy>
  Relation<Scalar, memory_space> cells(const Binding<Scalar>& b, Copy&& copy) const {
    using View = typename Tensor<Scalar, memory_space>::view_type;  // unmanaged: made from a pointer
    Relation<Scalar, memory_space> cells(b.cover->grid().rank());
    for (const CellPlace<Scalar>& place : b.cells) {
      const auto& data = b.pieces[place.piece].data;
      const Tensor<Scalar, memory_space> piece(b.boxes[place.piece].extents(), View(data.data(), data.size()));
      if (place.block) copy(piece, *place.block, place.corner);
      cells.insert(place.key, place.block ? *place.block : piece);
    }
    return cells;
  }

  template <class Scalar>
  static std::vector<Box> boxes_of(const std::vector<Piece<Scalar>>& pieces) {
    std::vector<Box> boxes;
    for (const auto& p : pieces) boxes.push_back(p.box);
    return boxes;
  }

  AnyDistributed<memory_space> import_input(const ExecutionSpace& exec, VertexId v) {
    return std::visit(
        [&](auto& b) -> AnyDistributed<memory_space> {
          const auto source = cells(b, [&](const auto& piece, const auto& cell, const std::vector<Extent>& corner) {
            copy_box(exec, piece, corner, cell, std::vector<Extent>(corner.size(), 0), cell.bound());
          });
          comm::collectively(comm_, [&] { session_->exchange().execute(exec, *b.plan, source, b.target->local()); });
          return *b.target;
        },
        *binding(v));
  }

  void export_output(const ExecutionSpace& exec, VertexId v) {
    std::visit(
        [&](auto& b) {
          using Scalar = typename std::decay_t<decltype(b)>::scalar_type;
          std::vector<std::tuple<Tensor<Scalar, memory_space>, Tensor<Scalar, memory_space>, std::vector<Extent>>>
              later;
          const auto target = cells(b, [&](const auto& piece, const auto& cell, const std::vector<Extent>& corner) {
            later.emplace_back(piece, cell, corner);
          });
          const auto& value = std::get<Distributed<Scalar>>(*result_->values[v]);
          comm::collectively(comm_, [&] { session_->exchange().execute(exec, *b.plan, value.local(), target); });
          for (const auto& [piece, cell, corner] : later)
            copy_box(exec, cell, std::vector<Extent>(corner.size(), 0), piece, corner, cell.bound());
        },
        *binding(v));
  }

  comm::Communicator comm_;
  Graph graph_;
  Options options_;
  std::optional<Session<ExecutionSpace>> session_;
  std::map<std::string, std::optional<AnyBinding>> bindings_;  // by vertex name (binding())
  bool prepared_ = false;
  std::optional<EngineResult<memory_space>> result_;
  int executions_ = 0;
};

}  // namespace einrel::engine

#endif
