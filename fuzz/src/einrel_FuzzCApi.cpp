// Fuzz target: einrel's C API (einrel.h) under hostile calls, on one rank. The input is a program of calls:
// a byte of opcode, then bytes of arguments, for
//   graph_parse (a valid graph of a few, garbage text from the input, or null text, name, result),
//   graph_read (null or missing paths, a directory), graph_free,
//   program_create / program_create_f (null, freed or live graphs; MPI_COMM_SELF, _WORLD or _NULL; planners
//   null, "eindecomp" or unknown; a null result), program_set_input / _set_output (null, freed or live
//   programs; known, unknown or null names; wrong dtypes, negative or wrong ranks and counts; boxes out of
//   bounds, overlapping, negative or empty; null boxes, null data, null pieces; or a valid cover),
//   program_execute (also before the inputs are set), program_procs and program_free.
// Handles live in four graph and four program slots; a freed handle stays in its slot and is used again
// (einrel must recognize it). Every call must return a status; a failed one EINREL_ERROR or
// EINREL_INVALID_ARGUMENT with a one-line message of its own in einrel_last_error(). What einrel.h calls an
// invalid argument (a null handle or pointer, a negative count or rank, an unknown dtype, a freed handle)
// must give EINREL_INVALID_ARGUMENT; a call that cannot succeed (an unknown name, another dtype or rank
// than the tensor's, null data for a non-empty box, an execute before every input is set, a null
// communicator) must fail. Anything else (a crash, a sanitizer report, a wrong status) aborts with a line
// that says which call.
#include <einrel.h>
#include <einrel_FuzzInput.hpp>

#include <mpi.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

// ---- the graphs the calls know (their tensors, for the verdicts on names, dtypes and ranks) ----

struct TensorInfo {
  const char* name;
  bool input;
  einrel_dtype dtype;
  int rank;
  std::array<int64_t, 3> dims;
};

struct KnownGraph {
  const char* text;
  std::vector<TensorInfo> tensors;
};

const std::vector<KnownGraph>& known_graphs() {
  static const std::vector<KnownGraph> graphs{
      {"input A f64[4,3]\ninput B f64[3,5]\nC = einsum(\"ij,jk->ik\", A, B)\noutput C\n",
       {{"A", true, EINREL_F64, 2, {4, 3, 1}},
        {"B", true, EINREL_F64, 2, {3, 5, 1}},
        {"C", false, EINREL_F64, 2, {4, 5, 1}}}},
      {"input X f32[6]\ns = einsum(\"i->\", X, agg=max)\noutput s\n",
       {{"X", true, EINREL_F32, 1, {6, 1, 1}}, {"s", false, EINREL_F32, 0, {1, 1, 1}}}},
      {"input T f64[2,3,4]\ninput W f64[4,2]\nU = einsum(\"ijk,kl->ijl\", T, W)\n"
       "V = einsum(\"ijl->l\", U, map=square)\noutput U, V\n",
       {{"T", true, EINREL_F64, 3, {2, 3, 4}},
        {"W", true, EINREL_F64, 2, {4, 2, 1}},
        {"U", false, EINREL_F64, 3, {2, 3, 2}},
        {"V", false, EINREL_F64, 1, {2, 1, 1}}}},
  };
  return graphs;
}

// Names the set calls use: every known graph's tensors, then an unknown name, an empty one and null.
const std::vector<const char*> names{"A", "B", "C", "X", "s", "T", "W", "U", "V", "nope", "", nullptr};

const TensorInfo* find_tensor(int graph, const char* name) {
  if (graph < 0 || !name) return nullptr;
  for (const TensorInfo& t : known_graphs()[static_cast<std::size_t>(graph)].tensors)
    if (std::strcmp(t.name, name) == 0) return &t;
  return nullptr;
}

// ---- the input, read as arguments ----

class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  int byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int pick(int n) { return byte() % n; }
  // Up to `max` bytes of the input as a C string (a zero byte ends it early).
  std::string text(int max) {
    const int n = pick(max + 1);
    std::string s;
    for (int i = 0; i < n && !done(); ++i) s += static_cast<char>(byte());
    return std::string(s.c_str());
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- the verdicts ----

enum class Expect { anything, success, failure, invalid };

// The message a call must not leave standing: each call is preceded by a failure with this message.
constexpr const char* sentinel_name = "einrel-fuzz-sentinel";

void prime_last_error() {
  einrel_graph none = nullptr;
  if (einrel_graph_parse("?", sentinel_name, &none) == EINREL_OK) {
    std::fprintf(stderr, "einrel_graph_parse(\"?\") succeeded\n");
    std::abort();
  }
}

[[noreturn]] void finding(const char* call, einrel_status status, const char* what) {
  std::fprintf(stderr, "einrel C API finding: %s returned %d: %s (einrel_last_error(): \"%s\")\n", call,
               static_cast<int>(status), what, einrel_last_error());
  std::abort();
}

void check(const char* call, einrel_status status, Expect expect) {
  if (status == EINREL_OK) {
    if (expect == Expect::failure || expect == Expect::invalid) finding(call, status, "succeeded, but must fail");
    return;
  }
  const std::string message = einrel_last_error();
  if (status != EINREL_ERROR && status != EINREL_INVALID_ARGUMENT) finding(call, status, "an unknown status");
  if (message.empty() || message.find(sentinel_name) != std::string::npos)
    finding(call, status, "failed without a message of its own");
  if (message.find('\n') != std::string::npos) finding(call, status, "a message of more than one line");
  if (expect == Expect::invalid && status != EINREL_INVALID_ARGUMENT)
    finding(call, status, "must be EINREL_INVALID_ARGUMENT");
  if (expect == Expect::success) finding(call, status, "failed, but must succeed");
}

// The stronger of two verdicts on one call (an invalid argument makes any call fail).
Expect worst(Expect a, Expect b) { return static_cast<int>(a) > static_cast<int>(b) ? a : b; }

// ---- the handles ----

enum class State { empty, live, freed };

struct GraphSlot {
  einrel_graph handle = nullptr;
  State state = State::empty;
  int known = -1;  // the known graph it was parsed from; -1: garbage that parsed
};

using Buffer = std::unique_ptr<unsigned char[]>;

struct ProgramSlot {
  einrel_program handle = nullptr;
  State state = State::empty;
  int known = -1;
  std::map<std::string, std::vector<Buffer>> pieces;  // bound pieces' memory, by tensor name
};

// What a handle in a slot is: live, freed (must be recognized) or null.
template <class Slot>
Expect handle_verdict(const Slot& slot) {
  return slot.state == State::live ? Expect::anything : Expect::invalid;
}

class Session {
 public:
  explicit Session(const std::uint8_t* data, std::size_t size) : in_(data, size) {}

  void run() {
    while (!in_.done()) {
      switch (in_.pick(9)) {
        case 0:
          parse();
          break;
        case 1:
          read();
          break;
        case 2:
          free_graph(graphs_[in_.pick(4)]);
          break;
        case 3:
          create();
          break;
        case 4:
          set(true);
          break;
        case 5:
          set(false);
          break;
        case 6:
          execute();
          break;
        case 7:
          procs();
          break;
        default:
          free_program(programs_[in_.pick(4)]);
          break;
      }
    }
    for (ProgramSlot& p : programs_)
      if (p.state == State::live) free_program(p);
    for (GraphSlot& g : graphs_)
      if (g.state == State::live) free_graph(g);
  }

 private:
  // A new handle may reuse a freed one's address: that freed slot no longer names a freed handle.
  template <class Slots, class Handle>
  static void forget_reused(Slots& slots, Handle handle) {
    for (auto& slot : slots)
      if (slot.state == State::freed && slot.handle == handle) slot = {};
  }

  void parse() {
    GraphSlot& slot = graphs_[in_.pick(4)];
    const int which = in_.pick(5), flags = in_.byte();
    const std::string garbage = in_.text(64);
    const bool null_text = which == 4, null_name = flags & 1, null_result = flags & 2;
    const char* text = null_text   ? nullptr
                       : which < 3 ? known_graphs()[static_cast<std::size_t>(which)].text
                                   : garbage.c_str();
    if (slot.state == State::live) free_graph(slot);
    einrel_graph made = nullptr;
    prime_last_error();
    const einrel_status status =
        einrel_graph_parse(text, null_name ? nullptr : "fuzz.ein", null_result ? nullptr : &made);
    check("einrel_graph_parse", status,
          null_text || null_result ? Expect::invalid
          : which < 3              ? Expect::success
                                   : Expect::anything);
    if (status != EINREL_OK) return;
    forget_reused(graphs_, made);
    slot = {made, State::live, which < 3 ? which : -1};
  }

  void read() {
    const int which = in_.pick(4);
    const char* path = which == 0 ? nullptr : which == 1 ? "/nonexistent/einrel-fuzz.ein" : "/";
    einrel_graph made = nullptr;
    prime_last_error();
    const einrel_status status = einrel_graph_read(path, which == 3 ? nullptr : &made);
    check("einrel_graph_read", status, which == 0 || which == 3 ? Expect::invalid : Expect::failure);
  }

  void free_graph(GraphSlot& slot) {
    prime_last_error();
    check("einrel_graph_free", einrel_graph_free(slot.handle),
          slot.state == State::freed ? Expect::invalid : Expect::success);
    if (slot.state == State::live) slot.state = State::freed;
  }

  void create() {
    ProgramSlot& slot = programs_[in_.pick(4)];
    const GraphSlot& graph = graphs_[in_.pick(4)];
    const int comm_choice = in_.pick(4), planner_choice = in_.pick(3), flags = in_.byte();
    const char* planner = planner_choice == 0 ? nullptr : planner_choice == 1 ? "eindecomp" : "frobnicate";
    const bool null_result = flags & 1;
    if (slot.state == State::live) free_program(slot);
    einrel_program made = nullptr;
    einrel_program* result = null_result ? nullptr : &made;
    prime_last_error();
    einrel_status status;
    if (comm_choice == 3)
      status = einrel_program_create_f(graph.handle, MPI_Comm_c2f(MPI_COMM_SELF), planner, result);
    else
      status = einrel_program_create(graph.handle,
                                     comm_choice == 0   ? MPI_COMM_SELF
                                     : comm_choice == 1 ? MPI_COMM_WORLD
                                                        : MPI_COMM_NULL,
                                     planner, result);
    Expect expect = null_result ? Expect::invalid : handle_verdict(graph);
    if (expect == Expect::anything && graph.known >= 0) expect = Expect::success;
    // A null communicator or an unknown planner: a failure, whichever argument einrel looks at first.
    if (comm_choice == 2 || planner_choice == 2) expect = Expect::failure;
    check("einrel_program_create", status, expect);
    if (status != EINREL_OK) return;
    forget_reused(programs_, made);
    slot.handle = made;
    slot.state = State::live;
    slot.known = graph.known;
  }

  // The pieces of one set call: boxes, data, and the memory behind them.
  struct Pieces {
    int dtype = EINREL_F64;  // an int: a C caller may pass any, which an einrel_dtype in C++ cannot hold
    int rank = 0, count = 0;
    std::vector<int64_t> lo, hi;
    std::vector<void*> data;
    std::vector<Buffer> memory;
    bool null_boxes = false, null_data = false, null_piece = false;  // a null element for a non-empty box
  };

  static std::size_t element_size(int dtype) { return dtype == EINREL_F32 ? sizeof(float) : sizeof(double); }

  // Memory for piece i of p (its box's elements; one element for a rank-0 box).
  static void allocate(Pieces& p, int i) {
    std::size_t elements = 1;
    for (int d = 0; d < p.rank; ++d) {
      const int64_t extent =
          p.hi[static_cast<std::size_t>(i * p.rank + d)] - p.lo[static_cast<std::size_t>(i * p.rank + d)];
      elements *= static_cast<std::size_t>(extent > 0 ? extent : 0);
    }
    p.memory.emplace_back(new unsigned char[elements * element_size(p.dtype) + 1]());
    p.data.push_back(p.memory.back().get());
  }

  // A valid cover of tensor t: the whole box, or two halves along dimension 0.
  static void valid_pieces(Reader& in, const TensorInfo& t, Pieces& p) {
    p.dtype = t.dtype;
    p.rank = t.rank;
    p.count = t.rank > 0 && t.dims[0] > 1 && in.pick(2) ? 2 : 1;
    for (int i = 0; i < p.count; ++i)
      for (int d = 0; d < t.rank; ++d) {
        const int64_t half = t.dims[0] / 2;
        p.lo.push_back(d > 0 || p.count == 1 ? 0 : i == 0 ? 0 : half);
        p.hi.push_back(d > 0 || p.count == 1 ? t.dims[static_cast<std::size_t>(d)] : i == 0 ? half : t.dims[0]);
      }
    for (int i = 0; i < p.count; ++i) allocate(p, i);
  }

  // Hostile pieces: any dtype, rank and count, boxes in [-2, 12), null boxes, data or pieces.
  static void hostile_pieces(Reader& in, Pieces& p) {
    const int dtype = in.pick(4);
    p.dtype = dtype < 2 ? dtype : dtype == 2 ? 7 : -1;
    p.rank = in.pick(6) - 1;
    p.count = in.pick(5) - 1;
    const int flags = in.byte();
    p.null_boxes = flags & 1;
    p.null_data = flags & 2;
    if (p.rank < 0 || p.count < 0) return;
    for (int k = 0; k < p.count * p.rank; ++k) {
      p.lo.push_back(in.pick(14) - 2);
      p.hi.push_back(in.pick(14) - 2);
    }
    for (int i = 0; i < p.count; ++i) {
      allocate(p, i);
      if ((flags >> (2 + i)) & 1) {  // a null piece: a failure where its box is non-empty and valid
        bool nonempty = true;
        for (int d = 0; d < p.rank; ++d)
          nonempty = nonempty && p.lo[static_cast<std::size_t>(i * p.rank + d)] >= 0 &&
                     p.hi[static_cast<std::size_t>(i * p.rank + d)] > p.lo[static_cast<std::size_t>(i * p.rank + d)];
        p.data[static_cast<std::size_t>(i)] = nullptr;
        p.null_piece = p.null_piece || nonempty;
      }
    }
  }

  // The verdict on a set call with pieces p for `name` of program `slot`.
  static Expect set_verdict(const ProgramSlot& slot, const char* name, bool input, const Pieces& p) {
    Expect expect = handle_verdict(slot);
    if (!name || p.rank < 0 || p.count < 0 || (p.dtype != EINREL_F32 && p.dtype != EINREL_F64) ||
        (p.count > 0 && (p.null_data || (p.rank > 0 && p.null_boxes))))
      expect = Expect::invalid;
    if (p.null_piece) expect = worst(expect, Expect::failure);
    if (slot.known < 0 || expect != Expect::anything) return expect;
    const TensorInfo* t = find_tensor(slot.known, name);
    if (!t || t->input != input || t->dtype != p.dtype || (p.count > 0 && t->rank != p.rank)) return Expect::failure;
    return Expect::anything;
  }

  void set(bool input) {
    const int program = in_.pick(5);  // 4: a null program
    ProgramSlot none;
    ProgramSlot& slot = program < 4 ? programs_[program] : none;
    const char* name = names[static_cast<std::size_t>(in_.pick(static_cast<int>(names.size())))];
    Pieces p;
    const TensorInfo* t = find_tensor(slot.known, name);
    if (t && in_.pick(2))
      valid_pieces(in_, *t, p);
    else
      hostile_pieces(in_, p);
    const int64_t* lo = p.null_boxes ? nullptr : p.lo.data();
    const int64_t* hi = p.null_boxes ? nullptr : p.hi.data();
    void* const* data = p.null_data ? nullptr : p.data.data();
    prime_last_error();
    const einrel_status status =  // the dtype converted in the call: no einrel_dtype object holds a hostile value
        input ? einrel_program_set_input(slot.handle, name, static_cast<einrel_dtype>(p.dtype), p.rank, p.count, lo, hi,
                                         data)
              : einrel_program_set_output(slot.handle, name, static_cast<einrel_dtype>(p.dtype), p.rank, p.count, lo,
                                          hi, data);
    check(input ? "einrel_program_set_input" : "einrel_program_set_output", status, set_verdict(slot, name, input, p));
    if (status == EINREL_OK && slot.state == State::live) slot.pieces[name] = std::move(p.memory);
  }

  // Whether every input of the program's known graph has been bound.
  static bool inputs_bound(const ProgramSlot& slot) {
    for (const TensorInfo& t : known_graphs()[static_cast<std::size_t>(slot.known)].tensors)
      if (t.input && !slot.pieces.count(t.name)) return false;
    return true;
  }

  void execute() {
    const int program = in_.pick(5);
    ProgramSlot none;
    const ProgramSlot& slot = program < 4 ? programs_[program] : none;
    Expect expect = handle_verdict(slot);
    if (expect == Expect::anything && slot.known >= 0 && !inputs_bound(slot)) expect = Expect::failure;
    prime_last_error();
    check("einrel_program_execute", einrel_program_execute(slot.handle), expect);
  }

  void procs() {
    const ProgramSlot& slot = programs_[in_.pick(4)];
    const bool null_result = in_.pick(2);
    int64_t p = 0;
    prime_last_error();
    const einrel_status status = einrel_program_procs(slot.handle, null_result ? nullptr : &p);
    check("einrel_program_procs", status, null_result || slot.state != State::live ? Expect::invalid : Expect::success);
    if (status == EINREL_OK && p < 1) finding("einrel_program_procs", status, "a partition count below 1");
    report(slot, null_result);
  }

  // The run report after the same draws as procs(): a null length is invalid; else a size query, a buffer one
  // byte short (invalid, the length kept) and one that fits (a JSON object ending in a newline).
  static void report(const ProgramSlot& slot, bool null_length) {
    std::size_t length = 0;
    prime_last_error();
    einrel_status status = einrel_program_report(slot.handle, nullptr, 0, null_length ? nullptr : &length);
    const Expect expect = null_length || slot.state != State::live ? Expect::invalid : Expect::anything;
    check("einrel_program_report", status, expect);
    if (status != EINREL_OK) return;
    std::string text(length + 1, '?');
    std::size_t again = 0;
    prime_last_error();
    check("einrel_program_report", einrel_program_report(slot.handle, text.data(), length, &again), Expect::invalid);
    if (again != length) finding("einrel_program_report", EINREL_INVALID_ARGUMENT, "a short buffer changed the length");
    prime_last_error();
    status = einrel_program_report(slot.handle, text.data(), text.size(), &again);
    check("einrel_program_report", status, Expect::success);
    if (status == EINREL_OK && (again != length || text[length] != '\0' || text.front() != '{' || length < 2 ||
                                text.compare(length - 2, 2, "}\n") != 0))
      finding("einrel_program_report", status, "not the JSON object of the length it gave");
  }

  void free_program(ProgramSlot& slot) {
    prime_last_error();
    check("einrel_program_free", einrel_program_free(slot.handle),
          slot.state == State::freed ? Expect::invalid : Expect::success);
    if (slot.state != State::live) return;
    slot.state = State::freed;
    slot.pieces.clear();  // einrel keeps no pointer beyond the program
  }

  Reader in_;
  std::array<GraphSlot, 4> graphs_;
  std::array<ProgramSlot, 4> programs_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Session(data, size).run();
  return 0;
}
