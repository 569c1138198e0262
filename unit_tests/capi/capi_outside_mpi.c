/* Regression (issue 41): C API calls that need MPI, made before MPI_Init or after MPI_Finalize, fail with
 * EINREL_ERROR and a message saying so; local calls (parsing a graph) work without MPI. Prints "ok" when all
 * hold, "FAILED: ..." otherwise. Run on one rank. */
#include <einrel.h>

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int holds, const char* what) {
  if (!holds) {
    printf("FAILED: %s (last error: %s)\n", what, einrel_last_error());
    ++failures;
  }
}

int main(int argc, char** argv) {
  const char* text = "input A f64[4,3]\nB = einsum(\"ij->ji\", A)\noutput B\n";
  einrel_graph graph = NULL;
  einrel_program program = NULL;
  expect(einrel_graph_parse(text, "t.ein", &graph) == EINREL_OK, "a graph parses before MPI_Init");
  expect(einrel_program_create(graph, MPI_COMM_WORLD, NULL, &program) == EINREL_ERROR && program == NULL,
         "einrel_program_create before MPI_Init is an error");
  expect(strstr(einrel_last_error(), "not initialized") != NULL, "the message says MPI is not initialized");

  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  expect(einrel_program_create(graph, MPI_COMM_WORLD, NULL, &program) == EINREL_OK, "a program after MPI_Init");
  expect(einrel_program_free(program) == EINREL_OK, "the program is freed before MPI_Finalize");
  MPI_Finalize();

  program = NULL;
  expect(einrel_program_create(graph, MPI_COMM_WORLD, NULL, &program) == EINREL_ERROR && program == NULL,
         "einrel_program_create after MPI_Finalize is an error");
  expect(strstr(einrel_last_error(), "finalized") != NULL, "the message says MPI is finalized");
  expect(einrel_program_create_f(graph, 0, NULL, &program) == EINREL_ERROR, "the Fortran create too");
  expect(einrel_graph_free(graph) == EINREL_OK, "a graph is freed after MPI_Finalize");
  if (failures == 0) printf("ok: calls outside MPI fail with a message\n");
  return failures != 0;
}
