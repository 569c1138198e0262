#include <einrel_DistType.hpp>
#include <einrel_Error.hpp>
#include <einrel_TextCursor.hpp>

#include <algorithm>
#include <set>
#include <tuple>

namespace einrel::redistribute::mesh {

namespace {

std::string axes_text(const std::vector<std::string>& axes) {
  std::string s;
  for (const std::string& a : axes) s += (s.empty() ? "" : ",") + a;
  return "{" + s + "}";
}

Extent axes_size(const std::vector<std::string>& axes, const DeviceMesh& mesh) {
  Extent n = 1;
  for (const std::string& a : axes) n *= mesh.axis_size(a);
  return n;
}

// NAME (',' NAME)* '}' after a '{', each an axis of `mesh` not in `used` (then added to it).
std::vector<std::string> parse_axes(TextCursor& in, const DeviceMesh& mesh, std::set<std::string>& used) {
  std::vector<std::string> axes;
  if (in.accept('}')) return axes;
  do {
    const std::size_t at = in.position();
    const std::string name = in.axis_name("a mesh axis name");
    if (!mesh.find(name)) in.fail_at(at, "unknown mesh axis '" + name + "' (the mesh is " + mesh.str() + ")");
    if (!used.insert(name).second) in.fail_at(at, "mesh axis '" + name + "' is used twice in the type");
    axes.push_back(name);
  } while (in.accept(','));
  in.expect('}', "after the axes");
  return axes;
}

std::string uneven_tiles(const DistDim& d, Extent parts) {
  return "extent " + std::to_string(d.global) + " over axes " + axes_text(d.axes) + " of total size " +
         std::to_string(parts) +
         " gives uneven tiles, which distributed types do not have (einrel's point-to-point redistribution moves "
         "uneven layouts)";
}

}  // namespace

DistType parse_dist_type(const std::string& text, const DeviceMesh& mesh, const std::string& what,
                         const std::optional<std::vector<Extent>>& global) {
  TextCursor in(text, what);
  DistType type;
  std::vector<std::size_t> starts;
  std::set<std::string> used;
  const std::string array = global ? " (global shape " + to_string(*global) + ")" : "";
  in.expect('[', "to open the type");
  std::size_t close = in.position();
  if (!in.accept(']')) {
    do {
      starts.push_back(in.position());
      const Extent first = in.integer("a tile or global extent (a positive integer)");
      DistDim dim;
      dim.global = first;
      if (in.accept('{')) {
        dim.axes = parse_axes(in, mesh, used);
        dim.global = in.integer("the global extent after the axes");
        if (dim.global % axes_size(dim.axes, mesh) == 0 && first != dim.global / axes_size(dim.axes, mesh))
          in.fail_at(starts.back(), "tile " + std::to_string(first) + " is not " + std::to_string(dim.global) +
                                        " over axes " + axes_text(dim.axes) + " of total size " +
                                        std::to_string(axes_size(dim.axes, mesh)));
      }
      if (dim.global < 1) in.fail_at(starts.back(), "extents must be positive");
      if (dim.global % axes_size(dim.axes, mesh) != 0)
        in.fail_at(starts.back(), uneven_tiles(dim, axes_size(dim.axes, mesh)));
      const std::size_t i = type.dims.size();
      if (global && i == global->size())
        in.fail_at(starts.back(), "dimension " + std::to_string(i) + " is beyond the array's " + std::to_string(i) +
                                      " dimensions" + array);
      if (global && dim.global != (*global)[i])
        in.fail_at(starts.back(), "global extent " + std::to_string(dim.global) + " of dimension " + std::to_string(i) +
                                      " is not the array's " + std::to_string((*global)[i]) + array);
      type.dims.push_back(dim);
    } while (in.accept(','));
    close = in.position();
    in.expect(']', "or ',' after a dimension");
  }
  if (global && type.dims.size() < global->size())
    in.fail_at(close, "ends after " + std::to_string(type.dims.size()) + " of the array's " +
                          std::to_string(global->size()) + " dimensions" + array);
  if (!in.at_end()) {
    const std::size_t at = in.position();
    const std::string op = in.axis_name("a pending reduction (sum, max, min or prod) or end of text");
    const auto agg = parse_agg_op(op);
    if (!agg) in.fail_at(at, "unknown reduction '" + op + "' (expected " + agg_op_names() + ")");
    type.partial_op = *agg;
    in.expect('{', "after the reduction");
    type.partial = parse_axes(in, mesh, used);
    if (type.partial.empty()) in.fail_at(at, "a pending reduction needs at least one axis");
  }
  in.expect_end();
  try {
    check_type(type, mesh);
  } catch (const Error& e) {
    in.fail_at(0, e.what());
  }
  return type;
}

void check_type(const DistType& type, const DeviceMesh& mesh) {
  if (type.dims.size() > static_cast<std::size_t>(max_rank))
    throw Error("a distributed type has at most " + std::to_string(max_rank) + " dimensions");
  std::set<std::string> used;
  auto use = [&](const std::string& axis) {
    mesh.axis_size(axis);
    if (!used.insert(axis).second) throw Error("mesh axis '" + axis + "' is used twice in the type");
  };
  for (const DistDim& d : type.dims) {
    for (const std::string& a : d.axes) use(a);
    if (d.global < 1) throw Error("extents must be positive");
    const Extent parts = axes_size(d.axes, mesh);
    if (d.global % parts != 0) throw Error(uneven_tiles(d, parts));
  }
  for (const std::string& a : type.partial) use(a);
}

Extent tile_extent(const DistDim& dim, const DeviceMesh& mesh) { return dim.global / axes_size(dim.axes, mesh); }

std::vector<Extent> local_shape(const DistType& type, const DeviceMesh& mesh) {
  std::vector<Extent> shape;
  for (const DistDim& d : type.dims) shape.push_back(tile_extent(d, mesh));
  return shape;
}

Extent local_size(const DistType& type, const DeviceMesh& mesh) { return num_elements(local_shape(type, mesh)); }

std::vector<Extent> global_shape(const DistType& type) {
  std::vector<Extent> shape;
  for (const DistDim& d : type.dims) shape.push_back(d.global);
  return shape;
}

std::vector<Extent> tile_offset(const DistType& type, const DeviceMesh& mesh, const std::vector<int>& coordinates) {
  std::vector<Extent> offset;
  for (const DistDim& d : type.dims) {
    Extent stride = tile_extent(d, mesh), o = 0;
    for (const std::string& a : d.axes) {
      const std::size_t k = *mesh.find(a);
      o += stride * coordinates[k];
      stride *= mesh.axes()[k].size;
    }
    offset.push_back(o);
  }
  return offset;
}

std::string str(const DistType& type, const DeviceMesh& mesh) {
  std::string s = "[";
  for (std::size_t i = 0; i < type.dims.size(); ++i) {
    const DistDim& d = type.dims[i];
    if (i) s += ",";
    s += d.axes.empty() ? std::to_string(d.global)
                        : std::to_string(tile_extent(d, mesh)) + axes_text(d.axes) + std::to_string(d.global);
  }
  s += "]";
  if (!type.partial.empty()) s += " " + std::string(op_name(type.partial_op)) + axes_text(type.partial);
  return s;
}

std::vector<Extent> tile_key(const DistType& type, const DeviceMesh& mesh, int rank) {
  std::vector<Extent> key = tile_offset(type, mesh, mesh.coordinates(rank));
  for (std::size_t i = 0; i < key.size(); ++i) key[i] /= tile_extent(type.dims[i], mesh);
  return key;
}

std::vector<Extent> tile_weights(const DistType& type, const DeviceMesh& mesh) {
  const std::vector<MeshAxis>& axes = mesh.axes();
  std::vector<Extent> weight(axes.size(), 0);
  Extent stride = 1;
  for (std::size_t d = type.dims.size(); d-- > 0;) {
    Extent place = 1;
    for (const std::string& a : type.dims[d].axes) {
      const std::size_t k = *mesh.find(a);
      weight[k] = place * stride;
      place *= axes[k].size;
    }
    stride *= place;
  }
  return weight;
}

std::vector<Extent> tile_ids(const DistType& type, const DeviceMesh& mesh) {
  const std::vector<MeshAxis>& axes = mesh.axes();
  const std::vector<Extent> weight = tile_weights(type, mesh);
  // Ranks in order, their coordinates counted minor axis first (DeviceMesh::coordinates) and the id kept along.
  std::vector<Extent> ids(static_cast<std::size_t>(mesh.size()), 0);
  std::vector<int> coordinate(axes.size(), 0);
  Extent id = 0;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    ids[r] = id;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      if (++coordinate[k] < axes[k].size) {
        id += weight[k];
        break;
      }
      id -= weight[k] * (axes[k].size - 1);
      coordinate[k] = 0;
    }
  }
  return ids;
}

Extent tile_id(const std::vector<Extent>& weights, const DeviceMesh& mesh, int rank) {
  Extent id = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {  // the coordinates minor axis first (DeviceMesh::coordinates)
    const int size = mesh.axes()[k].size;
    id += weights[k] * (rank % size);
    rank /= size;
  }
  return id;
}

BlockLayout block_layout(const DistType& type, const DeviceMesh& mesh) {
  check_type(type, mesh);
  if (!type.partial.empty())
    throw Error("the type " + str(type, mesh) + " has a pending reduction, which a block layout does not hold");
  std::vector<Extent> parts;
  for (const DistDim& d : type.dims) parts.push_back(axes_size(d.axes, mesh));
  BlockGrid grid(global_shape(type), parts);
  std::vector<std::vector<int>> sites(static_cast<std::size_t>(grid.num_blocks()));
  const std::vector<Extent> ids = tile_ids(type, mesh);
  for (int r = 0; r < mesh.size(); ++r) sites[static_cast<std::size_t>(ids[static_cast<std::size_t>(r)])].push_back(r);
  return BlockLayout(std::move(grid), Placement::sites(sites, mesh.size()));
}

std::optional<DistType> as_dist_type(const BlockLayout& layout, const DeviceMesh& mesh) {
  const BlockGrid& grid = layout.grid();
  const Placement& placement = layout.placement();
  if (layout.num_ranks() != mesh.size() || placement.has_absent()) return std::nullopt;
  for (int d = 0; d < grid.rank(); ++d)
    if (grid.bound()[d] % grid.parts()[d] != 0 || grid.extent(d, 0) != grid.bound()[d] / grid.parts()[d])
      return std::nullopt;
  // Per rank, its one block (one pass over the sites: this runs for every layout pair a plan costs, at any R).
  std::vector<Extent> block(static_cast<std::size_t>(mesh.size()), -1);
  for (Extent b = 0; b < grid.num_blocks(); ++b)
    for (int i = 0; i < placement.num_sites(b); ++i) {
      Extent& held = block[static_cast<std::size_t>(placement.site(b, i))];
      if (held >= 0) return std::nullopt;
      held = b;
    }
  if (std::find(block.begin(), block.end(), Extent{-1}) != block.end()) return std::nullopt;
  std::vector<Extent> key_stride(static_cast<std::size_t>(grid.rank()), 1);  // C order over the grid's parts
  for (int d = grid.rank() - 1; d > 0; --d) key_stride[d - 1] = key_stride[d] * grid.parts()[d];
  std::vector<Extent> axis_stride;  // mixed radix over the mesh axes, minor first (DeviceMesh::coordinates)
  Extent stride = 1;
  for (const MeshAxis& a : mesh.axes()) axis_stride.push_back(stride), stride *= a.size;
  // The key digit of dimension d at place value `place` (radix `prime`) of the block rank r holds.
  auto key_digit = [&](int r, int d, Extent place, Extent prime) {
    return ((block[static_cast<std::size_t>(r)] / key_stride[d]) % grid.parts()[d] / place) % prime;
  };
  // Each digit's axis is the one whose rank with that coordinate 1 and the others 0 has the digit 1 (in a type the
  // digit is that axis's coordinate on every rank); then every rank is checked once against the type so found.
  DistType type;
  std::vector<bool> used(mesh.axes().size(), false);
  for (int d = 0; d < grid.rank(); ++d) {
    DistDim dim{grid.bound()[d], {}};
    Extent place = 1;
    for (Extent prime : prime_factors(grid.parts()[d])) {
      std::optional<std::size_t> match;
      for (std::size_t a = 0; a < mesh.axes().size() && !match; ++a)
        if (!used[a] && mesh.axes()[a].size == prime &&
            key_digit(static_cast<int>(axis_stride[a]), d, place, prime) == 1)
          match = a;
      if (!match) return std::nullopt;
      used[*match] = true;
      dim.axes.push_back(mesh.axes()[*match].name);
      place *= prime;
    }
    type.dims.push_back(dim);
  }
  // Every rank's block is then its tile under the type (a block id is the tile id, C order over the grid's parts).
  if (tile_ids(type, mesh) != block) return std::nullopt;
  return type;
}

DistType as_partial_type(DistType type, const DeviceMesh& mesh, AggOp op) {
  for (const MeshAxis& a : mesh.axes()) {
    bool used = false;
    for (const DistDim& d : type.dims) used = used || std::count(d.axes.begin(), d.axes.end(), a.name) > 0;
    if (!used) type.partial.push_back(a.name);
  }
  type.partial_op = op;
  return type;
}

DistType prime_factored(const DistType& type, const DeviceMesh& mesh) {
  DistType p = type;
  auto expand = [&](const std::vector<std::string>& axes) {
    std::vector<std::string> primes;
    for (const std::string& a : axes)
      for (const std::string& q : mesh.prime_axes_of(a)) primes.push_back(q);
    return primes;
  };
  for (DistDim& d : p.dims) d.axes = expand(d.axes);
  p.partial = expand(p.partial);
  return p;
}

}  // namespace einrel::redistribute::mesh
