#ifndef EINREL_RELATION_HPP
#define EINREL_RELATION_HPP

#include <einrel_Bound.hpp>
#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>

#include <map>
#include <string>
#include <vector>

namespace einrel {

// The key of a tuple in a tensor relation: one non-negative integer per key dimension.
using Key = std::vector<Extent>;

// A tensor relation in the general sense of tensor-relational-algebra.txt §3: a set of (key, block) pairs
// with keys of a fixed arity and blocks that are tensors in MemorySpace. Keys are unique (checked on
// insert); continuity (no holes, §3.2) holds for relations built by the TRA operations and is checked on
// request, since rekey and filter may break it. Blocks are shared with copies, like Kokkos views.
template <class Scalar, class MemorySpace>
class Relation {
 public:
  using block_type = Tensor<Scalar, MemorySpace>;
  using const_iterator = typename std::map<Key, block_type>::const_iterator;

  explicit Relation(int key_arity = 0) : key_arity_(key_arity) {
    if (key_arity < 0) throw Error("a relation's key arity cannot be negative");
  }

  int key_arity() const { return key_arity_; }
  std::size_t size() const { return blocks_.size(); }
  const_iterator begin() const { return blocks_.begin(); }
  const_iterator end() const { return blocks_.end(); }
  bool contains(const Key& key) const { return blocks_.count(key) > 0; }

  // Throws Error when the key has the wrong arity, a negative entry, or is already present.
  void insert(const Key& key, const block_type& block) {
    if (static_cast<int>(key.size()) != key_arity_)
      throw Error("key " + to_string(key) + " has arity " + std::to_string(key.size()) +
                  " in a relation of key arity " + std::to_string(key_arity_));
    for (Extent k : key)
      if (k < 0) throw Error("key " + to_string(key) + " has a negative entry");
    if (!blocks_.emplace(key, block).second)
      throw Error("duplicate key " + to_string(key) + ": keys of a tensor relation are unique");
  }

  const block_type& at(const Key& key) const {
    const auto it = blocks_.find(key);
    if (it == blocks_.end()) throw Error("the relation has no block with key " + to_string(key));
    return it->second;
  }

  // The smallest vector bounding every key (one past the largest entry per dimension).
  Key frontier() const {
    Key f(key_arity_, 0);
    for (const auto& [key, block] : blocks_)
      for (int d = 0; d < key_arity_; ++d) f[d] = std::max(f[d], key[d] + 1);
    return f;
  }

  // Throws Error naming a missing key unless every key below the frontier is present (§3.2).
  void check_continuity() const {
    const Key f = frontier();
    if (static_cast<Extent>(blocks_.size()) == num_elements(f)) return;  // unique keys below f: all there
    Key k(key_arity_, 0);
    for (Extent n = 0; n < num_elements(f); ++n) {
      Extent rest = n;
      for (int d = key_arity_ - 1; d >= 0; --d) {
        k[d] = rest % f[d];
        rest /= f[d];
      }
      if (!contains(k))
        throw Error("hole in tensor relation: no block with key " + to_string(k) + " below frontier " + to_string(f));
    }
  }

 private:
  int key_arity_;
  std::map<Key, block_type> blocks_;
};

}  // namespace einrel

#endif
