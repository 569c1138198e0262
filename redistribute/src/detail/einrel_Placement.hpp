#ifndef EINREL_PLACEMENT_HPP
#define EINREL_PLACEMENT_HPP

#include <einrel_Bound.hpp>

#include <algorithm>
#include <memory>
#include <vector>

namespace einrel::redistribute {

// The site map of a distributed tensor relation (TRA paper §4): for each of n blocks, the set of ranks
// (sites) that hold a copy. Every rank computes it locally, without communication.
//  - spread:     Part_D with blocks in C order spread evenly: block b on rank floor(b·R/n). With n >= R
//                every rank holds floor(n/R) or ceil(n/R) consecutive blocks; with n < R (a plan with
//                fewer blocks than ranks) ranks without a block idle for that tensor.
//  - replicated: All, every block on every rank.
//  - owners:     Part_D with an explicit rank per block.
//  - sites:      any explicit set of ranks per block (a block replicated on the ranks whose join tuples
//                need it). An empty set is an absent block (docs/sparse.md): of a block-sparse value, a
//                block all zero and stored nowhere; of an operand, a block no join tuple reads.
class Placement {
 public:
  // Throw Error unless num_ranks >= 1, num_blocks >= 1 and every named rank is in [0, num_ranks).
  static Placement spread(Extent num_blocks, int num_ranks);
  static Placement replicated(Extent num_blocks, int num_ranks);
  static Placement owners(const std::vector<int>& owner, int num_ranks);
  // Sites are sorted and must be distinct.
  static Placement sites(const std::vector<std::vector<int>>& sites, int num_ranks);
  // The same with the sites of block b at sites[offsets[b] .. offsets[b+1]) (one list for all blocks, as the planner
  // builds them); throws Error unless the offsets rise from 0 to sites.size().
  static Placement sites(std::vector<Extent> offsets, std::vector<int> sites, int num_ranks);

  Extent num_blocks() const { return num_blocks_; }
  int num_ranks() const { return num_ranks_; }
  // Sites of block b in increasing order: num_sites(b) of them, the i-th is site(b, i).
  // Inline: the planner asks them for every block of every layout it costs.
  int num_sites(Extent b) const {
    if (kind_ == Kind::explicit_sites) return static_cast<int>(offsets_[b + 1] - offsets_[b]);
    return kind_ == Kind::spread ? 1 : num_ranks_;
  }
  int site(Extent b, int i) const {
    if (kind_ == Kind::explicit_sites) return sites_[offsets_[b] + i];
    if (kind_ != Kind::spread) return i;
    // p = R, the planner's usual case, without the division (a 64-bit idiv dominated the dry run's exchange volumes)
    return num_blocks_ == num_ranks_ ? static_cast<int>(b) : static_cast<int>(b * num_ranks_ / num_blocks_);
  }
  bool holds(int rank, Extent b) const {
    if (kind_ == Kind::explicit_sites) {
      const auto first = sites_.begin() + offsets_[b], last = sites_.begin() + offsets_[b + 1];
      return last - first == 1 ? *first == rank : std::binary_search(first, last, rank);
    }
    return kind_ == Kind::spread ? site(b, 0) == rank : true;
  }
  // Blocks on `rank`, increasing.
  std::vector<Extent> blocks_of(int rank) const;
  void blocks_of(int rank, std::vector<Extent>& blocks) const;  // into `blocks`, reusing its storage
  // Whether block b has no site (an explicit empty set), and whether any block has none.
  bool absent(Extent b) const { return num_sites(b) == 0; }
  bool has_absent() const { return has_absent_; }
  // The one site of a block with exactly one; throws Error for a replicated or absent block.
  int owner(Extent b) const;

  // Which copy of block b serves a reader on `rank`: its own when it holds one, else one of the sites
  // chosen by (rank + b) so that readers of a replicated block are spread over its copies; -1 for an
  // absent block (nothing to read). Both ends of an exchange compute the same answer.
  int source_for(Extent b, int rank) const {
    if (holds(rank, b)) return rank;
    const int n = num_sites(b);
    return n == 0 ? -1 : site(b, static_cast<int>((rank + b) % n));
  }

  friend bool operator==(const Placement& a, const Placement& b);

 private:
  enum class Kind { spread, replicated, explicit_sites };
  Placement(Kind kind, Extent num_blocks, int num_ranks);

  Kind kind_;
  Extent num_blocks_;
  int num_ranks_;
  // explicit_sites: the blocks of rank r are blocks[offsets[r] .. offsets[r+1]), so that blocks_of costs what it
  // returns (the dry run asks it of every rank for every value). O(R + sites): made at the first blocks_of, since
  // the planner makes many placements it never lists by rank; copies share it, and making it is thread-safe.
  struct RankIndex {
    std::vector<Extent> offsets, blocks;
  };
  class LazyRankIndex {
   public:
    LazyRankIndex() = default;
    LazyRankIndex(const LazyRankIndex& other) : made_(std::atomic_load(&other.made_)) {}
    LazyRankIndex& operator=(const LazyRankIndex& other) {
      std::atomic_store(&made_, std::atomic_load(&other.made_));
      return *this;
    }
    // The index, made by `make` if no call has made it yet.
    template <class Make>
    const RankIndex& get(Make&& make) const {
      std::shared_ptr<const RankIndex> index = std::atomic_load(&made_);
      if (!index) {
        index = std::make_shared<const RankIndex>(make());
        std::shared_ptr<const RankIndex> none;
        if (!std::atomic_compare_exchange_strong(&made_, &none, index)) index = none;  // another thread's
      }
      return *index;
    }

   private:
    mutable std::shared_ptr<const RankIndex> made_;
  };
  RankIndex make_rank_index() const;

  std::vector<Extent> offsets_;  // explicit_sites: sites of b are sites_[offsets_[b] .. offsets_[b+1])
  std::vector<int> sites_;
  LazyRankIndex rank_index_;
  bool has_absent_ = false;
};

}  // namespace einrel::redistribute

#endif
