#include "policies/model.h"

namespace gpuadmit {

std::string_view action_name(Action a) {
  switch (a) {
    case Action::kFix:
      return "fix";
    case Action::kDeny:
      return "deny";
    case Action::kWarn:
      return "warn";
    case Action::kOff:
      return "off";
    case Action::kStrip:
      return "strip";
  }
  return "unknown";
}

}  // namespace gpuadmit
