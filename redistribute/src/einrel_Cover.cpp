#include <einrel_Cover.hpp>
#include <einrel_Error.hpp>
#include <einrel_Wait.hpp>

#include <algorithm>
#include <string>

namespace einrel::redistribute {
namespace {

std::string box_text(const Box& b) { return to_string(b.lo) + ".." + to_string(b.hi); }

}  // namespace

BlockLayout cover_layout(const Bound& bound, const std::vector<std::vector<Box>>& boxes_by_rank, bool holes) {
  const int num_ranks = static_cast<int>(boxes_by_rank.size());
  // Cut every dimension at every box boundary inside the bound.
  std::vector<std::vector<Extent>> starts(bound.size(), std::vector<Extent>{0});
  for (int r = 0; r < num_ranks; ++r)
    for (const Box& b : boxes_by_rank[r]) {
      bool inside = b.lo.size() == bound.size() && b.hi.size() == bound.size();
      for (std::size_t d = 0; inside && d < bound.size(); ++d) inside = 0 <= b.lo[d] && b.hi[d] <= bound[d];
      if (!inside)
        throw Error("rank " + std::to_string(r) + "'s box " + box_text(b) + " is not inside bound " + to_string(bound));
      if (b.empty()) continue;
      for (std::size_t d = 0; d < bound.size(); ++d)
        for (Extent x : {b.lo[d], b.hi[d]})
          if (x < bound[d]) starts[d].push_back(x);
    }
  for (auto& s : starts) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  const BlockGrid grid = BlockGrid::from_cuts(bound, starts);
  std::vector<int> owner(static_cast<std::size_t>(grid.num_blocks()), -1);
  std::vector<const Box*> owner_box(owner.size(), nullptr);
  for (int r = 0; r < num_ranks; ++r)
    for (const Box& b : boxes_by_rank[r]) {
      if (b.empty()) continue;
      for_each_overlap(grid, b, [&](const std::vector<Extent>& key, const Box&) {
        const Extent id = grid.id(key);
        if (owner[id] >= 0)
          throw Error("rank " + std::to_string(r) + "'s box " + box_text(b) + " overlaps rank " +
                      std::to_string(owner[id]) + "'s box " + box_text(*owner_box[id]));
        owner[id] = r;
        owner_box[id] = &b;
      });
    }
  std::vector<std::vector<int>> sites(owner.size());
  for (Extent id = 0; id < grid.num_blocks(); ++id) {
    if (owner[id] >= 0)
      sites[id].push_back(owner[id]);
    else if (!holes)
      throw Error("the boxes do not cover bound " + to_string(bound) + ": no rank holds point " +
                  to_string(grid.box(grid.key(id)).lo));
  }
  return BlockLayout(grid, Placement::sites(sites, num_ranks));
}

std::vector<std::vector<Box>> gather_boxes(const comm::Communicator& comm, const std::vector<Box>& my_boxes,
                                           Extent max_message_elements) {
  // Each box as its rank, then its lo and hi coordinates, so that boxes of another rank than the bound are
  // found after the gather (cover_layout), not as a garbled message.
  std::vector<long long> mine;
  for (const Box& b : my_boxes) {
    mine.push_back(static_cast<long long>(b.lo.size()));
    mine.insert(mine.end(), b.lo.begin(), b.lo.end());
    mine.insert(mine.end(), b.hi.begin(), b.hi.end());
  }
  const comm::Gathered all = comm::allgather_varying(comm, mine, max_message_elements);
  std::vector<std::vector<Box>> boxes(static_cast<std::size_t>(comm.size()));
  for (int r = 0; r < comm.size(); ++r)
    for (auto i = all.offsets[r]; i < all.offsets[r + 1];) {
      const auto rank = static_cast<std::ptrdiff_t>(all.values[i++]);
      const auto lo = all.values.begin() + i;
      boxes[r].push_back(Box{std::vector<Extent>(lo, lo + rank), std::vector<Extent>(lo + rank, lo + 2 * rank)});
      i += 2 * rank;
    }
  return boxes;
}

std::vector<Extent> cells_in(const BlockLayout& layout, const Box& box) {
  std::vector<Extent> ids;
  if (!box.empty())
    for_each_overlap(layout.grid(), box,
                     [&](const std::vector<Extent>& key, const Box&) { ids.push_back(layout.grid().id(key)); });
  return ids;
}

}  // namespace einrel::redistribute
