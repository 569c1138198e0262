#include <einrel_Error.hpp>
#include <einrel_MachineFile.hpp>

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace einrel {
namespace {

// The model's rates by their names in the file.
std::vector<std::pair<const char*, double engine::MachineModel::*>> rates() {
  using M = engine::MachineModel;
  return {{"latency_seconds", &M::latency_seconds},
          {"seconds_per_byte", &M::seconds_per_byte},
          {"file_seconds_per_byte", &M::file_seconds_per_byte},
          {"flops_per_second", &M::flops_per_second},
          {"memory_bytes_per_second", &M::memory_bytes_per_second},
          {"gemm_half_rate_dimension", &M::gemm_half_rate_dimension},
          {"call_seconds", &M::call_seconds}};
}

}  // namespace

engine::MachineModel read_machine_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open machine file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  engine::MachineModel machine;
  for (const auto& [name, value] : io::read_json_numbers(text.str(), path)) {
    if (name == "schema_version" || name == "num_ranks") continue;  // what calibrate records besides the rates
    bool known = false;
    for (const auto& [rate, member] : rates()) {
      if (name != rate) continue;
      known = true;
      const bool may_be_zero = name == std::string("latency_seconds") ||
                               name == std::string("gemm_half_rate_dimension") || name == std::string("call_seconds");
      if (value < 0 || (value == 0 && !may_be_zero))
        throw Error(path + ": '" + name + "' must be positive, got " + io::json_number(value));
      machine.*member = value;
    }
    if (!known) throw Error(path + ": unknown rate '" + name + "' in the machine file");
  }
  return machine;
}

void write_machine(io::JsonWriter& j, const engine::MachineModel& machine) {
  for (const auto& [rate, member] : rates()) j.member(rate, machine.*member);
}

}  // namespace einrel
