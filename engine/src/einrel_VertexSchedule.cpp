#include <einrel_Error.hpp>
#include <einrel_VertexSchedule.hpp>

#include <algorithm>
#include <cmath>

namespace einrel::engine {

using redistribute::BlockLayout;
using redistribute::Placement;

VertexSchedule::VertexSchedule(const Vertex& vertex, const partition::PartitionVector& d, int ranks,
                               const std::string& output_order, const std::vector<const BlockShape*>& operand_shapes,
                               double screen, const MachineModel* model)
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
  output_layout_grid_blocks_ = num_elements(d.project(e.output));
  if (vertex.slice || std::any_of(operand_shapes.begin(), operand_shapes.end(), [](const BlockShape* p) { return p; }))
    keep_present_tuples(vertex, tuple_labels, operand_shapes, screen, model);

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
    // Each block's readers, counted and then listed per block (one list for all: a list per block cost an
    // allocation per block at p = R = 16 384). t grows, so each block's ranks arrive sorted.
    const std::size_t blocks = static_cast<std::size_t>(grid.num_blocks());
    std::vector<int> last(blocks, -1);
    std::vector<std::pair<Extent, int>> reads;  // (block, rank), a rank once per block
    std::vector<Extent> offsets(blocks + 1, 0);
    auto read_by = [&](Extent t, int r) {
      const Extent b = operand_block(k, t);
      if (last[static_cast<std::size_t>(b)] == r) return;
      last[static_cast<std::size_t>(b)] = r;
      reads.emplace_back(b, r);
      ++offsets[static_cast<std::size_t>(b) + 1];
    };
    if (present_)
      for (std::size_t i = 0; i < present_->size(); ++i) read_by((*present_)[i], present_rank_[i]);
    else
      for (Extent t = 0; t < num_tuples_; ++t) read_by(t, tuple_rank(t));
    for (std::size_t b = 0; b < blocks; ++b) offsets[b + 1] += offsets[b];
    std::vector<int> sites(reads.size());
    std::vector<Extent> next(offsets.begin(), offsets.end() - 1);
    for (const auto& [b, r] : reads) sites[static_cast<std::size_t>(next[static_cast<std::size_t>(b)]++)] = r;
    operand_layouts_.emplace_back(std::move(grid), Placement::sites(std::move(offsets), std::move(sites), ranks));
  }
}

void VertexSchedule::keep_present_tuples(const Vertex& vertex, const std::string& tuple_labels,
                                         const std::vector<const BlockShape*>& operand_shapes, double screen,
                                         const MachineModel* model) {
  const ResolvedEinSum& resolved = *vertex.resolved;
  const EinSum& e = resolved.einsum();
  // A sliced vertex's pass (Vertex::slice): the tuples whose digit along the label lies in [first, last).
  std::size_t sliced_digit = 0;
  Extent first = 0, last = 0;
  if (vertex.slice) {
    const VertexSlice& slice = *vertex.slice;
    sliced_digit = tuple_labels.find(slice.label);
    const Extent parts = tuple_parts_[sliced_digit], extent = resolved.extent(slice.label);
    first = slice.pass * parts / slice.passes;
    last = (slice.pass + 1) * parts / slice.passes;
    // Every pass of the region cuts its chunk at the same elements: the blocks' edges fall on the chunks' edges.
    const BlockGrid blocks({extent}, {parts}), chunks({extent}, {slice.passes});
    if (parts % slice.passes != 0 || blocks.offset(0, first) != chunks.offset(0, slice.pass) ||
        (last < parts && blocks.offset(0, last) != chunks.offset(0, slice.pass + 1)))
      throw Error("vertex '" + vertex.name + "' runs pass " + std::to_string(slice.pass) + " of " +
                  std::to_string(slice.passes) + " of label '" + std::string(1, slice.label) + "' but cuts it into " +
                  std::to_string(parts) + " parts: the blocks must fall on the passes' chunks");
  }
  std::vector<std::optional<BlockShape>> masks(e.inputs.size());
  for (std::size_t k = 0; k < operand_shapes.size() && k < masks.size(); ++k)
    if (operand_shapes[k])
      masks[k] = operand_shapes[k]->on(BlockGrid(resolved.extents(e.inputs[k]), [&] {
        std::vector<Extent> parts;
        for (char c : e.inputs[k]) parts.push_back(tuple_parts_[tuple_labels.find(c)]);
        return parts;
      }()));
  // The union (every operand sparse, SparseRule::union_of_shapes): a tuple runs where any operand block is
  // present; otherwise where every sparse operand's block is.
  const bool any = !masks.empty() && sparse_rule(e) == SparseRule::union_of_shapes &&
                   std::all_of(masks.begin(), masks.end(), [](const auto& m) { return m.has_value(); });
  present_.emplace();
  for (Extent t = 0; t < num_tuples_; ++t) {
    bool runs = true;
    if (vertex.slice) {
      const Extent digit = (t / tuple_strides_[sliced_digit]) % tuple_parts_[sliced_digit];
      runs = digit >= first && digit < last;
    }
    if (any) {
      bool present = false;
      for (std::size_t k = 0; k < masks.size() && !present; ++k) present = masks[k]->present(operand_block(k, t));
      runs = runs && present;
    }
    for (std::size_t k = 0; k < masks.size() && runs && !any; ++k)
      runs = !masks[k] || masks[k]->present(operand_block(k, t));
    if (runs) present_->push_back(t);
  }
  if (screen > 0 && e.is_contraction() && masks.size() == 2 && masks[0] && masks[1] && masks[0]->has_norms() &&
      masks[1]->has_norms())
    screen_by_norms(*masks[0], *masks[1], screen);
  spread_present_tuples(resolved, tuple_labels, vertex.dtype, model);
}

void VertexSchedule::spread_present_tuples(const ResolvedEinSum& resolved, const std::string& tuple_labels, Dtype dtype,
                                           const MachineModel* model) {
  // A tuple's flops are proportional to its box in the grid of all its labels (numbered like the tuples).
  const BlockGrid tuples(resolved.extents(tuple_labels), tuple_parts_);
  const std::size_t n = present_->size();
  std::vector<Extent> before(n + 1, 0);  // the flops (box elements) before each running tuple, and in all
  for (std::size_t i = 0; i < n; ++i) before[i + 1] = before[i] + tuples.block_size((*present_)[i]);
  const Extent total = before[n];
  // Whether the rank's tuples may end before running tuple i without cutting an output block's tuples apart.
  auto whole = [&](std::size_t i) {
    return i == 0 || i == n || output_block((*present_)[i]) != output_block((*present_)[i - 1]);
  };
  // Cut r (0 < r < R) ends rank r - 1's tuples, at the tuple where the flops before it first reach r/R of all.
  // Under a model, a cut inside an output block's tuples costs sending and adding that block's partial result
  // (its bytes over the network and three times through memory, one message), and moving a cut away from the
  // even share costs the flops it moves: of the tuple cuts on either side of the share and the block's edges on
  // either side, the cheapest wins, the first on a tie (docs/sparse.md "Planning by shape").
  const double flops_per_box_element =
      resolved.einsum().inputs.size() == 2 && !resolved.aggregated_labels().empty() ? 2 : 1;
  auto cost = [&](std::size_t i, long double share) {
    double seconds = static_cast<double>(std::fabs(static_cast<long double>(before[i]) - share)) *
                     flops_per_box_element / model->flops_per_second;
    if (!whole(i)) {
      const Bound box = tuples.block_bound((*present_)[i]);
      double elements = 1;
      for (int digit : output_digits_) elements *= static_cast<double>(box[static_cast<std::size_t>(digit)]);
      const double bytes = elements * static_cast<double>(dtype_bytes(dtype));
      seconds += model->latency_seconds + bytes * (model->seconds_per_byte + 3 / model->memory_bytes_per_second);
    }
    return seconds;
  };
  std::vector<std::size_t> cut(static_cast<std::size_t>(ranks_) + 1, n);
  cut[0] = 0;
  for (int r = 1; r < ranks_; ++r) {
    const long double share = static_cast<long double>(total) * r / ranks_;
    std::size_t best = static_cast<std::size_t>(
        std::lower_bound(before.begin(), before.end(), share,
                         [](Extent b, long double x) { return static_cast<long double>(b) < x; }) -
        before.begin());
    if (model && total > 0 && !whole(best)) {
      std::size_t down = best, up = best;
      while (!whole(down)) --down;
      while (!whole(up)) ++up;
      double least = cost(best, share);
      for (std::size_t other : {best - 1, down, up})
        if (const double c = cost(other, share); c < least) least = c, best = other;
    }
    cut[static_cast<std::size_t>(r)] = std::max(best, cut[static_cast<std::size_t>(r) - 1]);
  }
  present_rank_.assign(n, 0);
  for (int r = 0; r < ranks_; ++r)
    for (std::size_t i = cut[static_cast<std::size_t>(r)]; i < cut[static_cast<std::size_t>(r) + 1]; ++i)
      present_rank_[i] = r;
}

void VertexSchedule::screen_by_norms(const BlockShape& a, const BlockShape& b, double screen) {
  // ‖A_ik B_kj‖ <= ‖A_ik‖ ‖B_kj‖ (Frobenius norms, submultiplicative): a product whose bound is below the
  // threshold is skipped, and an output block whose products' bounds sum below it is dropped (DBCSR's filter
  // and TiledArray's shape threshold; docs/sparse.md "Screening by norms").
  std::vector<double> product(present_->size());
  std::vector<double> bound(static_cast<std::size_t>(output_layout_grid_blocks_), 0.0);
  for (std::size_t i = 0; i < present_->size(); ++i) {
    const Extent t = (*present_)[i];
    product[i] = a.norm(operand_block(0, t)) * b.norm(operand_block(1, t));
    if (product[i] >= screen) bound[static_cast<std::size_t>(output_block(t))] += product[i];
  }
  // An output block with a product is truncated when its remaining products' bounds sum below the threshold: also
  // (the usual case) when every one of its products was screened.
  std::vector<bool> counted(bound.size(), false);
  std::vector<Extent> kept;
  for (std::size_t i = 0; i < present_->size(); ++i) {
    const Extent t = (*present_)[i];
    const auto g = static_cast<std::size_t>(output_block(t));
    if (product[i] < screen)
      ++screened_;
    else if (bound[g] >= screen)
      kept.push_back(t);
    if (bound[g] < screen && !counted[g]) ++truncated_, counted[g] = true;
  }
  *present_ = std::move(kept);
  for (double& x : bound)
    if (x < screen) x = 0;
  output_norms_ = std::move(bound);
}

std::size_t VertexSchedule::present_index(Extent t) const {
  const auto it = std::lower_bound(present_->begin(), present_->end(), t);
  if (it == present_->end() || *it != t)
    throw Error("join tuple " + std::to_string(t) + " does not run: its operand blocks are absent");
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
  if (!output_norms_.empty()) return BlockShape(grid, std::move(present), output_norms_);
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
  tuples_of(rank, tuples);
  return tuples;
}

void VertexSchedule::tuples_of(int rank, std::vector<Extent>& tuples) const {
  tuples.clear();
  if (partials_) {  // a type: the one block the rank holds
    const std::vector<Extent> blocks = partials_->blocks_of(rank);
    if (!blocks.empty()) tuples.push_back(blocks[0]);
    return;
  }
  if (present_) {  // ranks do not decrease along the running tuples: this rank's are consecutive
    const auto [first, last] = std::equal_range(present_rank_.begin(), present_rank_.end(), rank);
    tuples.assign(present_->begin() + (first - present_rank_.begin()),
                  present_->begin() + (last - present_rank_.begin()));
    return;
  }
  // t runs on rank r when r·J/R <= t < (r+1)·J/R, rounded up.
  const Extent J = num_tuples_, R = ranks_;
  for (Extent t = (rank * J + R - 1) / R; t < ((rank + 1) * J + R - 1) / R; ++t) tuples.push_back(t);
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
  std::vector<int> ranks;
  contributors(g, ranks);
  return ranks;
}

void VertexSchedule::contributors(Extent g, std::vector<int>& ranks) const {
  ranks.clear();
  if (partials_) {
    for (int i = 0; i < partials_->placement().num_sites(g); ++i) ranks.push_back(partials_->placement().site(g, i));
    return;
  }
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
}

BlockLayout VertexSchedule::partial_layout() const {
  const BlockGrid& grid = output_layout_->grid();
  std::vector<std::vector<int>> sites;
  for (Extent g = 0; g < grid.num_blocks(); ++g) sites.push_back(contributors(g));
  return BlockLayout(grid, Placement::sites(sites, ranks_));
}

std::vector<Bound> VertexSchedule::tuple_bounds(Extent t) const {
  std::vector<Bound> bounds;
  tuple_bounds(t, bounds);
  return bounds;
}

void VertexSchedule::tuple_bounds(Extent t, std::vector<Bound>& bounds) const {
  bounds.resize(operand_layouts_.size());
  for (std::size_t k = 0; k < operand_layouts_.size(); ++k)
    operand_layouts_[k].grid().block_bound(operand_block(k, t), bounds[k]);
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

}  // namespace einrel::engine
