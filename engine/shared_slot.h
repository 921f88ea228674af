#pragma once
// A shared_ptr that one thread replaces while others take copies of it: the webhook's policy and
// key pair, the PriorityClass watch's snapshot.
//
//   SharedSlot<const Policy> slot;
//   slot.store(std::make_shared<const Policy>(...));  // a reload
//   std::shared_ptr<const Policy> p = slot.load();    // a review: p stays valid whatever follows
//
// Instead of std::atomic<std::shared_ptr<T>>: libstdc++ 12 (Debian bookworm's g++) implements it
// with a lock bit inside its own atomic word that ThreadSanitizer cannot see, so TSan reported
// the reader's use of a key pair against the reload that dropped the old one (a certificate
// rotation under load, tests/webhook/reload_test.cpp) and the server died with halt_on_error.
// A mutex is a lock every tool understands; it is held only to copy or swap the pointer (one
// uncontended lock per review or handshake), and the old value is released outside it.

#include <memory>
#include <mutex>
#include <utility>

namespace gpuadmit {

template <typename T>
class SharedSlot {
 public:
  std::shared_ptr<T> load() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return value_;
  }
  void store(std::shared_ptr<T> value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      value_.swap(value);
    }
    // `value` now holds the old one: released here, after the lock, so that freeing a large
    // policy never blocks a review taking the new one.
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<T> value_;
};

}  // namespace gpuadmit
