#include <einrel_DeviceMesh.hpp>
#include <einrel_Error.hpp>
#include <einrel_TextCursor.hpp>

#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>

namespace einrel::redistribute::mesh {

std::vector<DeviceMesh> meshes_of(int devices, int max_axes) {
  std::vector<DeviceMesh> out;
  std::vector<MeshAxis> axes;
  std::function<void(int)> split = [&](int rest) {  // the remaining devices over further axes
    axes.push_back({std::string(1, static_cast<char>('x' + axes.size())), rest});
    out.emplace_back(axes);
    axes.pop_back();
    if (static_cast<int>(axes.size()) + 1 >= max_axes) return;
    for (int a = 2; a < rest; ++a)
      if (rest % a == 0) {
        axes.push_back({std::string(1, static_cast<char>('x' + axes.size())), a});
        split(rest / a);
        axes.pop_back();
      }
  };
  split(devices);
  return out;
}

DeviceMesh::DeviceMesh(std::vector<MeshAxis> axes) : axes_(std::move(axes)) {
  std::set<std::string> names;
  std::int64_t devices = 1;  // at most INT_MAX: a device is an MPI rank
  for (const MeshAxis& a : axes_) {
    if (!is_axis_name(a.name)) throw Error("mesh axis name '" + a.name + "' is not letters, digits, '_' or '.'");
    if (!names.insert(a.name).second) throw Error("mesh axis '" + a.name + "' is named twice");
    if (a.size < 1) throw Error("mesh axis '" + a.name + "' has size " + std::to_string(a.size) + " (must be >= 1)");
    devices *= a.size;
    if (devices > std::numeric_limits<int>::max())
      throw Error("the mesh " + str() + " has more devices than MPI has ranks (at most 2^31 - 1)");
  }
}

DeviceMesh DeviceMesh::parse(const std::string& text, const std::string& what) {
  TextCursor in(text, what);
  std::vector<MeshAxis> axes;
  std::set<std::string> names;
  do {
    const std::size_t at = in.position();
    MeshAxis axis;
    axis.name = in.axis_name("an axis name");
    if (!names.insert(axis.name).second) in.fail_at(at, "mesh axis '" + axis.name + "' is named twice");
    in.expect('=', "after the axis name");
    const Extent size = in.integer("the axis size (a positive integer)");
    if (size < 1 || size > (1 << 20)) in.fail_at(at, "mesh axis '" + axis.name + "' needs a size from 1 to 2^20");
    axis.size = static_cast<int>(size);
    axes.push_back(axis);
  } while (in.accept(','));
  in.expect_end();
  return DeviceMesh(std::move(axes));
}

int DeviceMesh::size() const {
  int n = 1;
  for (const MeshAxis& a : axes_) n *= a.size;
  return n;
}

std::optional<std::size_t> DeviceMesh::find(const std::string& name) const {
  for (std::size_t a = 0; a < axes_.size(); ++a)
    if (axes_[a].name == name) return a;
  return std::nullopt;
}

int DeviceMesh::axis_size(const std::string& name) const {
  const auto a = find(name);
  if (!a) throw Error("the mesh " + str() + " has no axis '" + name + "'");
  return axes_[*a].size;
}

std::vector<int> DeviceMesh::coordinates(int rank) const {
  std::vector<int> c;
  for (const MeshAxis& a : axes_) {
    c.push_back(rank % a.size);
    rank /= a.size;
  }
  return c;
}

int DeviceMesh::rank_of(const std::vector<int>& coordinates) const {
  int rank = 0;
  for (std::size_t a = axes_.size(); a-- > 0;) rank = rank * axes_[a].size + coordinates[a];
  return rank;
}

DeviceMesh DeviceMesh::prime_factored() const {
  std::vector<MeshAxis> primes;
  for (const MeshAxis& a : axes_) {
    const std::vector<std::string> names = prime_axes_of(a.name);
    const std::vector<Extent> sizes = prime_factors(a.size);
    for (std::size_t k = 0; k < names.size(); ++k) primes.push_back({names[k], static_cast<int>(sizes[k])});
  }
  return DeviceMesh(std::move(primes));
}

std::vector<std::string> DeviceMesh::prime_axes_of(const std::string& name) const {
  const std::vector<Extent> sizes = prime_factors(axis_size(name));
  if (sizes.size() == 1) return {name};
  std::vector<std::string> names;
  for (std::size_t k = 0; k < sizes.size(); ++k) names.push_back(name + "." + std::to_string(k));
  return names;
}

std::string DeviceMesh::str() const {
  std::string s;
  for (const MeshAxis& a : axes_) s += (s.empty() ? "" : ",") + a.name + "=" + std::to_string(a.size);
  return s;
}

}  // namespace einrel::redistribute::mesh
