#include <einrel_Error.hpp>
#include <einrel_MeshState.hpp>

#include <algorithm>

namespace einrel::redistribute::mesh {

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
  ranks_ = mesh_.size();
  naxes_ = mesh_.axes().size();
  int stride = 1;  // mixed radix, axes minor first as DeviceMesh::coordinates
  for (const MeshAxis& a : mesh_.axes()) axis_strides_.push_back(stride), stride *= a.size;
  reset_coordinates();
}

void MeshState::reset_coordinates() {
  coords_.clear();
  digit_of_.resize(naxes_);
  for (std::size_t k = 0; k < naxes_; ++k) digit_of_[k] = k;
}

std::size_t MeshState::axis(const std::string& name) const {
  const auto a = mesh_.find(name);
  if (!a) throw Error("einrel::redistribute: no mesh axis '" + name + "'");
  return *a;
}

MeshState::Strides MeshState::strides(const std::vector<std::string>& axes, Extent first_stride) const {
  Strides s;
  Extent stride = first_stride;
  for (const std::string& a : axes) {
    s.axes.push_back(axis(a));
    s.strides.push_back(stride);
    stride *= mesh_.axes()[s.axes.back()].size;
  }
  return s;
}

MeshState::TileMap MeshState::tile_map(const DistType& type) const {
  TileMap map;
  for (const DistDim& d : type.dims) map.dims.push_back(strides(d.axes, tile_extent(d, mesh_)));
  map.partial = strides(type.partial);
  return map;
}

Extent MeshState::along(const Strides& s, int rank) const {
  Extent value = 0;
  for (std::size_t k = 0; k < s.axes.size(); ++k) value += s.strides[k] * coordinate(rank, s.axes[k]);
  return value;
}

std::vector<Extent> MeshState::placement(const TileMap& map, int rank) const {
  std::vector<Extent> p;
  for (const Strides& d : map.dims) p.push_back(along(d, rank));
  p.push_back(along(map.partial, rank));
  return p;
}

std::vector<Extent> MeshState::placement(int rank) const { return placement(tile_map(type_), rank); }

void MeshState::bring_to_front(std::size_t dim, const std::vector<std::string>& axes) {
  std::vector<std::string>& list = type_.dims.at(dim).axes;
  std::vector<std::string> order = axes;
  for (const std::string& a : list)
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) order.push_back(a);
  if (order.size() != list.size()) throw Error("einrel::redistribute: axes that do not partition the dimension");
  // The tile index along dim in the old order, decomposed again in the new one.
  const Strides old_order = strides(list), new_order = strides(order);
  if (coords_.empty()) {
    // Positions of equal sizes in both orders: the renumbering hands each position's coordinate on, axis to axis.
    bool swaps = true;
    for (std::size_t i = 0; i < order.size() && swaps; ++i)
      swaps = mesh_.axes()[old_order.axes[i]].size == mesh_.axes()[new_order.axes[i]].size;
    if (swaps) {
      const std::vector<std::size_t> before = digit_of_;
      for (std::size_t i = 0; i < order.size(); ++i) digit_of_[new_order.axes[i]] = before[old_order.axes[i]];
      list = order;
      return;
    }
    std::vector<int> coords(static_cast<std::size_t>(ranks_) * naxes_);  // the map made explicit
    for (int r = 0; r < ranks_; ++r)
      for (std::size_t k = 0; k < naxes_; ++k) coords[static_cast<std::size_t>(r) * naxes_ + k] = coordinate(r, k);
    coords_ = std::move(coords);
  }
  for (int r = 0; r < ranks_; ++r) {
    Extent index = along(old_order, r);
    for (std::size_t a : new_order.axes) {
      const int size = mesh_.axes()[a].size;
      coords_[static_cast<std::size_t>(r) * naxes_ + a] = static_cast<int>(index % size);
      index /= size;
    }
  }
  list = order;
}

int MeshState::group_id(int rank, const std::vector<std::string>& axes) const {
  int id = 0;
  for (std::size_t k = naxes_; k-- > 0;)
    if (std::find(axes.begin(), axes.end(), mesh_.axes()[k].name) == axes.end())
      id = id * mesh_.axes()[k].size + coordinate(rank, k);
  return id;
}

std::vector<int> MeshState::group_ids(const std::vector<std::string>& axes) const {
  std::vector<std::size_t> others;  // the axes not in `axes`, major first, as group_id numbers them
  for (std::size_t k = naxes_; k-- > 0;)
    if (std::find(axes.begin(), axes.end(), mesh_.axes()[k].name) == axes.end()) others.push_back(k);
  std::vector<int> ids(static_cast<std::size_t>(ranks_), 0);
  for (int r = 0; r < ranks_; ++r) {
    int id = 0;
    for (std::size_t k : others) id = id * mesh_.axes()[k].size + coordinate(r, k);
    ids[static_cast<std::size_t>(r)] = id;
  }
  return ids;
}

std::vector<int> MeshState::group(int rank, const std::vector<std::string>& axes) const {
  const int id = group_id(rank, axes);
  const Strides along_axes = strides(axes);
  std::vector<std::pair<Extent, int>> members;  // (position, rank)
  for (int r = 0; r < ranks_; ++r)
    if (group_id(r, axes) == id) members.emplace_back(along(along_axes, r), r);
  std::sort(members.begin(), members.end());
  std::vector<int> out;
  for (const auto& m : members) out.push_back(m.second);
  return out;
}

int MeshState::position(int rank, const std::vector<std::string>& axes) const {
  return static_cast<int>(along(strides(axes), rank));
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
  reset_coordinates();
}

std::vector<int> MeshState::permutation_sources(const DistType& target) const {
  const MeshState wanted(mesh_, target);
  const TileMap have = tile_map(type_), want = wanted.tile_map(target);
  // A rank's tile and summand as one number below R²: tile indices in C order over the tiles along each dimension
  // (the same for both types: a permutation keeps the local shape), then the summand; the holders of each are found
  // by sorting rather than in a map of R vectors.
  std::vector<Extent> extent, tiles;
  for (const DistDim& d : type_.dims)
    extent.push_back(tile_extent(d, mesh_)), tiles.push_back(d.global / extent.back());
  auto tile = [&](const TileMap& map, const MeshState& state, int rank) {
    Extent id = 0;
    for (std::size_t d = 0; d < map.dims.size(); ++d) id = id * tiles[d] + state.along(map.dims[d], rank) / extent[d];
    return id * ranks_ + state.along(map.partial, rank);
  };
  std::vector<int> source(ranks(), -1);
  std::vector<std::pair<Extent, int>> holders;  // (tile, rank) of the ranks not needed by themselves
  std::vector<Extent> needs(static_cast<std::size_t>(ranks()));
  for (int r = 0; r < ranks(); ++r) {
    const Extent held = tile(have, *this, r);
    needs[static_cast<std::size_t>(r)] = tile(want, wanted, r);
    if (held == needs[static_cast<std::size_t>(r)])
      source[r] = r;
    else
      holders.emplace_back(held, r);
  }
  std::sort(holders.begin(), holders.end());      // by tile, then rank: each tile's holders in rank order
  std::vector<std::size_t> next(holders.size());  // per tile's first holder, the next one to hand out
  for (std::size_t i = 0; i < holders.size(); ++i) next[i] = i;
  for (int r = 0; r < ranks(); ++r) {
    if (source[r] >= 0) continue;
    const auto first = std::lower_bound(holders.begin(), holders.end(), std::pair<Extent, int>{needs[r], -1});
    const std::size_t i = static_cast<std::size_t>(first - holders.begin());
    if (first == holders.end() || first->first != needs[r] || next[i] >= holders.size() ||
        holders[next[i]].first != needs[r])
      throw Error("einrel::redistribute: no rank holds a tile the permutation needs");
    source[r] = holders[next[i]++].second;
  }
  return source;
}

bool MeshState::holds(const DistType& target) const {
  const MeshState wanted(mesh_, target);
  const TileMap have = tile_map(type_), want = wanted.tile_map(target);
  auto same = [&](int r) {
    for (std::size_t d = 0; d < have.dims.size(); ++d)
      if (along(have.dims[d], r) != wanted.along(want.dims[d], r)) return false;
    return along(have.partial, r) == wanted.along(want.partial, r);
  };
  if (coords_.empty()) {
    // Both maps take each coordinate from one of the rank's own, so every tile offset is a sum of one term per
    // own coordinate: equal for every rank when equal for the ranks with one coordinate 1 and the others 0.
    for (std::size_t k = 0; k < naxes_; ++k)
      if (!same(axis_strides_[k])) return false;
    return true;
  }
  for (int r = 0; r < ranks_; ++r)
    if (!same(r)) return false;
  return true;
}

}  // namespace einrel::redistribute::mesh
