#ifndef EINREL_DISTRIBUTEDTENSORRELATION_HPP
#define EINREL_DISTRIBUTEDTENSORRELATION_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_Communicator.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_RedistributionPlan.hpp>
#include <einrel_Relation.hpp>

#include <string>

namespace einrel::redistribute {

// A tensor relation whose blocks live on the ranks of a communicator (TRA paper §4): a BlockLayout
// (grid + placement, known to every rank) and this rank's own blocks only, as Kokkos views in
// MemorySpace, keyed by grid key. A replicated block has a copy on each of its sites. Copies share the
// blocks and the communicator.
template <class Scalar, class MemorySpace>
class DistributedTensorRelation {
 public:
  using block_type = Tensor<Scalar, MemorySpace>;
  using relation_type = Relation<Scalar, MemorySpace>;

  // Throws Error unless the layout spans the communicator's ranks and `local` holds exactly this
  // rank's blocks, each of the shape its key implies.
  DistributedTensorRelation(comm::Communicator comm, BlockLayout layout, relation_type local)
      : comm_(std::move(comm)), layout_(std::move(layout)), local_(std::move(local)) {
    if (layout_.num_ranks() != comm_.size())
      throw Error("a layout over " + std::to_string(layout_.num_ranks()) + " ranks does not fit a communicator of " +
                  std::to_string(comm_.size()));
    if (local_.key_arity() != grid().rank())
      throw Error("blocks of a rank-" + std::to_string(grid().rank()) + " tensor need keys of that arity, got " +
                  std::to_string(local_.key_arity()));
    const auto mine = layout_.blocks_of(comm_.rank());
    for (Extent id : mine) {
      const Key key = grid().key(id);
      if (!local_.contains(key))
        throw Error("rank " + std::to_string(comm_.rank()) + " lacks its block " + to_string(key));
      if (local_.at(key).bound() != grid().box(key).extents())
        throw Error("block " + to_string(key) + " has shape " + to_string(local_.at(key).bound()) + ", expected " +
                    to_string(grid().box(key).extents()));
    }
    if (local_.size() != mine.size())
      throw Error("rank " + std::to_string(comm_.rank()) + " holds " + std::to_string(local_.size()) +
                  " blocks but its layout places " + std::to_string(mine.size()) + " on it");
  }

  // This rank's blocks of `layout`, allocated and left uninitialized (each labelled label/block).
  static DistributedTensorRelation allocate(const std::string& label, const comm::Communicator& comm,
                                            const BlockLayout& layout) {
    relation_type local(layout.grid().rank());
    for (Extent id : layout.blocks_of(comm.rank())) {
      const Key key = layout.grid().key(id);
      local.insert(key, block_type::uninitialized(label + "/block", layout.grid().box(key).extents()));
    }
    return DistributedTensorRelation(comm, layout, std::move(local));
  }

  const comm::Communicator& comm() const { return comm_; }
  const BlockLayout& layout() const { return layout_; }
  const BlockGrid& grid() const { return layout_.grid(); }
  const Bound& bound() const { return layout_.grid().bound(); }
  const relation_type& local() const { return local_; }
  bool holds(const Key& key) const { return local_.contains(key); }
  const block_type& block(const Key& key) const { return local_.at(key); }

 private:
  comm::Communicator comm_;
  BlockLayout layout_;
  relation_type local_;
};

// Collective over the relation's communicator: the same tensor in layout `to` (same bound, any grid and
// placement), each rank receiving exactly the overlaps its new blocks need (an absent block of `from`, of a
// block-sparse value, reads as zeros). Plans once and executes on
// `exchange` (whose buffers are reused across calls); `stats`, when given, receives the exchange's
// counts. A caller that repeats one redistribution keeps the RedistributionPlan and calls
// exchange.execute directly.
template <class ExecutionSpace, class Scalar, class MemorySpace>
DistributedTensorRelation<Scalar, MemorySpace> redistribute(const ExecutionSpace& exec, Exchange<MemorySpace>& exchange,
                                                            const DistributedTensorRelation<Scalar, MemorySpace>& from,
                                                            const BlockLayout& to, const ExchangeLimits& limits = {},
                                                            ExchangeStats* stats = nullptr) {
  if (exchange.comm().get() != from.comm().get())
    throw Error("an exchange moves the blocks of relations made from its own communicator");
  const RedistributionPlan plan(from.layout(), to, from.comm().rank(), sizeof(Scalar), limits);
  auto result = DistributedTensorRelation<Scalar, MemorySpace>::allocate("einrel::redistribute", from.comm(), to);
  const ExchangeStats s = exchange.execute(exec, plan, from.local(), result.local());
  if (stats) *stats = s;
  return result;
}

}  // namespace einrel::redistribute

#endif
