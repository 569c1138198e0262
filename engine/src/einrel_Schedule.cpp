#include <einrel_Error.hpp>
#include <einrel_Schedule.hpp>

#include <algorithm>

namespace einrel::engine {

using redistribute::BlockLayout;
using redistribute::Placement;

VertexSchedule::VertexSchedule(const Vertex& vertex, const partition::PartitionVector& d, int ranks,
                               const std::string& output_order, const std::vector<const BlockShape*>& operand_shapes)
    : ranks_(ranks) {
  if (ranks < 1) throw Error("a schedule needs at least one rank");
  const ResolvedEinSum& resolved = *vertex.resolved;
  const EinSum& e = resolved.einsum();
  d.check_fits(resolved);
  const std::string order = output_order.empty() ? e.output : output_order;
  if (!std::is_permutation(order.begin(), order.end(), e.output.begin(), e.output.end()))
    throw Error("tuple order '" + order + "' of vertex '" + vertex.name + "' is not an order of its output labels '" +
                e.output + "'");
  const std::string tuple_labels = order + resolved.aggregated_labels();
  for (char c : tuple_labels) tuple_parts_.push_back(d.parts_of(c));
  for (char c : resolved.aggregated_labels()) group_size_ *= d.parts_of(c);
  tuple_strides_.assign(tuple_parts_.size(), 1);
  for (std::size_t j = tuple_parts_.size(); j-- > 0;) {
    tuple_strides_[j] = num_tuples_;
    num_tuples_ *= tuple_parts_[j];
  }
  for (char c : e.output) output_digits_.push_back(static_cast<int>(tuple_labels.find(c)));
  for (const std::string& labels : e.inputs) {
    std::vector<int> digits;
    for (char c : labels) digits.push_back(static_cast<int>(tuple_labels.find(c)));
    operand_digits_.push_back(std::move(digits));
  }
  if (std::any_of(operand_shapes.begin(), operand_shapes.end(), [](const BlockShape* p) { return p; }))
    keep_present_tuples(resolved, tuple_labels, operand_shapes);

  BlockGrid output_grid(vertex.bound, d.project(e.output));
  if (order == e.output && !present_) {
    output_layout_.emplace(std::move(output_grid), ranks);
  } else {
    std::vector<std::vector<int>> owners(static_cast<std::size_t>(output_grid.num_blocks()));
    for (Extent g = 0; g < output_grid.num_blocks(); ++g) {
      const Extent first = first_tuple(g);
      if (first >= 0) owners[static_cast<std::size_t>(g)].push_back(tuple_rank(first));
    }
    output_layout_.emplace(std::move(output_grid), Placement::sites(owners, ranks));
  }
  for (std::size_t k = 0; k < e.inputs.size(); ++k) {
    BlockGrid grid(resolved.extents(e.inputs[k]), d.project(e.inputs[k]));
    std::vector<std::vector<int>> sites(static_cast<std::size_t>(grid.num_blocks()));
    auto read_by = [&](Extent t, int r) {
      auto& s = sites[static_cast<std::size_t>(operand_block(k, t))];
      if (s.empty() || s.back() != r) s.push_back(r);  // t grows, so ranks arrive sorted
    };
    if (present_)
      for (std::size_t i = 0; i < present_->size(); ++i) read_by((*present_)[i], present_rank_[i]);
    else
      for (Extent t = 0; t < num_tuples_; ++t) read_by(t, tuple_rank(t));
    operand_layouts_.emplace_back(std::move(grid), Placement::sites(sites, ranks));
  }
}

void VertexSchedule::keep_present_tuples(const ResolvedEinSum& resolved, const std::string& tuple_labels,
                                         const std::vector<const BlockShape*>& operand_shapes) {
  const EinSum& e = resolved.einsum();
  std::vector<std::optional<BlockShape>> masks(e.inputs.size());
  for (std::size_t k = 0; k < operand_shapes.size() && k < masks.size(); ++k)
    if (operand_shapes[k])
      masks[k] = operand_shapes[k]->on(BlockGrid(resolved.extents(e.inputs[k]), [&] {
        std::vector<Extent> parts;
        for (char c : e.inputs[k]) parts.push_back(tuple_parts_[tuple_labels.find(c)]);
        return parts;
      }()));
  // A tuple's flops are proportional to its box in the grid of all its labels (numbered like the tuples).
  const BlockGrid tuples(resolved.extents(tuple_labels), tuple_parts_);
  std::vector<Extent> weights;
  present_.emplace();
  Extent total = 0;
  for (Extent t = 0; t < num_tuples_; ++t) {
    bool runs = true;
    for (std::size_t k = 0; k < masks.size() && runs; ++k) runs = !masks[k] || masks[k]->present(operand_block(k, t));
    if (!runs) continue;
    present_->push_back(t);
    weights.push_back(tuples.box(tuples.key(t)).size());
    total += weights.back();
  }
  // Tuple i runs on the rank whose even share of the flops holds the flops before it.
  Extent before = 0;
  for (Extent w : weights) {
    present_rank_.push_back(
        static_cast<int>(static_cast<long double>(before) * ranks_ / static_cast<long double>(total)));
    before += w;
  }
}

std::size_t VertexSchedule::present_index(Extent t) const {
  const auto it = std::lower_bound(present_->begin(), present_->end(), t);
  if (it == present_->end() || *it != t)
    throw Error("join tuple " + std::to_string(t) + " does not run: an operand block it reads is absent");
  return static_cast<std::size_t>(it - present_->begin());
}

int VertexSchedule::tuple_rank(Extent t) const {
  if (partials_) return partials_->owner(t);
  if (present_) return present_rank_[present_index(t)];
  return static_cast<int>(t * ranks_ / num_tuples_);
}

std::optional<BlockShape> VertexSchedule::output_shape() const {
  if (!present_) return std::nullopt;
  const BlockGrid& grid = output_layout_->grid();
  std::vector<bool> present(static_cast<std::size_t>(grid.num_blocks()), false);
  for (Extent t : *present_) present[static_cast<std::size_t>(output_block(t))] = true;
  return BlockShape(grid, std::move(present));
}

VertexSchedule::VertexSchedule(const Vertex& vertex, const BlockLayout& partials)
    : ranks_(partials.num_ranks()), partials_(partials) {
  const EinSum& e = vertex.resolved->einsum();
  for (const std::string& labels : e.inputs)
    if (labels != e.output || !vertex.resolved->aggregated_labels().empty())
      throw Error("vertex '" + vertex.name + "' is not element-wise in one label order: it cannot run on partials");
  const BlockGrid& grid = partials.grid();
  tuple_parts_ = grid.parts();
  tuple_strides_.assign(tuple_parts_.size(), 1);
  for (std::size_t j = tuple_parts_.size(); j-- > 0;) {
    tuple_strides_[j] = num_tuples_;
    num_tuples_ *= tuple_parts_[j];
  }
  output_layout_ = partials;
  output_digits_.resize(tuple_parts_.size());  // operands and output share the partials' grid
  for (std::size_t j = 0; j < output_digits_.size(); ++j) output_digits_[j] = static_cast<int>(j);
  for (std::size_t k = 0; k < e.inputs.size(); ++k) {
    operand_digits_.push_back(output_digits_);
    operand_layouts_.push_back(partials);
  }
}

std::vector<Extent> VertexSchedule::tuples_of(int rank) const {
  std::vector<Extent> tuples;
  if (partials_) {  // a type: the one block the rank holds
    const std::vector<Extent> blocks = partials_->blocks_of(rank);
    if (!blocks.empty()) tuples.push_back(blocks[0]);
    return tuples;
  }
  if (present_) {  // ranks do not decrease along the running tuples: this rank's are consecutive
    const auto [first, last] = std::equal_range(present_rank_.begin(), present_rank_.end(), rank);
    return std::vector<Extent>(present_->begin() + (first - present_rank_.begin()),
                               present_->begin() + (last - present_rank_.begin()));
  }
  // t runs on rank r when r·J/R <= t < (r+1)·J/R, rounded up.
  const Extent J = num_tuples_, R = ranks_;
  for (Extent t = (rank * J + R - 1) / R; t < ((rank + 1) * J + R - 1) / R; ++t) tuples.push_back(t);
  return tuples;
}

Extent VertexSchedule::block_of(const std::vector<int>& digits, Extent t) const {
  // The tensor's key takes its labels' digits of t (mixed radix tuple_parts_, C order), in C order.
  Extent id = 0;
  for (int digit : digits) id = id * tuple_parts_[digit] + (t / tuple_strides_[digit]) % tuple_parts_[digit];
  return id;
}

Extent VertexSchedule::operand_block(std::size_t k, Extent t) const { return block_of(operand_digits_[k], t); }

Extent VertexSchedule::first_tuple(Extent g) const {
  const Extent start = group_start(g);
  if (!present_) return start;
  const auto it = std::lower_bound(present_->begin(), present_->end(), start);
  return it != present_->end() && *it < start + group_size_ ? *it : -1;
}

Extent VertexSchedule::group_start(Extent g) const {
  // g's digits (C order over the output dimensions) at their tuple labels' strides; aggregated digits 0.
  Extent t = 0;
  for (std::size_t i = output_digits_.size(); i-- > 0;) {
    const auto at = static_cast<std::size_t>(output_digits_[i]);
    t += (g % tuple_parts_[at]) * tuple_strides_[at];
    g /= tuple_parts_[at];
  }
  return t;
}

std::vector<int> VertexSchedule::contributors(Extent g) const {
  if (partials_) {
    std::vector<int> sites;
    for (int i = 0; i < partials_->placement().num_sites(g); ++i) sites.push_back(partials_->placement().site(g, i));
    return sites;
  }
  std::vector<int> ranks;
  const Extent start = group_start(g);
  auto add = [&](int r) {
    if (ranks.empty() || ranks.back() != r) ranks.push_back(r);
  };
  if (present_) {
    for (auto it = std::lower_bound(present_->begin(), present_->end(), start);
         it != present_->end() && *it < start + group_size_; ++it)
      add(present_rank_[static_cast<std::size_t>(it - present_->begin())]);
  } else {
    for (Extent t = start; t < start + group_size_; ++t) add(tuple_rank(t));
  }
  return ranks;
}

BlockLayout VertexSchedule::partial_layout() const {
  const BlockGrid& grid = output_layout_->grid();
  std::vector<std::vector<int>> sites;
  for (Extent g = 0; g < grid.num_blocks(); ++g) sites.push_back(contributors(g));
  return BlockLayout(grid, Placement::sites(sites, ranks_));
}

std::vector<Bound> VertexSchedule::tuple_bounds(Extent t) const {
  std::vector<Bound> bounds;
  for (std::size_t k = 0; k < operand_layouts_.size(); ++k) {
    const BlockGrid& grid = operand_layouts_[k].grid();
    bounds.push_back(grid.box(grid.key(operand_block(k, t))).extents());
  }
  return bounds;
}

std::vector<std::string> tuple_orders(const Graph& graph, const std::vector<partition::PartitionVector>& partitions) {
  std::vector<std::string> orders(graph.size());
  for (VertexId v = graph.size(); v-- > 0;) {
    if (graph.vertex(v).is_input()) continue;
    partitions[v].check_fits(*graph.vertex(v).resolved);  // readers (later vertices) are checked already
    const std::string& output = graph.vertex(v).resolved->einsum().output;
    orders[v] = output;
    const std::vector<Extent> cut = partitions[v].project(output);
    bool found = false;
    for (VertexId c = v + 1; c < graph.size() && !found; ++c) {
      const Vertex& reader = graph.vertex(c);
      for (std::size_t k = 0; k < reader.inputs.size() && !found; ++k) {
        const std::string& labels = reader.resolved->einsum().inputs[k];
        if (reader.inputs[k] != v || partitions[c].project(labels) != cut) continue;
        // The reader numbers its tuples over orders[c], then its aggregated labels: v's dimensions in that order.
        const std::string reader_order = orders[c] + reader.resolved->aggregated_labels();
        std::vector<std::size_t> dims(labels.size());
        for (std::size_t i = 0; i < dims.size(); ++i) dims[i] = i;
        std::sort(dims.begin(), dims.end(), [&](std::size_t a, std::size_t b) {
          return reader_order.find(labels[a]) < reader_order.find(labels[b]);
        });
        for (std::size_t i = 0; i < dims.size(); ++i) orders[v][i] = output[dims[i]];
        found = true;
      }
    }
  }
  return orders;
}

namespace {

// The model's time for reducing a vertex's partial results on the owners of its output blocks (step 3 of
// execute): the busiest rank's messages and bytes.
double reduction_seconds(const VertexSchedule& vs, std::size_t element_bytes, const MachineModel& model) {
  std::vector<Extent> messages(vs.ranks(), 0), sent(vs.ranks(), 0), received(vs.ranks(), 0);
  const BlockGrid& grid = vs.output_layout().grid();
  for (Extent g = 0; g < grid.num_blocks(); ++g) {
    const std::vector<int> ranks = vs.contributors(g);
    const Extent n = grid.box(grid.key(g)).size();
    for (std::size_t i = 1; i < ranks.size(); ++i) ++messages[ranks[0]], received[ranks[0]] += n, sent[ranks[i]] += n;
  }
  double slowest = 0;
  for (int r = 0; r < vs.ranks(); ++r)
    slowest = std::max(slowest, model.latency_seconds * static_cast<double>(messages[r]) +
                                    model.seconds_per_byte * static_cast<double>(std::max(sent[r], received[r]) *
                                                                                 static_cast<Extent>(element_bytes)));
  return slowest;
}

// The join that combines two partial results of pending ⊕ `op` into one (a ⊕ b).
JoinOp join_of(AggOp op) {
  switch (op) {
    case AggOp::sum:
      return JoinOp::add;
    case AggOp::max:
      return JoinOp::max;
    case AggOp::min:
      return JoinOp::min;
    case AggOp::prod:
      return JoinOp::mul;
  }
  return JoinOp::add;
}

// The layout of a value first placed as an operand: every block the value holds has a site, so that a
// later reader finds it. Its first reader's operand layout gives most; a block that reader's tuples skip (it
// skips absent blocks of another operand, docs/sparse.md) gets the rank an even spread gives it. A sparse
// value's absent blocks have none; a dense value's every block has one, whoever reads it first.
BlockLayout value_layout(const BlockLayout& operand, const std::optional<BlockShape>& shape) {
  const BlockGrid& grid = operand.grid();
  if (!shape && !operand.placement().has_absent()) return operand;
  const std::optional<BlockShape> present = shape ? std::optional<BlockShape>(shape->on(grid)) : std::nullopt;
  const Placement spread = Placement::spread(grid.num_blocks(), operand.num_ranks());
  std::vector<std::vector<int>> sites(static_cast<std::size_t>(grid.num_blocks()));
  for (Extent b = 0; b < grid.num_blocks(); ++b) {
    if (present && !present->present(b)) continue;
    auto& s = sites[static_cast<std::size_t>(b)];
    for (int i = 0; i < operand.placement().num_sites(b); ++i) s.push_back(operand.placement().site(b, i));
    if (s.empty()) s.push_back(spread.site(b, 0));
  }
  return BlockLayout(grid, Placement::sites(sites, operand.num_ranks()));
}

}  // namespace

Schedule::Schedule(const Graph& graph, const std::vector<partition::PartitionVector>& partitions, int ranks,
                   TransitionPolicy policy, const MachineModel& model,
                   const std::vector<std::pair<VertexId, VertexId>>& carried, InputReads reads)
    : ranks_(ranks),
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
  const std::vector<std::string> orders = tuple_orders(graph, partitions);
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
    if (skips_absent_blocks(vertex.resolved->einsum()))
      for (VertexId in : vertex.inputs) operand_shapes.push_back(shapes_[in] ? &*shapes_[in] : nullptr);
    vertices_[v].emplace(vertex, partitions[v], ranks, orders[v], operand_shapes);
    shapes_[v] = vertices_[v]->output_shape();
    layouts_[v] = vertices_[v]->output_layout();
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      const VertexId in = vertex.inputs[k];
      ++uses_[in];
      if (!layouts_[in]) layouts_[in] = value_layout(vertices_[v]->operand_layout(k), shapes_[in]);
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
  choose_transitions(graph, model);
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
  for (VertexId v = 0; v < graph.size(); ++v)  // inputs nothing reads (outputs only): one block on rank 0
    if (!layouts_[v])
      layouts_[v].emplace(BlockGrid(graph.vertex(v).bound, std::vector<Extent>(graph.vertex(v).bound.size(), 1)),
                          ranks);
}

// One pass over the vertices in order: each one's operand transitions, then whether an element-wise
// vertex combines two partial results where they lie, and whether its own reduction is deferred to its
// one reader's collectives.
class Schedule::TransitionPass {
 public:
  TransitionPass(Schedule& s, const Graph& graph, const MachineModel& model)
      : s_(s),
        graph_(graph),
        model_(model),
        chooser_(s.ranks_, s.policy_, model),
        readers_(graph.size()),
        to_reader_(graph.size()) {
    for (VertexId v = 0; v < graph.size(); ++v)
      for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
        readers_[graph.vertex(v).inputs[k]].emplace_back(v, k);
  }

  void run() {
    s_.deferred_.assign(graph_.size(), false);
    s_.transitions_.assign(graph_.size(), {});
    s_.reads_again_.assign(graph_.size(), {});
    for (VertexId v = 0; v < graph_.size(); ++v) {
      if (graph_.vertex(v).is_input()) continue;
      if (s_.policy_ != TransitionPolicy::point_to_point && s_.ranks_ > 1) combine_partials(v);
      operand_transitions(v);
      choose_reduction(v);
    }
    for (VertexId v = 0; v < graph_.size(); ++v) {
      if (graph_.vertex(v).is_input()) continue;
      double& seconds = s_.communication_seconds_[v];
      for (const auto& t : s_.transitions_[v])
        if (t) seconds += t->seconds;
      if (!s_.deferred_[v] && !s_.vertices_[v]->on_partials())
        seconds += reduction_seconds(*s_.vertices_[v], element_bytes(v), model_);
    }
  }

 private:
  std::size_t element_bytes(VertexId v) const { return dtype_bytes(graph_.vertex(v).dtype); }

  // The model's time for producer `in` reaching its one reader as decided at its turn.
  double reaching(VertexId in, VertexId reader, std::size_t k) {
    const double reduce = s_.deferred_[in] ? 0 : reduction_seconds(*s_.vertices_[in], element_bytes(in), model_);
    return reduce + (to_reader_[in]
                         ? to_reader_[in]->seconds
                         : chooser_.choose(*s_.layouts_[in], s_.vertices_[reader]->operand_layout(k), element_bytes(in))
                               .seconds);
  }

  // Whether element-wise vertex v can combine two partial results as they are (deferred(v)), and then does.
  void combine_partials(VertexId v) {
    const Vertex& vertex = graph_.vertex(v);
    const EinSum& e = vertex.resolved->einsum();
    if (vertex.inputs.size() != 2 || vertex.inputs[0] == vertex.inputs[1] || s_.kept_[v] || readers_[v].size() != 1 ||
        s_.shapes_[vertex.inputs[0]] || s_.shapes_[vertex.inputs[1]] || e.map.kind != MapKind::identity ||
        e.inputs[0] != e.output || e.inputs[1] != e.output)
      return;
    const VertexId P = vertex.inputs[0], Q = vertex.inputs[1];
    for (VertexId in : {P, Q}) {
      const Vertex& producer = graph_.vertex(in);
      if (producer.is_input() || s_.vertices_[in]->group_size() == 1 || s_.kept_[in] || readers_[in].size() != 1 ||
          join_of(producer.resolved->einsum().agg) != e.join || producer.dtype != vertex.dtype)
        return;
    }
    const BlockLayout partials = s_.vertices_[P]->partial_layout();
    if (!(s_.vertices_[Q]->partial_layout() == partials)) return;
    const auto [w, k] = readers_[v][0];
    const std::size_t element = element_bytes(v);
    std::optional<Transition> combined = chooser_.from_partials(partials, graph_.vertex(P).resolved->einsum().agg,
                                                                s_.vertices_[w]->operand_layout(k), element);
    if (!combined) return;
    const double apart =
        reaching(P, v, 0) + reaching(Q, v, 1) +
        chooser_.choose(s_.vertices_[v]->output_layout(), s_.vertices_[w]->operand_layout(k), element).seconds;
    if (s_.policy_ != TransitionPolicy::collectives && combined->seconds > apart) return;
    s_.vertices_[v].emplace(vertex, partials);
    for (VertexId in : {P, Q, v}) s_.deferred_[in] = true, s_.layouts_[in] = partials;
    for (VertexId in : {P, Q}) to_reader_[in] = chooser_.choose(partials, partials, element);  // nothing moves
    to_reader_[v] = std::move(combined);
  }

  void operand_transitions(VertexId v) {
    const Vertex& vertex = graph_.vertex(v);
    s_.reads_again_[v].assign(vertex.inputs.size(), false);
    for (std::size_t k = 0; k < vertex.inputs.size(); ++k) {
      const VertexId in = vertex.inputs[k];
      if (s_.shared_[v][k] || s_.streamed_[in]) {
        s_.transitions_[v].emplace_back();
      } else if (to_reader_[in]) {
        s_.transitions_[v].push_back(*to_reader_[in]);
      } else {
        const BlockLayout& to = s_.vertices_[v]->operand_layout(k);
        Transition moved = chooser_.choose(*s_.layouts_[in], to, element_bytes(in));
        if (const auto read = reads_again(in, to, moved)) {
          s_.reads_again_[v][k] = true;
          s_.communication_seconds_[v] += *read;
          s_.transitions_[v].emplace_back();
        } else {
          s_.transitions_[v].push_back(std::move(moved));
        }
      }
    }
  }

  // The model's time for reading a graph input again from its source into `to`, when that is better than
  // moving it there from its layout (InputReads::again, not carried, the move sends something, and the read
  // is no slower); else nothing.
  std::optional<double> reads_again(VertexId in, const BlockLayout& to, const Transition& moved) const {
    if (s_.reads_ != InputReads::again || !graph_.vertex(in).is_input() || s_.carried_[in]) return std::nullopt;
    Extent sent = 0;
    for (Extent n : moved.volumes.sent) sent += n;
    if (sent == 0) return std::nullopt;
    const double read = read_seconds(in, to);
    return read <= moved.seconds ? std::optional<double>(read) : std::nullopt;
  }

  // The model's time for the busiest rank to read input `in` again into `to`: the blocks of `to` it does not
  // already hold.
  double read_seconds(VertexId in, const BlockLayout& to) const {
    const BlockLayout& from = *s_.layouts_[in];
    const bool same_cut = from.grid() == to.grid();
    std::vector<Extent> read(static_cast<std::size_t>(s_.ranks_), 0);
    for (Extent b = 0; b < to.grid().num_blocks(); ++b)
      for (int i = 0; i < to.placement().num_sites(b); ++i) {
        const int r = to.placement().site(b, i);
        if (!(same_cut && from.placement().holds(r, b))) read[r] += to.grid().box(to.grid().key(b)).size();
      }
    const double busiest = static_cast<double>(*std::max_element(read.begin(), read.end()));
    return busiest * static_cast<double>(element_bytes(in)) * model_.file_seconds_per_byte;
  }

  // Reduce v's partial results to its owners, or leave them for its one reader's collectives.
  void choose_reduction(VertexId v) {
    const VertexSchedule& vs = *s_.vertices_[v];
    if (vs.group_size() == 1 || s_.kept_[v] || readers_[v].size() != 1 || vs.on_partials() || s_.shapes_[v]) return;
    const auto [w, k] = readers_[v][0];
    const BlockLayout& to = s_.vertices_[w]->operand_layout(k);
    const std::size_t element = element_bytes(v);
    std::optional<Transition> deferred =
        chooser_.from_partials(vs.partial_layout(), graph_.vertex(v).resolved->einsum().agg, to, element);
    if (!deferred) return;
    Transition reduced = chooser_.choose(*s_.layouts_[v], to, element);
    if (s_.policy_ == TransitionPolicy::collectives ||
        deferred->seconds <= reduction_seconds(vs, element, model_) + reduced.seconds) {
      s_.deferred_[v] = true;
      s_.layouts_[v] = vs.partial_layout();
      to_reader_[v] = std::move(deferred);
    } else {
      to_reader_[v] = std::move(reduced);
    }
  }

  Schedule& s_;
  const Graph& graph_;
  const MachineModel& model_;
  TransitionChooser chooser_;
  std::vector<std::vector<std::pair<VertexId, std::size_t>>> readers_;
  std::vector<std::optional<Transition>> to_reader_;  // chosen with the deferral of a producer
};

void Schedule::choose_transitions(const Graph& graph, const MachineModel& model) {
  TransitionPass(*this, graph, model).run();
}

std::vector<bool> streamed_inputs(const Graph& graph, InputReads reads,
                                  const std::vector<std::pair<VertexId, VertexId>>& carried) {
  std::vector<bool> streamed(graph.size(), false);
  if (reads != InputReads::again) return streamed;
  std::vector<int> edges(graph.size(), 0);
  for (const Vertex& v : graph.vertices())
    for (VertexId in : v.inputs) ++edges[in];
  for (VertexId v = 0; v < graph.size(); ++v) streamed[v] = graph.vertex(v).is_input() && edges[v] == 1;
  for (VertexId v : graph.outputs()) streamed[v] = false;
  for (const auto& [w, next] : carried) streamed[w] = false;
  return streamed;
}

const Transition& Schedule::transition(VertexId v, std::size_t k) const {
  const std::optional<Transition>& t = transitions_.at(v).at(k);
  if (!t)
    throw Error("operand " + std::to_string(k) + " of vertex " + std::to_string(v) +
                " moves nothing: it shares an earlier operand's blocks, or is read from its source");
  return *t;
}

std::optional<std::size_t> Schedule::shared_operand(VertexId v, std::size_t k) const { return shared_[v][k]; }

Lifetimes::Lifetimes(const Schedule& schedule) : schedule_(schedule), uses_(schedule.partitions().size()) {
  for (VertexId v = 0; v < uses_.size(); ++v) uses_[v] = schedule.uses(v);
}

std::vector<VertexId> Lifetimes::unread_inputs(const Graph& graph) const {
  std::vector<VertexId> unread;
  for (VertexId v = 0; v < graph.size(); ++v)
    if (graph.vertex(v).is_input() && dead(v)) unread.push_back(v);
  return unread;
}

std::vector<VertexId> Lifetimes::read_operands(const Vertex& vertex) {
  for (VertexId in : vertex.inputs) --uses_[in];
  std::vector<VertexId> died;
  for (VertexId in : vertex.inputs)
    if (dead(in) && std::find(died.begin(), died.end(), in) == died.end()) died.push_back(in);
  return died;
}

}  // namespace einrel::engine
