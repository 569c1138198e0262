#ifndef EINREL_TRAOPS_HPP
#define EINREL_TRAOPS_HPP

// The operations of the tensor-relational algebra (tensor-relational-algebra.txt §3.1) over Relation.
// Kernels are parameters (callables), so core never depends on kernels/: the engine passes the block
// kernel of an EinSum to join and transform, and the elementwise ⊕ to aggregate.

#include <einrel_BlockGrid.hpp>
#include <einrel_BoxCopy.hpp>
#include <einrel_Relation.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace einrel::tra {
namespace detail {

inline void check_key_dims(const std::vector<int>& dims, int arity, const std::string& what) {
  for (int d : dims)
    if (d < 0 || d >= arity)
      throw Error(what + ": key dimension " + std::to_string(d) + " is not in a key of arity " + std::to_string(arity));
}

inline Key pick(const Key& key, const std::vector<int>& dims) {
  Key k;
  for (int d : dims) k.push_back(key[d]);
  return k;
}

}  // namespace detail

// Join ⋈(keys_x, keys_y, kernel): pairs every x in X with every y in Y whose key entries agree
// (x.key[keys_x[i]] == y.key[keys_y[i]]) and emits (x.key ++ y.key without the keys_y entries,
// kernel(x.block, y.block)), as a natural join does.
template <class Scalar, class MemorySpace, class Kernel>
Relation<Scalar, MemorySpace> join(const Relation<Scalar, MemorySpace>& x, const Relation<Scalar, MemorySpace>& y,
                                   const std::vector<int>& keys_x, const std::vector<int>& keys_y, Kernel&& kernel) {
  if (keys_x.size() != keys_y.size()) throw Error("join: the two inputs need as many join keys as each other");
  detail::check_key_dims(keys_x, x.key_arity(), "join (left input)");
  detail::check_key_dims(keys_y, y.key_arity(), "join (right input)");
  std::vector<int> kept_y;
  for (int d = 0; d < y.key_arity(); ++d)
    if (std::find(keys_y.begin(), keys_y.end(), d) == keys_y.end()) kept_y.push_back(d);

  std::map<Key, std::vector<const Key*>> y_by_join_key;
  for (const auto& [key, block] : y) y_by_join_key[detail::pick(key, keys_y)].push_back(&key);

  Relation<Scalar, MemorySpace> out(x.key_arity() + static_cast<int>(kept_y.size()));
  for (const auto& [xkey, xblock] : x) {
    const auto match = y_by_join_key.find(detail::pick(xkey, keys_x));
    if (match == y_by_join_key.end()) continue;
    for (const Key* ykey : match->second) {
      Key key = xkey;
      for (int d : kept_y) key.push_back((*ykey)[d]);
      out.insert(key, kernel(xblock, y.at(*ykey)));
    }
  }
  return out;
}

// Aggregation Σ(group_by, combine): groups tuples by the key entries at `group_by` and reduces each
// group's blocks into one, keyed by those entries in that order. The first block of a group (in key
// order) is copied into a fresh accumulator, then combine(accumulator, block) folds in the rest in key
// order; combine must apply an associative, commutative ⊕ elementwise.
template <class ExecutionSpace, class Scalar, class MemorySpace, class Combine>
Relation<Scalar, MemorySpace> aggregate(const ExecutionSpace& exec, const Relation<Scalar, MemorySpace>& r,
                                        const std::vector<int>& group_by, Combine&& combine) {
  detail::check_key_dims(group_by, r.key_arity(), "aggregate");
  std::map<Key, Tensor<Scalar, MemorySpace>> acc;
  for (const auto& [key, block] : r) {
    const Key group = detail::pick(key, group_by);
    auto it = acc.find(group);
    if (it == acc.end()) {
      const auto first = Tensor<Scalar, MemorySpace>::uninitialized("einrel::tra::aggregate", block.bound());
      Kokkos::deep_copy(exec, first.view(), block.view());
      acc.emplace(group, first);
    } else {
      if (it->second.bound() != block.bound())
        throw Error("aggregate: blocks " + to_string(it->second.bound()) + " and " + to_string(block.bound()) +
                    " of group " + to_string(group) + " differ in shape");
      combine(it->second, block);
    }
  }
  Relation<Scalar, MemorySpace> out(static_cast<int>(group_by.size()));
  for (const auto& [key, block] : acc) out.insert(key, block);
  return out;
}

// ReKey(key_fn): replaces every key k by key_fn(k), a key of arity `new_arity`. Throws Error when two
// keys collide; the result may have holes (§3.2).
template <class Scalar, class MemorySpace, class KeyFn>
Relation<Scalar, MemorySpace> rekey(const Relation<Scalar, MemorySpace>& r, int new_arity, KeyFn&& key_fn) {
  Relation<Scalar, MemorySpace> out(new_arity);
  for (const auto& [key, block] : r) out.insert(key_fn(key), block);
  return out;
}

// Filter σ(pred): keeps the tuples whose key satisfies pred.
template <class Scalar, class MemorySpace, class Pred>
Relation<Scalar, MemorySpace> filter(const Relation<Scalar, MemorySpace>& r, Pred&& pred) {
  Relation<Scalar, MemorySpace> out(r.key_arity());
  for (const auto& [key, block] : r)
    if (pred(key)) out.insert(key, block);
  return out;
}

// Transform λ(fn): applies the kernel fn to every block, keeping the keys.
template <class Scalar, class MemorySpace, class Fn>
Relation<Scalar, MemorySpace> transform(const Relation<Scalar, MemorySpace>& r, Fn&& fn) {
  Relation<Scalar, MemorySpace> out(r.key_arity());
  for (const auto& [key, block] : r) out.insert(key, fn(block));
  return out;
}

// Tile: cuts every block along `array_dim` into `parts` pieces and appends the piece's index to the key.
// einrel's variant of the paper's Tile(dim, tileSize): pieces follow the uneven rule of BlockGrid (the
// first extent % parts pieces are one larger), so tiling a whole tensor along each dimension gives
// exactly the blocks of a TensorRelation.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Relation<Scalar, MemorySpace> tile(const ExecutionSpace& exec, const Relation<Scalar, MemorySpace>& r, int array_dim,
                                   Extent parts) {
  Relation<Scalar, MemorySpace> out(r.key_arity() + 1);
  for (const auto& [key, block] : r) {
    const Bound& b = block.bound();
    if (array_dim < 0 || array_dim >= static_cast<int>(b.size()))
      throw Error("tile: block " + to_string(b) + " has no dimension " + std::to_string(array_dim));
    Bound cut = b;
    cut[array_dim] = parts;
    const BlockGrid grid(b, cut);  // checks 1 <= parts <= extent
    for (Extent piece = 0; piece < parts; ++piece) {
      Bound pb = b;
      pb[array_dim] = grid.extent(array_dim, piece);
      const auto t = Tensor<Scalar, MemorySpace>::uninitialized("einrel::tra::tile", pb);
      std::vector<Extent> lo(b.size(), 0);
      lo[array_dim] = grid.offset(array_dim, piece);
      copy_box(exec, block, lo, t, std::vector<Extent>(b.size(), 0), pb);
      Key k = key;
      k.push_back(piece);
      out.insert(k, t);
    }
  }
  return out;
}

// Concat(key_dim, array_dim), the inverse of tile: groups tuples by every key entry but `key_dim` and
// concatenates each group's blocks along `array_dim` in the order of their key_dim entry, which must
// run 0, 1, ... without gaps. Blocks of a group must agree on every other dimension.
template <class ExecutionSpace, class Scalar, class MemorySpace>
Relation<Scalar, MemorySpace> concat(const ExecutionSpace& exec, const Relation<Scalar, MemorySpace>& r, int key_dim,
                                     int array_dim) {
  detail::check_key_dims({key_dim}, r.key_arity(), "concat");
  std::vector<int> rest;
  for (int d = 0; d < r.key_arity(); ++d)
    if (d != key_dim) rest.push_back(d);
  std::map<Key, std::map<Extent, Tensor<Scalar, MemorySpace>>> groups;
  for (const auto& [key, block] : r) groups[detail::pick(key, rest)].emplace(key[key_dim], block);

  Relation<Scalar, MemorySpace> out(r.key_arity() - 1);
  for (const auto& [group, pieces] : groups) {
    Bound b = pieces.begin()->second.bound();
    if (array_dim < 0 || array_dim >= static_cast<int>(b.size()))
      throw Error("concat: block " + to_string(b) + " has no dimension " + std::to_string(array_dim));
    Extent total = 0, expect_index = 0;
    for (const auto& [index, piece] : pieces) {
      if (index != expect_index++)
        throw Error("concat: group " + to_string(group) + " has no piece " + std::to_string(expect_index - 1));
      Bound other = piece.bound();
      other[array_dim] = b[array_dim];
      if (other != b)
        throw Error("concat: pieces " + to_string(b) + " and " + to_string(piece.bound()) + " of group " +
                    to_string(group) + " differ outside dimension " + std::to_string(array_dim));
      total += piece.bound()[array_dim];
    }
    b[array_dim] = total;
    const auto whole = Tensor<Scalar, MemorySpace>::uninitialized("einrel::tra::concat", b);
    std::vector<Extent> lo(b.size(), 0);
    for (const auto& [index, piece] : pieces) {
      copy_box(exec, piece, std::vector<Extent>(b.size(), 0), whole, lo, piece.bound());
      lo[array_dim] += piece.bound()[array_dim];
    }
    out.insert(group, whole);
  }
  return out;
}

}  // namespace einrel::tra

#endif
