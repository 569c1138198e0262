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

}  // namespace einrel::redistribute
