#include <einrel_Bound.hpp>
#include <einrel_CommandLine.hpp>
#include <einrel_Error.hpp>
#include <einrel_MachineFile.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

namespace einrel::cli {
namespace {

// Options of one subcommand: "--name value" or "--name=value", and positional arguments.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;
};

// `known` options take a value, `flags` take none.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<std::string>& known,
                      const std::vector<std::string>& flags, const std::string& command) {
  ParsedArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      parsed.positional.push_back(a);
      continue;
    }
    const auto eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool is_flag = std::find(flags.begin(), flags.end(), name) != flags.end();
    if (!is_flag && std::find(known.begin(), known.end(), name) == known.end())
      throw Error("unknown option '--" + name + "' for '" + command + "' (see einrel --help)");
    if (parsed.options.count(name)) throw Error("option '--" + name + "' is given twice");
    if (is_flag) {
      if (eq != std::string::npos) throw Error("option '--" + name + "' takes no value");
      parsed.options[name] = "1";
    } else if (eq != std::string::npos) {
      parsed.options[name] = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      parsed.options[name] = args[++i];
    } else {
      throw Error("option '--" + name + "' needs a value");
    }
    if (parsed.options[name].empty()) throw Error("option '--" + name + "' needs a non-empty value");
  }
  return parsed;
}

std::optional<std::string> option(const ParsedArgs& p, const std::string& name) {
  auto it = p.options.find(name);
  if (it == p.options.end()) return std::nullopt;
  return it->second;
}

std::uint64_t parse_seed(const std::string& s) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s[0] == '-') throw Error("--random needs a non-negative integer seed, got '" + s + "'");
  return value;
}

// The whole of `s` as a signed integer, or nothing.
std::optional<long long> whole_integer(const std::string& s) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != s.size()) return std::nullopt;
  return value;
}

std::int64_t parse_procs(const std::string& s) {
  const auto value = whole_integer(s);
  if (!value || *value < 1 || *value > (1LL << 40))
    throw Error("--procs needs a whole number of processors from 1 to 2^40, got '" + s + "'");
  return *value;
}

// The one positional argument of `command`: the graph file.
const std::string& graph_argument(const ParsedArgs& p, const std::string& command) {
  if (p.positional.size() != 1)
    throw Error(p.positional.empty() ? command + " needs a graph file: einrel " + command + " GRAPH ..."
                                     : command + " takes one graph file, got " + std::to_string(p.positional.size()) +
                                           " positional arguments");
  return p.positional[0];
}

// A positive integer option (a count or a size in bytes).
std::int64_t parse_positive(const std::string& s, const std::string& name) {
  const auto value = whole_integer(s);
  if (!value || *value < 1) throw Error("--" + name + " needs a positive integer, got '" + s + "'");
  return *value;
}

// The number `s` spells whole (NaN where it spells none, or has more after it).
double whole_number(const std::string& s) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  return used == s.size() ? value : std::numeric_limits<double>::quiet_NaN();
}

// --ranks-per-node: a whole number from 1 to 2^24.
int parse_ranks_per_node(const std::string& s) {
  const std::int64_t ranks = parse_positive(s, "ranks-per-node");
  if (ranks > (1 << 24)) throw Error("--ranks-per-node " + s + " is more than 16777216");
  return static_cast<int>(ranks);
}

// The planning options of `run`, `matrix-chain` and `plan`: --procs, --planner, --cost-model, --memory-limit,
// --transitions, --input-reads, --objective, --order, --machine, --ranks-per-node, --screen (where the command
// takes it).
void read_planning_options(const ParsedArgs& p, engine::Options& options) {
  if (auto procs = option(p, "procs")) options.procs = parse_procs(*procs);
  if (auto planner = option(p, "planner")) options.planner = *planner;
  if (auto model = option(p, "cost-model")) options.cost_model = partition::parse_cost_model(*model);
  if (auto limit = option(p, "memory-limit"))
    options.memory_limit = static_cast<std::size_t>(parse_positive(*limit, "memory-limit"));
  if (auto transitions = option(p, "transitions")) options.transitions = engine::parse_transition_policy(*transitions);
  // The CLI reads inputs from files or the generator, which it can do again in any layout.
  options.input_reads = engine::InputReads::again;
  if (auto reads = option(p, "input-reads")) options.input_reads = engine::parse_input_reads(*reads);
  if (auto objective = option(p, "objective")) options.objective = engine::parse_objective(*objective);
  if (auto order = option(p, "order")) {
    if (*order != "planned" && *order != "graph")
      throw Error("--order is 'planned' (the planner weighs the n-ary einsums' orders) or 'graph', got '" + *order +
                  "'");
    options.plan_order = *order == "planned";
  }
  if (auto machine = option(p, "machine")) options.machine = read_machine_file(*machine);
  if (auto n = option(p, "ranks-per-node")) options.machine.ranks_per_node = parse_ranks_per_node(*n);
  if (auto screen = option(p, "screen")) {
    const double value = whole_number(*screen);
    if (!(value > 0) || !std::isfinite(value))
      throw Error("--screen needs a finite number > 0 (the norm threshold), got '" + *screen + "'");
    options.screen = value;
  }
}

// How `run`, `matrix-chain` and `train` run beyond planning: --comm-buffer-limit, --no-warm-memory.
void read_engine_options(const ParsedArgs& p, engine::Options& options) {
  read_planning_options(p, options);
  if (auto limit = option(p, "comm-buffer-limit"))
    options.comm_buffer_limit = static_cast<std::size_t>(parse_positive(*limit, "comm-buffer-limit"));
  options.warm_memory = !option(p, "no-warm-memory").has_value();
}

// What `run` and `matrix-chain` share: --random, --report, --check, --progress and the engine's options.
void read_run_options(const ParsedArgs& p, RunOptions& options) {
  read_engine_options(p, options.engine);
  if (auto seed = option(p, "random")) options.random_seed = parse_seed(*seed);
  options.report = option(p, "report");
  options.check = option(p, "check").has_value();
  options.progress = option(p, "progress").has_value();
}

// The block-sparse options of `run`, `plan` and `iterate` (docs/sparse.md): --random-density (with --random SEED),
// --sparse-tile, --drop-zero-blocks.
void read_sparse_options(const ParsedArgs& p, const std::optional<std::uint64_t>& random_seed, SparseOptions& options) {
  if (auto density = option(p, "random-density")) {
    const double value = whole_number(*density);
    if (!(value > 0 && value <= 1))
      throw Error("--random-density needs a fraction of blocks in (0, 1], got '" + *density + "'");
    if (!random_seed) throw Error("--random-density shapes the inputs --random makes: give --random SEED");
    options.random_density = value;
  }
  if (auto tile = option(p, "sparse-tile")) options.tile = parse_positive(*tile, "sparse-tile");
  options.drop_zero_blocks = option(p, "drop-zero-blocks").has_value();
}

// The values of every --bind NAME=FILE.h5:/dataset in `args` (the option may repeat: each occurrence is parsed on its
// own) and the other arguments, for parse_args; a --bind without a value is an error.
std::pair<std::vector<std::string>, std::vector<std::string>> split_bindings(const std::vector<std::string>& args) {
  std::vector<std::string> rest, binds;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--bind" && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
      binds.push_back(args[++i]);
    } else if (args[i].rfind("--bind=", 0) == 0) {
      binds.push_back(args[i].substr(7));
    } else if (args[i] == "--bind") {
      throw Error("option '--bind' needs a value NAME=FILE.h5:/dataset");
    } else {
      rest.push_back(args[i]);
    }
  }
  return {std::move(rest), std::move(binds)};
}

RunOptions parse_run(const std::vector<std::string>& args) {
  const auto [rest, binds] = split_bindings(args);
  const ParsedArgs p = parse_args(rest,
                                  {"input", "output", "report", "random", "procs", "planner", "cost-model",
                                   "comm-buffer-limit", "memory-limit", "transitions", "input-reads", "objective",
                                   "order", "machine", "ranks-per-node", "random-density", "sparse-tile", "screen"},
                                  {"check", "progress", "no-warm-memory", "drop-zero-blocks", "sparse-output"}, "run");
  RunOptions options;
  options.graph = graph_argument(p, "run");
  options.input = option(p, "input");
  options.output = option(p, "output");
  read_run_options(p, options);
  read_sparse_options(p, options.random_seed, options.sparse);
  options.sparse_output = option(p, "sparse-output").has_value();
  options.bind = binds;
  return options;
}

Dtype parse_dtype_option(const std::string& s) {
  const auto dtype = parse_dtype(s);
  if (!dtype) throw Error("--dtype is f32 or f64, got '" + s + "'");
  return *dtype;
}

MatrixChainOptions parse_matrix_chain(const std::vector<std::string>& args) {
  const ParsedArgs p =
      parse_args(args,
                 {"scale", "planner", "cost-model", "procs", "dtype", "random", "report", "comm-buffer-limit",
                  "memory-limit", "transitions", "input-reads", "objective", "order", "machine", "ranks-per-node"},
                 {"skewed", "check", "progress", "no-warm-memory"}, "matrix-chain");
  if (!p.positional.empty()) throw Error("matrix-chain takes no positional arguments, got '" + p.positional[0] + "'");
  const auto scale = option(p, "scale");
  if (!scale) throw Error("matrix-chain needs --scale S");
  MatrixChainOptions options;
  options.scale = parse_positive(*scale, "scale");
  options.skewed = option(p, "skewed").has_value();
  if (auto dtype = option(p, "dtype")) options.dtype = parse_dtype_option(*dtype);
  RunOptions& run = options.run;
  run.graph = std::string("matrix-chain ") + (options.skewed ? "skewed" : "square") + " S=" + *scale;
  run.random_seed = 1;  // --random overrides it
  read_run_options(p, run);
  return options;
}

PlanOptions parse_plan(const std::vector<std::string>& args) {
  const ParsedArgs p = parse_args(
      args,
      {"procs", "planner", "cost-model", "format", "ranks", "memory-limit", "transitions", "input-reads", "objective",
       "order", "machine", "ranks-per-node", "input", "random", "random-density", "sparse-tile", "screen"},
      {"drop-zero-blocks"}, "plan");
  PlanOptions options;
  options.graph = graph_argument(p, "plan");
  read_planning_options(p, options.engine);
  options.input = option(p, "input");
  if (auto seed = option(p, "random")) options.random_seed = parse_seed(*seed);
  if (options.input && options.random_seed) throw Error("give either --input FILE or --random SEED, not both");
  read_sparse_options(p, options.random_seed, options.sparse);
  if (auto format = option(p, "format")) options.format = *format;
  if (auto ranks = option(p, "ranks")) {
    const std::int64_t r = parse_positive(*ranks, "ranks");
    if (r > (1 << 24)) throw Error("--ranks " + *ranks + " is more ranks than a dry run plans for (at most 16777216)");
    options.ranks = static_cast<int>(r);
  }
  return options;
}

ReshardOptions parse_reshard(const std::vector<std::string>& args) {
  const ParsedArgs p = parse_args(args, {"mesh", "from", "to", "dtype", "format", "reps"}, {"execute"}, "reshard");
  if (!p.positional.empty()) throw Error("reshard takes no positional arguments, got '" + p.positional[0] + "'");
  const auto required = [&](const std::string& name) {
    const auto value = option(p, name);
    if (!value) throw Error("reshard needs --" + name + " (einrel reshard --mesh M --from T1 --to T2)");
    return *value;
  };
  ReshardOptions options;
  options.mesh = required("mesh");
  options.from = required("from");
  options.to = required("to");
  if (auto dtype = option(p, "dtype")) options.dtype = parse_dtype_option(*dtype);
  if (auto format = option(p, "format")) options.format = *format;
  options.execute = option(p, "execute").has_value();
  if (auto reps = option(p, "reps")) {
    if (!options.execute) throw Error("--reps counts the runs of --execute");
    options.repetitions = static_cast<int>(std::min<std::int64_t>(parse_positive(*reps, "reps"), 1000));
  }
  return options;
}

// "A,B,C" as names, each non-empty.
std::vector<std::string> name_list(const std::string& s, const std::string& name) {
  std::vector<std::string> names;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = s.find(',', start);
    names.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (names.back().empty()) throw Error("--" + name + " needs comma-separated names, got '" + s + "'");
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

GradOptions parse_grad(const std::vector<std::string>& args) {
  const ParsedArgs p = parse_args(args, {"loss", "wrt", "output"}, {}, "grad");
  GradOptions options;
  options.graph = graph_argument(p, "grad");
  const auto loss = option(p, "loss");
  const auto wrt = option(p, "wrt");
  if (!loss || !wrt) throw Error("grad needs --loss L and --wrt A,B,... (einrel grad GRAPH --loss L --wrt A,B)");
  options.loss = *loss;
  options.wrt = name_list(*wrt, "wrt");
  options.output = option(p, "output");
  return options;
}

// A finite number > 0.
double parse_rate(const std::string& s) {
  const double value = whole_number(s);
  if (!(value > 0) || !std::isfinite(value)) throw Error("--lr needs a finite number > 0, got '" + s + "'");
  return value;
}

TrainOptions parse_train(const std::vector<std::string>& args) {
  const ParsedArgs p = parse_args(
      args,
      {"loss", "params", "lr", "steps", "input", "output", "report", "procs", "planner", "cost-model", "transitions",
       "comm-buffer-limit", "memory-limit", "objective", "order", "machine", "ranks-per-node"},
      {"no-warm-memory"}, "train");
  TrainOptions options;
  options.run.graph = graph_argument(p, "train");
  for (const char* name : {"loss", "params", "lr", "steps", "input", "output"})
    if (!option(p, name))
      throw Error(std::string("train needs --") + name +
                  " (einrel train GRAPH --loss L --params W1,W2 --lr LR --steps N --input IN.h5 --output OUT.h5)");
  options.loss = *option(p, "loss");
  options.params = name_list(*option(p, "params"), "params");
  options.lr = parse_rate(*option(p, "lr"));
  options.steps = static_cast<int>(std::min<std::int64_t>(parse_positive(*option(p, "steps"), "steps"), 1 << 30));
  options.run.input = option(p, "input");
  options.run.output = option(p, "output");
  options.run.report = option(p, "report");
  read_engine_options(p, options.run.engine);
  return options;
}

// A finite number >= 0, for --tolerance.
double parse_tolerance(const std::string& s) {
  const double value = whole_number(s);
  if (!(value >= 0) || !std::isfinite(value)) throw Error("--tolerance needs a finite number >= 0, got '" + s + "'");
  return value;
}

IterateOptions parse_iterate(const std::vector<std::string>& args) {
  const auto [rest, binds] = split_bindings(args);
  const ParsedArgs p = parse_args(rest, {"steps",          "carry",
                                         "until",          "tolerance",
                                         "checkpoint",     "checkpoint-every",
                                         "restart",        "input",
                                         "random",         "output",
                                         "report",         "procs",
                                         "planner",        "cost-model",
                                         "transitions",    "comm-buffer-limit",
                                         "memory-limit",   "objective",
                                         "order",          "machine",
                                         "ranks-per-node", "screen",
                                         "sparse-tile",    "random-density"},
                                  {"no-warm-memory", "drop-zero-blocks"}, "iterate");
  IterateOptions options;
  options.run.graph = graph_argument(p, "iterate");
  const char* usage =
      " (einrel iterate GRAPH --steps N --carry P=P_next,... --input IN.h5|--bind NAME=FILE.h5:/path|--random SEED)";
  for (const char* name : {"steps", "carry"})
    if (!option(p, name)) throw Error(std::string("iterate needs --") + name + usage);
  options.steps = static_cast<int>(std::min<std::int64_t>(parse_positive(*option(p, "steps"), "steps"), 1 << 30));
  for (const std::string& pair : name_list(*option(p, "carry"), "carry")) {
    const std::size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size() || pair.find('=', eq + 1) != std::string::npos)
      throw Error("--carry needs INPUT=VERTEX pairs, got '" + pair + "'");
    options.carry.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  options.until = option(p, "until");
  if (options.until.has_value() != option(p, "tolerance").has_value())
    throw Error("--until NAME and --tolerance TOL go together: stop once |NAME| < TOL");
  if (auto tolerance = option(p, "tolerance")) options.tolerance = parse_tolerance(*tolerance);
  options.checkpoint = option(p, "checkpoint");
  if (options.checkpoint.has_value() != option(p, "checkpoint-every").has_value())
    throw Error("--checkpoint FILE and --checkpoint-every K go together: the carried values every K steps");
  if (auto every = option(p, "checkpoint-every"))
    options.checkpoint_every =
        static_cast<int>(std::min<std::int64_t>(parse_positive(*every, "checkpoint-every"), 1 << 30));
  options.restart = option(p, "restart");
  options.run.input = option(p, "input");
  options.run.bind = binds;
  if (auto seed = option(p, "random")) options.run.random_seed = parse_seed(*seed);
  options.run.output = option(p, "output");
  options.run.report = option(p, "report");
  read_engine_options(p, options.run.engine);
  read_sparse_options(p, options.run.random_seed, options.run.sparse);
  return options;
}

}  // namespace

CalibrateOptions parse_calibrate(const std::vector<std::string>& args) {
  const ParsedArgs p = parse_args(args, {"output", "reps", "ranks-per-node"}, {}, "calibrate");
  if (!p.positional.empty()) throw Error("calibrate takes no positional arguments, got '" + p.positional[0] + "'");
  CalibrateOptions options;
  options.output = option(p, "output");
  if (auto n = option(p, "ranks-per-node")) options.ranks_per_node = parse_ranks_per_node(*n);
  if (auto reps = option(p, "reps")) {
    const std::int64_t n = parse_positive(*reps, "reps");
    if (n > 1000) throw Error("--reps " + *reps + " is more than calibrate repeats (at most 1000)");
    options.reps = static_cast<int>(n);
  }
  return options;
}

CommandLine parse_command_line(std::vector<std::string> args) {
  if (args.empty()) throw Error("no command given (see einrel --help)");
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "run") return parse_run(args);
  if (command == "plan") return parse_plan(args);
  if (command == "matrix-chain") return parse_matrix_chain(args);
  if (command == "reshard") return parse_reshard(args);
  if (command == "grad") return parse_grad(args);
  if (command == "train") return parse_train(args);
  if (command == "iterate") return parse_iterate(args);
  if (command == "calibrate") return parse_calibrate(args);
  throw Error("unknown command '" + command +
              "' (available: run, plan, matrix-chain, reshard, grad, train, iterate, calibrate; see einrel --help)");
}

}  // namespace einrel::cli
