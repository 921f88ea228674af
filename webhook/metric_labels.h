#pragma once
// Metric label values taken from reviews, mapped onto a closed set: a review's kind or operation
// is client text, and as a label value each distinct one would be a series kept for the life of
// the process (400 reviews with distinct 1 MB kinds once made one scrape 800 MB).
//
//   metrics.requests.add({"mutate", operation_label(op), kind_label(kind), "allowed"});

#include <string_view>

namespace gpuadmit::webhook {

// CREATE, UPDATE, DELETE, CONNECT; "" when absent; "other" for anything else.
std::string_view operation_label(std::string_view operation);
// A kind of the engine's table (engine/workload_kinds.h); "" when absent; "other" for anything
// else (a policy's own workload kinds included).
std::string_view kind_label(std::string_view kind);

}  // namespace gpuadmit::webhook
