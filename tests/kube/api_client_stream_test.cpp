// kube/api_client.h's stream() and cancel_stream(): a cancel ends the stream whenever it comes,
// before the connection is open too. cpp-httplib's stop() only shuts a socket that is open, so
// a cancel in the moment between stream()'s start and its connect was lost once, and a watch
// (and the process stopping it) waited out its five-minute timeout.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <thread>

#include "kube/api_client.h"
#include "tests/kube/fake_scheduling.h"

namespace gpuadmit::kube {
namespace api_client_stream_test {
namespace {

using namespace std::chrono_literals;
using testing::FakeScheduling;
using testing::kPriorityClassesPath;
using testing::TempDir;

}  // namespace

TEST_CASE("kube stream: a cancel ends the stream at any moment, before it connects too") {
  TempDir dir;
  FakeScheduling server(dir.path());
  const ApiClient api(ApiEndpoint{"127.0.0.1", server.port(), server.ca_path(), 2000ms});
  const std::string watch = kPriorityClassesPath + "?watch=true&resourceVersion=1";
  int late = 0;
  // The cancel comes 0 to 1 ms after the stream starts, in steps of 5 µs: some before the TCP
  // connection is open, some during the TLS handshake, some while the watch waits for events.
  for (int i = 0; i < 200; ++i) {
    auto streaming = std::async(std::launch::async, [&] {
      return api.stream(watch, "token", 300s, [](std::string_view) { return true; });
    });
    const auto cancel_at = std::chrono::steady_clock::now() + std::chrono::microseconds(5 * i);
    while (std::chrono::steady_clock::now() < cancel_at) {
    }
    api.cancel_stream();
    if (streaming.wait_for(10s) != std::future_status::ready) {
      ++late;
      api.cancel_stream();  // the socket is open by now: this one ends it
    }
    const ApiResponse r = streaming.get();
    CHECK(r.error == "cancelled");
  }
  CHECK(late == 0);
}

TEST_CASE("kube stream: a cancel with no stream in progress ends the next one at once") {
  TempDir dir;
  FakeScheduling server(dir.path());
  const ApiClient api(ApiEndpoint{"127.0.0.1", server.port(), server.ca_path(), 2000ms});
  api.cancel_stream();
  const auto start = std::chrono::steady_clock::now();
  const ApiResponse r = api.stream(kPriorityClassesPath + "?watch=true", "token", 300s,
                                   [](std::string_view) { return true; });
  CHECK(r.error == "cancelled");
  CHECK(r.status == 0);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(server.requests().empty());
}

}  // namespace api_client_stream_test
}  // namespace gpuadmit::kube
