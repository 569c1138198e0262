// Planning speed and plan quality: every planner on a 1000-matmul chain, multi-layer transformers and the
// matrix-chain programs of docs/cli.md, for p = 2..64. Prints CSV
//   case,vertices,p,planner,median_seconds,partitions_considered,predicted_cost,cost_vs_eindecomp
// where the last column is the plan's predicted cost over eindecomp's on the same graph and p; on graphs that
// are not tree-shaped a "linearized" row gives the §8.4 linearization alone (no refinement). Then, on random
// DAGs, how often the §8.4 linearization alone ("linearized"), the linearization refined ("refined") and
// eindecomp (refinement also restarted from each baseline) lose to a baseline:
//   p,graphs,variant,baseline,losses,worst_ratio,geomean_ratio      (ratio = variant cost / baseline cost)
// With --write-graphs DIR it writes the graphs planner_process_bench.py times instead (write_graphs).
#include <einrel_EinDecomp.hpp>
#include <einrel_GraphBuilders.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_Planner.hpp>
#include "einrel_BenchTiming.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace einrel;

struct Case {
  std::string name;
  Graph graph;
};

// 1000 products M0 × M1 × ... with extents cycling through 256..8192, so consecutive products differ.
Graph long_chain() {
  std::vector<Extent> dims;
  for (int k = 0; k <= 1001; ++k) dims.push_back(Extent{256} << (k * 7 % 6));
  Graph g;
  g.output(builders::matrix_chain(g, dims, Dtype::f32));
  return g;
}

// `layers` transformer layers of LLaMA-7B's shape (s = 4096, a = 4096, 32 heads of 128, hidden 11008).
Graph transformer(int layers) {
  Graph g;
  VertexId x = g.input("X", Dtype::f32, {4096, 4096});
  for (int l = 0; l < layers; ++l)
    x = builders::transformer_layer(g, x, {4096, 4096, 32, 128}, 11008, "L" + std::to_string(l) + "_");
  g.output(x);
  return g;
}

Graph chain_program(bool skewed) {
  Graph g;
  g.output(builders::matrix_chain_program(g, 4096, skewed, Dtype::f32));
  return g;
}

double total_cost(const Graph& g, const std::vector<partition::PartitionVector>& partitions) {
  double sum = 0;
  for (const auto& c : partition::evaluate_cost(g, partitions, partition::CostModel::engine)) sum += c.total();
  return sum;
}

// Matrices with extents in {256, 1024, 4096}; each new vertex multiplies, adds or transposes tensors picked
// from everything so far, so results often have several consumers (and the graph several sinks).
Graph random_dag(std::mt19937& gen, int einsums) {
  static const Extent sizes[] = {256, 1024, 4096};
  Graph g;
  std::vector<VertexId> pool;
  auto input = [&](Extent m, Extent n) {
    pool.push_back(g.input("I" + std::to_string(g.size()), Dtype::f32, {m, n}));
    return pool.back();
  };
  // A tensor of the pool whose bound passes `fits`, else a new input of bound `fallback`.
  auto operand = [&](const std::function<bool(const Bound&)>& fits, const Bound& fallback) {
    std::vector<VertexId> fitting;
    for (VertexId v : pool)
      if (fits(g.vertex(v).bound)) fitting.push_back(v);
    return fitting.empty() ? input(fallback[0], fallback[1]) : fitting[gen() % fitting.size()];
  };
  input(sizes[gen() % 3], sizes[gen() % 3]);
  for (int made = 0; made < einsums; ++made) {
    const VertexId x = pool[gen() % pool.size()];
    const Bound bx = g.vertex(x).bound;
    switch (gen() % 3) {
      case 0:
        pool.push_back(g.einsum("ij,jk->ik", x,
                                operand([&](const Bound& b) { return b[0] == bx[1]; }, {bx[1], sizes[gen() % 3]})));
        break;
      case 1: {
        EinsumOptions add;
        add.join = JoinOp::add;
        pool.push_back(g.einsum("ij,ij->ij", x, operand([&](const Bound& b) { return b == bx; }, bx), add));
        break;
      }
      default:
        pool.push_back(g.einsum("ij->ji", x));
    }
  }
  g.output(pool.back());
  return g;
}

// How often each variant of eindecomp loses to each baseline on random DAGs, and by how much.
void dag_summary(int graphs) {
  struct Variant {
    const char* name;
    std::function<double(const Graph&, Extent)> cost;
  };
  const Variant variants[] = {
      {"linearized",
       [](const Graph& g, Extent p) {
         return total_cost(g, partition::eindecomp_linearized(g, p, partition::CostModel::engine, false).partitions);
       }},
      {"refined",
       [](const Graph& g, Extent p) {
         return total_cost(g, partition::eindecomp_linearized(g, p, partition::CostModel::engine, true).partitions);
       }},
      {"eindecomp", [](const Graph& g, Extent p) { return partition::make_plan(g, p, "eindecomp").total_cost; }}};
  const char* baselines[] = {"sqrt", "data", "greedy"};
  std::printf("\np,graphs,variant,baseline,losses,worst_ratio,geomean_ratio\n");
  for (Extent p : {4, 16, 64}) {
    std::mt19937 gen(42);
    struct Tally {
      int losses = 0;
      double worst = 0, log_sum = 0;
    };
    Tally tally[3][3];
    for (int n = 0; n < graphs; ++n) {
      const Graph g = random_dag(gen, 10 + n % 40);
      double cost[3];
      for (int v = 0; v < 3; ++v) cost[v] = variants[v].cost(g, p);
      for (int b = 0; b < 3; ++b) {
        const double baseline = partition::make_plan(g, p, baselines[b]).total_cost;
        for (int v = 0; v < 3; ++v) {
          const double ratio = cost[v] / baseline;
          tally[v][b].losses += ratio > 1 + 1e-12;
          tally[v][b].worst = std::max(tally[v][b].worst, ratio);
          tally[v][b].log_sum += std::log(ratio);
        }
      }
    }
    for (int v = 0; v < 3; ++v)
      for (int b = 0; b < 3; ++b)
        std::printf("%lld,%d,%s,%s,%d,%.4f,%.4f\n", static_cast<long long>(p), graphs, variants[v].name, baselines[b],
                    tally[v][b].losses, tally[v][b].worst, std::exp(tally[v][b].log_sum / graphs));
  }
}

std::size_t einsum_vertices(const Graph& g) {
  std::size_t n = 0;
  for (const Vertex& v : g.vertices()) n += v.is_input() ? 0 : 1;
  return n;
}

}  // namespace

// The graphs perf_tests/planner_process_bench.py plans as whole `einrel plan` processes, in the graph language:
// the 1000-product chain of 512² f32 matrices (issue 45's planning-time case) and 1 and 8 transformer layers.
int write_graphs(const std::string& dir) {
  Graph chain;
  chain.output(builders::matrix_chain(chain, std::vector<Extent>(1001, 512), Dtype::f32));
  const std::pair<const char*, Graph> graphs[] = {{"chain1000_512.ein", std::move(chain)},
                                                  {"transformer1.ein", transformer(1)},
                                                  {"transformer8.ein", transformer(8)}};
  for (const auto& [name, graph] : graphs) {
    std::ofstream out(dir + "/" + name);
    out << print_graph(graph);
    if (!out) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char* argv[]) {
  int reps = 5, dags = 200;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--dags") == 0 && i + 1 < argc) {
      dags = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--write-graphs") == 0 && i + 1 < argc) {
      return write_graphs(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--reps N] [--dags N] | --write-graphs DIR\n", argv[0]);
      return 1;
    }
  }
  std::vector<Case> cases;
  cases.push_back({"chain1000", long_chain()});
  cases.push_back({"transformer1", transformer(1)});
  cases.push_back({"transformer8", transformer(8)});
  cases.push_back({"transformer60", transformer(60)});
  cases.push_back({"square_chain_4096", chain_program(false)});
  cases.push_back({"skewed_chain_4096", chain_program(true)});

  std::printf("case,vertices,p,planner,median_seconds,partitions_considered,predicted_cost,cost_vs_eindecomp\n");
  for (const Case& c : cases)
    for (Extent p = 2; p <= 64; p *= 2) {
      double reference = 0;
      auto row = [&](const std::string& planner, double seconds, std::size_t considered, double cost) {
        if (planner == "eindecomp") reference = cost;
        std::printf("%s,%zu,%lld,%s,%.6f,%zu,%.6g,%.4f\n", c.name.c_str(), einsum_vertices(c.graph),
                    static_cast<long long>(p), planner.c_str(), seconds, considered, cost, cost / reference);
        std::fflush(stdout);
      };
      for (const std::string& planner : partition::planners_for(c.graph)) {
        partition::Plan plan;
        const double seconds = bench::median_seconds(reps, [&] { plan = partition::make_plan(c.graph, p, planner); });
        row(planner, seconds, plan.partitions_considered, plan.total_cost);
      }
      if (partition::is_tree_shaped(c.graph)) continue;
      // The §8.4 linearization alone, without refinement.
      partition::Partitioning linearized;
      const double seconds = bench::median_seconds(
          reps, [&] { linearized = partition::eindecomp_linearized(c.graph, p, partition::CostModel::engine, false); });
      row("linearized", seconds, linearized.partitions_considered, total_cost(c.graph, linearized.partitions));
    }
  dag_summary(dags);
  return 0;
}
