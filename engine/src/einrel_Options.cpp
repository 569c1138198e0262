#include <einrel_Error.hpp>
#include <einrel_Options.hpp>

namespace einrel::engine {

std::string_view objective_name(Objective objective) {
  switch (objective) {
    case Objective::makespan:
      return "makespan";
    case Objective::floats:
      return "floats";
    case Objective::model:
      return "model";
  }
  return "?";
}

Objective parse_objective(const std::string& text) {
  for (Objective o : {Objective::makespan, Objective::floats, Objective::model})
    if (text == objective_name(o)) return o;
  throw Error("unknown objective '" + text + "' (expected makespan, floats or model)");
}

}  // namespace einrel::engine
