#ifndef EINREL_EINSUMINDEXING_HPP
#define EINREL_EINSUMINDEXING_HPP

#include <einrel_Bound.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <Kokkos_Core.hpp>

#include <vector>

namespace einrel::kernels {

// Most labels one EinSum may use (output labels plus aggregated labels).
inline constexpr int max_labels = 2 * max_rank;

// How an EinSum walks its operands, as plain data a device functor can copy: for every output label
// and every aggregated label, its extent and its element stride in X, Y and Z (0 where a tensor does
// not carry the label). Output labels come in output order, so the output offset is the flat index.
struct EinsumIndexing {
  int num_free = 0;
  int num_agg = 0;
  Kokkos::Array<Extent, max_labels> free_extent, free_x, free_y;
  Kokkos::Array<Extent, max_labels> agg_extent, agg_x, agg_y;
  Extent agg_size = 1;  // product of aggregated extents
};

// Builds the indexing of `e`, resolved against the bounds of its operands. Throws Error when the EinSum
// uses more than max_labels labels.
EinsumIndexing make_indexing(const ResolvedEinSum& e);

}  // namespace einrel::kernels

#endif
