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

BlockGrid::BlockGrid(Bound bound, std::vector<Extent> parts) : bound_(std::move(bound)), parts_(std::move(parts)) {
  if (parts_.size() != bound_.size())
    throw Error("partition " + to_string(parts_) + " has rank " + std::to_string(parts_.size()) + " but bound " +
                to_string(bound_) + " has rank " + std::to_string(bound_.size()));
  for (std::size_t d = 0; d < bound_.size(); ++d)
    if (parts_[d] < 1 || parts_[d] > bound_[d])
      throw Error("cannot cut extent " + std::to_string(bound_[d]) + " of bound " + to_string(bound_) + " into " +
                  std::to_string(parts_[d]) + " blocks");
}

Extent BlockGrid::num_blocks() const {
  Extent n = 1;
  for (Extent p : parts_) n *= p;
  return n;
}

Extent BlockGrid::offset(int d, Extent k) const {
  const Extent base = bound_[d] / parts_[d], rem = bound_[d] % parts_[d];
  return k * base + std::min(k, rem);
}

Extent BlockGrid::extent(int d, Extent k) const {
  const Extent base = bound_[d] / parts_[d], rem = bound_[d] % parts_[d];
  return base + (k < rem ? 1 : 0);
}

Extent BlockGrid::block_of(int d, Extent x) const {
  const Extent base = bound_[d] / parts_[d], rem = bound_[d] % parts_[d];
  const Extent big = rem * (base + 1);  // coordinates covered by the larger blocks
  return x < big ? x / (base + 1) : rem + (x - big) / base;
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

Box BlockGrid::box(const std::vector<Extent>& key) const {
  Box b{std::vector<Extent>(key.size()), std::vector<Extent>(key.size())};
  for (int d = 0; d < rank(); ++d) {
    b.lo[d] = offset(d, key[d]);
    b.hi[d] = b.lo[d] + extent(d, key[d]);
  }
  return b;
}

}  // namespace einrel
