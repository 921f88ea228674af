// A class's price (docs/fleet.md, "Cost"): `price: {perGPUHour, currency}` read exactly, and
// every error `policy check` reports for it, with its location.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "policies/loader.h"
#include "tests/support/policy_errors.h"

namespace gpuadmit {
namespace price_policy_test {

using testing::policy_errors;
using testing::replaced;
using Errors = testing::PolicyErrors;
namespace {

constexpr const char* kPolicy = R"YAML(apiVersion: gpuadmit.io/v1alpha1
kind: GPUPolicy
metadata:
  name: prices
spec:
  classes:
    h100:
      price: {perGPUHour: 3.67, currency: USD}
    l4:
      price: {perGPUHour: "0.8", currency: USD}
    t4: {}
)YAML";

}  // namespace

TEST_CASE("policy: class prices are read exactly, in millionths", "[policy][price]") {
  PolicyLoadResult loaded = load_policy(kPolicy, "p.yaml");
  REQUIRE(loaded.ok());
  const Policy& p = *loaded.policy;
  REQUIRE(p.classes[0].price.has_value());
  CHECK(p.classes[0].price->micros_per_gpu_hour == 3'670'000);
  CHECK(p.classes[0].price->currency == "USD");
  CHECK(p.classes[1].price->micros_per_gpu_hour == 800'000);  // a quoted decimal reads the same
  CHECK_FALSE(p.classes[2].price.has_value());
  struct Case {
    const char* written;
    int64_t micros;
  };
  for (const Case& c : {Case{"0", 0}, Case{"12", 12'000'000}, Case{"0.000001", 1},
                        Case{"1000000000", 1'000'000'000'000'000}}) {
    PolicyLoadResult r = load_policy(replaced(kPolicy, "3.67", c.written), "p.yaml");
    INFO(c.written);
    REQUIRE(r.ok());
    CHECK(r.policy->classes[0].price->micros_per_gpu_hour == c.micros);
  }
}

TEST_CASE("policy: price errors", "[policy][price]") {
  const std::string bad_price =
      ": must be a decimal number of at most 10^9 with at most 6 digits after the point, e.g. "
      "3.67 (p.yaml:8:27)";
  for (const char* written : {"-1", "1e3", "3.", ".5", "3.1234567", "1000000001", "abc"}) {
    INFO(written);
    CHECK(policy_errors(replaced(kPolicy, "3.67", written)) ==
          Errors{"spec.classes.h100.price.perGPUHour: invalid price \"" + std::string(written) +
                 "\"" + bad_price});
  }
  CHECK(policy_errors(replaced(kPolicy, "currency: USD}\n    l4", "currency: usd}\n    l4")) ==
        Errors{"spec.classes.h100.price.currency: invalid currency \"usd\": must be an ISO 4217 "
               "code, e.g. USD or EUR (p.yaml:8:43)"});
  CHECK(policy_errors(replaced(kPolicy, "\"0.8\", currency: USD", "\"0.8\", currency: EUR")) ==
        Errors{"spec.classes.l4.price.currency: class l4 is priced in EUR, class h100 in USD: "
               "price every class in one currency (p.yaml:10:44)"});
  CHECK(
      policy_errors(replaced(kPolicy, "{perGPUHour: 3.67, currency: USD}", "{perGPUHour: 3.67}")) ==
      Errors{"spec.classes.h100.price.currency: required field is missing (p.yaml:8:14)"});
}

}  // namespace price_policy_test
}  // namespace gpuadmit
