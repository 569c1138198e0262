#include <einrel_Slicing.hpp>

#include <algorithm>
#include <deque>

namespace einrel {

namespace {

// The region of a sliced value: per vertex, the label it slices (0 outside), and for a region vertex whose
// value carries the label, the dimension that does (-1 where it aggregated the label).
struct Region {
  std::vector<char> label;
  std::vector<int> carried;
  bool has(VertexId v) const { return label[v] != 0; }
};

using Readers = std::vector<std::vector<std::pair<VertexId, std::size_t>>>;  // per value: (reader, operand)

// Adds vertex `value`, carrying the label along `dimension`, and transitively every reader of a value carrying
// it. False, and the region as it was, where a vertex would slice two labels.
bool grow(const Graph& graph, const Readers& readers, Region& region, VertexId value, int dimension) {
  Region grown = region;
  grown.label[value] = graph.resolved(value).einsum().output[static_cast<std::size_t>(dimension)];
  grown.carried[value] = dimension;
  std::deque<VertexId> carrying{value};
  while (!carrying.empty()) {
    const VertexId v = carrying.front();
    carrying.pop_front();
    for (const auto& [reader, k] : readers[v]) {
      const EinSum& e = graph.resolved(reader).einsum();
      const char c = e.inputs[k][static_cast<std::size_t>(grown.carried[v])];
      if (grown.has(reader)) {
        if (grown.label[reader] != c) return false;
        continue;
      }
      grown.label[reader] = c;
      const std::size_t at = e.output.find(c);
      if (at == std::string::npos) continue;
      grown.carried[reader] = static_cast<int>(at);
      carrying.push_back(reader);
    }
  }
  region = std::move(grown);
  return true;
}

// The vertices outside the region that depend on it, which run after every pass; nothing where the region
// cannot run in passes: a region vertex reads a value of the region that aggregated the label (it needs the
// value whole), or a value outside that depends on the region.
std::optional<std::vector<bool>> after_region(const Graph& graph, const Region& region) {
  std::vector<bool> after(graph.size(), false);
  for (VertexId v = 0; v < graph.size(); ++v)
    for (VertexId in : graph.vertex(v).inputs) {
      if (region.has(v) && (after[in] || (region.has(in) && region.carried[in] < 0))) return std::nullopt;
      if (!region.has(v) && (region.has(in) || after[in])) after[v] = true;
    }
  return after;
}

// With `before`, the producers of the values the region reads along its label join it, as long as the region
// stays one that runs in passes: each such value is no input and no output, and the region reads it along the
// label at one dimension only.
void take_producers(const Graph& graph, const Readers& readers, Region& region) {
  auto is_output = [&](VertexId v) {
    return std::find(graph.outputs().begin(), graph.outputs().end(), v) != graph.outputs().end();
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (VertexId v = 0; v < graph.size(); ++v) {
      if (!region.has(v)) continue;
      for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k) {
        const VertexId in = graph.vertex(v).inputs[k];
        const std::string& labels = graph.resolved(v).einsum().inputs[k];
        const std::size_t at = labels.find(region.label[v]);
        if (region.has(in) || graph.vertex(in).is_input() || is_output(in) || at == std::string::npos ||
            labels.find(region.label[v], at + 1) != std::string::npos)
          continue;
        Region trial = region;
        if (!grow(graph, readers, trial, in, static_cast<int>(at)) || !after_region(graph, trial)) continue;
        region = std::move(trial);
        changed = true;
      }
    }
  }
}

}  // namespace

std::string SlicedGraph::describe() const {
  return value + " sliced along dimension " + std::to_string(dimension) + " in " + std::to_string(passes) +
         " passes (" + (before ? "with its producers; " : "") + std::to_string(region_size) + " vertices per pass)";
}

std::optional<SlicedGraph> slice_graph(const Graph& graph, VertexId value, int dimension, Extent passes, bool before) {
  if (value >= graph.size() || graph.vertex(value).is_input() || passes < 2 || dimension < 0 ||
      static_cast<std::size_t>(dimension) >= graph.vertex(value).bound.size() ||
      graph.vertex(value).bound[static_cast<std::size_t>(dimension)] % passes != 0)
    return std::nullopt;
  Readers readers(graph.size());
  for (VertexId v = 0; v < graph.size(); ++v)
    for (std::size_t k = 0; k < graph.vertex(v).inputs.size(); ++k)
      readers[graph.vertex(v).inputs[k]].push_back({v, k});
  Region region{std::vector<char>(graph.size(), 0), std::vector<int>(graph.size(), -1)};
  if (!grow(graph, readers, region, value, dimension) || !after_region(graph, region)) return std::nullopt;
  const auto region_vertices = [&] {
    return std::count_if(region.label.begin(), region.label.end(), [](char c) { return c; });
  };
  const auto without_producers = region_vertices();
  if (before) take_producers(graph, readers, region);
  const std::vector<bool> after = *after_region(graph, region);
  auto in_region = [&](VertexId v) { return region.has(v); };

  SlicedGraph sliced;
  sliced.value = graph.vertex(value).name;
  sliced.dimension = dimension;
  sliced.passes = passes;
  sliced.before = region_vertices() > without_producers;
  Graph& out = sliced.graph;
  std::vector<VertexId> id(graph.size());  // outside the region; for a value leaving it, its combination so far
  auto copy = [&](VertexId v, const std::string& name, const std::vector<VertexId>& operands) {
    const Vertex& vertex = graph.vertex(v);
    VertexId made = 0;
    if (vertex.is_input()) {
      made = vertex.sparse ? out.sparse_input(name, vertex.dtype, vertex.bound, vertex.origin)
                           : out.input(name, vertex.dtype, vertex.bound, vertex.origin);
      if (vertex.shape) out.bind_shape(made, *vertex.shape);
    } else {
      made = out.add_einsum(name, *vertex.einsum, operands, vertex.origin);
    }
    sliced.origin.push_back(v);
    sliced.combining.push_back(false);
    return made;
  };
  auto operands_of = [&](VertexId v, const std::vector<VertexId>& ids) {
    std::vector<VertexId> operands;
    for (VertexId in : graph.vertex(v).inputs) operands.push_back(ids[in]);
    return operands;
  };
  // Values leaving the region: read outside it, or graph outputs.
  std::vector<bool> leaves(graph.size(), false);
  for (VertexId v = 0; v < graph.size(); ++v)
    for (VertexId in : graph.vertex(v).inputs)
      if (!in_region(v) && in_region(in)) leaves[in] = true;
  for (VertexId v : graph.outputs())
    if (in_region(v)) leaves[v] = true;
  try {
    for (VertexId v = 0; v < graph.size(); ++v)
      if (!in_region(v) && !after[v]) id[v] = copy(v, graph.vertex(v).name, operands_of(v, id));
    for (Extent pass = 0; pass < passes; ++pass) {
      std::vector<VertexId> pass_id = id;
      for (VertexId v = 0; v < graph.size(); ++v) {
        if (!in_region(v)) continue;
        pass_id[v] = copy(v, graph.vertex(v).name + "__pass" + std::to_string(pass), operands_of(v, pass_id));
        out.slice_vertex(pass_id[v], VertexSlice{region.label[v], pass, passes});
        if (pass == 0) ++sliced.region_size;
      }
      for (VertexId v = 0; v < graph.size(); ++v) {
        if (!leaves[v]) continue;
        if (pass == 0) {
          id[v] = pass_id[v];
          continue;
        }
        const EinSum& e = graph.resolved(v).einsum();
        EinSum combine;
        combine.inputs = {e.output, e.output};
        combine.output = e.output;
        combine.join = region.carried[v] >= 0 ? JoinOp::add : combining_join(e.agg);
        const std::string name =
            pass + 1 == passes ? graph.vertex(v).name : graph.vertex(v).name + "__upto" + std::to_string(pass);
        id[v] = out.add_einsum(name, combine, {id[v], pass_id[v]}, graph.vertex(v).origin);
        sliced.origin.push_back(v);
        sliced.combining.push_back(true);
      }
    }
    for (VertexId v = 0; v < graph.size(); ++v)
      if (after[v]) id[v] = copy(v, graph.vertex(v).name, operands_of(v, id));
    for (VertexId v : graph.outputs()) out.output(id[v]);
  } catch (const Error&) {
    return std::nullopt;  // a generated name the graph already uses
  }
  return sliced;
}

}  // namespace einrel
