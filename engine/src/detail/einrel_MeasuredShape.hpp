#ifndef EINREL_MEASUREDSHAPE_HPP
#define EINREL_MEASUREDSHAPE_HPP

#include <einrel_BlockShape.hpp>
#include <einrel_DistributedTensorRelation.hpp>
#include <einrel_EngineResult.hpp>
#include <einrel_Exchange.hpp>
#include <einrel_Wait.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <vector>

// Shapes measured from a value's data, and values moved between the layouts of two plans: what carries a
// block-sparse value from one step of an iteration to the next (`einrel iterate`, docs/sparse.md "Iterations").

namespace einrel::engine {

// A value on a grid of tiles with the shape its data has there.
template <class MemorySpace>
struct MeasuredValue {
  BlockShape shape;                   // on the tiles: the kept ones present, each with its Frobenius norm
  AnyDistributed<MemorySpace> value;  // each kept tile on one rank; dropped tiles absent
  Extent dropped = 0;                 // tiles the value held that were dropped
};

// Collective over the value's communicator: `value` cut into `tiles` (each tile on the rank holding the first
// present block of `value` it overlaps, so a value on the tiles' grid or a coarser one aligned with it moves
// nothing), each tile's Frobenius norm summed on the host in storage order (the same on any number of ranks or
// threads, so a restarted iteration plans as the uninterrupted one did), and the tiles whose norm is zero or
// below `threshold` dropped: DBCSR's filter of a product's result by its blocks' actual norms. The shape bounds
// each kept tile's norm by that norm.
template <class ExecutionSpace, class MemorySpace>
MeasuredValue<MemorySpace> measure_shape(const ExecutionSpace& exec, redistribute::Exchange<MemorySpace>& exchange,
                                         const AnyDistributed<MemorySpace>& value, const BlockGrid& tiles,
                                         double threshold) {
  return std::visit(
      [&](const auto& from) {
        using Scalar = typename std::decay_t<decltype(from)>::block_type::scalar_type;
        using redistribute::BlockLayout;
        using redistribute::Placement;
        const BlockLayout& layout = from.layout();
        const int ranks = layout.num_ranks();
        const auto n = static_cast<std::size_t>(tiles.num_blocks());
        std::vector<std::vector<int>> sites(n);
        for (std::size_t b = 0; b < n; ++b)
          for_each_overlap(layout.grid(), tiles.box(tiles.key(static_cast<Extent>(b))),
                           [&](const std::vector<Extent>& key, const Box&) {
                             const Extent id = layout.grid().id(key);
                             if (sites[b].empty() && !layout.placement().absent(id))
                               sites[b].push_back(layout.placement().site(id, 0));
                           });
        const auto on_tiles =
            redistribute::redistribute(exec, exchange, from, BlockLayout(tiles, Placement::sites(sites, ranks)));
        exec.fence();
        std::vector<double> squares(n, 0.0), sums(n, 0.0);
        for (const auto& [key, block] : on_tiles.local()) {
          const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, block.view());
          double sum = 0;
          for (std::size_t i = 0; i < host.extent(0); ++i) sum += static_cast<double>(host(i)) * host(i);
          squares[static_cast<std::size_t>(tiles.id(key))] = sum;
        }
        // Each tile has one site: the sum is that rank's value, exactly.
        MPI_Request request;
        comm::complete(MPI_Iallreduce(squares.data(), sums.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM,
                                      from.comm().get(), &request),
                       request, "MPI_Iallreduce");
        std::vector<bool> present(n, false);
        std::vector<double> norms(n, 0.0);
        Extent dropped = 0;
        for (std::size_t b = 0; b < n; ++b) {
          const double norm = std::sqrt(sums[b]);
          present[b] = norm > 0 && norm >= threshold;
          if (present[b]) norms[b] = norm;
          if (!present[b] && !sites[b].empty()) ++dropped, sites[b].clear();
        }
        typename std::decay_t<decltype(from)>::relation_type kept(tiles.rank());
        for (const auto& [key, block] : on_tiles.local())
          if (present[static_cast<std::size_t>(tiles.id(key))]) kept.insert(key, block);
        redistribute::DistributedTensorRelation<Scalar, MemorySpace> measured(
            from.comm(), BlockLayout(tiles, Placement::sites(sites, ranks)), std::move(kept));
        return MeasuredValue<MemorySpace>{BlockShape(tiles, std::move(present), std::move(norms)),
                                          AnyDistributed<MemorySpace>(std::move(measured)), dropped};
      },
      value);
}

// Collective over the value's communicator: `value` in layout `to` (the same grid and sites: the value itself).
template <class ExecutionSpace, class MemorySpace>
AnyDistributed<MemorySpace> relayout(const ExecutionSpace& exec, redistribute::Exchange<MemorySpace>& exchange,
                                     const AnyDistributed<MemorySpace>& value, const redistribute::BlockLayout& to) {
  return std::visit(
      [&](const auto& from) -> AnyDistributed<MemorySpace> {
        if (from.layout() == to) return from;
        return redistribute::redistribute(exec, exchange, from, to);
      },
      value);
}

}  // namespace einrel::engine

#endif
