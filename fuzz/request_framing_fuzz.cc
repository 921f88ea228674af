// The buffered bytes of a connection: request framing and the review fast path's parser. Both
// must stay inside the bytes they are given, and agree: a request the fast path takes is one the
// framing hands on whole (within its header limits), with the same size, its body within
// max_body and after the framing's header block.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "webhook/request_framing.h"
#include "webhook/review_fast_path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A heap copy of exactly `size` bytes: ASan sees any read past the end.
  const std::string copy(reinterpret_cast<const char*>(data), size);
  const std::string_view bytes(copy);
  using Action = gpuadmit::webhook::RequestFraming::Action;
  for (const std::size_t max_body : {std::size_t{16}, std::size_t{3} << 20}) {
    const auto framing = gpuadmit::webhook::frame_request(bytes, max_body);
    if (framing.action == Action::kReady && (framing.size == 0 || framing.size > size))
      std::abort();
    if (framing.action == Action::kContinue && framing.expect_at >= size) std::abort();
    if (framing.action == Action::kRefuse && framing.status < 400) std::abort();
    if (framing.action == Action::kReady &&
        (framing.header_size == 0 || framing.header_size > framing.size)) {
      std::abort();
    }
    const auto review = gpuadmit::webhook::plain_review(bytes, framing);
    if (!review) continue;
    if (review->size > size || review->body.size() > max_body) std::abort();
    if (framing.action != Action::kReady || framing.size != review->size) std::abort();
    if (review->body.data() != bytes.data() + framing.header_size) std::abort();
  }
  return 0;
}
