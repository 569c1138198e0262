// Prints builders::llama_layer in the graph language at a given shape, for llama_prefill_bench.py (and to
// regenerate drivers/examples/llama_layer.ein, which is this program's output at its defaults, with comments):
//   einrel_llama_graph --sequence 256 --model 256 --heads 8 --head-dim 32 --hidden 704 [--dtype f64]
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include "einrel_BenchOptions.hpp"

#include <exception>
#include <iostream>

int main(int argc, char** argv) {
  using namespace einrel;
  const bench::Options o(argc, argv, {"--sequence", "--model", "--heads", "--head-dim", "--hidden", "--dtype"},
                         "einrel_llama_graph [--sequence S] [--model A] [--heads H] [--head-dim D] [--hidden F] "
                         "[--dtype f32|f64]");
  try {
    const builders::LlamaShape shape{o.number("--sequence", 256), o.number("--model", 256),  o.number("--heads", 8),
                                     o.number("--head-dim", 32),  o.number("--hidden", 704), 1e-5};
    const std::string dtype = o.text("--dtype", "f64");
    if (dtype != "f32" && dtype != "f64") o.fail();
    Graph g;
    const VertexId x = g.input("x", dtype == "f32" ? Dtype::f32 : Dtype::f64, {shape.sequence, shape.model});
    g.output(builders::llama_layer(g, x, shape));
    std::cout << print_graph(g);
  } catch (const std::exception& e) {
    std::cerr << "einrel_llama_graph: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
