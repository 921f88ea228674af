#include "webhook/metric_labels.h"

#include <array>

namespace gpuadmit::webhook {
namespace {

constexpr std::string_view kOther = "other";

template <std::size_t N>
std::string_view closed(std::string_view value, const std::array<std::string_view, N>& known) {
  if (value.empty()) return value;
  for (const std::string_view k : known) {
    if (k == value) return k;
  }
  return kOther;
}

}  // namespace

std::string_view operation_label(std::string_view operation) {
  static constexpr std::array<std::string_view, 4> kOperations = {"CREATE", "UPDATE", "DELETE",
                                                                  "CONNECT"};
  return closed(operation, kOperations);
}

std::string_view kind_label(std::string_view kind) {
  // engine/workload.cc's builtin_kinds() and kKubeflowKinds.
  static constexpr std::array<std::string_view, 19> kKinds = {"Pod",
                                                              "ReplicationController",
                                                              "Deployment",
                                                              "ReplicaSet",
                                                              "StatefulSet",
                                                              "DaemonSet",
                                                              "Job",
                                                              "CronJob",
                                                              "JobSet",
                                                              "RayCluster",
                                                              "RayJob",
                                                              "RayService",
                                                              "LeaderWorkerSet",
                                                              "TFJob",
                                                              "PyTorchJob",
                                                              "MPIJob",
                                                              "XGBoostJob",
                                                              "PaddleJob",
                                                              "MXJob"};
  return closed(kind, kKinds);
}

}  // namespace gpuadmit::webhook
