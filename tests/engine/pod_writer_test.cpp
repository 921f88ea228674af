// The mutation contract as a type (engine/pod_writer.h): what a PodWriter writes, exactly, and
// that it offers no way to write anything else (tests/contract/ shows such writes not compiling).

#include <catch2/catch.hpp>

#include <concepts>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "engine/mutator.h"
#include "engine/pod_writer.h"
#include "tests/support/fixtures.h"

namespace gpuadmit {
namespace pod_writer_test {
namespace {

// Writes through what a mutator is given, whole: none exists.
template <typename W>
concept WritesWholeSpec = requires(W& w) {
  { w.view().spec() } -> std::same_as<Json&>;
};
template <typename W>
concept WritesWholeContainer = requires(W& w, const ContainerRef& ref) {
  { w.view().container(ref) } -> std::same_as<Json&>;
};
template <typename W>
concept WritesWholeObject = requires(W& w) {
  { w.view().object() } -> std::same_as<Json&>;
};
template <typename W>
concept WritesSpecMemberByName = requires(W& w) {
  w.spec(std::string_view("runtimeClassName"));
};
static_assert(!WritesWholeSpec<PodWriter>);
static_assert(!WritesWholeContainer<PodWriter>);
static_assert(!WritesWholeObject<PodWriter>);
static_assert(!WritesSpecMemberByName<PodWriter>);
// The concepts can hold: something that hands out writable JSON where the writer hands out const.
struct WritableViewHolder {
  struct View {
    Json& spec();
    Json& container(const ContainerRef&);
    Json& object();
  };
  View& view();
};
static_assert(WritesWholeSpec<WritableViewHolder> && WritesWholeContainer<WritableViewHolder> &&
              WritesWholeObject<WritableViewHolder>);
static_assert(std::is_same_v<decltype(&Mutator::mutate),
                             MutationOutcome (Mutator::*)(PodWriter&, PodContext&) const>);

TEST_CASE("pod writer: each write, its result and the object after it") {
  static const PolicyPtr policy = testing::amd_gpu_policy();
  struct Case {
    std::string name;
    std::string spec;  // the Pod's spec
    std::function<bool(PodWriter&)> write;
    bool changed;
    std::string after;  // the whole Pod, compact
  };
  const ContainerRef first{ContainerKind::kApp, 0, "a", false, "spec.containers[0]"};
  const std::vector<Case> cases = {
      {"an absent list is created", R"({"containers":[{"name":"a"}]})",
       [](PodWriter& w) { return w.spec(SpecMember::kTolerations).array() != nullptr; }, true,
       R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a"}],"tolerations":[]}})"},
      {"a null object is replaced", R"({"affinity":null,"containers":[]})",
       [](PodWriter& w) { return w.spec(SpecMember::kAffinity).object() != nullptr; }, true,
       R"({"apiVersion":"v1","kind":"Pod","spec":{"affinity":{},"containers":[]}})"},
      {"a member of another type is left alone", R"({"priorityClassName":"x"})",
       [](PodWriter& w) { return w.spec(SpecMember::kPriorityClassName).object() != nullptr; },
       false, R"({"apiVersion":"v1","kind":"Pod","spec":{"priorityClassName":"x"}})"},
      {"set: an equal value is no change", R"({"priority":5})",
       [](PodWriter& w) { return w.spec(SpecMember::kPriority).set(5); }, false,
       R"({"apiVersion":"v1","kind":"Pod","spec":{"priority":5}})"},
      {"set: a new value", R"({"priority":5})",
       [](PodWriter& w) { return w.spec(SpecMember::kPreemptionPolicy).set("Never"); }, true,
       R"({"apiVersion":"v1","kind":"Pod","spec":{"priority":5,"preemptionPolicy":"Never"}})"},
      {"erase: present, then absent", R"({"affinity":{},"priority":1})",
       [](PodWriter& w) {
         return w.spec(SpecMember::kAffinity).erase() && !w.spec(SpecMember::kAffinity).erase();
       },
       true, R"({"apiVersion":"v1","kind":"Pod","spec":{"priority":1}})"},
      {"a container's env, found and appended to", R"({"containers":[{"name":"a","env":[]}]})",
       [&](PodWriter& w) {
         w.container(first, ContainerMember::kEnv).find()->push_back(1);
         return w.container(first, ContainerMember::kResources).find() != nullptr;
       },
       false, R"({"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"a","env":[1]}]}})"},
      {"an annotation creates the metadata", R"({})",
       [](PodWriter& w) { return w.set_annotation("k", "v") && !w.set_annotation("k", "v"); }, true,
       R"({"apiVersion":"v1","kind":"Pod","spec":{},"metadata":{"annotations":{"k":"v"}}})"},
      {"the queue labels, on the Pod's metadata", R"({})",
       [&](PodWriter& w) { return w.queue_labels(*policy, "") != nullptr; }, true,
       R"({"apiVersion":"v1","kind":"Pod","spec":{},"metadata":{"labels":{}}})"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","spec":)" + c.spec + "}");
    const std::vector<PodSpecLocation> locations = find_pod_specs(pod, *policy);
    REQUIRE(locations.size() == 1);
    auto made = PodView::make(pod, locations[0]);
    REQUIRE(made.has_value());
    PodWriter writer(*made, pod);
    CHECK(c.write(writer) == c.changed);
    CHECK(pod.dump() == c.after);
  }
}

}  // namespace
}  // namespace pod_writer_test
}  // namespace gpuadmit
