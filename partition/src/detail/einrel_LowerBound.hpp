#ifndef EINREL_LOWERBOUND_HPP
#define EINREL_LOWERBOUND_HPP

#include <einrel_ResolvedEinSum.hpp>

#include <optional>

namespace einrel::partition {

// The labels of a binary einsum grouped as a batched matrix product's, each group's extents multiplied:
// rows (in X and Z only), columns (Y and Z only), inner (X and Y only) and batch (all three). Empty for a
// unary einsum and for one with a label in a single operand.
struct ProductShape {
  double rows = 1, cols = 1, inner = 1, batch = 1;
};
std::optional<ProductShape> product_shape(const ResolvedEinSum& r);

// The least number of elements that some one of `ranks` ranks must receive to compute a product of this
// shape, when every rank starts with an even share (1/ranks) of X, Y and Z and no term is computed twice: the
// memory-independent bound of Al Daas, Ballard, Grigori, Kumar and Rouse ("Tight memory-independent parallel
// matrix multiplication communication lower bounds", SPAA 2022, Theorem 3), extended to batches
// (docs/planner.md "Lower-bound certificate"). Elements, not bytes; 0 where the bound allows no communication.
double receive_lower_bound(const ProductShape& shape, double ranks);

// The elements one rank touches in a plan beyond its even share: `accessed` (the X, Y and Z blocks it holds
// for the vertex) less (|X| + |Y| + |Z|) / ranks. What receive_lower_bound bounds from below.
double words_beyond_share(const ProductShape& shape, double accessed, double ranks);

}  // namespace einrel::partition

#endif
