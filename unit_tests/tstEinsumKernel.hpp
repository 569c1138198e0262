#include <einrel_EinsumKernel.hpp>
#include <einrel_Tensor.hpp>

#include <einrel_TestHelpers.hpp>

#include <gtest/gtest.h>

#include <map>

namespace {

using namespace einrel;

// Runs one EinSum through the kernel on TEST_EXECSPACE and compares it with the loop-nest reference.
template <class Scalar>
void check_einsum(const std::string& equation, const std::vector<Bound>& bounds, unsigned seed) {
  const EinSum e = EinSum::parse(equation, bounds.size());
  std::map<char, Extent> extent;
  std::vector<std::vector<Scalar>> host;
  std::vector<Tensor<Scalar, TEST_MEMSPACE>> operands;
  for (std::size_t k = 0; k < bounds.size(); ++k) {
    for (std::size_t d = 0; d < bounds[k].size(); ++d) extent[e.inputs[k][d]] = bounds[k][d];
    host.push_back(test::random_values<Scalar>(bounds[k], seed + k));
    operands.push_back(tensor_from_host<TEST_MEMSPACE>("op" + std::to_string(k), bounds[k], host.back()));
  }
  Bound out;
  for (char c : e.output) out.push_back(extent[c]);
  Extent terms = 1;
  for (char c : e.aggregated_labels()) terms *= extent[c];

  Tensor<Scalar, TEST_MEMSPACE> z("z", out);
  std::optional<Tensor<Scalar, TEST_MEMSPACE>> y;
  if (operands.size() > 1) y = operands[1];
  TEST_EXECSPACE exec;
  kernels::einsum(exec, e, operands[0], y, z);
  exec.fence();
  SCOPED_TRACE(equation);
  test::expect_all_close(tensor_to_host(z), test::reference_einsum(e, bounds, host),
                         test::sum_tolerance<Scalar>(terms));
}

struct Case {
  const char* equation;
  std::vector<Bound> bounds;
};

// Matmul in every orientation, batch, outer products, reductions, transposes, scalars, size-1 and
// odd extents, more labels than dimensions of either operand.
const std::vector<Case> cases = {
    {"ij,jk->ik", {{7, 5}, {5, 3}}},
    {"ij,kj->ik", {{7, 5}, {3, 5}}},
    {"ji,jk->ki", {{5, 7}, {5, 3}}},
    {"ij,jk", {{1, 9}, {9, 1}}},
    {"bij,bjk->bik", {{3, 4, 5}, {3, 5, 2}}},
    {"bij,bjk->kbi", {{3, 4, 5}, {3, 5, 2}}},
    {"i,j->ij", {{6}, {4}}},
    {"ij,ij->", {{5, 6}, {5, 6}}},
    {"ij,ij->ij", {{5, 6}, {5, 6}}},
    {",ij->ji", {{}, {3, 2}}},
    {"i,->", {{11}, {}}},
    {"abcd,cdef->feba", {{2, 3, 4, 5}, {4, 5, 2, 3}}},
    {"ijk,jil->kl", {{3, 4, 5}, {4, 3, 2}}},
    {"shd,thd->hst", {{5, 2, 3}, {4, 2, 3}}},
    {"bi,oi->bo", {{6, 9}, {4, 9}}},
    {"ij->ji", {{13, 7}}},
    {"ijk->j", {{3, 4, 5}}},
    {"ijk->", {{3, 4, 5}}},
    {"->", {{}}},
    {"abcdefgh->hgfedcba", {{2, 1, 2, 1, 2, 1, 2, 3}}},
};

TEST(TEST_CATEGORY, EinsumMatchesLoopNestF64) {
  unsigned seed = 1;
  for (const Case& c : cases) check_einsum<double>(c.equation, c.bounds, seed++);
}

TEST(TEST_CATEGORY, EinsumMatchesLoopNestF32) {
  unsigned seed = 100;
  for (const Case& c : cases) check_einsum<float>(c.equation, c.bounds, seed++);
}

TEST(TEST_CATEGORY, EinsumLargerMatmulF32) { check_einsum<float>("ij,jk->ik", {{65, 130}, {130, 33}}, 5); }

TEST(TEST_CATEGORY, EinsumRejectsWrongOutputBound) {
  const EinSum e = EinSum::parse("ij,jk->ik", 2);
  Tensor<double, TEST_MEMSPACE> x("x", {2, 3}), y("y", {3, 4}), z("z", {2, 5});
  EXPECT_THROW(kernels::einsum(TEST_EXECSPACE{}, e, x, std::optional(y), z), Error);
  EXPECT_THROW(kernels::einsum(TEST_EXECSPACE{}, e, x, std::optional<decltype(y)>{}, z), Error);
}

}  // namespace
