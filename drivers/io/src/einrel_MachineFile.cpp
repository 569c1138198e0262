#include <einrel_Error.hpp>
#include <einrel_MachineFile.hpp>

#include <cmath>
#include <fstream>
#include <map>
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
          {"node_latency_seconds", &M::node_latency_seconds},
          {"node_seconds_per_byte", &M::node_seconds_per_byte},
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
  const std::map<std::string, double> numbers = io::read_json_numbers(text.str(), path);
  for (const auto& [name, value] : numbers) {
    if (name == "schema_version" || name == "num_ranks") continue;  // what calibrate records besides the rates
    if (name == "ranks_per_node") {
      if (!(value >= 1 && value <= 1 << 24) || value != std::floor(value))
        throw Error(path + ": 'ranks_per_node' must be a whole number from 1 to 16777216, got " +
                    io::json_number(value));
      machine.ranks_per_node = static_cast<int>(value);
      continue;
    }
    bool known = false;
    for (const auto& [rate, member] : rates()) {
      if (name != rate) continue;
      known = true;
      const bool may_be_zero = name == std::string("latency_seconds") || name == std::string("node_latency_seconds") ||
                               name == std::string("gemm_half_rate_dimension") || name == std::string("call_seconds");
      if (value < 0 || (value == 0 && !may_be_zero))
        throw Error(path + ": '" + name + "' must be positive, got " + io::json_number(value));
      machine.*member = value;
    }
    if (!known) throw Error(path + ": unknown rate '" + name + "' in the machine file");
  }
  // One level unless the file gives the node's own rates.
  if (!numbers.count("node_latency_seconds")) machine.node_latency_seconds = machine.latency_seconds;
  if (!numbers.count("node_seconds_per_byte")) machine.node_seconds_per_byte = machine.seconds_per_byte;
  return machine;
}

void write_machine(io::JsonWriter& j, const engine::MachineModel& machine) {
  for (const auto& [rate, member] : rates()) j.member(rate, machine.*member);
  if (machine.ranks_per_node > 0) j.member("ranks_per_node", machine.ranks_per_node);
}

}  // namespace einrel
