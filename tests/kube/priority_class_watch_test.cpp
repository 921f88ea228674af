// kube/priority_class_watch.h against a simulated API server: the list, the watch stream
// (apimachinery's newline-delimited events over a chunked HTTP/1.1 answer), a 410 that makes it
// list again, failures that leave the last classes answering, and a stop that does not wait for
// the watch to end.

#include "kube/priority_class_watch.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "tests/kube/fake_scheduling.h"

namespace priority_class_watch_test {

using gpuadmit::ClusterPriorityClass;
using gpuadmit::Json;
using namespace gpuadmit::kube;
using gpuadmit::testing::FakeScheduling;
using gpuadmit::testing::kPriorityClassesPath;
using gpuadmit::testing::priority_class;
using gpuadmit::testing::TempDir;
using namespace std::chrono_literals;

namespace {

struct Fixture {
  TempDir dir;
  FakeScheduling api{dir.path()};
  PriorityClassWatchConfig config;
  std::mutex mutex;
  std::vector<std::string> errors;

  Fixture() {
    std::ofstream(dir.path() + "/token") << "token-one\n";
    config.access.host = "127.0.0.1";
    config.access.port = api.port();
    config.access.ca_path = api.ca_path();
    config.access.token_path = dir.path() + "/token";
    config.timeout = 2000ms;
    config.watch_timeout = 300s;
    config.retry_min = 20ms;
    config.retry_max = 100ms;
    config.on_error = [this](const std::string& e) {
      std::lock_guard<std::mutex> lock(mutex);
      errors.push_back(e);
    };
  }
  std::vector<std::string> logged() {
    std::lock_guard<std::mutex> lock(mutex);
    return errors;
  }
};

// Waits (bounded: a loaded CI machine) for `done`.
template <typename F>
bool eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

std::string watch_from(const std::string& rv) {
  return kPriorityClassesPath + "?watch=true&resourceVersion=" + rv +
         "&allowWatchBookmarks=true&timeoutSeconds=300";
}

}  // namespace

TEST_CASE("priority class watch: listed, then every watch event applied in order") {
  Fixture f;
  f.api.set_list(
      {priority_class("gpu-training", 10000, false, "PreemptLowerPriority", "7"),
       priority_class("standard", 100, true, "Never", "8"),
       priority_class("system-cluster-critical", 2000000000, false, "PreemptLowerPriority", "2")},
      "100");
  PriorityClassWatch watch(f.config);
  REQUIRE(eventually([&] { return watch.synced() && f.api.open_watches() == 1; }));
  CHECK(watch.find("gpu-training")->value == 10000);
  CHECK(watch.find("standard")->preemption_policy == "Never");
  CHECK_FALSE(watch.find("gpu-batch").has_value());
  REQUIRE(watch.global_default().has_value());
  CHECK(watch.global_default()->name == "standard");
  const std::uint64_t listed = watch.version();

  // The class recreated at another value, one added as a second (lower) default, one deleted.
  f.api.send("MODIFIED",
             priority_class("gpu-training", 15000, false, "PreemptLowerPriority", "101"));
  f.api.send("ADDED", priority_class("low-default", 5, true, "PreemptLowerPriority", "102"));
  f.api.send("DELETED", priority_class("system-cluster-critical", 2000000000, false,
                                       "PreemptLowerPriority", "103"));
  f.api.send("BOOKMARK", Json{{"kind", "PriorityClass"},
                              {"apiVersion", "scheduling.k8s.io/v1"},
                              {"metadata", {{"resourceVersion", "150"}}}});
  REQUIRE(eventually([&] { return !watch.find("system-cluster-critical").has_value(); }));
  CHECK(watch.find("gpu-training")->value == 15000);
  CHECK(watch.global_default()->name == "low-default");  // the lowest-valued default
  CHECK(watch.version() > listed);
  CHECK(watch.counts().events == 3);
  CHECK(watch.counts().classes == 3);

  // The server ends the watch (its timeoutSeconds): watched again from the last version seen.
  f.api.end_watch();
  REQUIRE(eventually([&] { return f.api.requests().size() == 3; }));
  CHECK(f.api.requests() ==
        std::vector<std::string>{kPriorityClassesPath, watch_from("100"), watch_from("150")});
  CHECK(watch.counts().lists == 1);
  CHECK(f.logged().empty());
}

TEST_CASE("priority class watch: an expired version (410) lists again") {
  Fixture f;
  f.api.set_list({priority_class("a", 1)}, "100");
  PriorityClassWatch watch(f.config);
  REQUIRE(eventually([&] { return f.api.open_watches() == 1; }));
  f.api.set_list({priority_class("b", 2)}, "500");
  // metav1.Status of code 410, as the watch cache sends when the version has been compacted.
  f.api.send("ERROR", Json{{"kind", "Status"},
                           {"apiVersion", "v1"},
                           {"status", "Failure"},
                           {"message", "too old resource version: 100 (400)"},
                           {"reason", "Expired"},
                           {"code", 410}});
  REQUIRE(eventually([&] { return watch.find("b").has_value(); }));
  CHECK_FALSE(watch.find("a").has_value());
  REQUIRE(eventually([&] { return f.api.requests().size() >= 4; }));
  const std::vector<std::string> requests = f.api.requests();
  CHECK(std::vector<std::string>(requests.begin(), requests.begin() + 4) ==
        std::vector<std::string>{kPriorityClassesPath, watch_from("100"), kPriorityClassesPath,
                                 watch_from("500")});
  CHECK(f.logged().empty());  // expected: not an error
}

TEST_CASE("priority class watch: not synced while the list is refused, then synced") {
  Fixture f;
  f.api.refuse_lists(403, Json{{"kind", "Status"},
                               {"apiVersion", "v1"},
                               {"status", "Failure"},
                               {"message",
                                "priorityclasses.scheduling.k8s.io is forbidden: User "
                                "\"system:serviceaccount:gpuadmit:gpuadmit\" cannot list resource "
                                "\"priorityclasses\" in API group \"scheduling.k8s.io\" at the "
                                "cluster scope"},
                               {"reason", "Forbidden"},
                               {"code", 403}}
                              .dump());
  f.api.set_list({priority_class("a", 1, true)}, "9");
  PriorityClassWatch watch(f.config);
  REQUIRE(eventually([&] { return f.logged().size() >= 2; }));  // retried after a pause
  CHECK_FALSE(watch.synced());
  CHECK_FALSE(watch.find("a").has_value());
  CHECK_FALSE(watch.global_default().has_value());
  CHECK(f.logged().front() ==
        "the API server answered 403 (Forbidden): priorityclasses.scheduling.k8s.io is "
        "forbidden: User \"system:serviceaccount:gpuadmit:gpuadmit\" cannot list resource "
        "\"priorityclasses\" in API group \"scheduling.k8s.io\" at the cluster scope for GET " +
            kPriorityClassesPath);
  f.api.refuse_lists(200, "");
  REQUIRE(eventually([&] { return watch.synced(); }));
  CHECK(watch.global_default()->name == "a");
  std::string metrics;
  watch.render_metrics(metrics);
  CHECK(metrics.find("gpuadmit_priority_classes_synced 1\n") != std::string::npos);
  CHECK(metrics.find("gpuadmit_priority_classes 1\n") != std::string::npos);
  CHECK(metrics.find("gpuadmit_priority_class_watch_errors_total " +
                     std::to_string(watch.counts().errors) + "\n") != std::string::npos);
}

TEST_CASE("priority class watch: a stop does not wait for the open watch to end") {
  Fixture f;
  f.api.set_list({priority_class("a", 1)}, "1");
  const auto start = std::chrono::steady_clock::now();
  {
    PriorityClassWatch watch(f.config);
    REQUIRE(eventually([&] { return f.api.open_watches() == 1; }));
  }
  CHECK(std::chrono::steady_clock::now() - start < 5s);  // the watch would last 300 s
}

TEST_CASE("priority class watch: objects as the API defaults them") {
  Json object = priority_class("x", -10);
  object.erase("preemptionPolicy");
  object.erase("globalDefault");
  const auto c = parse_priority_class(object);
  REQUIRE(c.has_value());
  CHECK(c->name == "x");
  CHECK(c->value == -10);
  CHECK(c->preemption_policy == "PreemptLowerPriority");
  CHECK_FALSE(c->global_default);
  object["value"] = 3000000000LL;  // not an int32
  CHECK_FALSE(parse_priority_class(object).has_value());
  CHECK_FALSE(parse_priority_class(Json{{"value", 1}}).has_value());
}
}  // namespace priority_class_watch_test
