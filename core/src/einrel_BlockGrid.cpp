#include <einrel_BlockGrid.hpp>
#include <einrel_Error.hpp>

#include <algorithm>

namespace einrel {

Extent Box::size() const {
  Extent n = 1;
  for (std::size_t d = 0; d < lo.size(); ++d) n *= std::max<Extent>(0, hi[d] - lo[d]);
  return n;
}

std::vector<Extent> Box::extents() const {
  std::vector<Extent> e(lo.size());
  for (std::size_t d = 0; d < lo.size(); ++d) e[d] = std::max<Extent>(0, hi[d] - lo[d]);
  return e;
}

Box intersect(const Box& a, const Box& b) {
  if (a.lo.size() != b.lo.size()) throw Error("cannot intersect boxes of different rank");
  Box r{a.lo, a.hi};
  for (std::size_t d = 0; d < a.lo.size(); ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(r.lo[d], std::min(a.hi[d], b.hi[d]));
  }
  return r;
}

namespace {

// Where the even cut of `bound` into `parts` starts its blocks, then `bound`: the first bound % parts
// blocks are one larger.
std::vector<Extent> even_starts(Extent bound, Extent parts) {
  const Extent base = bound / parts, rem = bound % parts;
  std::vector<Extent> starts(static_cast<std::size_t>(parts) + 1);
  for (Extent k = 0; k <= parts; ++k) starts[k] = k * base + std::min(k, rem);
  return starts;
}

}  // namespace

BlockGrid::BlockGrid(Bound bound, std::vector<Extent> parts) : bound_(std::move(bound)), parts_(std::move(parts)) {
  if (parts_.size() != bound_.size())
    throw Error("partition " + to_string(parts_) + " has rank " + std::to_string(parts_.size()) + " but bound " +
                to_string(bound_) + " has rank " + std::to_string(bound_.size()));
  for (std::size_t d = 0; d < bound_.size(); ++d) {
    if (parts_[d] < 1 || parts_[d] > bound_[d])
      throw Error("cannot cut extent " + std::to_string(bound_[d]) + " of bound " + to_string(bound_) + " into " +
                  std::to_string(parts_[d]) + " blocks");
    starts_.push_back(even_starts(bound_[d], parts_[d]));
  }
  find_uniform_block();
}

void BlockGrid::find_uniform_block() {
  uniform_block_ = 1;
  for (std::size_t d = 0; d < starts_.size(); ++d) {
    const auto& s = starts_[d];
    for (std::size_t k = 1; k + 1 < s.size(); ++k)
      if (s[k + 1] - s[k] != s[1] - s[0]) {
        uniform_block_ = 0;
        return;
      }
    uniform_block_ *= s[1] - s[0];
  }
}

BlockGrid BlockGrid::from_cuts(Bound bound, const std::vector<std::vector<Extent>>& starts) {
  if (starts.size() != bound.size())
    throw Error("cuts of rank " + std::to_string(starts.size()) + " for bound " + to_string(bound));
  BlockGrid grid;
  for (std::size_t d = 0; d < bound.size(); ++d) {
    const auto& s = starts[d];
    bool ok = !s.empty() && s.front() == 0 && s.back() < bound[d];
    for (std::size_t k = 1; ok && k < s.size(); ++k) ok = s[k - 1] < s[k];
    if (!ok)
      throw Error("block starts " + to_string(s) + " along dimension " + std::to_string(d) + " of bound " +
                  to_string(bound) + " must increase strictly from 0 and stay below " + std::to_string(bound[d]));
    grid.starts_.push_back(s);
    grid.starts_.back().push_back(bound[d]);
    grid.parts_.push_back(static_cast<Extent>(s.size()));
  }
  grid.bound_ = std::move(bound);
  grid.find_uniform_block();
  return grid;
}

BlockGrid BlockGrid::tiles(Bound bound, Extent tile) {
  if (tile < 1) throw Error("blocks of edge " + std::to_string(tile) + ": the edge must be at least 1");
  std::vector<std::vector<Extent>> starts(bound.size());
  for (std::size_t d = 0; d < bound.size(); ++d)
    for (Extent s = 0; s == 0 || s < bound[d]; s += tile) starts[d].push_back(s);
  return from_cuts(std::move(bound), starts);
}

Extent BlockGrid::num_blocks() const {
  Extent n = 1;
  for (Extent p : parts_) n *= p;
  return n;
}

Extent BlockGrid::offset(int d, Extent k) const { return starts_[d][k]; }

Extent BlockGrid::extent(int d, Extent k) const { return starts_[d][k + 1] - starts_[d][k]; }

Extent BlockGrid::block_of(int d, Extent x) const {
  const auto& s = starts_[d];
  return static_cast<Extent>(std::upper_bound(s.begin(), s.end() - 1, x) - s.begin()) - 1;
}

std::pair<Extent, Extent> BlockGrid::blocks_overlapping(int d, Extent lo, Extent hi) const {
  return {block_of(d, lo), block_of(d, hi - 1)};
}

std::vector<Extent> BlockGrid::key(Extent id) const {
  std::vector<Extent> k(parts_.size());
  for (int d = rank() - 1; d >= 0; --d) {
    k[d] = id % parts_[d];
    id /= parts_[d];
  }
  return k;
}

Extent BlockGrid::id(const std::vector<Extent>& key) const {
  Extent id = 0;
  for (int d = 0; d < rank(); ++d) id = id * parts_[d] + key[d];
  return id;
}

Bound BlockGrid::block_bound(Extent id) const {
  Bound b;
  block_bound(id, b);
  return b;
}

void BlockGrid::block_bound(Extent id, Bound& bound) const {
  bound.resize(parts_.size());
  for (int d = rank() - 1; d >= 0; --d) {
    bound[d] = extent(d, id % parts_[d]);
    id /= parts_[d];
  }
}

Extent BlockGrid::block_size(Extent id) const {
  if (uniform_block_ > 0) return uniform_block_;
  Extent n = 1;
  for (int d = rank() - 1; d >= 0; --d) {
    n *= extent(d, id % parts_[d]);
    id /= parts_[d];
  }
  return n;
}

Box BlockGrid::box(const std::vector<Extent>& key) const {
  Box b{std::vector<Extent>(key.size()), std::vector<Extent>(key.size())};
  for (int d = 0; d < rank(); ++d) {
    b.lo[d] = offset(d, key[d]);
    b.hi[d] = b.lo[d] + extent(d, key[d]);
  }
  return b;
}

}  // namespace einrel
