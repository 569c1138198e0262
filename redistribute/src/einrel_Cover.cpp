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

std::vector<std::vector<Box>> gather_boxes(const comm::Communicator& comm, const std::vector<Box>& my_boxes) {
  // Each box as its lo then hi coordinates; every rank sends the rank of its boxes first so that
  // a mismatch is found after the gather, not as a truncated message.
  std::vector<long long> mine;
  for (const Box& b : my_boxes) {
    mine.push_back(static_cast<long long>(b.lo.size()));
    mine.insert(mine.end(), b.lo.begin(), b.lo.end());
    mine.insert(mine.end(), b.hi.begin(), b.hi.end());
  }
  const int n = comm.size();
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(n), displs(n);
  MPI_Request request;
  comm::complete(MPI_Iallgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm.get(), &request), request,
                 "MPI_Iallgather");
  for (int r = 1; r < n; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<long long> all(static_cast<std::size_t>(displs[n - 1] + counts[n - 1]));
  comm::complete(MPI_Iallgatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), displs.data(),
                                 MPI_LONG_LONG, comm.get(), &request),
                 request, "MPI_Iallgatherv");
  std::vector<std::vector<Box>> boxes(n);
  for (int r = 0; r < n; ++r)
    for (int i = displs[r]; i < displs[r] + counts[r];) {
      const auto rank = static_cast<std::size_t>(all[i++]);
      Box b{std::vector<Extent>(all.begin() + i, all.begin() + i + rank),
            std::vector<Extent>(all.begin() + i + rank, all.begin() + i + 2 * rank)};
      i += static_cast<int>(2 * rank);
      boxes[r].push_back(std::move(b));
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
