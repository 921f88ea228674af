#pragma once
// A view over one pod spec of a workload: its containers (init containers, restartable sidecars
// and ephemeral containers included), its metadata and the workload settings (SPEC §2).
// Built only after the spec's shape was checked, so accessors never meet a wrong JSON type.
//
//   Expected<PodView> view = PodView::make(object, location);   // or an error message
//   for (const ContainerRef& c : view->containers()) view->container(c)["resources"] ...

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/expected.h"
#include "engine/json.h"
#include "engine/workload.h"

namespace gpuadmit {

// Mutators never get a writable PodView: they get a PodWriter (engine/pod_writer.h), which
// writes only the members of the mutation contract and reads through a const PodView.

// The pod spec's container lists, in Kubernetes order.
inline constexpr std::string_view kContainerLists[] = {"initContainers", "containers",
                                                       "ephemeralContainers"};

enum class ContainerKind { kInit, kApp, kEphemeral };  // in kContainerLists order
// The name of a container kind's list: "initContainers", "containers", "ephemeralContainers".
inline std::string_view container_list(ContainerKind kind) {
  return kContainerLists[static_cast<std::size_t>(kind)];
}

struct ContainerRef {
  ContainerKind kind = ContainerKind::kApp;
  size_t index = 0;          // index in its list
  std::string name;          // "" when the container has no name
  bool restartable = false;  // an init container with restartPolicy: Always (a sidecar, KEP-753)
  std::string path;          // dotted: "spec.template.spec.initContainers[0]"
};

class PodView {
 public:
  // Checks the shape SPEC §7.1 asks gpuadmit to interpret (containers are lists of objects with
  // object `resources` whose requests/limits are objects; tolerations a list of objects;
  // nodeSelector a string map; affinity an object; metadata annotations/labels string maps).
  // Returns the view, or a message saying what is malformed and where.
  static Expected<PodView> make(const Json& object, const PodSpecLocation& location);

  const PodSpecLocation& location() const { return *location_; }
  bool is_template() const { return location_->is_template; }

  // Points the view at a copy of its object (containers are kept by index, so they still hold).
  void retarget(const Json& copy) {
    object_ = &copy;
    spec_ = nullptr;
  }

  const Json& object() const { return *object_; }
  // Resolved once, then kept until forget_spec_address(): a member added beside the spec moves
  // it in memory (PodWriter adds only metadata, and says so), nothing else does — what sits
  // deeper in the object is behind its own allocation.
  const Json& spec() const {
    if (spec_ == nullptr) {
      spec_ = find_pointer(*object_, location_->spec);
      // make() found it, and mutators only add beside it; were it gone, at() throws as ever.
      if (spec_ == nullptr) spec_ = &object_->at(location_->spec);
    }
    return *spec_;
  }
  void forget_spec_address() const { spec_ = nullptr; }

  // Containers in Kubernetes order: init containers, then app containers, then ephemeral ones.
  const std::vector<ContainerRef>& containers() const { return containers_; }
  const Json& container(const ContainerRef& ref) const;

  // The pod (template) metadata, or null when absent.
  const Json* metadata() const;

  // A workload setting (SPEC §2): the pod (template) annotation, else its label, else the
  // top-level object's annotation, else its label. Annotations win over labels.
  std::optional<std::string> setting(std::string_view key) const;

 private:
  PodView(const Json& object, const PodSpecLocation& location);
  const Json* object_;
  const PodSpecLocation* location_;
  std::vector<ContainerRef> containers_;
  mutable const Json* spec_ = nullptr;
};

}  // namespace gpuadmit
