#include <einrel_Error.hpp>
#include <einrel_Schedule.hpp>
#include <einrel_ScheduleMemo.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace einrel::engine {

using redistribute::BlockLayout;
using redistribute::Placement;

namespace {

// The layout of a value first placed as an operand: every block the value holds has a site, so that a
// later reader finds it. Its first reader's operand layout gives most; a block that reader's tuples skip (it
// skips absent blocks of another operand, docs/sparse.md) gets the rank an even spread gives it. A sparse
// value's absent blocks have none; a dense value's every block has one, whoever reads it first.
// The layout is operand k's of `reader`, or one made for the value.
std::shared_ptr<const BlockLayout> value_layout(const std::shared_ptr<const VertexSchedule>& reader, std::size_t k,
                                                const std::optional<BlockShape>& shape) {
  const BlockLayout& operand = reader->operand_layout(k);
  const BlockGrid& grid = operand.grid();
  if (!shape && !operand.placement().has_absent()) return {reader, &operand};
  const std::optional<BlockShape> present = shape ? std::optional<BlockShape>(shape->on(grid)) : std::nullopt;
  const Placement spread = Placement::spread(grid.num_blocks(), operand.num_ranks());
  std::vector<std::vector<int>> sites(static_cast<std::size_t>(grid.num_blocks()));
  for (Extent b = 0; b < grid.num_blocks(); ++b) {
    if (present && !present->present(b)) continue;
    auto& s = sites[static_cast<std::size_t>(b)];
    for (int i = 0; i < operand.placement().num_sites(b); ++i) s.push_back(operand.placement().site(b, i));
    if (s.empty()) s.push_back(spread.site(b, 0));
  }
  return std::make_shared<const BlockLayout>(grid, Placement::sites(sites, operand.num_ranks()));
}

}  // namespace

Schedule::Schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions, int ranks,
                   TransitionPolicy policy, const MachineModel& model,
                   const std::vector<std::pair<VertexId, VertexId>>& carried, InputReads reads, double screen,
                   ScheduleMemo* memo)
    : ranks_(ranks),
      screen_(screen),
      policy_(policy),
      uses_(graph.size(), 0),
      reads_(reads),
      model_(model),
      communication_seconds_(graph.size(), 0.0),
      kept_(graph.size(), false),
      carried_(graph.size(), false),
      shared_(graph.size()),
      partitions_(partitions),
      vertices_(graph.size()),
      layouts_(graph.size()) {
  if (partitions.size() != graph.size())
    throw Error("a schedule got " + std::to_string(partitions.size()) + " partition vectors for a graph of " +
                std::to_string(graph.size()) + " vertices");
  if (memo && !memo->serves(graph, ranks, model))
    throw Error("a schedule was given the memo of another graph, number of ranks or machine model");
  const std::vector<std::string> orders = tuple_orders(graph, partitions);
  const std::vector<VertexId> first = first_of_equal_einsums(graph);
  // The dense vertices' schedules by (first vertex of their kind, cut, tuple order): this schedule's, or the memo's.
  std::map<ScheduleMemo::VertexKey, std::shared_ptr<const VertexSchedule>> made;
  shapes_.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) {
      if (vertex.sparse && !vertex.shape)
        throw Error("sparse input '" + vertex.name +
                    "' has no block shape: bind one before planning (Graph::bind_shape; docs/sparse.md says where "
                    "each face takes shapes from)");
      shapes_[v] = vertex.shape;
      continue;
    }
    std::vector<const BlockShape*> operand_shapes;
    const SparseRule rule = sparse_rule(vertex.resolved->einsum());
    if (rule != SparseRule::dense)
      for (VertexId in : vertex.inputs) operand_shapes.push_back(shapes_[in] ? &*shapes_[in] : nullptr);
    if (rule == SparseRule::union_of_shapes &&
        std::find(operand_shapes.begin(), operand_shapes.end(), nullptr) != operand_shapes.end())
      operand_shapes.clear();  // the union with a dense operand is dense
    // A dense vertex like an earlier one (first_of_equal_einsums), cut and ordered alike, runs alike.
    const bool dense = !vertex.slice && std::none_of(operand_shapes.begin(), operand_shapes.end(),
                                                     [](const BlockShape* p) { return p; });
    std::shared_ptr<const VertexSchedule>* alike = nullptr;
    if (dense) {
      ScheduleMemo::VertexKey key{first[v], partitions[v].parts(), orders[v]};
      alike = memo ? &memo->dense_vertex(key) : &made[key];
    }
    if (alike && *alike)
      vertices_[v] = *alike;
    else
      vertices_[v] = std::make_shared<const VertexSchedule>(vertex, partitions[v], ranks, orders[v], operand_shapes,
                                                            screen, &model_);
    if (alike && !*alike) *alike = vertices_[v];
    shapes_[v] = vertices_[v]->output_shape();
    layouts_[v] = {vertices_[v], &vertices_[v]->output_layout()};
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      const VertexId in = vertex.inputs[k];
      ++uses_[in];
      if (!layouts_[in]) layouts_[in] = value_layout(vertices_[v], k, shapes_[in]);
      std::optional<std::size_t> same;
      for (std::size_t j = 0; j < k && !same; ++j)
        if (vertex.inputs[j] == in && vertices_[v]->operand_layout(j) == vertices_[v]->operand_layout(k)) same = j;
      shared_[v].push_back(same);
    }
  }
  for (const auto& [w, next] : carried) {
    if (w >= graph.size() || next >= graph.size() || !graph.vertex(w).is_input() || graph.vertex(next).is_input() ||
        graph.vertex(w).bound != graph.vertex(next).bound || graph.vertex(w).dtype != graph.vertex(next).dtype)
      throw Error("a carried value needs an input and an EinSum vertex of one bound and dtype");
    if (shapes_[w] || shapes_[next])
      throw Error("a carried value cannot be sparse: '" + graph.vertex(w).name + "' is fed back from '" +
                  graph.vertex(next).name + "'");
    layouts_[w] = layouts_[next];
    carried_[w] = true;
  }
  for (VertexId v : graph.outputs()) kept_[v] = true;
  streamed_ = streamed_inputs(graph, reads_, carried);
  choose_transitions(graph, model, memo ? &memo->choices(policy) : nullptr);
  std::vector<VertexId> last_reader(graph.size(), 0);
  for (VertexId v = 0; v < graph.size(); ++v)
    for (VertexId in : graph.vertex(v).inputs) last_reader[in] = v;
  in_place_.assign(graph.size(), false);
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (vertex.is_input()) continue;
    const EinSum& e = vertex.resolved->einsum();
    const VertexId in = vertex.inputs[0];
    const bool read_once = std::count(vertex.inputs.begin(), vertex.inputs.end(), in) == 1;
    in_place_[v] = vertex.resolved->aggregated_labels().empty() && e.output == e.inputs[0] &&
                   !graph.vertex(in).is_input() && !deferred_[in] && last_reader[in] == v && read_once && !kept_[in] &&
                   vertices_[v]->operand_layout(0) == *layouts_[in] &&
                   vertices_[v]->output_layout() == vertices_[v]->operand_layout(0);
  }
  released_.resize(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v)
    for (VertexId in : graph.vertex(v).inputs)
      if (last_reader[in] == v && !kept_[in] &&
          std::find(released_[v].begin(), released_[v].end(), in) == released_[v].end())
        released_[v].push_back(in);
  assign_step_classes(graph);
  for (VertexId v = 0; v < graph.size(); ++v)  // inputs nothing reads (outputs only): one block on rank 0
    if (!layouts_[v])
      layouts_[v] = std::make_shared<const BlockLayout>(
          BlockGrid(graph.vertex(v).bound, std::vector<Extent>(graph.vertex(v).bound.size(), 1)), ranks);
}

Extent Schedule::screened_products() const {
  Extent n = 0;
  for (VertexId v = 0; v < vertices_.size(); ++v)
    if (vertices_[v]) n += vertices_[v]->screened_products();
  return n;
}

Extent Schedule::truncated_blocks() const {
  Extent n = 0;
  for (VertexId v = 0; v < vertices_.size(); ++v)
    if (vertices_[v]) n += vertices_[v]->truncated_blocks();
  return n;
}

double Schedule::communication_seconds() const {
  double sum = 0;
  for (double s : communication_seconds_) sum += s;
  return sum;
}

std::vector<VertexId> Schedule::unread_inputs() const {
  std::vector<VertexId> unread;
  for (VertexId v = 0; v < uses_.size(); ++v)
    if (!vertices_[v] && dead(v)) unread.push_back(v);
  return unread;
}

void Schedule::assign_step_classes(const Graph& graph) {
  auto id = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  std::map<std::vector<std::uintptr_t>, std::size_t> classes;
  step_class_.assign(graph.size(), 0);
  for (VertexId v = 0; v < graph.size(); ++v) {
    if (graph.vertex(v).is_input()) continue;
    std::vector<std::uintptr_t> key{id(vertices_[v].get()), deferred_[v]};
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size() && !key.empty(); ++k) {
      const bool streamed = streamed_[graph.vertex(v).inputs[k]];
      if (reads_again_[v][k])
        key.clear();
      else
        key.insert(key.end(), {shared_[v][k] ? *shared_[v][k] + 1 : 0, streamed, id(transitions_[v][k].get())});
    }
    if (key.empty()) {
      step_class_[v] = num_step_classes_++;
      continue;
    }
    const auto [known, fresh] = classes.try_emplace(std::move(key), num_step_classes_);
    if (fresh) ++num_step_classes_;
    step_class_[v] = known->second;
  }
}

std::vector<bool> streamed_inputs(const Graph& graph, InputReads reads,
                                  const std::vector<std::pair<VertexId, VertexId>>& carried) {
  std::vector<bool> streamed(graph.size(), false);
  if (reads != InputReads::again) return streamed;
  // The passes of a sliced vertex (Vertex::slice) read as the one vertex they copy: each pass streams the blocks
  // its chunk needs.
  std::vector<int> edges(graph.size(), 0);
  for (const Vertex& v : graph.vertices())
    if (!v.slice || v.slice->pass == 0)
      for (VertexId in : v.inputs) ++edges[in];
  for (VertexId v = 0; v < graph.size(); ++v) streamed[v] = graph.vertex(v).is_input() && edges[v] == 1;
  for (VertexId v : graph.outputs()) streamed[v] = false;
  for (const auto& [w, next] : carried) streamed[w] = false;
  return streamed;
}

const Transition& Schedule::transition(VertexId v, std::size_t k) const {
  const std::shared_ptr<const Transition>& t = transitions_.at(v).at(k);
  if (!t)
    throw Error("operand " + std::to_string(k) + " of vertex " + std::to_string(v) +
                " moves nothing: it shares an earlier operand's blocks, or is read from its source");
  return *t;
}

std::optional<std::size_t> Schedule::shared_operand(VertexId v, std::size_t k) const { return shared_[v][k]; }

}  // namespace einrel::engine
