#include <einrel_BlockLayout.hpp>
#include <einrel_Error.hpp>

namespace einrel::redistribute {

BlockLayout::BlockLayout(BlockGrid grid, int num_ranks)
    : grid_(std::move(grid)), placement_(Placement::spread(grid_.num_blocks(), num_ranks)) {}

BlockLayout::BlockLayout(BlockGrid grid, Placement placement)
    : grid_(std::move(grid)), placement_(std::move(placement)) {
  if (placement_.num_blocks() != grid_.num_blocks())
    throw Error("a placement of " + std::to_string(placement_.num_blocks()) + " blocks does not fit a grid of " +
                std::to_string(grid_.num_blocks()) + " blocks " + to_string(grid_.parts()));
}

std::vector<Extent> BlockLayout::signature() const {
  std::size_t n = 2 + static_cast<std::size_t>(placement_.num_blocks());
  for (int d = 0; d < grid_.rank(); ++d) n += static_cast<std::size_t>(grid_.parts()[d]) + 2;
  for (Extent b = 0; b < placement_.num_blocks(); ++b) n += static_cast<std::size_t>(placement_.num_sites(b));
  std::vector<Extent> s;
  s.reserve(n);
  s.push_back(grid_.rank());
  for (int d = 0; d < grid_.rank(); ++d) {
    s.push_back(grid_.parts()[d]);
    for (Extent k = 0; k < grid_.parts()[d]; ++k) s.push_back(grid_.offset(d, k));
    s.push_back(grid_.bound()[d]);
  }
  s.push_back(placement_.num_ranks());
  for (Extent b = 0; b < placement_.num_blocks(); ++b) {
    s.push_back(placement_.num_sites(b));
    for (int i = 0; i < placement_.num_sites(b); ++i) s.push_back(placement_.site(b, i));
  }
  return s;
}

}  // namespace einrel::redistribute
