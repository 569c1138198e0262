#ifndef EINREL_MESHSTATE_HPP
#define EINREL_MESHSTATE_HPP

#include <einrel_DistType.hpp>

#include <string>
#include <vector>

namespace einrel::redistribute::mesh {

// Which tile every rank holds during a redistribution by collectives (array-redistribution-collectives.txt
// §6, a device assignment ⟨φ, β⟩): a distributed type over a prime-factored mesh and each rank's
// coordinates under the current device map. Collectives may act on axes that are not the minor-most of
// their dimension: bring_to_front reorders a dimension's axes and renumbers the ranks' coordinates on them
// so that every rank keeps its tile (the paper's φ′ with β′ ∘ φ′⁻¹ = β ∘ φ⁻¹); no data moves. The
// synthesizer uses it to see whether a final allpermute is needed; the MPI lowering to find each step's
// groups. Pure; every rank computes the same.
class MeshState {
 public:
  // The identity device map: rank r has its own mesh coordinates.
  MeshState(DeviceMesh primes, DistType type);

  const DeviceMesh& mesh() const { return mesh_; }
  const DistType& type() const { return type_; }
  int ranks() const { return ranks_; }
  // `rank`'s tile offsets, then its position along the pending reduction's axes (which summand it holds).
  std::vector<Extent> placement(int rank) const;

  // Reorders dimension `dim`'s axes to `axes` (which must partition it) followed by its others in their
  // order, renumbering coordinates so that no rank's tile changes.
  void bring_to_front(std::size_t dim, const std::vector<std::string>& axes);
  // The ranks that agree with `rank` on every coordinate but those on `axes`, ordered by their position
  // along `axes` (axes[0] minor): the group of one collective over those axes.
  std::vector<int> group(int rank, const std::vector<std::string>& axes) const;
  // Which group of a collective over `axes` `rank` is in: its coordinates on the other axes as one number.
  int group_id(int rank, const std::vector<std::string>& axes) const;
  // group_id of every rank, by rank (the axes looked up once).
  std::vector<int> group_ids(const std::vector<std::string>& axes) const;
  int position(int rank, const std::vector<std::string>& axes) const;

  // The type changes of the collectives (the data movement is the caller's): each moves `axes` to the
  // front (minor end) of a dimension's axes or off it.
  void allgather(std::size_t dim, const std::vector<std::string>& axes);                  // after bring_to_front
  void dynslice(std::size_t dim, const std::vector<std::string>& axes);                   // free axes
  void alltoall(std::size_t from, std::size_t to, const std::vector<std::string>& axes);  // after bring_to_front
  void reduce_scatter(std::size_t dim, const std::vector<std::string>& axes);             // pending axes
  void allreduce(const std::vector<std::string>& axes);                                   // pending axes
  // Every rank takes the tile it has in `target` under the identity device map.
  void permute_to(const DistType& target);

  // For every rank, a rank whose tile (and summand) it needs to hold `target` under the identity device
  // map: itself where it already holds it, else the holders paired with the ranks needing that tile in
  // rank order, so that it is a permutation. Requires the same local shape.
  std::vector<int> permutation_sources(const DistType& target) const;
  // Whether every rank holds the tile it has in `target` under the identity device map.
  bool holds(const DistType& target) const;

 private:
  // Axes resolved to their index in mesh_ and the product of the sizes of those before them in the list
  // (with `first_stride` for the first): the per-rank loops do no name lookups.
  struct Strides {
    std::vector<std::size_t> axes;
    std::vector<Extent> strides;
  };
  // Where a type puts each rank's tile: per dimension the tile extent's strides of its axes, then the
  // pending reduction's axes.
  struct TileMap {
    std::vector<Strides> dims;
    Strides partial;
  };
  std::size_t axis(const std::string& name) const;
  Strides strides(const std::vector<std::string>& axes, Extent first_stride = 1) const;
  TileMap tile_map(const DistType& type) const;
  std::vector<Extent> placement(const TileMap& map, int rank) const;
  // Without explicit coordinates (no coords_), `rank`'s coordinate on an axis is its own mesh coordinate on the axis
  // digit_of_ names: renumberings that only swap axes of equal sizes (every renumbering on a mesh of 2^k ranks) keep
  // the map a permutation of axes, so the synthesizer's search holds no per-rank state; R coordinates are kept only
  // once a renumbering mixes axes of different sizes.
  int coordinate(int rank, std::size_t axis) const {
    if (!coords_.empty()) return coords_[static_cast<std::size_t>(rank) * naxes_ + axis];
    const std::size_t own = digit_of_[axis];
    return static_cast<int>((rank / axis_strides_[own]) % mesh_.axes()[own].size);
  }
  Extent along(const Strides& s, int rank) const;
  // Every rank at its own coordinates (the identity device map).
  void reset_coordinates();

  DeviceMesh mesh_;
  DistType type_;
  int ranks_ = 0;
  std::size_t naxes_ = 0;
  std::vector<int> axis_strides_;      // per axis of mesh_, the product of the sizes of the axes before it
  std::vector<std::size_t> digit_of_;  // without coords_: per axis, the axis whose own coordinate it takes
  std::vector<int> coords_;            // rank-major: coords_[rank * naxes_ + axis of mesh_], or none
};

}  // namespace einrel::redistribute::mesh

#endif
