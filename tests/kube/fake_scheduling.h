#pragma once
// The scheduling.k8s.io side of a simulated API server, for the tests of kube/'s PriorityClass
// watch and of `serve --cluster-priority-classes`: a PriorityClassList answer, then watch
// events the test queues, one JSON object a line over a chunked answer, as apimachinery's watch
// stream sends them over HTTP/1.1. The same for another collection (the Node watch's
// /api/v1/nodes, a NodeList): its path and list kind given to the constructor; a `limit` query
// is answered page by page with `continue` tokens, as the API server pages a list.

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "engine/json.h"
#include "tests/kube/test_api_server.h"

namespace gpuadmit::testing {

using namespace std::chrono_literals;

inline const std::string kPriorityClassesPath = "/apis/scheduling.k8s.io/v1/priorityclasses";

// A PriorityClass as the API server returns it (scheduling.k8s.io/v1, defaulted).
inline Json priority_class(const std::string& name, int value, bool global_default = false,
                           const std::string& preemption = "PreemptLowerPriority",
                           const std::string& rv = "1") {
  return Json{{"apiVersion", "scheduling.k8s.io/v1"},
              {"kind", "PriorityClass"},
              {"metadata", {{"name", name}, {"resourceVersion", rv}, {"uid", "u-" + name}}},
              {"value", value},
              {"globalDefault", global_default},
              {"preemptionPolicy", preemption}};
}

// The API server's side: a list answer, then watch events the test queues, one a line.
class FakeScheduling {
 public:
  explicit FakeScheduling(const std::string& dir, std::string path = kPriorityClassesPath,
                          std::string list_kind = "PriorityClassList",
                          std::string api_version = "scheduling.k8s.io/v1")
      : path_(std::move(path)),
        list_kind_(std::move(list_kind)),
        api_version_(std::move(api_version)),
        server_(dir,
                [this](const httplib::Request& req, httplib::Response& res) { answer(req, res); }) {
  }
  ~FakeScheduling() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    server_.stop();
  }

  int port() const { return server_.port(); }
  std::string ca_path() const { return server_.ca_path(); }

  void set_list(std::vector<Json> items, const std::string& rv) {
    std::lock_guard<std::mutex> lock(mutex_);
    items_ = std::move(items);
    list_rv_ = rv;
  }
  void refuse_lists(int status, std::string body) {
    std::lock_guard<std::mutex> lock(mutex_);
    list_status_ = status;
    list_body_ = std::move(body);
  }
  // An event on the open watch ("ADDED", object), or the end of that watch's answer.
  void send(const std::string& type, const Json& object) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(Json{{"type", type}, {"object", object}}.dump() + "\n");
    }
    wake_.notify_all();
  }
  void end_watch() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back("");
    }
    wake_.notify_all();
  }
  std::vector<std::string> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }
  std::size_t open_watches() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return open_watches_;
  }

 private:
  void answer(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string target = req.path;
    if (!req.params.empty()) {
      target += "?";
      for (const char* key : {"limit", "continue", "watch", "resourceVersion",
                              "allowWatchBookmarks", "timeoutSeconds"}) {
        if (req.has_param(key)) target += std::string(key) + "=" + req.get_param_value(key) + "&";
      }
      target.pop_back();
    }
    requests_.push_back(target);
    if (req.path != path_) {
      res.status = 404;
      return;
    }
    if (!req.has_param("watch")) {
      if (list_status_ != 200) {
        res.status = list_status_;
        res.set_content(list_body_, "application/json");
        return;
      }
      // Pages of `limit` items; the continue token is the index of the next item.
      std::size_t from = 0, count = items_.size();
      if (req.has_param("continue")) from = std::stoul(req.get_param_value("continue"));
      if (req.has_param("limit")) count = std::stoul(req.get_param_value("limit"));
      const std::size_t to = std::min(items_.size(), from + count);
      Json metadata = {{"resourceVersion", list_rv_}};
      if (to < items_.size()) metadata["continue"] = std::to_string(to);
      res.set_content(Json{{"apiVersion", api_version_},
                           {"kind", list_kind_},
                           {"metadata", metadata},
                           {"items", std::vector<Json>(items_.begin() + static_cast<long>(from),
                                                       items_.begin() + static_cast<long>(to))}}
                          .dump(),
                      "application/json");
      return;
    }
    ++open_watches_;
    res.set_chunked_content_provider(
        "application/json", [this](size_t, httplib::DataSink& sink) { return stream(sink); });
  }

  // Called again by cpp-httplib until it returns false or says done.
  bool stream(httplib::DataSink& sink) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait_for(lock, 50ms, [this] { return stopping_ || !events_.empty(); });
    if (stopping_ || !sink.is_writable()) {
      --open_watches_;
      return false;
    }
    while (!events_.empty()) {
      const std::string line = events_.front();
      events_.pop_front();
      if (line.empty()) {
        --open_watches_;
        sink.done();
        return true;
      }
      sink.write(line.data(), line.size());
    }
    return true;
  }

  const std::string path_, list_kind_, api_version_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<Json> items_;
  std::string list_rv_ = "100";
  int list_status_ = 200;
  std::string list_body_;
  std::deque<std::string> events_;
  std::vector<std::string> requests_;
  std::size_t open_watches_ = 0;
  TestApiServer server_;  // last: stopped before the members its handler reads go
};

}  // namespace gpuadmit::testing
