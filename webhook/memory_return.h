#pragma once
// Gives the allocator's free memory back to the operating system, after a burst (a large review,
// a flood of connections) has ended: what is freed otherwise stays in the allocator's caches and
// the process's RSS stays at its peak.

namespace gpuadmit::webhook {

// The calling thread's free memory: mimalloc's mi_collect(true) when mimalloc is the process's
// allocator (cmake/allocator.cmake), the sanitizer's purge under ASan or TSan, else glibc's
// malloc_trim(0). Takes well under a millisecond when there is little to return; call it when a
// thread goes idle, not per request.
void return_free_memory();

// While `on` (the connection pool: while any of its memory budget is in use), pages mimalloc
// frees go back to the OS at once instead of after its decommit delay: the memory of a large
// review is then gone when its budget is given back, so RSS follows the budget (a burst of 8
// large reviews: peak 178 → 140 MiB, and 79 → 16 MiB after it; a page freed with the delay
// pending is not returned even by mi_collect). Without mimalloc it does nothing.
void set_prompt_memory_return(bool on);

}  // namespace gpuadmit::webhook
