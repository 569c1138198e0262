#include <einrel_CallModel.hpp>
#include <einrel_Error.hpp>
#include <einrel_MachineFile.hpp>

#include <cstdio>
#include <cstdlib>
#include <optional>

namespace einrel::scalapack {

Mode mode_from_environment() {
  const char* text = std::getenv("EINREL_SCALAPACK");
  if (!text || !*text) return Mode::automatic;
  const std::string word(text);
  if (word == "off") return Mode::off;
  if (word == "on") return Mode::on;
  if (word == "auto") return Mode::automatic;
  throw Error("EINREL_SCALAPACK='" + word + "': expected off, on or auto");
}

// Both sides compute the same flops; what differs is how often C crosses memory, how the operands move, and
// what einrel adds around the GEMMs (docs/c-fortran.md "Which calls einrel takes"), per process:
// - ScaLAPACK's PDGEMM steps along k in panels of op(A)'s column blocks (SUMMA), each step's local GEMM reading
//   and writing the process's part of C, m n / P elements (a memory pass unless that part stays in cache), and
//   each step's panels of A broadcast along process rows and of B along process columns: a process receives
//   (m / nprow) k (npcol - 1) / npcol elements of A and k (n / npcol) (nprow - 1) / nprow of B (sent and then
//   read once).
// - einrel computes each block of C in one GEMM over the whole of k (one pass); copies the operands' blocks
//   that are not contiguous into its pieces (counted as all of them: the model does not see the leading
//   dimensions, which differ between processes); moves every operand's part between the caller's layout and
//   its plan's (packed, sent where P > 1, unpacked); writes alpha · result + beta · C back (reading C where
//   beta is not 0); and has a fixed cost per call and per plan.
// Memory traffic at the machine's memory_bytes_per_second, messages at seconds_per_byte, flops at
// flops_per_second (per process).
CallCosts predict(const CallShape& call, const engine::MachineModel& machine, const EinrelOverheads& overheads) {
  const double w = static_cast<double>(call.scalar_bytes), pr = call.nprow, pc = call.npcol, procs = pr * pc;
  const double m = static_cast<double>(call.m), n = static_cast<double>(call.n), k = static_cast<double>(call.k);
  const double c_local = m * n / procs, per_byte = 1.0 / machine.memory_bytes_per_second;
  const double network = procs > 1 ? machine.seconds_per_byte : 0;
  const double write_back = (call.beta_zero ? 2 : 3) * w * c_local * per_byte;
  const double c_pass = w * c_local > overheads.cache_bytes ? 2 * w * c_local * per_byte : 0;
  CallCosts costs;
  if (call.k > 0) {
    const double steps = static_cast<double>((call.k + call.panel - 1) / call.panel);
    const double panels = (m / pr) * k * (pc - 1) / pc + k * (n / pc) * (pr - 1) / pr;
    costs.common = 2 * m * n * k / procs / machine.flops_per_second;
    costs.scalapack = steps * c_pass + w * panels * (network + per_byte);
    costs.einrel_planned = c_pass + 2 * w * (m * k + k * n) / procs * per_byte + write_back +
                           w * (m * k + k * n + m * n) / procs * (network + 2 * per_byte);
  } else {  // C = op(A): ScaLAPACK reads A and writes C; einrel packs A, moves it, then writes back
    costs.scalapack = 2 * w * c_local * per_byte + w * c_local * (network + per_byte);
    costs.einrel_planned = 2 * w * c_local * per_byte + write_back + 2 * w * c_local * (network + 2 * per_byte);
  }
  costs.einrel_planned += overheads.call_seconds;
  costs.plan = overheads.plan_seconds + overheads.plan_seconds_per_piece * static_cast<double>(call.pieces);
  return costs;
}

bool einrel_may_win(const CallCosts& costs) {
  return costs.common + costs.einrel_planned <= kWinMargin * (costs.common + costs.scalapack);
}

bool plan_pays(const CallCosts& costs, std::int64_t calls) {
  if (!einrel_may_win(costs)) return false;
  const double gain = kWinMargin * (costs.common + costs.scalapack) - (costs.common + costs.einrel_planned);
  return static_cast<double>(calls) * gain >= costs.plan;
}

const engine::MachineModel& machine_from_environment() {
  struct Read {
    engine::MachineModel machine;
    std::string error;  // why the file could not be read: every call fails with it
  };
  static const Read read = [] {
    Read r;
    const char* path = std::getenv("EINREL_MACHINE");
    try {
      if (path && *path) r.machine = read_machine_file(path);
    } catch (const Error& e) {
      r.error = std::string("EINREL_MACHINE: ") + e.what();
    }
    return r;
  }();
  if (!read.error.empty()) throw Error(read.error);
  return read.machine;
}

std::string describe(const CallShape& call) {
  std::string s = std::to_string(call.m) + "x" + std::to_string(call.n);
  if (call.k > 0) s += "x" + std::to_string(call.k);
  return s;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", seconds);
  return text;
}

}  // namespace einrel::scalapack
