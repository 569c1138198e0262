#ifndef EINREL_DISTTYPE_HPP
#define EINREL_DISTTYPE_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_DeviceMesh.hpp>
#include <einrel_Ops.hpp>

#include <optional>
#include <string>
#include <vector>

namespace einrel::redistribute::mesh {

// One dimension of a distributed type (array-redistribution-collectives.txt §2.1, Fig. 6): the global
// extent and the mesh axes that partition it, minor first: `tile{x,y}global` cuts it into size_x·size_y
// tiles, tile k = i_x + size_x·i_y on the device with coordinates (i_x, i_y). No axes: unpartitioned.
struct DistDim {
  Extent global = 1;
  std::vector<std::string> axes;
  friend bool operator==(const DistDim& a, const DistDim& b) { return a.global == b.global && a.axes == b.axes; }
};

// A distributed type: how each device of a mesh holds a tile of a global array. Axes that partition no
// dimension replicate it, unless they are `partial`: then the devices along them hold summands of the
// array still to be combined with `partial_op` (a pending reduction, einsum-sharding-rules.txt's Partial).
// Written `[3{x}12, 2{y}12]`, `[1{y,x}8, 12]`, and with a pending reduction `[12, 3{x}12] sum{y}`.
struct DistType {
  std::vector<DistDim> dims;
  std::vector<std::string> partial;
  AggOp partial_op = AggOp::sum;
  friend bool operator==(const DistType& a, const DistType& b) {
    return a.dims == b.dims && a.partial == b.partial && (a.partial.empty() || a.partial_op == b.partial_op);
  }
};

// Parses a distributed type over `mesh`; errors are one line naming `what` and the column
// ("--from:1:7: expected ',' or ']', found 'x'"), then check_type's. With `global`, the shape of the array
// the type must describe: another extent or rank is an error at the dimension where it differs
// ("--to:1:9: global extent 24 of dimension 1 is not the array's 12 (global shape [12,12])").
DistType parse_dist_type(const std::string& text, const DeviceMesh& mesh, const std::string& what,
                         const std::optional<std::vector<Extent>>& global = std::nullopt);
// Throws Error unless every axis is the mesh's and used once (partial included) and each global extent
// is a multiple of the product of its axes' sizes: uneven tiles are not part of these types (einrel's
// point-to-point redistribution moves them).
void check_type(const DistType& type, const DeviceMesh& mesh);

Extent tile_extent(const DistDim& dim, const DeviceMesh& mesh);
std::vector<Extent> local_shape(const DistType& type, const DeviceMesh& mesh);
Extent local_size(const DistType& type, const DeviceMesh& mesh);
std::vector<Extent> global_shape(const DistType& type);
// The offset of the tile the device at `coordinates` (on mesh's axes) holds, per dimension (paper Fig. 7a).
std::vector<Extent> tile_offset(const DistType& type, const DeviceMesh& mesh, const std::vector<int>& coordinates);
// Calls f(i) with the global C-order index i of each element of the tile the device at `coordinates`
// holds, in the tile's own C order.
template <class F>
void for_each_tile_element(const DistType& type, const DeviceMesh& mesh, const std::vector<int>& coordinates, F&& f) {
  const std::vector<Extent> offset = tile_offset(type, mesh, coordinates), shape = local_shape(type, mesh),
                            global = global_shape(type);
  for (Extent local = 0; local < num_elements(shape); ++local) {
    Extent rest = local, flat = 0, scale = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      flat += (offset[d] + rest % shape[d]) * scale;
      rest /= shape[d];
      scale *= global[d];
    }
    f(flat);
  }
}

// "[3{x}12, 2{y}12]", tiles written out, unpartitioned dimensions as their extent.
std::string str(const DistType& type, const DeviceMesh& mesh);
// The type as a block layout for the point-to-point redistribution (RedistributionPlan): the grid cuts each
// dimension into its tiles, and each block is placed on the ranks whose tile it is (several where the type
// replicates it). Throws Error for a pending reduction, which a block layout cannot say.
BlockLayout block_layout(const DistType& type, const DeviceMesh& mesh);
// The layout as a distributed type on `mesh`, if it is one: an even grid with whole tiles, every rank of the
// mesh holding exactly one block, and along each dimension the block index the mixed-radix number of some
// of the rank's mesh coordinates (axes of equal sizes tried minor first; the prime factors of a dimension's
// parts in increasing order). The engine's layouts at p = R with power-of-two parts are types on the
// prime-factored mesh of R. Inverse of block_layout.
std::optional<DistType> as_dist_type(const BlockLayout& layout, const DeviceMesh& mesh);
// The layout of partial results as a type with a pending ⊕ `op`, from the layout's as_dist_type: `type` with every
// mesh axis that partitions none of its dimensions pending (the ranks that share a block each hold one summand).
DistType as_partial_type(DistType type, const DeviceMesh& mesh, AggOp op);
// The key, in block_layout's grid, of the tile `rank` holds.
std::vector<Extent> tile_key(const DistType& type, const DeviceMesh& mesh, int rank);
// Every rank's tile_key as one id, in C order over the type's parts (axes_size of each dimension's axes): what
// tile_key gives each rank, found for all ranks in one pass.
std::vector<Extent> tile_ids(const DistType& type, const DeviceMesh& mesh);
// A tile's id is linear in its rank's mesh coordinates: per mesh axis, its coordinate's place value within its
// dimension's tile index times that dimension's stride in C order over the parts (0 for an axis of none).
std::vector<Extent> tile_weights(const DistType& type, const DeviceMesh& mesh);
// One rank's tile_ids entry from the type's tile_weights, in O(mesh axes).
Extent tile_id(const std::vector<Extent>& weights, const DeviceMesh& mesh, int rank);

// The same type over mesh.prime_factored(): each axis replaced by its prime axes, minor first.
DistType prime_factored(const DistType& type, const DeviceMesh& mesh);

}  // namespace einrel::redistribute::mesh

#endif
