#include <einrel_Cli.hpp>
#include <einrel_CommandLine.hpp>
#include <einrel_Config.hpp>
#include <einrel_Planner.hpp>

#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace einrel::cli {
namespace {

constexpr const char* usage = R"(usage: einrel <command> [options]

commands:
  run GRAPH (--input IN.h5 | --bind NAME=FILE.h5:/path ... | --random SEED) [--output OUT.h5]
      [--report REPORT.json] [--procs P] [--planner NAME] [--cost-model engine|paper] [--check] [--progress]
      [--objective makespan|floats|model] [--order planned|graph]
      [--machine MACHINE.json] [--ranks-per-node N] [--input-reads again|move]
      [--comm-buffer-limit BYTES] [--memory-limit BYTES] [--transitions auto|point-to-point|collectives]
      [--no-warm-memory] [--random-density D] [--sparse-tile T] [--drop-zero-blocks] [--sparse-output]
      Runs the EinSum graph file GRAPH on every rank. Inputs are the root datasets of IN.h5 named like the
      graph's inputs, or the datasets --bind names (repeatable), each rank reading only its own blocks;
      --random SEED gives every element a counter-based value in [-1,1) that depends only on the seed,
      the input and the element's index. Outputs are written collectively as root datasets of OUT.h5
      named like the graph's outputs. Every vertex runs as tensor relations partitioned for P processors
      (any whole number; default: the number of ranks, one join tuple per rank) as the planner chooses (one of
      the planners listed below; the LLM baselines need a transformer layer in the graph) under the
      cost model (default engine: what einrel moves; paper: eindecomp.txt's). The default planner's plan is,
      of its dynamic program's and the baselines', the best by --objective, each costed by the engine's
      dry run on the ranks started: makespan (default), the estimated seconds of the slowest rank per
      vertex under the rates of --machine (from `einrel calibrate`); floats, the floats moved between
      ranks; model, the planner's own cost model alone. Under makespan, --order planned (the default) also
      plans the other orders of each n-ary einsum, and of each chain of binary products whose inner values
      nothing else reads, of up to 12 operands, and keeps the fastest; --order graph keeps the graph as
      written. --input-reads: a consumer that reads an input in
      another layout than the input's first reader reads it again from the file where the model finds
      that cheaper (again, the default), or has it moved (move).
      --check also evaluates on one rank without partitioning and fails if the results differ by more
      than rounding. --progress prints each finished vertex on rank 0 (stderr). --comm-buffer-limit caps
      the send + receive buffers of one exchange round. --memory-limit picks a plan whose block bytes
      per rank (the dry run's estimate) fit, or fails naming the shortfall. --transitions: how operands
      move between layouts that are distributed types on the ranks (auto, the default: the faster of the
      point-to-point exchange and synthesized MPI collectives by an alpha-beta model; or force one).
      Under a machine file of two levels (node_latency_seconds, node_seconds_per_byte) a message between
      ranks of one node is priced at the node's rates: ranks r and s share a node when r/N == s/N, N from
      --ranks-per-node (a simulated map), else the nodes MPI finds (run), else the file's ranks_per_node.
      Before the inputs are read, every block and buffer the run will use is taken and touched once, so
      that no page is first touched while timed; --no-warm-memory skips that.
      Inputs declared `sparse` are block-sparse: their shapes come from the datasets NAME.mask or NAME.norms
      next to them, or with --drop-zero-blocks from their blocks of edge T (--sparse-tile, default 256)
      that are all zero, or with --random from --random-density D (the fraction of blocks present). Only
      present block pairs are multiplied; --sparse-output writes each sparse output's mask next to it.
  matrix-chain --scale S [--skewed] [--planner NAME] [--cost-model engine|paper] [--procs P] [--dtype f32|f64]
      [--random SEED] [--check] [--report REPORT.json] [--progress] [--comm-buffer-limit BYTES]
      [--memory-limit BYTES] [--transitions auto|point-to-point|collectives] [--no-warm-memory]
      [--objective makespan|floats|model] [--order planned|graph]
      [--machine MACHINE.json] [--ranks-per-node N] [--input-reads again|move]
      Runs (A×B) + (C×(D×E)) like `run --random` (default seed 1): square, all S×S, or skewed, A S×S/10,
      B S/10×S, C S×S/10, D S/10×10S, E 10S×S; then prints seconds, GFLOP/s and floats moved.
  plan GRAPH [--procs P] [--ranks R] [--planner NAME] [--cost-model engine|paper]
      [--objective makespan|floats|model] [--order planned|graph]
      [--machine MACHINE.json] [--ranks-per-node N] [--input-reads again|move]
      [--memory-limit BYTES] [--transitions auto|point-to-point|collectives] [--format text|json|dot]
      [--input IN.h5 | --random SEED --random-density D] [--sparse-tile T] [--drop-zero-blocks]
      Prints the partition vector and predicted cost (floats moved: join, aggregation, repartition)
      of every vertex of GRAPH for P processors and its estimated seconds, planned and costed as run
      would on R ranks (--ranks; else P when given, up to 65536; else the ranks started): under the
      engine cost model the predicted cost is the floats the engine's dry run moves. --ranks R adds the
      dry run's figures per rank (floats sent and received, peak block bytes), computed without data or
      MPI. --memory-limit as for run, on R ranks. --format dot draws the plan for Graphviz. Sparse inputs
      are planned by the shapes IN.h5 or --random --random-density give them, as run makes them.
  reshard --mesh M --from T1 --to T2 [--dtype f32|f64] [--format text|json] [--execute [--reps N]]
      Synthesizes the redistribution of an array from the distributed type T1 to T2 on the device mesh M
      (axes minor first, e.g. x=4,y=6) by MPI collectives (allgather, alltoall, dynslice, allpermute;
      reducescatter and allreduce for a pending reduction) and prints each step with its cost, the memory
      height and the cost of allgather+slice, in elements and bytes of --dtype (default f64). Types as
      [3{x}12,2{y}12]: tile{axes}global per dimension; [12,3{x}12] sum{y} has a reduction over y pending.
      --execute, under `mpiexec.mpich -n |M|`: runs it on data filled from the global indices, checks every
      element of the target on every rank (exit 1 on a mismatch) and prints the median time of --reps runs
      (default 5) of it, of allgather+slice and of the point-to-point redistribution on the same data.

  calibrate [--output MACHINE.json] [--reps N] [--ranks-per-node N]
      Measures the machine model's rates on the ranks started (MPI latency and bandwidth by ping-pong
      between rank pairs, within a node and between nodes where the ranks span several; einrel's kernels'
      GFLOP/s and memory rate, HDF5 read rate per rank; each the slowest rank's median of N, default 5)
      and writes them as the machine file --machine reads. Nodes as MPI finds them, or of --ranks-per-node.

  grad GRAPH --loss L --wrt A,B,... [--output G.ein]
      Writes the gradient graph of GRAPH in the graph language (stdout without --output): its inputs, the
      vertices the 0-d loss L depends on, and EinSum vertices computing grad_A, grad_B, ... (dL/dA, of A's
      shape) by reverse mode; outputs L, grad_A, grad_B, ... Run it with `einrel run` like any graph.
  train GRAPH --loss L --params W1,W2,... --lr LR --steps N --input IN.h5 --output OUT.h5 [--report R.json]
      [--procs P] [--planner NAME] [--cost-model engine|paper] [--transitions auto|point-to-point|collectives]
      [--objective makespan|floats|model] [--order planned|graph]
      [--machine MACHINE.json] [--ranks-per-node N] [--comm-buffer-limit BYTES]
      [--memory-limit BYTES] [--no-warm-memory]
      Plain SGD, W <- W - LR dL/dW, for N steps: forward, backward and update are one graph, planned once and
      run N times by the engine, each W kept distributed where the next step reads it. IN.h5 holds the
      parameters' initial values and every other input (data); OUT.h5 gets the parameters after N steps,
      the report the loss before each update and the seconds of each step. The other options as for run.

  iterate GRAPH --steps N --carry P=P_next,... (--input IN.h5 | --bind NAME=FILE.h5:/path ... | --random SEED)
      [--output OUT.h5]
      [--until NAME --tolerance TOL] [--checkpoint CK.h5 --checkpoint-every K] [--restart CK.h5]
      [--report R.json] [--screen EPS] [sparse options and planning and engine options as for run]
      Runs GRAPH again and again, each input P taking the value of vertex P_next after every step (kept
      distributed where the next step reads it), until step N, or until the 0-d vertex NAME is below TOL in
      absolute value. A sparse P is measured after every step (tiles below EPS dropped) and the next step
      planned for its shape. Every K steps the carried values and the step count go to CK.h5; --restart CK.h5
      resumes from it on any number of ranks (N counts from the first step). OUT.h5 gets the last step's
      outputs and the carried values; the report the seconds of each step and the values of NAME.

options:
  -h, --help      this text
  --version       the einrel version

Run under MPI with `mpiexec.mpich -n R einrel ...`. Kokkos options (e.g. --kokkos-threads=N) are accepted.
)";

// The usage text, ending with the planners --planner accepts (partition::planner_names(), the first the
// default).
std::string usage_text() {
  std::string planners;
  for (const std::string& name : partition::planner_names()) planners += (planners.empty() ? "" : ", ") + name;
  return std::string(usage) + "Planners (--planner): " + planners + "; the first is the default.\n";
}

}  // namespace

bool cli_info(MPI_Comm comm, int argc, char* argv[], std::ostream& out) {
  if (argc < 2) return false;
  const std::string command = argv[1];
  const bool help = command == "-h" || command == "--help" || command == "help";
  if (!help && command != "--version") return false;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0) return true;
  if (help)
    out << usage_text();
  else
    out << "einrel " << EINREL_VERSION << "\n";
  return true;
}

int cli_main(MPI_Comm comm, int argc, char* argv[], std::ostream& out, std::ostream& err) {
  if (cli_info(comm, argc, argv, out)) return 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    const CommandLine command = parse_command_line(std::move(args));
    std::visit(
        [&](const auto& options) {
          using Options = std::decay_t<decltype(options)>;
          if constexpr (std::is_same_v<Options, RunOptions>) run_graph(comm, options, out);
          if constexpr (std::is_same_v<Options, MatrixChainOptions>) run_matrix_chain(comm, options, out);
          if constexpr (std::is_same_v<Options, PlanOptions>) plan_graph(comm, options, out);
          if constexpr (std::is_same_v<Options, ReshardOptions>) run_reshard(comm, options, out);
          if constexpr (std::is_same_v<Options, GradOptions>) grad_graph(comm, options, out);
          if constexpr (std::is_same_v<Options, TrainOptions>) train_graph(comm, options, out);
          if constexpr (std::is_same_v<Options, IterateOptions>) iterate_graph(comm, options, out);
          if constexpr (std::is_same_v<Options, CalibrateOptions>) calibrate(comm, options, out);
        },
        command);
    return 0;
  } catch (const std::exception& e) {
    if (rank == 0) err << "einrel: error: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace einrel::cli
