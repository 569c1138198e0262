// parse_command_line: every subcommand's options into its struct, and one-line errors for the rest.
#include <einrel_Cli.hpp>
#include <einrel_CommandLine.hpp>
#include <einrel_Error.hpp>
#include <einrel_Planner.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace {

using einrel::cli::CommandLine;
using einrel::cli::parse_command_line;

template <class Options>
Options parsed(std::vector<std::string> args) {
  const CommandLine line = parse_command_line(std::move(args));
  EXPECT_TRUE(std::holds_alternative<Options>(line));
  return std::get<Options>(line);
}

std::string error_of(std::vector<std::string> args) {
  try {
    parse_command_line(std::move(args));
  } catch (const einrel::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommandLine, RunTakesEveryOption) {
  const auto o = parsed<einrel::cli::RunOptions>({"run",
                                                  "g.ein",
                                                  "--input",
                                                  "in.h5",
                                                  "--output=out.h5",
                                                  "--report",
                                                  "r.json",
                                                  "--random",
                                                  "7",
                                                  "--procs",
                                                  "8",
                                                  "--planner",
                                                  "sqrt",
                                                  "--cost-model",
                                                  "paper",
                                                  "--check",
                                                  "--progress",
                                                  "--comm-buffer-limit",
                                                  "4096",
                                                  "--memory-limit=1000000",
                                                  "--transitions",
                                                  "collectives",
                                                  "--bind",
                                                  "A=a.h5:/g/A",
                                                  "--bind=B=b.h5"});
  EXPECT_EQ(o.graph, "g.ein");
  EXPECT_EQ(o.input, "in.h5");
  EXPECT_EQ(o.output, "out.h5");
  EXPECT_EQ(o.report, "r.json");
  EXPECT_EQ(o.random_seed, 7u);
  EXPECT_EQ(o.engine.procs, 8);
  EXPECT_EQ(o.engine.planner, "sqrt");
  EXPECT_EQ(o.engine.cost_model, einrel::partition::CostModel::paper);
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.progress);
  EXPECT_EQ(o.engine.comm_buffer_limit, 4096u);
  EXPECT_EQ(o.engine.memory_limit, 1000000u);
  EXPECT_EQ(o.engine.transitions, einrel::engine::TransitionPolicy::collectives);
  EXPECT_EQ(o.bind, (std::vector<std::string>{"A=a.h5:/g/A", "B=b.h5"}));
  EXPECT_TRUE(o.engine.warm_memory);
  EXPECT_FALSE(
      parsed<einrel::cli::RunOptions>({"run", "g.ein", "--random", "1", "--no-warm-memory"}).engine.warm_memory);
}

TEST(CommandLine, OtherSubcommands) {
  const auto chain =
      parsed<einrel::cli::MatrixChainOptions>({"matrix-chain", "--scale", "100", "--skewed", "--dtype", "f32"});
  EXPECT_EQ(chain.scale, 100);
  EXPECT_TRUE(chain.skewed);
  EXPECT_EQ(chain.dtype, einrel::Dtype::f32);
  EXPECT_EQ(chain.run.random_seed, 1u);  // the default seed
  const auto plan = parsed<einrel::cli::PlanOptions>({"plan", "g.ein", "--ranks", "3", "--format", "json"});
  EXPECT_EQ(plan.graph, "g.ein");
  EXPECT_EQ(plan.ranks, 3);
  EXPECT_EQ(plan.format, "json");
  const auto reshard = parsed<einrel::cli::ReshardOptions>(
      {"reshard", "--mesh", "x=2", "--from", "[1{x}2]", "--to", "[2]", "--execute", "--reps", "3"});
  EXPECT_EQ(reshard.mesh, "x=2");
  EXPECT_EQ(reshard.from, "[1{x}2]");
  EXPECT_EQ(reshard.to, "[2]");
  EXPECT_TRUE(reshard.execute);
  EXPECT_EQ(reshard.repetitions, 3);
  const auto grad =
      parsed<einrel::cli::GradOptions>({"grad", "g.ein", "--loss", "L", "--wrt=W1,b1", "--output", "d.ein"});
  EXPECT_EQ(grad.graph, "g.ein");
  EXPECT_EQ(grad.loss, "L");
  EXPECT_EQ(grad.wrt, (std::vector<std::string>{"W1", "b1"}));
  EXPECT_EQ(grad.output, "d.ein");
  EXPECT_FALSE(parsed<einrel::cli::GradOptions>({"grad", "g.ein", "--loss", "L", "--wrt", "A"}).output);
  const auto train = parsed<einrel::cli::TrainOptions>({"train", "g.ein", "--loss", "L", "--params", "W1,W2", "--lr",
                                                        "0.05", "--steps", "7", "--input", "in.h5", "--output",
                                                        "out.h5", "--planner", "data", "--procs", "4"});
  EXPECT_EQ(train.run.graph, "g.ein");
  EXPECT_EQ(train.params, (std::vector<std::string>{"W1", "W2"}));
  EXPECT_EQ(train.lr, 0.05);
  EXPECT_EQ(train.steps, 7);
  EXPECT_EQ(train.run.input, "in.h5");
  EXPECT_EQ(train.run.output, "out.h5");
  EXPECT_EQ(train.run.engine.planner, "data");
  EXPECT_EQ(train.run.engine.procs, 4);
  const auto limited = parsed<einrel::cli::TrainOptions>({"train", "g.ein", "--loss", "L", "--params", "W", "--lr", "1",
                                                          "--steps", "1", "--input", "i.h5", "--output", "o.h5",
                                                          "--memory-limit", "5000", "--no-warm-memory"});
  EXPECT_EQ(limited.run.engine.memory_limit, 5000u);
  EXPECT_FALSE(limited.run.engine.warm_memory);
  const auto iterate = parsed<einrel::cli::IterateOptions>({"iterate",
                                                            "g.ein",
                                                            "--steps",
                                                            "20",
                                                            "--carry",
                                                            "X=X_next,Y=Y_next",
                                                            "--random",
                                                            "3",
                                                            "--until",
                                                            "r",
                                                            "--tolerance",
                                                            "1e-9",
                                                            "--checkpoint",
                                                            "ck.h5",
                                                            "--checkpoint-every",
                                                            "5",
                                                            "--restart",
                                                            "old.h5",
                                                            "--output",
                                                            "o.h5",
                                                            "--procs",
                                                            "4"});
  EXPECT_EQ(iterate.run.graph, "g.ein");
  EXPECT_EQ(iterate.steps, 20);
  EXPECT_EQ(iterate.carry, (std::vector<std::pair<std::string, std::string>>{{"X", "X_next"}, {"Y", "Y_next"}}));
  EXPECT_EQ(iterate.run.random_seed, 3u);
  EXPECT_EQ(iterate.until, "r");
  EXPECT_EQ(iterate.tolerance, 1e-9);
  EXPECT_EQ(iterate.checkpoint, "ck.h5");
  EXPECT_EQ(iterate.checkpoint_every, 5);
  EXPECT_EQ(iterate.restart, "old.h5");
  EXPECT_EQ(iterate.run.output, "o.h5");
  EXPECT_EQ(iterate.run.engine.procs, 4);
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2"}),
            "iterate needs --carry (einrel iterate GRAPH --steps N --carry P=P_next,... "
            "--input IN.h5|--bind NAME=FILE.h5:/path|--random SEED)");
  // --bind as for run (docs/cli.md), repeated; without a value it is an error.
  const auto bound = parsed<einrel::cli::IterateOptions>(
      {"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--bind", "A=a.h5:/g/A", "--bind=B=b.h5"});
  EXPECT_EQ(bound.run.bind, (std::vector<std::string>{"A=a.h5:/g/A", "B=b.h5"}));
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--bind"}),
            "option '--bind' needs a value NAME=FILE.h5:/dataset");
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--bind", "--random", "1"}),
            "option '--bind' needs a value NAME=FILE.h5:/dataset");
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X"}),
            "--carry needs INPUT=VERTEX pairs, got 'X'");
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--until", "r"}),
            "--until NAME and --tolerance TOL go together: stop once |NAME| < TOL");
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--checkpoint", "c.h5"}),
            "--checkpoint FILE and --checkpoint-every K go together: the carried values every K steps");
  EXPECT_EQ(error_of({"iterate", "g.ein", "--steps", "2", "--carry", "X=Y", "--until", "r", "--tolerance", "-1"}),
            "--tolerance needs a finite number >= 0, got '-1'");
  EXPECT_EQ(parsed<einrel::cli::RunOptions>({"run", "g.ein", "--random", "1", "--screen", "1e-8"}).engine.screen, 1e-8);
  EXPECT_EQ(parsed<einrel::cli::PlanOptions>({"plan", "g.ein", "--screen=0.5"}).engine.screen, 0.5);
  EXPECT_EQ(error_of({"run", "g.ein", "--random", "1", "--screen", "0"}),
            "--screen needs a finite number > 0 (the norm threshold), got '0'");
  EXPECT_EQ(error_of({"plan", "g.ein", "--screen", "1e-3x"}),
            "--screen needs a finite number > 0 (the norm threshold), got '1e-3x'");
}

TEST(CommandLine, ErrorsNameTheProblem) {
  EXPECT_EQ(error_of({}), "no command given (see einrel --help)");
  EXPECT_NE(error_of({"frobnicate"}).find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_NE(error_of({"run", "g.ein", "--frobnicate", "1"}).find("unknown option '--frobnicate' for 'run'"),
            std::string::npos);
  EXPECT_EQ(error_of({"run", "g.ein", "--procs", "0"}),
            "--procs needs a whole number of processors from 1 to 2^40, got '0'");
  EXPECT_EQ(error_of({"run", "g.ein", "--random", "-1"}), "--random needs a non-negative integer seed, got '-1'");
  EXPECT_EQ(error_of({"run", "g.ein", "--check=yes"}), "option '--check' takes no value");
  EXPECT_EQ(error_of({"run", "g.ein", "--output"}), "option '--output' needs a value");
  EXPECT_EQ(error_of({"run", "g.ein", "--output="}), "option '--output' needs a non-empty value");
  EXPECT_EQ(error_of({"run", "g.ein", "--report", "a", "--report", "b"}), "option '--report' is given twice");
  EXPECT_EQ(error_of({"run", "g.ein", "--bind"}), "option '--bind' needs a value NAME=FILE.h5:/dataset");
  EXPECT_EQ(error_of({"run"}), "run needs a graph file: einrel run GRAPH ...");
  EXPECT_EQ(error_of({"plan", "a.ein", "b.ein"}), "plan takes one graph file, got 2 positional arguments");
  EXPECT_EQ(error_of({"plan", "g.ein", "--ranks", "0"}), "--ranks needs a positive integer, got '0'");
  EXPECT_EQ(error_of({"matrix-chain"}), "matrix-chain needs --scale S");
  EXPECT_EQ(error_of({"matrix-chain", "--scale", "9", "--dtype", "i8"}), "--dtype is f32 or f64, got 'i8'");
  EXPECT_EQ(error_of({"reshard", "--mesh", "x=2", "--from", "[2]"}),
            "reshard needs --to (einrel reshard --mesh M --from T1 --to T2)");
  EXPECT_EQ(error_of({"reshard", "--mesh", "x=2", "--from", "[2]", "--to", "[2]", "--reps", "2"}),
            "--reps counts the runs of --execute");
  EXPECT_EQ(error_of({"grad", "g.ein", "--loss", "L"}),
            "grad needs --loss L and --wrt A,B,... (einrel grad GRAPH --loss L --wrt A,B)");
  EXPECT_EQ(error_of({"grad", "g.ein", "--loss", "L", "--wrt", "A,,B"}),
            "--wrt needs comma-separated names, got 'A,,B'");
  EXPECT_EQ(error_of({"train", "g.ein", "--loss", "L", "--params", "W", "--lr", "0", "--steps", "1", "--input", "i.h5",
                      "--output", "o.h5"}),
            "--lr needs a finite number > 0, got '0'");
  EXPECT_NE(error_of({"train", "g.ein", "--loss", "L"}).find("train needs --params"), std::string::npos);
  // Numbers beyond 64 bits are malformed values, not crashes.
  EXPECT_EQ(error_of({"run", "g.ein", "--memory-limit", "99999999999999999999999"}),
            "--memory-limit needs a positive integer, got '99999999999999999999999'");
}

// The help names every planner, from the one list the planner keeps (planner_names()).
TEST(CommandLine, HelpListsEveryPlanner) {
  char program[] = "einrel", help[] = "--help";
  char* argv[] = {program, help, nullptr};
  std::ostringstream out;
  ASSERT_TRUE(einrel::cli::cli_info(MPI_COMM_WORLD, 2, argv, out));
  std::string planners;
  for (const std::string& name : einrel::partition::planner_names()) planners += (planners.empty() ? "" : ", ") + name;
  EXPECT_EQ(planners.rfind("eindecomp, sqrt", 0), 0u) << planners;
  EXPECT_NE(out.str().find("Planners (--planner): " + planners + "; the first is the default."), std::string::npos)
      << out.str();
}

}  // namespace
