/* einrel's C API (docs/c-fortran.md): a graph of einsums planned once on an MPI communicator and executed
 * many times on pieces of the caller's own arrays, for C and (through the module `einrel`) Fortran codes.
 *
 * Every function returns an einrel_status; on failure einrel_last_error() gives a one-line message (until
 * the calling thread's next failure). Every argument is checked: a null, freed or foreign handle, a null pointer
 * where data is needed, a negative count or a reversed box is EINREL_INVALID_ARGUMENT, and a call that needs MPI
 * (creating, executing or freeing a program) made before MPI_Init or after MPI_Finalize is EINREL_ERROR. No exception
 * or abort crosses this interface. Calls marked "collective" must be made by every rank of the program's communicator,
 * in the same order; a failure of a collective call is reported with the same message on every rank.
 *
 * Tensors are C order: a box is [lo, hi) per dimension, zero-based, and a piece holds its box's elements in
 * C order (the last index fastest). The caller owns MPI: it calls MPI_Init_thread with at least
 * MPI_THREAD_FUNNELED before the first einrel_program_create (parsing, reading and freeing graphs and
 * einrel_last_error need no MPI) and MPI_Finalize after freeing its programs. Pieces are host
 * memory, and programs run on the host backend (Kokkos' default host execution space). einrel starts
 * Kokkos on the first program when the caller has not, and finalizes what it started when MPI finalizes. */
#ifndef EINREL_H
#define EINREL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum einrel_status {
  EINREL_OK = 0,
  EINREL_ERROR = 1,           /* the library's error: the message says what */
  EINREL_INVALID_ARGUMENT = 2 /* a null, freed or foreign handle; a null pointer where data is needed; a negative
                                 count or rank; a reversed or negative box; an unknown dtype */
} einrel_status;

typedef enum einrel_dtype { EINREL_F32 = 0, EINREL_F64 = 1 } einrel_dtype;

typedef struct einrel_graph_s* einrel_graph;     /* a parsed graph; local to the rank */
typedef struct einrel_program_s* einrel_program; /* a graph planned on a communicator */

/* The message of this thread's last failed call ("" if none). */
const char* einrel_last_error(void);

/* Local: parses a graph written in einrel's graph language (docs/graph-format.md); `name` names the text in
 * messages (file:line:col). */
einrel_status einrel_graph_parse(const char* text, const char* name, einrel_graph* graph);
/* Local: reads and parses a graph file. */
einrel_status einrel_graph_read(const char* path, einrel_graph* graph);
/* Local: frees a graph (a null graph is ignored). */
einrel_status einrel_graph_free(einrel_graph graph);

/* Collective over comm: plans `graph` for the ranks of comm (a duplicate of it is kept) with `planner` (NULL:
 * the default, EinDecomp). */
einrel_status einrel_program_create(einrel_graph graph, MPI_Comm comm, const char* planner, einrel_program* program);
/* The same with a Fortran communicator handle (MPI_Comm_f2c). */
einrel_status einrel_program_create_f(einrel_graph graph, MPI_Fint comm, const char* planner, einrel_program* program);

/* Local: this rank's `count` pieces (possibly none) of input `name`, of dtype `dtype` and rank `rank`:
 * piece i covers lo[i*rank .. i*rank+rank) to hi[...] and its elements are at data[i]. The memory must stay
 * valid through the executions that follow; einrel reads it during each. Together the ranks' pieces cover
 * the tensor without overlap. */
einrel_status einrel_program_set_input(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                       int count, const int64_t* lo, const int64_t* hi, const void* const* data);
/* Local: where this rank wants its pieces of output `name` written by each execution. */
einrel_status einrel_program_set_output(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                        int count, const int64_t* lo, const int64_t* hi, void* const* data);

/* Local: the Fortran module's binding of one column-major array (einrel_set_input/_output in Fortran): an input
 * (input != 0) or output piece at `data`, an array of `array_rank` dimensions with extents `array_shape` in its
 * own (column-major) order, and its C-order box [lo, hi) of `box_rank` dimensions. The box's extents must be
 * the array's shape reversed (a(n1, ..., nk) is the C-order tensor [nk, ..., n1]); anything else is
 * EINREL_INVALID_ARGUMENT with a message saying so. */
einrel_status einrel_program_set_column_major(einrel_program program, const char* name, int input, einrel_dtype dtype,
                                              int box_rank, const int64_t* lo, const int64_t* hi, int array_rank,
                                              const int64_t* array_shape, const void* data);

/* Collective: evaluates the graph on the bound pieces and writes the output pieces. */
einrel_status einrel_program_execute(einrel_program program);

/* Local: the partition count p of the program's plan. */
einrel_status einrel_program_procs(einrel_program program, int64_t* procs);

/* Collective on the first call after each execution (every rank calls it; later calls for the same execution are
 * local and give the same text): the report of the program's last execution as JSON, with the fields of
 * `einrel run --report` (docs/cli.md, "Run report"): the plan (planner, proposed_by, procs, predicted_cost,
 * estimated_seconds), per rank the floats sent and received, flops and peak allocated bytes (`ranks`), per
 * vertex its partition, seconds (read, exchange, kernels, reduce) and floats moved, and the outputs holding NaN
 * or ±Inf; "graph" is empty and input_seconds and memory_seconds are 0, as the caller's arrays are bound, not
 * read. `*length` receives the report's length in bytes, without the terminating NUL. With `json` NULL nothing
 * else is written (a size query); otherwise the report and its NUL are written to json, which must hold
 * size > *length bytes: a smaller buffer is EINREL_INVALID_ARGUMENT (with *length set). Before the first
 * execution: EINREL_ERROR. */
einrel_status einrel_program_report(einrel_program program, char* json, size_t size, size_t* length);

/* Collective: frees a program (a null program is ignored). */
einrel_status einrel_program_free(einrel_program program);

#ifdef __cplusplus
}
#endif

#endif
