// The C API (einrel.h) over einrel::Program: handles own C++ objects, every call catches what it throws and
// keeps the message for einrel_last_error().
#include <einrel.h>
#include <einrel.hpp>
#include <einrel_HostEnvironment.hpp>
#include <einrel_RunReport.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

struct einrel_graph_s {
  einrel::Graph graph;
};

// Pieces are host memory (einrel.h), so programs run on the host's default execution space: with the CUDA
// backend too, a C or Fortran caller's arrays are read and written where they are.
using HostProgram = einrel::Program<Kokkos::DefaultHostExecutionSpace>;

struct einrel_program_s {
  einrel::Options options;  // as the program was created with them
  std::unique_ptr<HostProgram> program;
  // The JSON report of execution `reported` (einrel_program_report), once asked for: later calls for the same
  // execution are local.
  std::string report;
  int reported = 0;
};

namespace {

thread_local std::string last_error;

// Sets this thread's last error; the status of a failed call.
einrel_status failed(einrel_status status, const std::string& what) {
  last_error = what;
  return status;
}

einrel_status invalid(const std::string& what) { return failed(EINREL_INVALID_ARGUMENT, what); }

// Runs `call`, turning what it throws into a status and the thread's last error.
template <class Call>
einrel_status guarded(Call&& call) {
  try {
    call();
    return EINREL_OK;
  } catch (const std::exception& e) {
    return failed(EINREL_ERROR, e.what());
  } catch (...) {
    return failed(EINREL_ERROR, "einrel: unknown failure");
  }
}

// The handles this process has made and not freed: a handle is checked before it is used, so that a null,
// freed or foreign handle is an invalid argument rather than a crash. (An address freed and then given to a
// new handle is that new handle.)
class LiveHandles {
 public:
  void add(const void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(h);
  }
  bool remove(const void* h) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(h) == 1;
  }
  bool live(const void* h) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(h) == 1;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

LiveHandles& live_handles() {
  static LiveHandles handles;
  return handles;
}

// The failure of a call `call` given handle `h` of kind `what` ("graph", "program"), or nothing when h is live.
std::optional<einrel_status> dead_handle(const char* call, const void* h, const char* what) {
  if (!h) return invalid(std::string(call) + ": the " + what + " is null");
  if (!live_handles().live(h))
    return invalid(std::string(call) + ": the " + what + " handle is not a live einrel " + what +
                   " (freed already, or never made by einrel)");
  return std::nullopt;
}

// The failure of a call that needs MPI (initialized and not finalized), or nothing.
std::optional<einrel_status> without_mpi(const char* call) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return failed(EINREL_ERROR, std::string(call) + ": MPI is finalized (free programs before MPI_Finalize)");
  if (!initialized)
    return failed(EINREL_ERROR,
                  std::string(call) + ": MPI is not initialized (call MPI_Init_thread before the first program)");
  return std::nullopt;
}

// The integer a C caller passed as an einrel_dtype. C lets any int stand there; in C++ an enum value outside
// the enumerators' range cannot be read as the enum, so its bytes are read as the int they are.
int dtype_code(const einrel_dtype& dtype) {
  int code = 0;
  static_assert(sizeof(code) == sizeof(dtype), "einrel_dtype is an int in C");
  std::memcpy(&code, &dtype, sizeof code);
  return code;
}

std::string box_text(int rank, const int64_t* lo, const int64_t* hi) {
  std::string text = "[";
  for (int d = 0; d < rank; ++d) text += (d ? "," : "") + std::to_string(lo[d]);
  text += "]..[";
  for (int d = 0; d < rank; ++d) text += (d ? "," : "") + std::to_string(hi[d]);
  return text + "]";
}

// The failure of a bind call given its arguments, or nothing: `call` names it.
std::optional<einrel_status> invalid_pieces(const char* call, const char* name, int dtype, int rank, int count,
                                            const int64_t* lo, const int64_t* hi, const void* const* data) {
  const std::string where = std::string(call) + (name ? std::string(" '") + name + "'" : std::string());
  if (!name) return invalid(where + ": the name is null");
  if (dtype != EINREL_F32 && dtype != EINREL_F64)
    return invalid(where + ": unknown dtype " + std::to_string(dtype) + " (EINREL_F32 or EINREL_F64)");
  if (rank < 0) return invalid(where + ": negative rank " + std::to_string(rank));
  if (count < 0) return invalid(where + ": negative count " + std::to_string(count));
  if (count == 0) return std::nullopt;
  if (!data) return invalid(where + ": " + std::to_string(count) + " piece(s) but the data array is null");
  if (rank > 0 && (!lo || !hi)) return invalid(where + ": " + std::to_string(count) + " piece(s) but null boxes");
  for (int i = 0; i < count; ++i) {
    const int64_t* l = lo + static_cast<std::ptrdiff_t>(i) * rank;
    const int64_t* h = hi + static_cast<std::ptrdiff_t>(i) * rank;
    bool empty = false;
    for (int d = 0; d < rank; ++d) {
      if (l[d] < 0 || h[d] < l[d])
        return invalid(where + ": piece " + std::to_string(i) + " has box " + box_text(rank, l, h) +
                       ", negative or reversed along dimension " + std::to_string(d));
      empty = empty || h[d] == l[d];
    }
    if (!empty && !data[i])
      return invalid(where + ": piece " + std::to_string(i) + " has box " + box_text(rank, l, h) +
                     " but a null data pointer");
  }
  return std::nullopt;
}

// This rank's pieces as the program's LocalPieces of Scalar (arguments checked by invalid_pieces).
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
    }
    pieces.push_back({box, typename Piece::view_type(static_cast<Scalar*>(const_cast<void*>(data[i])),
                                                     static_cast<std::size_t>(box.size()))});
  }
  return pieces;
}

einrel_status bind(const char* call, einrel_program program, const char* name, int dtype, int rank, int count,
                   const int64_t* lo, const int64_t* hi, const void* const* data, bool input) {
  if (auto dead = dead_handle(call, program, "program")) return *dead;
  if (auto bad = invalid_pieces(call, name, dtype, rank, count, lo, hi, data)) return *bad;
  return guarded([&] {
    // A rank is checked against the tensor's even with no pieces: the Program sees only the pieces.
    if (const auto v = program->program->graph().find(name);
        v && program->program->graph().vertex(*v).bound.size() != static_cast<std::size_t>(rank))
      throw einrel::Error(std::string(call) + " '" + name + "': rank " + std::to_string(rank) +
                          ", but the tensor has " + std::to_string(program->program->graph().vertex(*v).bound.size()) +
                          " dimensions");
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
  return guarded([&] {
    *graph = new einrel_graph_s{einrel::parse_graph(text, name ? name : "<text>")};
    live_handles().add(*graph);
  });
}

einrel_status einrel_graph_read(const char* path, einrel_graph* graph) {
  if (!path || !graph) return invalid("einrel_graph_read: a null path or graph");
  *graph = nullptr;
  return guarded([&] {
    *graph = new einrel_graph_s{einrel::read_graph_file(path)};
    live_handles().add(*graph);
  });
}

einrel_status einrel_graph_free(einrel_graph graph) {
  if (!graph) return EINREL_OK;
  if (!live_handles().remove(graph)) return *dead_handle("einrel_graph_free", graph, "graph");
  delete graph;
  return EINREL_OK;
}

einrel_status einrel_program_create(einrel_graph graph, MPI_Comm comm, const char* planner, einrel_program* program) {
  if (!program) return invalid("einrel_program_create: the program result pointer is null");
  *program = nullptr;
  if (auto dead = dead_handle("einrel_program_create", graph, "graph")) return *dead;
  if (auto no_mpi = without_mpi("einrel_program_create")) return *no_mpi;
  if (comm == MPI_COMM_NULL) return invalid("einrel_program_create: the communicator is MPI_COMM_NULL");
  // Kokkos is started on every rank before the first collective, so that a failure to start is one rank's
  // error that the program's constructor cannot agree on: report it on this rank.
  if (const einrel_status started = guarded(einrel::start_kokkos_until_mpi_finalize); started != EINREL_OK)
    return started;
  return guarded([&] {
    einrel::Options options;
    if (planner) options.planner = planner;
    auto made = std::make_unique<einrel_program_s>();
    made->options = options;
    made->program = std::make_unique<HostProgram>(comm, graph->graph, options);
    *program = made.release();
    live_handles().add(*program);
  });
}

einrel_status einrel_program_create_f(einrel_graph graph, MPI_Fint comm, const char* planner, einrel_program* program) {
  if (auto no_mpi = without_mpi("einrel_program_create")) {
    if (program) *program = nullptr;
    return *no_mpi;  // MPI_Comm_f2c needs MPI
  }
  return einrel_program_create(graph, MPI_Comm_f2c(comm), planner, program);
}

einrel_status einrel_program_set_input(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                       int count, const int64_t* lo, const int64_t* hi, const void* const* data) {
  return bind("einrel_program_set_input", program, name, dtype_code(dtype), rank, count, lo, hi, data, true);
}

einrel_status einrel_program_set_output(einrel_program program, const char* name, einrel_dtype dtype, int rank,
                                        int count, const int64_t* lo, const int64_t* hi, void* const* data) {
  return bind("einrel_program_set_output", program, name, dtype_code(dtype), rank, count, lo, hi,
              const_cast<const void* const*>(data), false);
}

einrel_status einrel_program_set_column_major(einrel_program program, const char* name, int input, einrel_dtype dtype,
                                              int box_rank, const int64_t* lo, const int64_t* hi, int array_rank,
                                              const int64_t* array_shape, const void* data) {
  const char* call = input ? "einrel_set_input" : "einrel_set_output";
  if (auto dead = dead_handle(call, program, "program")) return *dead;
  const std::string where = std::string(call) + (name ? std::string(" '") + name + "'" : std::string());
  if (array_rank < 0 || (array_rank > 0 && !array_shape)) return invalid(where + ": no array shape");
  if (box_rank < 0) return invalid(where + ": lo and hi have different lengths");
  std::string shape = "(";
  for (int d = 0; d < array_rank; ++d) shape += (d ? "," : "") + std::to_string(array_shape[d]);
  shape += ")";
  if (box_rank != array_rank)
    return invalid(where + ": a box of rank " + std::to_string(box_rank) + " for an array of rank " +
                   std::to_string(array_rank) + " " + shape);
  const void* const pieces[1] = {data};
  if (auto bad = invalid_pieces(call, name, dtype_code(dtype), box_rank, 1, lo, hi, pieces)) return *bad;
  // A column-major array a(n1, ..., nk) is the C-order tensor [nk, ..., n1]: the box's extents, in C order,
  // are the array's shape reversed (docs/c-fortran.md, "The index convention").
  for (int d = 0; d < box_rank; ++d)
    if (hi[d] - lo[d] != array_shape[box_rank - 1 - d])
      return invalid(where + ": the box " + box_text(box_rank, lo, hi) + " does not fit the array of shape " + shape +
                     ": a box is in C order, the array's dimensions reversed (docs/c-fortran.md)");
  return bind(call, program, name, dtype_code(dtype), box_rank, 1, lo, hi, pieces, input != 0);
}

einrel_status einrel_program_execute(einrel_program program) {
  if (auto dead = dead_handle("einrel_program_execute", program, "program")) return *dead;
  if (auto no_mpi = without_mpi("einrel_program_execute")) return *no_mpi;
  return guarded([&] { program->program->execute(); });
}

einrel_status einrel_program_procs(einrel_program program, int64_t* procs) {
  if (auto dead = dead_handle("einrel_program_procs", program, "program")) return *dead;
  if (!procs) return invalid("einrel_program_procs: the result pointer is null");
  return guarded([&] { *procs = static_cast<int64_t>(program->program->plan().procs); });
}

einrel_status einrel_program_report(einrel_program program, char* json, size_t size, size_t* length) {
  if (auto dead = dead_handle("einrel_program_report", program, "program")) return *dead;
  if (!length) return invalid("einrel_program_report: the length pointer is null");
  if (auto no_mpi = without_mpi("einrel_program_report")) return *no_mpi;
  const einrel_status made = guarded([&] {
    HostProgram& p = *program->program;
    if (p.executions() == 0)
      throw einrel::Error("einrel_program_report: the program has not been executed: nothing to report");
    if (program->reported == p.executions()) return;
    einrel::io::RunReport report =
        einrel::io::run_report(p.graph(), p.fitted(), p.last_report(), program->options.objective);
    report.backend = Kokkos::DefaultHostExecutionSpace::name();
    report.threads = Kokkos::DefaultHostExecutionSpace().concurrency();
    program->report = einrel::io::report_json(report);
    program->reported = p.executions();
  });
  if (made != EINREL_OK) return made;
  *length = program->report.size();
  if (!json) return EINREL_OK;
  if (size <= program->report.size())
    return invalid("einrel_program_report: a buffer of " + std::to_string(size) + " bytes for a report of " +
                   std::to_string(program->report.size()) + " bytes and its terminating NUL");
  std::memcpy(json, program->report.c_str(), program->report.size() + 1);
  return EINREL_OK;
}

einrel_status einrel_program_free(einrel_program program) {
  if (!program) return EINREL_OK;
  if (auto dead = dead_handle("einrel_program_free", program, "program")) return *dead;
  // Freeing frees the program's communicator: after MPI_Finalize that is not possible, so the program stays.
  if (auto no_mpi = without_mpi("einrel_program_free")) return *no_mpi;
  live_handles().remove(program);
  return guarded([&] { delete program; });
}

}  // extern "C"
