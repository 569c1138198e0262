#ifndef EINREL_BLOCKCENSUS_HPP
#define EINREL_BLOCKCENSUS_HPP

#include <einrel_Relation.hpp>
#include <einrel_Tensor.hpp>

#include <cstddef>
#include <unordered_set>

namespace einrel::engine {

// Counts the bytes of distinct blocks: a block shared by several relations (a view kept by an operand
// and its producer) counts once. The engine's measured block bytes.
class BlockCensus {
 public:
  template <class Scalar, class MemorySpace>
  void add(const Tensor<Scalar, MemorySpace>& block) {
    if (seen_.insert(block.view().data()).second) bytes_ += block.view().span() * sizeof(Scalar);
  }
  template <class Scalar, class MemorySpace>
  void add(const Relation<Scalar, MemorySpace>& blocks) {
    for (const auto& [key, block] : blocks) add(block);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::unordered_set<const void*> seen_;
  std::size_t bytes_ = 0;
};

}  // namespace einrel::engine

#endif
