// base64_encode (engine/admission.h), the AdmissionReview's `patch` encoding: RFC 4648 §10's
// test vectors, and every byte value.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/admission.h"

namespace base64_test {

TEST_CASE("base64_encode: RFC 4648 test vectors and all byte values") {
  const std::vector<std::pair<std::string, std::string>> vectors = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
      {std::string("\0\xff\xfe", 3), "AP/+"},
      {R"([{"op":"add","path":"/a~1b","value":1}])",
       "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2F+MWIiLCJ2YWx1ZSI6MX1d"},
  };
  for (const auto& [in, out] : vectors) {
    INFO(in);
    CHECK(gpuadmit::base64_encode(in) == out);
  }
  std::string all;
  for (int c = 0; c < 256; ++c) all += static_cast<char>(c);
  CHECK(
      gpuadmit::base64_encode(all) ==
      "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNE"
      "RUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJ"
      "iouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3O"
      "z9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==");
}
}  // namespace base64_test
