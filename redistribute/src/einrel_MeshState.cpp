#include <einrel_Error.hpp>
#include <einrel_MeshState.hpp>

#include <algorithm>
#include <map>

namespace einrel::redistribute {

namespace {

void remove_axes(std::vector<std::string>& list, const std::vector<std::string>& axes) {
  for (const std::string& a : axes) {
    const auto it = std::find(list.begin(), list.end(), a);
    if (it == list.end()) throw Error("einrel::redistribute: axis '" + a + "' is not where the step expects it");
    list.erase(it);
  }
}

void prepend(std::vector<std::string>& list, const std::vector<std::string>& axes) {
  list.insert(list.begin(), axes.begin(), axes.end());
}

}  // namespace

MeshState::MeshState(DeviceMesh primes, DistType type) : mesh_(std::move(primes)), type_(std::move(type)) {
  check_type(type_, mesh_);
  for (int r = 0; r < mesh_.size(); ++r) coords_.push_back(mesh_.coordinates(r));
}

std::size_t MeshState::axis(const std::string& name) const {
  const auto a = mesh_.find(name);
  if (!a) throw Error("einrel::redistribute: no mesh axis '" + name + "'");
  return *a;
}

std::vector<Extent> MeshState::placement(int rank) const {
  std::vector<Extent> p = tile_offset(type_, mesh_, coords_[rank]);
  p.push_back(position(rank, type_.partial));
  return p;
}

void MeshState::bring_to_front(std::size_t dim, const std::vector<std::string>& axes) {
  std::vector<std::string>& list = type_.dims.at(dim).axes;
  std::vector<std::string> order = axes;
  for (const std::string& a : list)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) order.push_back(a);
  if (order.size() != list.size()) throw Error("einrel::redistribute: axes that do not partition the dimension");
  // The tile index along dim in the old order, decomposed again in the new one.
  for (std::vector<int>& c : coords_) {
    Extent index = 0;
    for (std::size_t k = list.size(); k-- > 0;) index = index * mesh_.axes()[axis(list[k])].size + c[axis(list[k])];
    for (const std::string& a : order) {
      const int size = mesh_.axes()[axis(a)].size;
      c[axis(a)] = static_cast<int>(index % size);
      index /= size;
    }
  }
  list = order;
}

int MeshState::group_id(int rank, const std::vector<std::string>& axes) const {
  int id = 0;
  for (std::size_t k = mesh_.axes().size(); k-- > 0;)
    if (std::find(axes.begin(), axes.end(), mesh_.axes()[k].name) == axes.end())
      id = id * mesh_.axes()[k].size + coords_[rank][k];
  return id;
}

std::vector<int> MeshState::group(int rank, const std::vector<std::string>& axes) const {
  const int id = group_id(rank, axes);
  std::vector<std::pair<int, int>> members;  // (position, rank)
  for (int r = 0; r < ranks(); ++r)
    if (group_id(r, axes) == id) members.emplace_back(position(r, axes), r);
  std::sort(members.begin(), members.end());
  std::vector<int> out;
  for (const auto& m : members) out.push_back(m.second);
  return out;
}

int MeshState::position(int rank, const std::vector<std::string>& axes) const {
  int p = 0;
  for (std::size_t k = axes.size(); k-- > 0;) p = p * mesh_.axes()[axis(axes[k])].size + coords_[rank][axis(axes[k])];
  return p;
}

void MeshState::allgather(std::size_t dim, const std::vector<std::string>& axes) {
  bring_to_front(dim, axes);
  remove_axes(type_.dims[dim].axes, axes);
}

void MeshState::dynslice(std::size_t dim, const std::vector<std::string>& axes) {
  prepend(type_.dims.at(dim).axes, axes);
  check_type(type_, mesh_);
}

void MeshState::alltoall(std::size_t from, std::size_t to, const std::vector<std::string>& axes) {
  bring_to_front(from, axes);
  remove_axes(type_.dims[from].axes, axes);
  prepend(type_.dims.at(to).axes, axes);
  check_type(type_, mesh_);
}

void MeshState::reduce_scatter(std::size_t dim, const std::vector<std::string>& axes) {
  remove_axes(type_.partial, axes);
  prepend(type_.dims.at(dim).axes, axes);
  check_type(type_, mesh_);
}

void MeshState::allreduce(const std::vector<std::string>& axes) { remove_axes(type_.partial, axes); }

void MeshState::permute_to(const DistType& target) {
  if (local_shape(target, mesh_) != local_shape(type_, mesh_))
    throw Error("einrel::redistribute: a permutation keeps the local shape");
  type_ = target;
  for (int r = 0; r < ranks(); ++r) coords_[r] = mesh_.coordinates(r);
}

std::vector<int> MeshState::permutation_sources(const DistType& target) const {
  const MeshState wanted(mesh_, target);
  std::map<std::vector<Extent>, std::vector<int>> holders;  // placement -> ranks holding it, not needed by themselves
  std::vector<int> source(ranks(), -1);
  for (int r = 0; r < ranks(); ++r) {
    if (placement(r) == wanted.placement(r))
      source[r] = r;
    else
      holders[placement(r)].push_back(r);
  }
  for (int r = 0; r < ranks(); ++r) {
    if (source[r] >= 0) continue;
    auto& from = holders[wanted.placement(r)];
    if (from.empty()) throw Error("einrel::redistribute: no rank holds a tile the permutation needs");
    source[r] = from.front();
    from.erase(from.begin());
  }
  return source;
}

bool MeshState::holds(const DistType& target) const {
  const MeshState wanted(mesh_, target);
  for (int r = 0; r < ranks(); ++r)
    if (placement(r) != wanted.placement(r)) return false;
  return true;
}

}  // namespace einrel::redistribute
