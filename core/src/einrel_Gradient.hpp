#ifndef EINREL_GRADIENT_HPP
#define EINREL_GRADIENT_HPP

#include <einrel_Graph.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Reverse mode on EinGraphs (docs/gradient.md): the gradient of a 0-d loss vertex with respect to inputs,
// written as more EinSum vertices of the same graph language, so that the planners and the engine run the
// backward pass like any other graph.
namespace einrel {

// Appends to `graph` the vertices that compute d loss / d w for every w in `wrt` and returns them, in the
// order of `wrt`, each of w's bound and dtype and named "grad_" + w's name. `loss` must be a 0-d EinSum
// vertex; `wrt` are distinct input vertices (an input the loss does not depend on gets zeros). Helper
// vertices are named "grad_V" (the gradient of a vertex V with several consumers) and "grad_V__N". Throws
// Error naming the problem, leaving the graph as it was.
std::vector<VertexId> append_gradient(Graph& graph, VertexId loss, const std::vector<VertexId>& wrt);

// The gradient graph of `einrel grad`: every input of `graph`, the vertices the loss depends on, and the
// backward vertices; outputs the loss, then grad_W for each W in `wrt` (input names).
Graph gradient_graph(const Graph& graph, std::string_view loss, const std::vector<std::string>& wrt);

// One step of plain SGD as one graph (`einrel train`, docs/training.md): the gradient graph's vertices, then
// for each parameter W: W__step = lr · grad_W and W__next = W − W__step. Outputs: the loss, then every
// W__next. `carried` pairs each parameter input W with W__next, which the next step reads as W.
struct SgdStep {
  Graph graph;
  VertexId loss = 0;
  std::vector<std::pair<VertexId, VertexId>> carried;
};
// Throws Error as gradient_graph does, for an lr that is not finite and positive, and for names taken.
SgdStep sgd_step_graph(const Graph& graph, std::string_view loss, const std::vector<std::string>& params, double lr);

}  // namespace einrel

#endif
