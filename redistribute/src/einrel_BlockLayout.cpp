#include <einrel_BlockLayout.hpp>
#include <einrel_Error.hpp>

#include <tuple>

namespace einrel::redistribute {

BlockLayout::BlockLayout(BlockGrid grid, int num_ranks) : grid_(std::move(grid)), num_ranks_(num_ranks) {
  if (num_ranks < 1) throw Error("a block layout needs at least one rank, got " + std::to_string(num_ranks));
}

int BlockLayout::owner(Extent block) const { return static_cast<int>(block * num_ranks_ / grid_.num_blocks()); }

std::vector<Extent> BlockLayout::blocks_of(int rank) const {
  std::vector<Extent> blocks;
  for (Extent b = 0; b < grid_.num_blocks(); ++b)
    if (owner(b) == rank) blocks.push_back(b);
  return blocks;
}

namespace {

// Calls f(other_block, overlap) for every block of `other` that overlaps `box`: per dimension only the
// range of blocks covering [lo, hi) is visited, so the cost is the number of overlaps, not of blocks.
template <class F>
void for_each_overlap(const BlockGrid& other, const Box& box, F&& f) {
  const int rank = other.rank();
  std::vector<Extent> first(rank), last(rank), key(rank);
  for (int d = 0; d < rank; ++d) std::tie(first[d], last[d]) = other.blocks_overlapping(d, box.lo[d], box.hi[d]);
  key = first;
  while (true) {
    f(other.id(key), intersect(box, other.box(key)));
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++key[d] <= last[d]) break;
      key[d] = first[d];
    }
    if (d < 0) return;
  }
}

void check_same_bound(const BlockLayout& from, const BlockLayout& to) {
  if (from.grid().bound() != to.grid().bound())
    throw Error("cannot redistribute between bounds " + to_string(from.grid().bound()) + " and " +
                to_string(to.grid().bound()));
}

}  // namespace

std::vector<Transfer> transfers_sent_by(const BlockLayout& from, const BlockLayout& to, int rank) {
  check_same_bound(from, to);
  std::vector<Transfer> out;
  for (Extent s : from.blocks_of(rank))
    for_each_overlap(to.grid(), from.grid().box(from.grid().key(s)), [&](Extent t, const Box& box) {
      out.push_back({s, t, rank, to.owner(t), box});
    });
  return out;
}

std::vector<Transfer> transfers_received_by(const BlockLayout& from, const BlockLayout& to, int rank) {
  check_same_bound(from, to);
  std::vector<Transfer> out;
  for (Extent t : to.blocks_of(rank))
    for_each_overlap(from.grid(), to.grid().box(to.grid().key(t)), [&](Extent s, const Box& box) {
      out.push_back({s, t, from.owner(s), rank, box});
    });
  return out;
}

}  // namespace einrel::redistribute
