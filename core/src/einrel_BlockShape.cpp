#include <einrel_BlockShape.hpp>
#include <einrel_Error.hpp>

#include <algorithm>
#include <cmath>

namespace einrel {

BlockShape::BlockShape(BlockGrid grid, std::vector<bool> present)
    : grid_(std::move(grid)), present_(std::move(present)) {
  if (static_cast<Extent>(present_.size()) != grid_.num_blocks())
    throw Error("a block shape over " + std::to_string(grid_.num_blocks()) + " blocks got " +
                std::to_string(present_.size()) + " entries");
}

BlockShape::BlockShape(BlockGrid grid, std::vector<bool> present, std::vector<double> norms)
    : BlockShape(std::move(grid), std::move(present)) {
  if (norms.size() != present_.size())
    throw Error("a block shape over " + std::to_string(present_.size()) + " blocks got " +
                std::to_string(norms.size()) + " norms");
  for (double x : norms)
    if (!(x >= 0)) throw Error("a block's norm bound must be a non-negative number, got " + std::to_string(x));
  norms_ = std::move(norms);
}

Extent BlockShape::num_present() const { return std::count(present_.begin(), present_.end(), true); }

double BlockShape::density() const {
  Extent in = 0;
  for (Extent b = 0; b < grid_.num_blocks(); ++b)
    if (present(b)) in += grid_.block_size(b);
  const Extent all = num_elements(grid_.bound());
  return all > 0 ? static_cast<double>(in) / static_cast<double>(all) : 0.0;
}

BlockShape BlockShape::on(const BlockGrid& grid) const {
  if (grid.bound() != grid_.bound())
    throw Error("a block shape of " + to_string(grid_.bound()) + " cannot describe a tensor of " +
                to_string(grid.bound()));
  if (grid == grid_) return *this;
  std::vector<bool> present(static_cast<std::size_t>(grid.num_blocks()), false);
  std::vector<double> squares(has_norms() ? present.size() : 0, 0.0);
  for (Extent b = 0; b < grid.num_blocks(); ++b)
    for_each_overlap(grid_, grid.box(grid.key(b)), [&](const std::vector<Extent>& key, const Box&) {
      const auto id = static_cast<std::size_t>(grid_.id(key));
      if (present_[id]) present[static_cast<std::size_t>(b)] = true;
      if (has_norms()) squares[static_cast<std::size_t>(b)] += norms_[id] * norms_[id];
    });
  if (!has_norms()) return BlockShape(grid, std::move(present));
  for (double& x : squares) x = std::sqrt(x);
  return BlockShape(grid, std::move(present), std::move(squares));
}

namespace {

bool keeps_zero(const MapOp& map) {
  switch (map.kind) {
    case MapKind::identity:
    case MapKind::neg:
    case MapKind::abs:
    case MapKind::relu:
    case MapKind::square:
    case MapKind::sqrt:
    case MapKind::tanh:
    case MapKind::scale:
    case MapKind::sign:
      return true;
    case MapKind::shift:
      return map.constant == 0;
    case MapKind::pow:
      return map.constant > 0;
    case MapKind::exp:
    case MapKind::log:
    case MapKind::sigmoid:
      return false;
  }
  return false;
}

}  // namespace

SparseRule sparse_rule(const EinSum& e) {
  bool aggregates = false;
  for (const std::string& labels : e.inputs)
    for (char c : labels) aggregates = aggregates || e.output.find(c) == std::string::npos;
  if (!keeps_zero(e.map) || (aggregates && e.agg != AggOp::sum)) return SparseRule::dense;
  if (e.inputs.size() == 1 || e.join == JoinOp::mul) return SparseRule::intersection;
  switch (e.join) {
    case JoinOp::add:
    case JoinOp::sub:
    case JoinOp::max:
    case JoinOp::min:
    case JoinOp::sqdiff:
    case JoinOp::absdiff:
      return SparseRule::union_of_shapes;
    default:  // div (0 / 0) and eq (0 == 0 is 1) are not zero; first is left dense
      return SparseRule::dense;
  }
}

}  // namespace einrel
