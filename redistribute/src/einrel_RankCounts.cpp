#include <einrel_RankCounts.hpp>

#include <algorithm>
#include <unordered_map>

namespace einrel::redistribute {

RankCounts::RankCounts(const std::vector<Extent>& counts) : size_(counts.size()) {
  std::unordered_map<Extent, std::size_t> index;
  std::vector<std::size_t> of(counts.size());
  Extent last = 0;  // consecutive ranks often have one count: looked up once
  std::size_t last_index = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (r == 0 || counts[r] != last) {
      last = counts[r];
      const auto [known, fresh] = index.try_emplace(last, values_.size());
      if (fresh) values_.push_back(last);
      last_index = known->second;
      if (values_.size() > 65536) {
        values_ = counts;
        return;
      }
    }
    of[r] = last_index;
  }
  if (values_.size() <= 256)
    narrow_.assign(of.begin(), of.end());
  else
    wide_.assign(of.begin(), of.end());
}

Extent RankCounts::max() const { return values_.empty() ? 0 : *std::max_element(values_.begin(), values_.end()); }

Extent RankCounts::sum() const {
  Extent n = 0;
  for (std::size_t r = 0; r < size_; ++r) n += (*this)[r];
  return n;
}

std::vector<Extent> RankCounts::all() const {
  std::vector<Extent> counts(size_);
  for (std::size_t r = 0; r < size_; ++r) counts[r] = (*this)[r];
  return counts;
}

}  // namespace einrel::redistribute
