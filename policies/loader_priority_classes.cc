// spec.priorityClasses (policies/policy_reader.h).

#include <limits>

#include "policies/policy_reader.h"

namespace gpuadmit::policy_reader {

void PolicyReader::read_priority_classes(const YAML::Node& node, const std::string& path) {
  auto classes = free_map(node, path);
  if (!classes) return;
  const Field* global_default = nullptr;
  for (const Field& f : classes->fields) {
    const std::string cp = key_path(path, f.key);
    PriorityClassDecl pc;
    pc.name = f.key;
    if (f.key.empty()) {
      add(f.key_node, cp, "priority class name must not be empty");
    } else if (f.key.rfind("system-", 0) == 0) {
      add(f.key_node, cp,
          "priority class names starting with \"system-\" are reserved by Kubernetes");
    }
    auto m = map(f.value, cp, {"value", "preemptionPolicy", "globalDefault"});
    if (m) {
      if (const Field* v = m->get("value")) {
        const std::string vp = child(cp, "value");
        if (auto value = integer(v->value, vp)) {
          if (*value > kMaxPriorityValue || *value < std::numeric_limits<int32_t>::min()) {
            add(v->value, vp,
                "must be between -2147483648 and 1000000000 (larger values are reserved for "
                "system priority classes), got " +
                    std::to_string(*value));
          } else {
            pc.value = static_cast<int32_t>(*value);
          }
        }
      } else {
        missing(*m, "value");
      }
      with(*m, "preemptionPolicy", [&](const YAML::Node& n, const std::string& p) {
        if (auto s = one_of(n, p, {"PreemptLowerPriority", "Never"})) pc.preemption_policy = *s;
      });
      with(*m, "globalDefault", [&](const YAML::Node& n, const std::string& p) {
        auto b = boolean(n, p);
        if (!b || !*b) return;
        pc.global_default = true;
        if (global_default) {
          add(n, p,
              "only one priority class can be globalDefault; " + quote(global_default->key) +
                  " already is");
        } else {
          global_default = &f;
        }
      });
    }
    policy_.priority_classes.push_back(std::move(pc));
  }
}

}  // namespace gpuadmit::policy_reader
