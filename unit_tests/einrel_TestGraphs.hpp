#ifndef EINREL_TESTGRAPHS_HPP
#define EINREL_TESTGRAPHS_HPP

// Random EinGraphs and random partition vectors for the evaluation and engine tests.
#include <einrel_Graph.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_PartitionVector.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace einrel::test {

// A random number of parts per label, a product of 2s and 3s (any whole number is a valid part count), at
// most the label's extent.
inline std::vector<partition::PartitionVector> random_plan(const Graph& g, std::mt19937& gen) {
  std::vector<partition::PartitionVector> plan(g.size());
  for (VertexId v = 0; v < g.size(); ++v) {
    const Vertex& vertex = g.vertex(v);
    if (vertex.is_input()) continue;
    const std::string& labels = g.resolved(v).unique_labels();
    std::vector<Extent> parts;
    for (char c : labels) {
      const Extent extent = g.resolved(v).extent(c);
      Extent p = 1;
      for (Extent f = gen() % 3 ? 2 : 3; f * p <= extent && gen() % 2; f = gen() % 3 ? 2 : 3) p *= f;
      parts.push_back(p);
    }
    plan[v] = partition::PartitionVector(labels, parts);
  }
  return plan;
}

// A random DAG: letters a-f with fixed random extents (1 and odd ones included); inputs of rank 0-3;
// each vertex applies a random unary or binary einsum with random ops to earlier vertices, keeping a
// random subset of the labels (possibly none). Every vertex is an output.
inline Graph random_graph(std::mt19937& gen, Dtype dtype) {
  const std::string letters = "abcdef";
  const std::vector<Extent> extent_choices = {1, 2, 3, 4, 5, 7, 8};
  std::map<char, Extent> extent;
  for (char c : letters) extent[c] = extent_choices[gen() % extent_choices.size()];
  auto shuffled_subset = [&](std::string from, std::size_t max_size) {
    std::shuffle(from.begin(), from.end(), gen);
    return from.substr(0, gen() % (std::min(from.size(), max_size) + 1));
  };
  Graph g;
  std::vector<std::string> labels;
  const int num_inputs = 2 + static_cast<int>(gen() % 3);
  for (int k = 0; k < num_inputs; ++k) {
    const std::string l = shuffled_subset(letters, 3);
    Bound b;
    for (char c : l) b.push_back(extent[c]);
    g.input("in" + std::to_string(k), dtype, b);
    labels.push_back(l);
  }
  const std::vector<JoinOp> joins = {JoinOp::mul,    JoinOp::add,     JoinOp::sub, JoinOp::max,  JoinOp::min,
                                     JoinOp::sqdiff, JoinOp::absdiff, JoinOp::eq,  JoinOp::first};
  const std::vector<AggOp> aggs = {AggOp::sum, AggOp::max, AggOp::min};
  const std::vector<MapOp> maps = {{MapKind::identity, 0}, {MapKind::identity, 0}, {MapKind::tanh, 0},
                                   {MapKind::relu, 0},     {MapKind::abs, 0},      {MapKind::scale, 0.5}};
  const int num_vertices = 3 + static_cast<int>(gen() % 4);
  for (int n = 0; n < num_vertices; ++n) {
    const bool binary = gen() % 3 != 0;
    std::vector<VertexId> operands = {static_cast<VertexId>(gen() % g.size())};
    if (binary) operands.push_back(static_cast<VertexId>(gen() % g.size()));
    std::string all;
    for (VertexId v : operands)
      for (char c : labels[v])
        if (all.find(c) == std::string::npos) all += c;
    std::string equation;
    for (std::size_t k = 0; k < operands.size(); ++k) equation += (k ? "," : "") + labels[operands[k]];
    const std::string out = shuffled_subset(all, all.size());
    EinsumOptions options;
    if (binary) options.join = joins[gen() % joins.size()];
    options.agg = aggs[gen() % aggs.size()];
    options.map = maps[gen() % maps.size()];
    g.einsum(equation + "->" + out, operands, options);
    labels.push_back(out);
    g.output(g.size() - 1);
  }
  return g;
}

}  // namespace einrel::test

#endif
