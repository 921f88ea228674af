#include "webhook/memory_return.h"

#include <malloc.h>

// Declared weak: the webhook library does not link mimalloc; the gpuadmit binary does (and then
// mimalloc's malloc is the process's). Null when mimalloc is not linked in.
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace gpuadmit::webhook {

void return_free_memory() {
  if (mi_collect != nullptr) {
    mi_collect(true);
  } else {
    malloc_trim(0);
  }
}

}  // namespace gpuadmit::webhook
