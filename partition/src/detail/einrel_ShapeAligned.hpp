#ifndef EINREL_SHAPEALIGNED_HPP
#define EINREL_SHAPEALIGNED_HPP

#include <einrel_Graph.hpp>
#include <einrel_PartitionVector.hpp>

#include <vector>

namespace einrel::partition {

// Whether some input of `graph` is block-sparse with its shape bound (Vertex::shape).
bool has_block_shapes(const Graph& graph);

// `partitions` cut along the block shapes (docs/sparse.md "Planning by shape"): walking the graph in order,
// every vertex whose output is sparse by its sparse_rule (the intersection with a sparse operand, the union of
// sparse operands) cuts each label of such an operand as that value's grid does, `coarsen` of its blocks in one
// (ceil; at least one part), so that its join tuples are the present block pairs; its output is then sparse on
// the cut it gets. Other labels and vertices keep their parts. A label two sparse operands cut differently
// takes the finer cut. With `refine` > 1 such a vertex then cuts its output's last label `refine` times finer (at
// most one element a part), unless a sparse operand comes cut finer already (once along a chain of sparse
// vertices): each block product becomes `refine` smaller ones, whose rows (the row-major output's columns) are the
// GEMM's, so that a few products can be shared evenly over the ranks. The engine's dry run then
// weighs these plans against the dense ones: which blocks run, their sizes and the density decide.
std::vector<PartitionVector> shape_aligned(const Graph& graph, const std::vector<PartitionVector>& partitions,
                                           Extent coarsen, Extent refine = 1);

}  // namespace einrel::partition

#endif
