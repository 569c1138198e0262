#ifndef EINREL_GRAPHFILE_HPP
#define EINREL_GRAPHFILE_HPP

#include <einrel_Graph.hpp>

#include <string>
#include <string_view>

namespace einrel {

// Parses the `.ein` graph language (docs/graph-format.md). `filename` is used in
// error messages only. Throws ParseError whose message starts with file:line:col.
Graph parse_graph(std::string_view text, const std::string& filename);

// Reads and parses a graph file; throws Error when it cannot be read.
Graph read_graph_file(const std::string& path);

// Writes `graph` in the same language, one statement per vertex (macros appear expanded), ops only where
// they differ from the defaults: parse_graph(print_graph(g)) rebuilds g exactly.
std::string print_graph(const Graph& graph);

}  // namespace einrel

#endif
