/* A C host code's time loop through einrel's C API (einrel.h). Each rank owns a slab of rows of a field
 * u (N x M, rows split unevenly, as a simulation's domain decomposition would), rank 0 owns the operator K
 * (M x M). Every step einrel computes v = u K + u (a graph in einrel's graph language, planned once), writes v
 * into each rank's own slab, and the host code takes v / 2 as the next u. Every rank checks its slab against
 * the same steps in plain loops. An invalid graph must come back as an error code, not an abort.
 *
 *   mpiexec.mpich -n 3 build/drivers/examples/einrel_slab_operator_c [N M STEPS] */
#include <einrel.h>

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, int rank) {
  fprintf(stderr, "rank %d: %s: %s\n", rank, what, einrel_last_error());
  return 1;
}

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long n = argc > 1 ? atol(argv[1]) : 100, m = argc > 2 ? atol(argv[2]) : 60;
  const int steps = argc > 3 ? atoi(argv[3]) : 10;

  /* An invalid graph: an error code and a one-line message on every rank. */
  einrel_graph bad = NULL;
  if (einrel_graph_parse("input u f64[4,4]\nv = einsum(\"ij,jk->ik\", u, w)\noutput v\n", "bad.ein", &bad) !=
          EINREL_ERROR ||
      strchr(einrel_last_error(), '\n') != NULL || strlen(einrel_last_error()) == 0)
    return fail("an invalid graph was not reported", rank);
  if (rank == 0) printf("an invalid graph: %s\n", einrel_last_error());

  char text[512];
  snprintf(text, sizeof text,
           "input u f64[%ld,%ld]\ninput K f64[%ld,%ld]\nuk = einsum(\"ij,jk->ik\", u, K)\n"
           "v = einsum(\"ij,ij->ij\", uk, u, join=add)\noutput v\n",
           n, m, m, m);
  einrel_graph graph = NULL;
  einrel_program program = NULL;
  if (einrel_graph_parse(text, "slab.ein", &graph) != EINREL_OK) return fail("parse", rank);
  if (einrel_program_create(graph, MPI_COMM_WORLD, NULL, &program) != EINREL_OK) return fail("create", rank);

  /* Rows [first, first + rows) of u and v on this rank: the first n % size ranks take one more. */
  const long rows = n / size + (rank < n % size), first = rank * (n / size) + (rank < n % size ? rank : n % size);
  double* u = malloc(sizeof(double) * (size_t)(rows * m + 1));
  double* v = malloc(sizeof(double) * (size_t)(rows * m + 1));
  double* reference = malloc(sizeof(double) * (size_t)(rows * m + 1));
  double* next = malloc(sizeof(double) * (size_t)(rows * m + 1));
  double* k = malloc(sizeof(double) * (size_t)(m * m));
  for (long j = 0; j < m; ++j)
    for (long c = 0; c < m; ++c) k[j * m + c] = cos(0.1 * (double)(j * m + c)) / (double)m;
  for (long i = 0; i < rows; ++i)
    for (long c = 0; c < m; ++c) u[i * m + c] = reference[i * m + c] = sin(0.01 * (double)((first + i) * m + c));

  const int64_t slab_lo[2] = {first, 0}, slab_hi[2] = {first + rows, m}, k_lo[2] = {0, 0}, k_hi[2] = {m, m};
  const void* u_data[1] = {u};
  const void* k_data[1] = {k};
  void* v_data[1] = {v};
  const int has_rows = rows > 0, owns_k = rank == 0;
  if (einrel_program_set_input(program, "u", EINREL_F64, 2, has_rows, slab_lo, slab_hi, u_data) != EINREL_OK ||
      einrel_program_set_input(program, "K", EINREL_F64, 2, owns_k, k_lo, k_hi, k_data) != EINREL_OK ||
      einrel_program_set_output(program, "v", EINREL_F64, 2, has_rows, slab_lo, slab_hi, v_data) != EINREL_OK)
    return fail("bind", rank);

  for (int step = 0; step < steps; ++step) {
    if (einrel_program_execute(program) != EINREL_OK) return fail("execute", rank);
    for (long i = 0; i < rows * m; ++i) u[i] = 0.5 * v[i];
    for (long i = 0; i < rows; ++i) /* the same step in plain loops */
      for (long c = 0; c < m; ++c) {
        double s = reference[i * m + c];
        for (long j = 0; j < m; ++j) s += reference[i * m + j] * k[j * m + c];
        next[i * m + c] = 0.5 * s;
      }
    memcpy(reference, next, sizeof(double) * (size_t)(rows * m));
  }
  double worst[2] = {0, 0}, all[2];
  for (long i = 0; i < rows * m; ++i) {
    worst[0] = fmax(worst[0], fabs(u[i] - reference[i]));
    worst[1] = fmax(worst[1], fabs(reference[i]));
  }
  MPI_Allreduce(worst, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double error = all[0] / all[1];
  int64_t procs = 0;
  einrel_program_procs(program, &procs);
  if (rank == 0)
    printf("slab operator (C): %ld x %ld field on %d ranks, %d steps, p = %lld, max relative error %.2e: %s\n", n, m,
           size, steps, (long long)procs, error, error < 1e-12 ? "ok" : "WRONG");
  einrel_program_free(program);
  einrel_graph_free(graph);
  free(u), free(v), free(reference), free(next), free(k);
  MPI_Finalize();
  return error < 1e-12 ? 0 : 1;
}
