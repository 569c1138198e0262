#ifndef EINREL_RANKCOUNTS_HPP
#define EINREL_RANKCOUNTS_HPP

#include <einrel_Bound.hpp>

#include <cstdint>
#include <vector>

namespace einrel::redistribute {

// A count per rank, held compactly: the distinct counts once and per rank the index of its count among them, one
// byte wide while there are at most 256 distinct counts, two while at most 65 536, else every rank's count itself.
// The planner keeps per-rank volumes of every transition it costs, and the ranks of a layout pair see a few
// distinct counts (one byte a rank instead of eight at R = 65 536). Immutable.
class RankCounts {
 public:
  RankCounts() = default;
  explicit RankCounts(const std::vector<Extent>& counts);

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Extent operator[](std::size_t rank) const {
    if (!narrow_.empty()) return values_[narrow_[rank]];
    if (!wide_.empty()) return values_[wide_[rank]];
    return values_[rank];
  }
  Extent max() const;  // 0 when empty
  Extent sum() const;
  std::vector<Extent> all() const;  // every rank's count

  friend bool operator==(const RankCounts& a, const RankCounts& b) { return a.all() == b.all(); }

 private:
  std::size_t size_ = 0;
  std::vector<Extent> values_;  // the distinct counts, or every rank's when there are more than 65 536
  std::vector<std::uint8_t> narrow_;
  std::vector<std::uint16_t> wide_;
};

}  // namespace einrel::redistribute

#endif
