#include "webhook/memory_return.h"

#include <malloc.h>

#include <mutex>

// The webhook library does not link mimalloc; the gpuadmit binary does when it is installed
// (cmake/allocator.cmake), and then mimalloc's malloc is the process's. Its functions are
// referenced weakly: null when mimalloc is not linked in (tests, a glibc build).
#if __has_include(<mimalloc.h>)
#include <mimalloc.h>
#pragma weak mi_collect
#pragma weak mi_option_get
#pragma weak mi_option_set
#define GPUADMIT_HAVE_MIMALLOC_H 1
#endif

// Under ASan and TSan the sanitizer's allocator is the process's malloc and glibc's is never
// initialised: malloc_trim would initialise it from whichever worker calls first, racing another
// worker (a crash in mtrim, or glibc's "a->attached_threads > 0" assertion when the thread exits).
// The sanitizer's own purge is the equivalent there, where its runtime has one (clang's ASan and
// TSan, gcc's ASan; not gcc 12's TSan): declared weak, as gcc ships no header for it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUADMIT_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GPUADMIT_SANITIZER_ALLOCATOR 1
#endif
#endif
#ifdef GPUADMIT_SANITIZER_ALLOCATOR
extern "C" void __sanitizer_purge_allocator() __attribute__((weak));
#endif

namespace gpuadmit::webhook {
namespace {

// mimalloc's decommit delay is a process-wide option: both functions change it, one at a time.
std::mutex delay_mutex;
bool prompt = false;
long normal_delay = -1;  // the delay mimalloc started with, read once

#ifdef GPUADMIT_HAVE_MIMALLOC_H
bool have_mimalloc() {
  return &mi_collect != nullptr && &mi_option_get != nullptr && &mi_option_set != nullptr;
}

// Under delay_mutex.
void set_delay(long delay) {
  if (normal_delay < 0) normal_delay = mi_option_get(mi_option_decommit_delay);
  mi_option_set(mi_option_decommit_delay, delay);
}
#endif

}  // namespace

void return_free_memory() {
#ifdef GPUADMIT_HAVE_MIMALLOC_H
  if (have_mimalloc()) {
    // mimalloc 2.0 (Debian's libmimalloc2.0) decommits a page it frees only after
    // decommit_delay, and then only when the thread allocates again: a thread that goes idle
    // keeps the pages it freed last. With the delay at 0 while it collects, the pages the
    // collection frees are decommitted at once (tests/attack: 55 → 18 MiB after 1,100
    // connections closed); during normal work the delay saves a madvise per freed page.
    std::lock_guard<std::mutex> lock(delay_mutex);
    set_delay(0);
    mi_collect(true);
    set_delay(prompt ? 0 : normal_delay);
    return;
  }
#endif
#ifdef GPUADMIT_SANITIZER_ALLOCATOR
  if (&__sanitizer_purge_allocator != nullptr) __sanitizer_purge_allocator();
#else
  malloc_trim(0);
#endif
}

void set_prompt_memory_return(bool on) {
#ifdef GPUADMIT_HAVE_MIMALLOC_H
  if (!have_mimalloc()) return;
  std::lock_guard<std::mutex> lock(delay_mutex);
  if (on == prompt) return;
  prompt = on;
  set_delay(on ? 0 : normal_delay);
#else
  (void)on;
#endif
}

}  // namespace gpuadmit::webhook
