#pragma once
// A cluster's PriorityClasses for tests of the engine, mutators and rules: what the webhook's
// watch (kube/priority_class_watch.h) would have read.

#include <string_view>
#include <utility>
#include <vector>

#include "engine/priority_classes.h"

namespace gpuadmit::testing {

class FakePriorityClasses final : public PriorityClassSource {
 public:
  explicit FakePriorityClasses(std::vector<ClusterPriorityClass> classes, bool synced = true)
      : classes_(std::move(classes)), synced_(synced) {}
  std::optional<ClusterPriorityClass> find(std::string_view name) const override {
    for (const ClusterPriorityClass& c : classes_) {
      if (c.name == name) return c;
    }
    return std::nullopt;
  }
  std::optional<ClusterPriorityClass> global_default() const override {
    return lowest_global_default(classes_);
  }
  bool synced() const override { return synced_; }

 private:
  std::vector<ClusterPriorityClass> classes_;
  bool synced_;
};

}  // namespace gpuadmit::testing
