// The C API (einrel.h): every failure is a status and a one-line message, never an exception or an abort;
// collective calls fail on every rank with the same message; a graph runs on pieces of f32 and f64 arrays.
#include <einrel.h>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace {

// The same message on every rank (collective).
bool same_on_every_rank(const std::string& message) {
  unsigned long long n = message.size(), most = 0, least = 0;
  MPI_Allreduce(&n, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&n, &least, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  if (most != least) return false;
  std::string root = message;
  MPI_Bcast(root.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = root == message, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

einrel_graph parsed(const char* text) {
  einrel_graph g = nullptr;
  EXPECT_EQ(einrel_graph_parse(text, "t.ein", &g), EINREL_OK) << einrel_last_error();
  return g;
}

TEST(CApi, NullArgumentsAreInvalidNotFatal) {
  einrel_graph g = nullptr;
  EXPECT_EQ(einrel_graph_parse(nullptr, "x", &g), EINREL_INVALID_ARGUMENT);
  EXPECT_NE(std::strlen(einrel_last_error()), 0u);
  EXPECT_EQ(einrel_graph_read(nullptr, &g), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_program_create(nullptr, MPI_COMM_WORLD, nullptr, nullptr), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_program_execute(nullptr), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_program_set_input(nullptr, "A", EINREL_F64, 2, 0, nullptr, nullptr, nullptr),
            EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_graph_free(nullptr), EINREL_OK);
  EXPECT_EQ(einrel_program_free(nullptr), EINREL_OK);
}

TEST(CApi, ABadGraphIsAnErrorWithItsPlace) {
  einrel_graph g = nullptr;
  EXPECT_EQ(
      einrel_graph_parse("input A f64[3,4]\nB = einsum(\"ij->ji\", A, map=frobnicate)\noutput B\n", "bad.ein", &g),
      EINREL_ERROR);
  const std::string message = einrel_last_error();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_EQ(message.rfind("bad.ein:2:", 0), 0u) << message;
  EXPECT_EQ(g, nullptr);
  EXPECT_EQ(einrel_graph_read("/nonexistent/graph.ein", &g), EINREL_ERROR);
  EXPECT_NE(std::string(einrel_last_error()).find("/nonexistent/graph.ein"), std::string::npos);
  // Regression (issue 41, found by the C API fuzz target): a directory read as an empty graph.
  EXPECT_EQ(einrel_graph_read("/", &g), EINREL_ERROR);
  EXPECT_NE(std::string(einrel_last_error()).find("is a directory"), std::string::npos) << einrel_last_error();
}

TEST(CApi, CollectiveFailuresAgreeOnEveryRank) {
  einrel_graph g = parsed("input A f64[6,4]\ninput B f64[4,5]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, "magic", &p), EINREL_ERROR);
  EXPECT_NE(std::string(einrel_last_error()).find("magic"), std::string::npos);
  EXPECT_TRUE(same_on_every_rank(einrel_last_error()));
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  // A name that is no input, and a dtype that is not the input's: local errors.
  EXPECT_EQ(einrel_program_set_input(p, "Z", EINREL_F64, 2, 0, nullptr, nullptr, nullptr), EINREL_ERROR);
  EXPECT_EQ(einrel_program_set_input(p, "A", EINREL_F32, 2, 0, nullptr, nullptr, nullptr), EINREL_ERROR);
  // Pieces that do not cover A (nobody binds any): the execution fails on every rank alike.
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> b(20, 1.0), c(30, 0.0);
  const int64_t b_lo[2] = {0, 0}, b_hi[2] = {4, 5}, c_lo[2] = {0, 0}, c_hi[2] = {6, 5};
  const void* b_data[1] = {b.data()};
  void* c_data[1] = {c.data()};
  const int root = rank == 0;
  ASSERT_EQ(einrel_program_set_input(p, "A", EINREL_F64, 2, 0, nullptr, nullptr, nullptr), EINREL_OK);
  ASSERT_EQ(einrel_program_set_input(p, "B", EINREL_F64, 2, root, b_lo, b_hi, b_data), EINREL_OK);
  ASSERT_EQ(einrel_program_set_output(p, "C", EINREL_F64, 2, root, c_lo, c_hi, c_data), EINREL_OK);
  EXPECT_EQ(einrel_program_execute(p), EINREL_ERROR);
  EXPECT_TRUE(same_on_every_rank(einrel_last_error())) << einrel_last_error();
  EXPECT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_graph_free(g), EINREL_OK);
}

// f32 pieces, several per rank (one row each), through a reduction: s[i] = sum_j x[i, j] * 2.
TEST(CApi, SeveralPiecesPerRankInF32) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr int64_t rows = 7, cols = 5;
  einrel_graph g = parsed("input x f32[7,5]\ns = einsum(\"ij->i\", x, map=scale(2))\noutput s\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  int64_t procs = 0;
  ASSERT_EQ(einrel_program_procs(p, &procs), EINREL_OK);
  EXPECT_GE(procs, 1);
  std::vector<std::vector<float>> x;
  std::vector<int64_t> lo, hi;
  std::vector<const void*> data;
  for (int64_t i = rank; i < rows; i += size) {  // rows dealt round-robin: several pieces per rank
    x.emplace_back(cols);
    for (int64_t j = 0; j < cols; ++j) x.back()[static_cast<std::size_t>(j)] = static_cast<float>(i * cols + j);
    lo.insert(lo.end(), {i, 0});
    hi.insert(hi.end(), {i + 1, cols});
  }
  for (const auto& row : x) data.push_back(row.data());
  std::vector<float> s(rows, -1.0f);
  const int64_t s_lo[1] = {0}, s_hi[1] = {rows};
  void* s_data[1] = {s.data()};
  ASSERT_EQ(
      einrel_program_set_input(p, "x", EINREL_F32, 2, static_cast<int>(x.size()), lo.data(), hi.data(), data.data()),
      EINREL_OK)
      << einrel_last_error();
  ASSERT_EQ(einrel_program_set_output(p, "s", EINREL_F32, 1, rank == 0, s_lo, s_hi, s_data), EINREL_OK);
  for (int run = 0; run < 2; ++run) ASSERT_EQ(einrel_program_execute(p), EINREL_OK) << einrel_last_error();
  if (rank == 0)
    for (int64_t i = 0; i < rows; ++i) {
      float expected = 0;
      for (int64_t j = 0; j < cols; ++j) expected += 2.0f * static_cast<float>(i * cols + j);
      EXPECT_FLOAT_EQ(s[static_cast<std::size_t>(i)], expected) << i;
    }
  EXPECT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_graph_free(g), EINREL_OK);
}

// The numbers after every occurrence of "key": in a JSON text, in order.
std::vector<long long> json_integers(const std::string& text, const std::string& key) {
  std::vector<long long> found;
  const std::regex number("\"" + key + "\":\\s*(-?[0-9]+)");
  for (std::sregex_iterator m(text.begin(), text.end(), number), end; m != end; ++m)
    found.push_back(std::stoll((*m)[1]));
  return found;
}

// Issue 64: einrel_program_report gives the last execution's run report (docs/cli.md) as JSON: the ranks'
// traffic adds up to the floats moved, every rank is listed, the text is the same on every rank, a short buffer
// is refused with the length set, and before the first execution there is nothing to report.
TEST(CApi, ReportOfTheLastExecutionAsJson) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  einrel_graph g = parsed("input A f64[8,6]\ninput B f64[6,4]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  std::size_t length = 0;
  EXPECT_EQ(einrel_program_report(p, nullptr, 0, &length), EINREL_ERROR);
  EXPECT_NE(std::string(einrel_last_error()).find("not been executed"), std::string::npos) << einrel_last_error();
  EXPECT_EQ(einrel_program_report(p, nullptr, 0, nullptr), EINREL_INVALID_ARGUMENT);
  // Rank 0 holds all of A and B and wants all of C (moving them to einrel's layout and back is not the
  // evaluation's: the report's floats_moved counts the evaluation's exchanges).
  std::vector<double> a(48, 0.5), b(24, 2.0), c(32, 0.0);
  const int64_t a_lo[2] = {0, 0}, a_hi[2] = {8, 6}, b_lo[2] = {0, 0}, b_hi[2] = {6, 4}, c_hi[2] = {8, 4};
  const void* a_data[1] = {a.data()};
  const void* b_data[1] = {b.data()};
  void* c_data[1] = {c.data()};
  const int root = rank == 0;
  ASSERT_EQ(einrel_program_set_input(p, "A", EINREL_F64, 2, root, a_lo, a_hi, a_data), EINREL_OK);
  ASSERT_EQ(einrel_program_set_input(p, "B", EINREL_F64, 2, root, b_lo, b_hi, b_data), EINREL_OK);
  ASSERT_EQ(einrel_program_set_output(p, "C", EINREL_F64, 2, root, a_lo, c_hi, c_data), EINREL_OK);
  for (int execution = 1; execution <= 2; ++execution) {
    ASSERT_EQ(einrel_program_execute(p), EINREL_OK) << einrel_last_error();
    ASSERT_EQ(einrel_program_report(p, nullptr, 0, &length), EINREL_OK) << einrel_last_error();
    ASSERT_GT(length, 0u);
    std::string text(length + 1, '?');
    std::size_t again = 0;
    EXPECT_EQ(einrel_program_report(p, text.data(), length, &again), EINREL_INVALID_ARGUMENT);
    EXPECT_NE(std::string(einrel_last_error()).find(std::to_string(length) + " bytes"), std::string::npos)
        << einrel_last_error();
    EXPECT_EQ(again, length);
    ASSERT_EQ(einrel_program_report(p, text.data(), text.size(), &again), EINREL_OK) << einrel_last_error();
    ASSERT_EQ(text.back(), '\0');
    text.pop_back();
    EXPECT_EQ(text.size(), length);
    EXPECT_TRUE(same_on_every_rank(text)) << text;
    EXPECT_EQ(json_integers(text, "num_ranks"), std::vector<long long>{size}) << text;
    const std::vector<long long> ranks = json_integers(text, "rank");
    ASSERT_EQ(ranks.size(), static_cast<std::size_t>(size)) << text;
    for (int r = 0; r < size; ++r) EXPECT_EQ(ranks[static_cast<std::size_t>(r)], r);
    // floats_moved once for the run, then once per vertex (C): each the sum of the ranks' floats sent.
    long long sent = 0;
    for (long long n : json_integers(text, "floats_sent")) sent += n;
    const std::vector<long long> moved = json_integers(text, "floats_moved");
    ASSERT_EQ(moved.size(), 2u) << text;
    EXPECT_EQ(moved[0], sent);
    EXPECT_EQ(moved[1], sent);
    EXPECT_EQ(json_integers(text, "peak_allocated_bytes").size(), static_cast<std::size_t>(size)) << text;
    EXPECT_NE(text.find("\"equation\": \"ij,jk->ik\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"planner\": \"eindecomp\""), std::string::npos) << text;
  }
  if (rank == 0) {
    for (double x : c) EXPECT_DOUBLE_EQ(x, 6.0);
  }
  EXPECT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_program_report(p, nullptr, 0, &length), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_graph_free(g), EINREL_OK);
}

// Regression (issue 41): every invalid argument is EINREL_INVALID_ARGUMENT with this call's own message; a null
// data pointer for a non-empty box used to pass and crash in execute.
TEST(CApi, EveryInvalidArgumentSetsItsOwnMessage) {
  einrel_graph g = parsed("input A f64[4,3]\nB = einsum(\"ij->ji\", A)\noutput B\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  const int64_t lo[2] = {0, 0}, hi[2] = {4, 3}, reversed_hi[2] = {4, -1}, empty_hi[2] = {0, 3};
  const void* null_data[1] = {nullptr};
  std::vector<double> a(12, 1.0);
  const void* data[1] = {a.data()};
  // Each call fails with a message naming what is wrong (checked right after the call: the message is the last
  // failure's).
  auto expect_invalid = [](einrel_status status, const char* expect) {
    EXPECT_EQ(status, EINREL_INVALID_ARGUMENT) << expect;
    EXPECT_NE(std::string(einrel_last_error()).find(expect), std::string::npos) << einrel_last_error();
  };
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, 2, 1, lo, hi, null_data), "null data pointer");
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, 2, 1, lo, hi, nullptr), "data array is null");
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, 2, 1, nullptr, hi, data), "null boxes");
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, 2, -1, lo, hi, data), "negative count");
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, -2, 1, lo, hi, data), "negative rank");
  expect_invalid(einrel_program_set_input(p, "A", EINREL_F64, 2, 1, lo, reversed_hi, data), "reversed");
  expect_invalid(einrel_program_set_input(p, "A", static_cast<einrel_dtype>(7), 2, 1, lo, hi, data), "unknown dtype 7");
  expect_invalid(einrel_program_set_input(p, nullptr, EINREL_F64, 2, 1, lo, hi, data), "name is null");
  expect_invalid(einrel_program_set_output(p, "B", EINREL_F64, 2, 1, lo, hi, nullptr), "data array is null");
  expect_invalid(einrel_program_procs(p, nullptr), "result pointer is null");
  expect_invalid(einrel_program_create(g, MPI_COMM_NULL, nullptr, nullptr), "result pointer is null");
  // A rank that is not the tensor's, with no pieces too (found by the C API fuzz target).
  EXPECT_EQ(einrel_program_set_input(p, "A", EINREL_F64, 4, 0, nullptr, nullptr, nullptr), EINREL_ERROR);
  EXPECT_NE(std::string(einrel_last_error()).find("rank 4"), std::string::npos) << einrel_last_error();
  // An empty box may have no data.
  EXPECT_EQ(einrel_program_set_input(p, "A", EINREL_F64, 2, 1, lo, empty_hi, null_data), EINREL_OK)
      << einrel_last_error();
  EXPECT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_graph_free(g), EINREL_OK);
}

// Regression (issue 41): a freed handle is an invalid argument, not a use after free.
TEST(CApi, FreedHandlesAreInvalidArguments) {
  einrel_graph g = parsed("input A f64[4,3]\nB = einsum(\"ij->ji\", A)\noutput B\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  ASSERT_EQ(einrel_graph_free(g), EINREL_OK);  // the program keeps its own graph
  EXPECT_EQ(einrel_graph_free(g), EINREL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(einrel_last_error()).find("not a live einrel graph"), std::string::npos);
  einrel_program q = nullptr;
  EXPECT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &q), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(q, nullptr);
  ASSERT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_program_execute(p), EINREL_INVALID_ARGUMENT);
  EXPECT_NE(std::string(einrel_last_error()).find("einrel_program_execute"), std::string::npos);
  EXPECT_EQ(einrel_program_set_input(p, "A", EINREL_F64, 2, 0, nullptr, nullptr, nullptr), EINREL_INVALID_ARGUMENT);
  int64_t procs = 0;
  EXPECT_EQ(einrel_program_procs(p, &procs), EINREL_INVALID_ARGUMENT);
  EXPECT_EQ(einrel_program_free(p), EINREL_INVALID_ARGUMENT);
  int not_a_handle = 0;
  EXPECT_EQ(einrel_program_execute(reinterpret_cast<einrel_program>(&not_a_handle)), EINREL_INVALID_ARGUMENT);
}

// Regression (issue 41): the Fortran module's binding of a column-major array. A field u[6,6] on R ranks, each
// holding the rows of a slab as uf(6, rows): the C-order box [first, 0]..[first + rows, 6] is the array's shape
// reversed and computes; the same box in Fortran order ([0, first]..[6, first + rows]) is refused with a
// message, not computed into garbage with status OK.
TEST(CApi, ColumnMajorBoxesMustBeTheArraysShapeReversed) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr int64_t n = 6;
  einrel_graph g = parsed("input u f64[6,6]\ns = einsum(\"ij->i\", u)\noutput s\n");
  einrel_program p = nullptr;
  ASSERT_EQ(einrel_program_create(g, MPI_COMM_WORLD, nullptr, &p), EINREL_OK) << einrel_last_error();
  const int64_t first = n * rank / size, rows = n * (rank + 1) / size - first;
  std::vector<double> uf(static_cast<std::size_t>(n * rows));  // uf(j+1, i-first+1) = u[i, j] = 6i + j
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) uf[static_cast<std::size_t>(i * n + j)] = static_cast<double>((first + i) * n + j);
  const int64_t shape[2] = {n, rows};
  if (rows != n) {
    const int64_t fortran_lo[2] = {0, first}, fortran_hi[2] = {n, first + rows};
    EXPECT_EQ(einrel_program_set_column_major(p, "u", 1, EINREL_F64, 2, fortran_lo, fortran_hi, 2, shape, uf.data()),
              EINREL_INVALID_ARGUMENT);
    EXPECT_NE(std::string(einrel_last_error()).find("C order"), std::string::npos) << einrel_last_error();
  }
  const int64_t one_dim[1] = {0};
  EXPECT_EQ(einrel_program_set_column_major(p, "u", 1, EINREL_F64, 1, one_dim, one_dim, 2, shape, uf.data()),
            EINREL_INVALID_ARGUMENT);
  const int64_t lo[2] = {first, 0}, hi[2] = {first + rows, n};
  ASSERT_EQ(einrel_program_set_column_major(p, "u", 1, EINREL_F64, 2, lo, hi, 2, shape, uf.data()), EINREL_OK)
      << einrel_last_error();
  std::vector<double> s(n, -1.0);
  const int64_t s_shape[1] = {n}, s_lo[1] = {0}, s_hi[1] = {n};
  if (rank == 0) {
    ASSERT_EQ(einrel_program_set_column_major(p, "s", 0, EINREL_F64, 1, s_lo, s_hi, 1, s_shape, s.data()), EINREL_OK);
  } else {
    ASSERT_EQ(einrel_program_set_output(p, "s", EINREL_F64, 1, 0, nullptr, nullptr, nullptr), EINREL_OK);
  }
  ASSERT_EQ(einrel_program_execute(p), EINREL_OK) << einrel_last_error();
  for (int64_t i = 0; i < n && rank == 0; ++i) EXPECT_EQ(s[static_cast<std::size_t>(i)], 36.0 * i + 15.0) << i;
  EXPECT_EQ(einrel_program_free(p), EINREL_OK);
  EXPECT_EQ(einrel_graph_free(g), EINREL_OK);
}

}  // namespace
