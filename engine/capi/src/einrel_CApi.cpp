// The C API (einrel.h) over einrel::Program: handles own C++ objects, every call catches what it throws and
// keeps the message for einrel_last_error().
#include <einrel.h>
#include <einrel.hpp>
#include <einrel_HostEnvironment.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct einrel_graph_s {
  einrel::Graph graph;
};

// Pieces are host memory (einrel.h), so programs run on the host's default execution space: with the CUDA
// backend too, a C or Fortran caller's arrays are read and written where they are.
using HostProgram = einrel::Program<Kokkos::DefaultHostExecutionSpace>;

struct einrel_program_s {
  std::unique_ptr<HostProgram> program;
};

namespace {

thread_local std::string last_error;

// Runs `call`, turning what it throws into a status and the thread's last error.
template <class Call>
einrel_status guarded(Call&& call) {
  try {
    call();
    return EINREL_OK;
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "einrel: unknown failure";
  }
  return EINREL_ERROR;
}

einrel_status invalid(const std::string& what) {
  last_error = what;
  return EINREL_INVALID_ARGUMENT;
}

// This rank's pieces as the program's LocalPieces of Scalar.
template <class Scalar>
std::vector<einrel::LocalPiece<Scalar, HostProgram::memory_space>> pieces_of(int rank, int count, const int64_t* lo,
                                                                             const int64_t* hi,
                                                                             const void* const* data) {
  using Piece = einrel::LocalPiece<Scalar, HostProgram::memory_space>;
  std::vector<Piece> pieces;
  for (int i = 0; i < count; ++i) {
    einrel::Box box;
    for (int d = 0; d < rank; ++d) {
      box.lo.push_back(static_cast<einrel::Extent>(lo[i * rank + d]));
      box.hi.push_back(static_cast<einrel::Extent>(hi[i * rank + d]));
      if (lo[i * rank + d] < 0 || hi[i * rank + d] < lo[i * rank + d])
        throw einrel::Error("piece " + std::to_string(i) + " has an empty or negative box along dimension " +
                            std::to_string(d));
    }
    pieces.push_back({box, typename Piece::view_type(static_cast<Scalar*>(const_cast<void*>(data[i])),
                                                     static_cast<std::size_t>(box.size()))});
  }
  return pieces;
}

einrel_status bind(einrel_program program, const char* name, einrel_dtype dtype, int rank, int count, const int64_t* lo,
                   const int64_t* hi, const void* const* data, bool input) {
  if (!program || !name) return invalid("einrel: a null program or name");
  if (rank < 0 || count < 0 || (count > 0 && (!data || (rank > 0 && (!lo || !hi)))))
    return invalid("einrel: a negative rank or count, or null boxes or data");
  if (dtype != EINREL_F32 && dtype != EINREL_F64) return invalid("einrel: unknown dtype " + std::to_string(dtype));
  return guarded([&] {
    auto set = [&](auto scalar) {
      using S = decltype(scalar);
      auto pieces = pieces_of<S>(rank, count, lo, hi, data);
      if (input)
        program->program->set_input<S>(name, std::move(pieces));
      else
        program->program->set_output<S>(name, std::move(pieces));
    };
    if (dtype == EINREL_F32)
      set(float{});
    else
      set(double{});
  });
}

}  // namespace

extern "C" {

const char* einrel_last_error(void) { return last_error.c_str(); }

einrel_status einrel_graph_parse(const char* text, const char* name, einrel_graph* graph) {
  if (!text || !graph) return invalid("einrel_graph_parse: a null text or graph");
  *graph = nullptr;
  return guarded([&] { *graph = new einrel_graph_s{einrel::parse_graph(text, name ? name : "<text>")}; });
}

einrel_status einrel_graph_read(const char* path, einrel_graph* graph) {
  if (!path || !graph) return invalid("einrel_graph_read: a null path or graph");
  *graph = nullptr;
  return guarded([&] { *graph = new einrel_graph_s{einrel::read_graph_file(path)}; });
}

einrel_status einrel_graph_free(einrel_graph graph) {
  delete graph;
  return EINREL_OK;
}

einrel_status einrel_program_create(einrel_graph graph, MPI_Comm comm, const char* planner, einrel_program* program) {
  if (!graph || !program) return invalid("einrel_program_create: a null graph or program");
  *program = nullptr;
  // Kokkos is started on every rank before the first collective, so that a failure to start is one rank's
  // error that the program's constructor cannot agree on: report it on this rank.
  if (const einrel_status started = guarded(einrel::start_kokkos_until_mpi_finalize); started != EINREL_OK)
    return started;
  return guarded([&] {
    einrel::Options options;
    if (planner) options.planner = planner;
    auto made = std::make_unique<einrel_program_s>();
    made->program = std::make_unique<HostProgram>(comm, graph->graph, options);
    *program = made.release();
  });
}

einrel_status einrel_program_create_f(einrel_graph graph, MPI_Fint comm, const char* planner, einrel_program* program) {
  return einrel_program_create(graph, MPI_Comm_f2c(comm), planner, program);
}

einrel_status einrel_program_set_input(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                       int count, const int64_t* lo, const int64_t* hi, const void* const* data) {
  return bind(program, name, dtype, rank, count, lo, hi, data, true);
}

einrel_status einrel_program_set_output(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                        int count, const int64_t* lo, const int64_t* hi, void* const* data) {
  return bind(program, name, dtype, rank, count, lo, hi, const_cast<const void* const*>(data), false);
}

einrel_status einrel_program_execute(einrel_program program) {
  if (!program) return invalid("einrel_program_execute: a null program");
  return guarded([&] { program->program->execute(); });
}

einrel_status einrel_program_procs(einrel_program program, int64_t* procs) {
  if (!program || !procs) return invalid("einrel_program_procs: a null program or result");
  *procs = static_cast<int64_t>(program->program->plan().procs);
  return EINREL_OK;
}

einrel_status einrel_program_free(einrel_program program) {
  delete program;
  return EINREL_OK;
}

}  // extern "C"
