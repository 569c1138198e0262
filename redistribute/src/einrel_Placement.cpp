#include <einrel_Error.hpp>
#include <einrel_Placement.hpp>

#include <algorithm>

namespace einrel::redistribute {

Placement::Placement(Kind kind, Extent num_blocks, int num_ranks)
    : kind_(kind), num_blocks_(num_blocks), num_ranks_(num_ranks) {
  if (num_ranks < 1) throw Error("a placement needs at least one rank, got " + std::to_string(num_ranks));
  if (num_blocks < 1) throw Error("a placement needs at least one block, got " + std::to_string(num_blocks));
}

Placement Placement::spread(Extent num_blocks, int num_ranks) { return Placement(Kind::spread, num_blocks, num_ranks); }

Placement Placement::replicated(Extent num_blocks, int num_ranks) {
  return Placement(Kind::replicated, num_blocks, num_ranks);
}

Placement Placement::owners(const std::vector<int>& owner, int num_ranks) {
  std::vector<std::vector<int>> sites;
  for (int r : owner) sites.push_back({r});
  return Placement::sites(sites, num_ranks);
}

Placement Placement::sites(const std::vector<std::vector<int>>& sites, int num_ranks) {
  std::vector<Extent> offsets{0};
  std::vector<int> flat;
  for (const std::vector<int>& s : sites) {
    flat.insert(flat.end(), s.begin(), s.end());
    offsets.push_back(static_cast<Extent>(flat.size()));
  }
  return Placement::sites(std::move(offsets), std::move(flat), num_ranks);
}

Placement Placement::sites(std::vector<Extent> offsets, std::vector<int> sites, int num_ranks) {
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != static_cast<Extent>(sites.size()) ||
      !std::is_sorted(offsets.begin(), offsets.end()))
    throw Error("the site offsets of a placement must rise from 0 to the number of sites");
  Placement p(Kind::explicit_sites, static_cast<Extent>(offsets.size()) - 1, num_ranks);
  p.offsets_ = std::move(offsets);
  p.sites_ = std::move(sites);
  for (Extent b = 0; b < p.num_blocks_; ++b) {
    if (p.offsets_[b] == p.offsets_[b + 1]) p.has_absent_ = true;
    for (Extent i = p.offsets_[b]; i < p.offsets_[b + 1]; ++i) {
      const int r = p.sites_[static_cast<std::size_t>(i)];
      if (r < 0 || r >= num_ranks)
        throw Error("block " + std::to_string(b) + " is placed on rank " + std::to_string(r) + " of " +
                    std::to_string(num_ranks));
      if (i > p.offsets_[b] && r <= p.sites_[static_cast<std::size_t>(i) - 1])
        throw Error("the sites of block " + std::to_string(b) + " must be distinct and increasing");
    }
  }
  return p;
}

Placement::RankIndex Placement::make_rank_index() const {
  RankIndex index;
  index.offsets.assign(static_cast<std::size_t>(num_ranks_) + 1, 0);
  for (int r : sites_) ++index.offsets[static_cast<std::size_t>(r) + 1];
  for (int r = 0; r < num_ranks_; ++r) index.offsets[r + 1] += index.offsets[r];
  index.blocks.resize(sites_.size());
  std::vector<Extent> next(index.offsets.begin(), index.offsets.end() - 1);
  for (Extent b = 0; b < num_blocks_; ++b)  // blocks in increasing order within each rank
    for (Extent i = offsets_[b]; i < offsets_[b + 1]; ++i)
      index.blocks[static_cast<std::size_t>(next[sites_[static_cast<std::size_t>(i)]]++)] = b;
  return index;
}

std::vector<Extent> Placement::blocks_of(int rank) const {
  std::vector<Extent> blocks;
  blocks_of(rank, blocks);
  return blocks;
}

void Placement::blocks_of(int rank, std::vector<Extent>& blocks) const {
  blocks.clear();
  if (kind_ == Kind::spread) {
    // Blocks b with floor(b·R/n) == rank: ceil(rank·n/R) <= b < ceil((rank+1)·n/R).
    const Extent n = num_blocks_, R = num_ranks_;
    for (Extent b = (rank * n + R - 1) / R; b < ((rank + 1) * n + R - 1) / R; ++b) blocks.push_back(b);
  } else if (kind_ == Kind::replicated) {
    for (Extent b = 0; b < num_blocks_; ++b) blocks.push_back(b);
  } else {
    const RankIndex& index = rank_index_.get([this] { return make_rank_index(); });
    blocks.assign(index.blocks.begin() + index.offsets[rank], index.blocks.begin() + index.offsets[rank + 1]);
  }
}

int Placement::owner(Extent b) const {
  if (num_sites(b) != 1)
    throw Error("block " + std::to_string(b) + " has " + std::to_string(num_sites(b)) + " sites, not one owner");
  return site(b, 0);
}

bool operator==(const Placement& a, const Placement& b) {
  if (a.num_blocks_ != b.num_blocks_ || a.num_ranks_ != b.num_ranks_) return false;
  for (Extent k = 0; k < a.num_blocks_; ++k) {
    if (a.num_sites(k) != b.num_sites(k)) return false;
    for (int i = 0; i < a.num_sites(k); ++i)
      if (a.site(k, i) != b.site(k, i)) return false;
  }
  return true;
}

}  // namespace einrel::redistribute
