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

std::uint64_t BlockLayout::digest() const {
  std::uint64_t h = 0x243F6A8885A308D3ull;
  auto mix = [&h](Extent x) {  // one word into the digest (a multiply-xorshift round, as in splitmix64)
    h = (h ^ static_cast<std::uint64_t>(x)) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
  };
  mix(grid_.rank());
  for (int d = 0; d < grid_.rank(); ++d) {
    mix(grid_.parts()[d]);
    for (Extent k = 0; k < grid_.parts()[d]; ++k) mix(grid_.offset(d, k));
    mix(grid_.bound()[d]);
  }
  mix(placement_.num_ranks());
  for (Extent b = 0; b < placement_.num_blocks(); ++b) {
    const int n = placement_.num_sites(b);
    mix(n);
    for (int i = 0; i < n; ++i) mix(placement_.site(b, i));
  }
  return h;
}

}  // namespace einrel::redistribute
