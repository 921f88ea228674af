// Kubernetes quantities: any text parses or is refused; what parses prints to a string that
// parses back to an equal quantity, and simple arithmetic never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto q = gpuadmit::Quantity::parse(text);
  if (!q) return 0;
  const std::string printed = q->to_string();
  const auto again = gpuadmit::Quantity::parse(printed);
  if (!again || *again != *q) std::abort();
  (void)q->as_int64();
  (void)q->times(3);
  (void)q->plus(*q);
  return 0;
}
