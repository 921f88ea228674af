#pragma once
// Gives the allocator's free memory back to the operating system, after a burst (a large review,
// a flood of connections) has ended: what is freed otherwise stays in the allocator's caches and
// the process's RSS stays at its peak.

namespace gpuadmit::webhook {

// The calling thread's free memory: mimalloc's mi_collect(true) when mimalloc is the process's
// allocator (cmake/allocator.cmake), else glibc's malloc_trim(0). Takes well under a millisecond
// when there is little to return; call it when a thread goes idle, not per request.
void return_free_memory();

}  // namespace gpuadmit::webhook
