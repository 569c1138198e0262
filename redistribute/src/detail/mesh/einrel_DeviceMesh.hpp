#ifndef EINREL_DEVICEMESH_HPP
#define EINREL_DEVICEMESH_HPP

#include <einrel_Bound.hpp>

#include <optional>
#include <string>
#include <vector>

namespace einrel::redistribute::mesh {

// A named axis of a device mesh.
struct MeshAxis {
  std::string name;
  int size = 1;
  friend bool operator==(const MeshAxis& a, const MeshAxis& b) { return a.name == b.name && a.size == b.size; }
};

// A logical mesh of devices (array-redistribution-collectives.txt §2.1): named axes whose sizes multiply to
// the number of ranks. Axes are listed minor first, as in the paper: rank r has coordinate
// (r / Π_{b<a} size_b) mod size_a on axis a. Pure: no MPI (ProcessMesh puts one on a communicator).
class DeviceMesh {
 public:
  DeviceMesh() = default;
  // Throws Error on an empty name, a name used twice, a name with other characters than letters, digits,
  // '_' and '.', or a size < 1.
  explicit DeviceMesh(std::vector<MeshAxis> axes);
  // "x=4,y=6" (spaces allowed); errors name `what` and the column: "mesh:1:3: expected '='".
  static DeviceMesh parse(const std::string& text, const std::string& what = "mesh");

  const std::vector<MeshAxis>& axes() const { return axes_; }
  int size() const;  // the number of devices
  std::optional<std::size_t> find(const std::string& name) const;
  int axis_size(const std::string& name) const;  // throws Error for an unknown axis
  // The coordinate of `rank` on each axis, in axis order.
  std::vector<int> coordinates(int rank) const;
  int rank_of(const std::vector<int>& coordinates) const;

  // The mesh with every axis of composite size split into axes of prime sizes (paper §3, Principle 1): an
  // axis x of size p1·p2·…·pk (primes in increasing order) becomes x.0 (size p1, minor), x.1, …, x.(k-1);
  // an axis of prime size keeps its name; an axis of size 1 disappears. The coordinate on x is
  // i_x.0 + p1·(i_x.1 + p2·(…)), so ranks keep their coordinates and their order.
  DeviceMesh prime_factored() const;
  // The names the axis `name` has in prime_factored(), minor first (empty for size 1).
  std::vector<std::string> prime_axes_of(const std::string& name) const;

  std::string str() const;  // "x=4,y=6"
  friend bool operator==(const DeviceMesh& a, const DeviceMesh& b) { return a.axes_ == b.axes_; }

 private:
  std::vector<MeshAxis> axes_;
};

// Every mesh of 1 to `max_axes` axes x, y, z, ... whose sizes (> 1, but a single axis of size 1 for one
// device) multiply to `devices`, in a fixed order: the meshes a number of ranks can be viewed as.
std::vector<DeviceMesh> meshes_of(int devices, int max_axes = 3);

}  // namespace einrel::redistribute::mesh

#endif
