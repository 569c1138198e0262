// `einrel run` end to end inside one MPI job: every rank calls run_graph and computes its share.
#include <einrel_Error.hpp>
#include <einrel_GraphFile.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_TestHdf5.hpp>

#include <einrel_TestHelpers.hpp>
#include <einrel_TestTempDir.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace {

using namespace einrel;
using namespace einrel::cli;

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  if (rank() == 0) std::ofstream(path) << text;
  MPI_Barrier(MPI_COMM_WORLD);
}

// Options that run `graph_text` (written to g.ein in dir) on random inputs from `seed`.
RunOptions random_run(const test::TempDir& dir, const std::string& graph_text, std::uint64_t seed) {
  write_text(dir.file("g.ein"), graph_text);
  RunOptions options;
  options.graph = dir.file("g.ein");
  options.random_seed = seed;
  return options;
}

constexpr const char* matmul = "input A f64[9,5]\ninput B f64[5,7]\nT = einsum(\"ij,jk->ik\", A, B)\noutput T\n";

TEST(RunGraph, MatmulFromHdf5MatchesReferenceOnEveryRankCount) {
  test::TempDir dir;
  write_text(dir.file("g.ein"), matmul);
  const auto a = test::random_values<double>({9, 5}, 11);
  const auto b = test::random_values<double>({5, 7}, 12);
  if (rank() == 0) io::write_datasets(dir.file("in.h5"), {{"A", {9, 5}, a}, {"B", {5, 7}, b}});

  RunOptions options;
  options.graph = dir.file("g.ein");
  options.input = dir.file("in.h5");
  options.output = dir.file("out.h5");
  options.report = dir.file("report.json");
  std::ostringstream summary;
  run_graph(MPI_COMM_WORLD, options, summary);

  if (rank() == 0) {
    const auto t = std::get<std::vector<double>>(io::read_dataset(dir.file("out.h5"), "T", Dtype::f64, {9, 7}));
    test::expect_all_close(t,
                           test::reference_einsum(EinSum::parse("ij,jk->ik", 2), {{9, 5}, {5, 7}}, std::vector{a, b}),
                           test::sum_tolerance<double>(5));
    EXPECT_NE(summary.str().find("ij,jk->ik"), std::string::npos) << summary.str();
    const std::string json = read_text(dir.file("report.json"));
    const std::string ranks = "\"num_ranks\": " + std::to_string(size());
    const std::string last_rank = "{\"rank\": " + std::to_string(size() - 1) + ", \"floats_sent\": ";
    for (const std::string& field :
         {std::string("\"schema_version\": 2"), std::string("\"total_seconds\""), std::string("\"predicted_cost\""),
          std::string("\"floats_moved\""), std::string("\"vertices\""), std::string("\"kernel_seconds\""),
          std::string("\"name\": \"T\""), std::string("\"computing_ranks\""), ranks, last_rank,
          std::string("\"peak_block_bytes\"")})
      EXPECT_NE(json.find(field), std::string::npos) << field << " missing from " << json;
  } else {
    EXPECT_TRUE(summary.str().empty());  // only rank 0 prints
  }
}

// NaN and ±Inf inputs flow through as IEEE arithmetic: the run succeeds (also under --check, where NaN
// matches NaN and an infinity the same infinity), the outputs hold them where numpy would, and the summary
// and the report count them per output.
TEST(RunGraph, NonFiniteValuesFlowThroughAndAreReported) {
  test::TempDir dir;
  write_text(dir.file("g.ein"),
             "input x f64[6,4]\ny = einsum(\"ij->ij\", x, map=scale(2))\n"
             "s = einsum(\"ij->j\", x)\nz = einsum(\"ij,ij->ij\", x, x, join=sub)\n"
             "f = einsum(\"ij->i\", x, map=abs)\noutput y, s, z\n");
  std::vector<double> x(24);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i);
  x[6] = std::numeric_limits<double>::quiet_NaN();
  x[16] = std::numeric_limits<double>::infinity();
  x[23] = -std::numeric_limits<double>::infinity();
  if (rank() == 0) io::write_datasets(dir.file("in.h5"), {{"x", {6, 4}, x}});
  RunOptions options;
  options.graph = dir.file("g.ein");
  options.input = dir.file("in.h5");
  options.output = dir.file("out.h5");
  options.report = dir.file("report.json");
  options.check = true;
  for (Extent procs : {1, 4}) {
    options.engine.procs = procs;
    std::ostringstream summary;
    run_graph(MPI_COMM_WORLD, options, summary);
    if (rank() != 0) continue;
    const auto y = std::get<std::vector<double>>(io::read_dataset(dir.file("out.h5"), "y", Dtype::f64, {6, 4}));
    const auto sums = std::get<std::vector<double>>(io::read_dataset(dir.file("out.h5"), "s", Dtype::f64, {4}));
    EXPECT_TRUE(std::isnan(y[6]));
    EXPECT_EQ(y[16], std::numeric_limits<double>::infinity());
    EXPECT_EQ(y[5], 10.0);
    EXPECT_EQ(sums[0], std::numeric_limits<double>::infinity());  // 0+4+8+12+inf+20
    EXPECT_EQ(sums[1], 66.0);
    EXPECT_TRUE(std::isnan(sums[2]));
    EXPECT_EQ(sums[3], -std::numeric_limits<double>::infinity());
    EXPECT_NE(summary.str().find("non-finite values: output y holds 1 NaN and 2 ±Inf"), std::string::npos)
        << summary.str();
    EXPECT_NE(summary.str().find("output z holds 3 NaN and 0 ±Inf"), std::string::npos) << summary.str();
    EXPECT_NE(read_text(dir.file("report.json"))
                  .find("\"nonfinite_outputs\": [\n    {\"name\": \"y\", \"nan\": 1, \"inf\": 2},\n    {\"name\": "
                        "\"s\", \"nan\": 1, \"inf\": 2},\n    {\"name\": \"z\", \"nan\": 3, \"inf\": 0}\n  ]"),
              std::string::npos)
        << read_text(dir.file("report.json"));
  }
}

TEST(RunGraph, RandomInputsAreReproducible) {
  test::TempDir dir;
  RunOptions options = random_run(dir, "input x f32[4,3]\ny = einsum(\"ij->ji\", x)\noutput y\n", 7);
  std::ostringstream summary;
  for (const char* name : {"a.h5", "b.h5"}) {
    options.output = dir.file(name);
    run_graph(MPI_COMM_WORLD, options, summary);
  }
  if (rank() == 0) {
    const auto a = std::get<std::vector<float>>(io::read_dataset(dir.file("a.h5"), "y", Dtype::f32, {3, 4}));
    EXPECT_EQ(a, std::get<std::vector<float>>(io::read_dataset(dir.file("b.h5"), "y", Dtype::f32, {3, 4})));
    for (float v : a) EXPECT_TRUE(v >= -1.0f && v < 1.0f);
  }
}

// Every rank sees the same Error, and no output or report file appears.
void expect_failure_everywhere(const RunOptions& options, const std::string& message, const test::TempDir& dir,
                               std::size_t files_before) {
  std::ostringstream summary;
  std::string what = "no error";
  try {
    run_graph(MPI_COMM_WORLD, options, summary);
  } catch (const Error& e) {
    what = e.what();
  }
  EXPECT_NE(what.find(message), std::string::npos) << what;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank() == 0) {
    EXPECT_EQ(dir.count(), files_before) << what;
  }
}

TEST(RunGraph, FailuresReachEveryRankAndWriteNothing) {
  test::TempDir dir;
  write_text(dir.file("good.ein"), matmul);
  write_text(dir.file("bad.ein"), "input A f64[9,5]\nT = einsum(\"ij,jk->ik\", A, Q)\noutput T\n");
  if (rank() == 0) io::write_datasets(dir.file("in.h5"), {{"A", {9, 5}, std::vector<double>(45)}});
  MPI_Barrier(MPI_COMM_WORLD);
  const std::size_t files = 3;

  RunOptions options;
  options.output = dir.file("out.h5");
  options.report = dir.file("report.json");
  options.graph = dir.file("bad.ein");
  options.random_seed = 1;
  expect_failure_everywhere(options, "bad.ein:2:28: unknown tensor 'Q'", dir, files);

  options.graph = dir.file("good.ein");
  options.random_seed.reset();
  options.input = dir.file("in.h5");
  expect_failure_everywhere(options, "has no dataset 'B'", dir, files);

  options.input = dir.file("nope.h5");
  expect_failure_everywhere(options, "does not exist", dir, files);

  options.random_seed = 3;
  expect_failure_everywhere(options, "not both", dir, files);

  options.input.reset();
  options.random_seed.reset();
  expect_failure_everywhere(options, "no input data", dir, files);

  options.random_seed = 3;
  options.graph = dir.file("missing.ein");
  expect_failure_everywhere(options, "cannot open graph file", dir, files);

  options.graph = dir.file("good.ein");
  options.report = dir.file("no-such-dir/report.json");
  expect_failure_everywhere(options, "cannot write", dir, files);

  options.report = dir.file("report.json");
  options.bind = {"A=" + dir.file("in.h5") + ":/A"};
  expect_failure_everywhere(options, "--bind reads inputs from files; --random makes them", dir, files);
  options.random_seed.reset();
  options.bind = {"A=" + dir.file("in.h5") + ":/A", "Z=" + dir.file("in.h5")};
  expect_failure_everywhere(options, "--bind names 'Z', which is not an input of the graph", dir, files);
  options.bind = {"A=" + dir.file("in.h5") + ":/A"};
  expect_failure_everywhere(options, "input 'B' has no data", dir, files);
  options.bind = {"A=" + dir.file("in.h5") + ":/A", "B=" + dir.file("in.h5") + ":/group/B"};
  expect_failure_everywhere(options, "has no dataset '/group/B'", dir, files);
}

// EINREL_TEST_INJECT_FAILURE on the last rank at each phase: every rank throws its message and nothing
// is written.
TEST(RunGraph, InjectedFailuresAtEveryPhaseWriteNothing) {
  test::TempDir dir;
  RunOptions options = random_run(dir, matmul, 5);
  options.engine.procs = 4;
  options.output = dir.file("out.h5");
  options.report = dir.file("report.json");
  const std::string last = std::to_string(size() - 1);
  for (const std::string& spec :
       {last + ":A:read", last + ":T:redistribute", last + ":T:kernels", last + ":T:reduce", last + ":T:write"}) {
    setenv("EINREL_TEST_INJECT_FAILURE", spec.c_str(), 1);
    const std::string phase = spec.substr(spec.rfind(':') + 1);
    expect_failure_everywhere(options, "injected failure on rank " + last + " at " + phase, dir, 1);
  }
  // every rank failing at once, in every phase: still one message on every rank, nothing written
  for (const char* spec : {"all:A:read", "all:T:redistribute", "all:T:kernels", "all:T:reduce", "all:T:write"}) {
    setenv("EINREL_TEST_INJECT_FAILURE", spec, 1);
    expect_failure_everywhere(options, "injected failure on rank ", dir, 1);
  }
  setenv("EINREL_TEST_INJECT_FAILURE", "0:A:sideways", 1);
  expect_failure_everywhere(options, "sideways", dir, 1);
  unsetenv("EINREL_TEST_INJECT_FAILURE");
}

// --progress: rank 0 reports each vertex as it finishes, on stderr.
TEST(RunGraph, ProgressNamesEveryVertex) {
  test::TempDir dir;
  RunOptions options = random_run(dir, "input A f64[8,6]\nB = softmax(A)\noutput B\n", 2);
  options.progress = true;
  std::ostringstream summary;
  testing::internal::CaptureStderr();
  run_graph(MPI_COMM_WORLD, options, summary);
  const std::string progress = testing::internal::GetCapturedStderr();
  if (rank() == 0) {
    EXPECT_NE(progress.find("vertex 1 of 4"), std::string::npos) << progress;
    EXPECT_NE(progress.find("vertex 4 of 4"), std::string::npos) << progress;
  } else {
    EXPECT_EQ(progress.find("vertex"), std::string::npos) << progress;
  }
}

}  // namespace
