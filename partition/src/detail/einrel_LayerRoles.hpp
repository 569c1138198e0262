#ifndef EINREL_LAYERROLES_HPP
#define EINREL_LAYERROLES_HPP

#include <einrel_Graph.hpp>

#include <optional>
#include <vector>

// The logical dimensions of a transformer layer, found in any EinGraph that has one, for the LLM baselines
// of eindecomp.txt §9 (experiment 3: Megatron's tensor parallelism, sequence and attention-head splits).
namespace einrel::partition {

// Dimension classes: every (vertex, dimension) pair in one class per logical axis. An EinSum joins the
// dimensions its label names in its operands and output (union-find over the whole graph), so the sequence
// axis of the input, of Q, K, V and of both sides of the scores is one class, and so on.
struct DimensionClasses {
  std::vector<std::vector<int>> of;  // per vertex, per dimension: the class
  // The class of `label` of EinSum vertex v (the label's dimension in its output or its first operand).
  int of_label(const Graph& graph, VertexId v, char label) const;
};
DimensionClasses dimension_classes(const Graph& graph);

// The roles of a transformer layer's classes. The attention scores are the first contraction of two
// computed 3-D operands into a 3-D result that keeps one shared label (heads), aggregates the other shared
// label (head width) and keeps one label of each operand (sequence, on both sides: "shd,thd->hst"). The
// model width is the label aggregated by a projection of an input weight into [sequence, heads, head width];
// FFN hidden widths are the other dimensions of 2-D input weights that have a model-width dimension.
struct LayerRoles {
  DimensionClasses classes;
  int sequence = -1, heads = -1, head_dim = -1, model = -1;
  std::vector<int> hidden;
};
// Empty when the graph has no attention scores.
std::optional<LayerRoles> layer_roles(const Graph& graph);

}  // namespace einrel::partition

#endif
