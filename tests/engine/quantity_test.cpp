// Table-driven tests for gpuadmit::Quantity. Most rows are taken from Kubernetes'
// staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go (named per table below), with
// the expected canonical strings worked out from CanonicalizeBytes / AsCanonicalBytes.

#include "engine/quantity.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace quantity_test {

using gpuadmit::Quantity;
using Format = Quantity::Format;

namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

Quantity q(const std::string& text) {
  auto parsed = Quantity::parse(text);
  INFO("parsing " << text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

const char* format_name(Format f) {
  switch (f) {
    case Format::kDecimalSI:
      return "DecimalSI";
    case Format::kBinarySI:
      return "BinarySI";
    case Format::kDecimalExponent:
      return "DecimalExponent";
  }
  return "?";
}

struct ParseCase {
  std::string input;
  std::string canonical;
  Format format;
};

// quantity_test.go TestQuantityParse `table`; canonical strings from CanonicalizeBytes.
const std::vector<ParseCase> kParseTable = {
    {"0", "0", Format::kDecimalSI},
    {"0n", "0", Format::kDecimalSI},
    {"0u", "0", Format::kDecimalSI},
    {"0m", "0", Format::kDecimalSI},
    {"0Ki", "0", Format::kBinarySI},
    {"0k", "0", Format::kDecimalSI},
    {"0Mi", "0", Format::kBinarySI},
    {"0M", "0", Format::kDecimalSI},
    {"0Gi", "0", Format::kBinarySI},
    {"0G", "0", Format::kDecimalSI},
    {"0Ti", "0", Format::kBinarySI},
    {"0T", "0", Format::kDecimalSI},
    // Quantity-less numbers are allowed.
    {"1", "1", Format::kDecimalSI},
    // Binary suffixes.
    {"1Ki", "1Ki", Format::kBinarySI},
    {"8Ki", "8Ki", Format::kBinarySI},
    {"7Mi", "7Mi", Format::kBinarySI},
    {"6Gi", "6Gi", Format::kBinarySI},
    {"5Ti", "5Ti", Format::kBinarySI},
    {"4Pi", "4Pi", Format::kBinarySI},
    {"3Ei", "3Ei", Format::kBinarySI},
    {"10Ti", "10Ti", Format::kBinarySI},
    {"100Ti", "100Ti", Format::kBinarySI},
    // Decimal suffixes.
    {"5n", "5n", Format::kDecimalSI},
    {"4u", "4u", Format::kDecimalSI},
    {"3m", "3m", Format::kDecimalSI},
    {"9", "9", Format::kDecimalSI},
    {"8k", "8k", Format::kDecimalSI},
    {"50k", "50k", Format::kDecimalSI},
    {"7M", "7M", Format::kDecimalSI},
    {"6G", "6G", Format::kDecimalSI},
    {"5T", "5T", Format::kDecimalSI},
    {"40T", "40T", Format::kDecimalSI},
    {"300T", "300T", Format::kDecimalSI},
    {"2P", "2P", Format::kDecimalSI},
    {"1E", "1E", Format::kDecimalSI},
    // Decimal exponents.
    {"1E-3", "1e-3", Format::kDecimalExponent},
    {"1e3", "1e3", Format::kDecimalExponent},
    {"1E6", "1e6", Format::kDecimalExponent},
    {"1e9", "1e9", Format::kDecimalExponent},
    {"1E12", "1e12", Format::kDecimalExponent},
    {"1e15", "1e15", Format::kDecimalExponent},
    {"1E18", "1e18", Format::kDecimalExponent},
    // Nonstandard but still parsable.
    {"1e14", "100e12", Format::kDecimalExponent},
    {"1e13", "10e12", Format::kDecimalExponent},
    {"100.035k", "100035", Format::kDecimalSI},
    // Things that look like floating point.
    {"0.001", "1m", Format::kDecimalSI},
    {"0.0005k", "500m", Format::kDecimalSI},
    {"0.005", "5m", Format::kDecimalSI},
    {"0.05", "50m", Format::kDecimalSI},
    {"0.5", "500m", Format::kDecimalSI},
    {"0.00050k", "500m", Format::kDecimalSI},
    {"0.00500", "5m", Format::kDecimalSI},
    {"0.05000", "50m", Format::kDecimalSI},
    {"0.50000", "500m", Format::kDecimalSI},
    {"0.5e0", "500e-3", Format::kDecimalExponent},
    {"0.5e-1", "50e-3", Format::kDecimalExponent},
    {"0.5e-2", "5e-3", Format::kDecimalExponent},
    {"10.035M", "10035k", Format::kDecimalSI},
    {"1.2e3", "1200", Format::kDecimalExponent},
    {"1.3E+6", "1300e3", Format::kDecimalExponent},
    {"1.40e9", "1400e6", Format::kDecimalExponent},
    {"1.53E12", "1530e9", Format::kDecimalExponent},
    {"1.6e15", "1600e12", Format::kDecimalExponent},
    {"1.7E18", "1700e15", Format::kDecimalExponent},
    {"9.01", "9010m", Format::kDecimalSI},
    {"8.1k", "8100", Format::kDecimalSI},
    {"7.123456M", "7123456", Format::kDecimalSI},
    {"6.987654321G", "6987654321", Format::kDecimalSI},
    {"5.444T", "5444G", Format::kDecimalSI},
    {"40.1T", "40100G", Format::kDecimalSI},
    {"300.2T", "300200G", Format::kDecimalSI},
    {"2.5P", "2500T", Format::kDecimalSI},
    {"1.01E", "1010P", Format::kDecimalSI},
    // Things that saturate/round: precision below 1n rounds the magnitude up.
    {"3.001n", "4n", Format::kDecimalSI},
    {"1.1E-9", "2e-9", Format::kDecimalExponent},
    {"0.0000000001", "1n", Format::kDecimalSI},
    {"0.0000000005", "1n", Format::kDecimalSI},
    {"0.00000000050", "1n", Format::kDecimalSI},
    {"0.5e-9", "1e-9", Format::kDecimalExponent},
    {"0.9n", "1n", Format::kDecimalSI},
    {"0.00000012345", "124n", Format::kDecimalSI},
    {"0.00000012354", "124n", Format::kDecimalSI},
    // Binary values are capped at 2^63-1 (ParseQuantity: maxAllowed).
    {"9Ei", "9223372036854775807", Format::kBinarySI},
    {"9223372036854775807Ki", "9223372036854775807", Format::kBinarySI},
    {"12E", "12E", Format::kDecimalSI},
    // Fractional binary values; not whole numbers, so they print as DecimalSI.
    {"100.035Ki", "102435840m", Format::kBinarySI},
    {"0.5Mi", "512Ki", Format::kBinarySI},
    {"0.05Gi", "53687091200m", Format::kBinarySI},
    {"0.025Ti", "27487790694400m", Format::kBinarySI},
    // "Things written by trolls".
    {"0.000000000001Ki", "2n", Format::kDecimalSI},  // rounds up, changes format
    {".001", "1m", Format::kDecimalSI},
    {".0001k", "100m", Format::kDecimalSI},
    {"1.", "1", Format::kDecimalSI},
    {"1.G", "1G", Format::kDecimalSI},
};

}  // namespace

TEST_CASE("quantity: the examples of Kubernetes' Quantity documentation") {
  // quantity.go's type comment ("1.5 will be serialized as \"1500m\"", "1.5Gi will be
  // serialized as \"1536Mi\"") and the resource-management docs (CPU "0.5" = "500m"; memory
  // "128974848", "129e6", "129M", "128974848000m", "123Mi").
  struct Case {
    std::string input;
    std::string canonical;
    Format format;
    int64_t value;
    int64_t milli;
  };
  const std::vector<Case> table = {
      {"3", "3", Format::kDecimalSI, 3, 3000},
      {"3000m", "3", Format::kDecimalSI, 3, 3000},
      {"3Ki", "3Ki", Format::kBinarySI, 3072, 3072000},
      {"1e3", "1e3", Format::kDecimalExponent, 1000, 1000000},
      {"0.5", "500m", Format::kDecimalSI, 1, 500},
      {"1500m", "1500m", Format::kDecimalSI, 2, 1500},
      {"1.5", "1500m", Format::kDecimalSI, 2, 1500},
      {"1.5Gi", "1536Mi", Format::kBinarySI, 1610612736, 1610612736000},
      {"128974848", "128974848", Format::kDecimalSI, 128974848, 128974848000},
      {"129e6", "129e6", Format::kDecimalExponent, 129000000, 129000000000},
      {"129M", "129M", Format::kDecimalSI, 129000000, 129000000000},
      {"128974848000m", "128974848", Format::kDecimalSI, 128974848, 128974848000},
      {"123Mi", "123Mi", Format::kBinarySI, 128974848, 128974848000},
  };
  for (const Case& c : table) {
    INFO(c.input);
    const Quantity x = q(c.input);
    CHECK(x.to_string() == c.canonical);
    CHECK(x.format() == c.format);
    CHECK(x.value() == c.value);
    CHECK(x.milli_value() == c.milli);
  }
  CHECK(q("3") == q("3000m"));
  CHECK(q("3Ki") == q("3072"));
  CHECK(q("1e3") == q("1k"));
  CHECK(q("0.5") == q("500m"));
  CHECK(q("1500m") > q("1"));
  CHECK(q("1500m") < q("2"));
  CHECK(q("123Mi") == q("128974848"));
  CHECK(q("129M") > q("123Mi"));
  // Garbage and overflow are rejected, never read as a prefix.
  for (const char* bad :
       {"", "3 Ki", "3KiB", "3k3", "three", "0.5.0", "1500mm", "0x1F", "1e2147483648", "1Ki1"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(Quantity::parse(bad).has_value());
  }
}

TEST_CASE("quantity: parses Kubernetes' TestQuantityParse table") {
  for (const auto& c : kParseTable) {
    INFO("input " << c.input);
    auto parsed = Quantity::parse(c.input);
    REQUIRE(parsed.has_value());
    CHECK(parsed->to_string() == c.canonical);
    CHECK(format_name(parsed->format()) == std::string(format_name(c.format)));
    // The canonical form parses back to the same value.
    auto reparsed = Quantity::parse(parsed->to_string());
    REQUIRE(reparsed.has_value());
    CHECK(*reparsed == *parsed);
  }
}

TEST_CASE("quantity: signs are applied to every TestQuantityParse row") {
  for (const auto& c : kParseTable) {
    INFO("input " << c.input);
    auto plus = Quantity::parse("+" + c.input);
    auto minus = Quantity::parse("-" + c.input);
    REQUIRE(plus.has_value());
    REQUIRE(minus.has_value());
    CHECK(plus->to_string() == c.canonical);
    CHECK(plus->format() == c.format);
    CHECK(minus->format() == c.format);
    if (c.canonical == "0") {
      CHECK(minus->to_string() == "0");  // never "-0"
    } else {
      CHECK(minus->to_string() == "-" + c.canonical);
      CHECK(minus->is_negative());
    }
  }
}

TEST_CASE("quantity: rejects what ParseQuantity rejects") {
  const std::vector<std::string> invalid = {
      // quantity_test.go TestQuantityParse `invalid`.
      "",
      "1.1.M",
      "1+1.0M",
      "0.1mi",
      "0.1am",
      "aoeu",
      ".5i",
      "1i",
      "-3.01i",
      "-3.01e-",
      "1e4294967297",
      " 1",
      "1 ",
      // TestQuantityParseNonNumericPanic.
      "Non-Numeric",
      // Suffixes are case-sensitive and exact.
      "1gi",
      "1KI",
      "1K",
      "1kb",
      "1Gb",
      "1b",
      "1Ki1",
      "1 Gi",
      // Malformed numbers and exponents.
      "abc",
      "1.2.3",
      "1..",
      "1.5.",
      "1,5",
      "0x10",
      "1_000",
      "--1",
      "+-1",
      "-+1",
      "1e",
      "1E+",
      "1ee3",
      "1e+-3",
      "1e3.5",
      "1e3Ki",
      "1e\xd9\xa1",
      "\xd9\xa1",
      "1\n",
      // Exponents outside [-MaxInt32, MaxInt32] (TestInterpretExponentInt32Bounds).
      "1e999999999999",
      "1E2147483648",
      "1E-2147483648",
      "1E9223372036854775808",
  };
  for (const auto& text : invalid) {
    INFO("input '" << text << "'");
    CHECK_FALSE(Quantity::parse(text).has_value());
  }
}

TEST_CASE("quantity: accepts the lenient forms parseQuantityString lets through") {
  // parseQuantityString strips the sign and leading zeros, treats an empty numerator as "0" and
  // accepts "1." / ".5" (TestParseQuantityString rows "." and "-."). The suffix is then
  // interpreted on its own, so a bare suffix is a zero quantity of that format.
  struct Case {
    std::string input;
    std::string canonical;
    Format format;
  };
  const std::vector<Case> cases = {
      {".", "0", Format::kDecimalSI},
      {"-.", "0", Format::kDecimalSI},
      {"+", "0", Format::kDecimalSI},
      {"-", "0", Format::kDecimalSI},
      {"-0", "0", Format::kDecimalSI},
      {"000", "0", Format::kDecimalSI},
      {"00", "0", Format::kDecimalSI},
      {"Gi", "0", Format::kBinarySI},
      {"m", "0", Format::kDecimalSI},
      {"e3", "0", Format::kDecimalExponent},
      {"0.0Ki", "0", Format::kBinarySI},
      {".5", "500m", Format::kDecimalSI},
      {"5.", "5", Format::kDecimalSI},
      {"-.5", "-500m", Format::kDecimalSI},
      {"007", "7", Format::kDecimalSI},
      {"+1", "1", Format::kDecimalSI},
      {"1e-0", "1", Format::kDecimalExponent},
      {"1e+03", "1e3", Format::kDecimalExponent},
      {"1e0003", "1e3", Format::kDecimalExponent},
  };
  for (const auto& c : cases) {
    INFO("input " << c.input);
    auto parsed = Quantity::parse(c.input);
    REQUIRE(parsed.has_value());
    CHECK(parsed->to_string() == c.canonical);
    CHECK(parsed->format() == c.format);
  }
}

TEST_CASE("quantity: canonical strings match TestQuantityString and TestQuantityParseEmit") {
  // quantity_test.go TestQuantityString: every expected string is its own canonical form, and
  // every `alternate` spelling canonicalises to it.
  struct Case {
    std::string expect;
    std::string alternate;
  };
  const std::vector<Case> table = {
      {"1Gi", "1024Mi"},
      {"300Mi", "307200Ki"},
      {"6Ki", ""},
      {"1001Gi", "1025024Mi"},
      {"1Ti", "1024Gi"},
      {"5", "5000m"},
      {"500m", "0.5"},
      {"1G", "1000M"},
      {"1G", "0.001T"},
      {"1G", "1000000k"},
      {"1G", "1000000000"},
      {"1m", "1000u"},
      {"80m", ""},
      {"1080m", "1.08"},
      {"1080m", "1080000000n"},
      {"1080m", "1.0800"},
      {"300M", ""},
      {"1T", ""},
      {"1E", ""},
      // DecimalSI has no suffix beyond E: current Kubernetes falls back to exponent notation
      // instead of printing "1000E" as "1".
      {"1e21", "1000E"},
      {"5e21", "5000E"},
      {"1e24", "1000000E"},
      {"10e69", ""},
      {"20e69", ""},
      {"1e72", ""},
      {"1234567M", ""},
      {"1234567m", ""},
      {"3k", ""},
      {"1025", ""},
      {"0", "00"},
      {"1e9", ".001e12"},
      {"1e-3", "0.001e0"},
      {"1e-9", "1000e-12"},
      {"80e-3", ""},
      {"300e6", ""},
      {"1e12", ""},
      {"1e3", ""},
      {"3e3", ""},
      {"1n", ""},
      {"80n", ""},
      {"1080n", ""},
      {"1080n", "1.08u"},
      {"1u", ""},
      {"80u", ""},
      {"1080u", ""},
      // quantity_test.go TestQuantityParseEmit.
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1Gi", "1Gi"},
      {"1G", "1000M"},
      {"1024m", ".001Ki"},
      {"1024u", ".000001Ki"},
      {"1024n", ".000000001Ki"},
      {"2n", ".000000000001Ki"},
      // The brief's examples.
      {"1", "1000m"},
      {"1500m", "1500m"},
      {"1500m", "1.5"},
      {"1k", "1000"},
      {"3Ki", "3Ki"},
      {"1Mi", "1024Ki"},
      {"512", "0.5Ki"},
      {"-1", "-1"},
      {"100m", "100m"},
      {"1536Mi", "1.5Gi"},
      {"12e6", "12e6"},
      {"1536", "1.5Ki"},
      {"2k", "2000"},
      {"1023", "1023"},
  };
  for (const auto& c : table) {
    INFO("expect " << c.expect << " alternate " << c.alternate);
    CHECK(q(c.expect).to_string() == c.expect);
    if (!c.alternate.empty()) {
      CHECK(q(c.alternate).to_string() == c.expect);
      CHECK(q(c.alternate) == q(c.expect));
    }
    if (c.expect != "0" && c.expect[0] != '-') {
      CHECK(q("-" + c.expect).to_string() == "-" + c.expect);
    }
  }
}

TEST_CASE("quantity: binary quantities past Ei print their exact decimal form") {
  // quantity_test.go TestBinarySIPastEiArithmeticRoundTrip: 1Ei × 1024 = 2^70.
  auto big = q("1Ei").times(1024);
  REQUIRE(big.has_value());
  CHECK(big->format() == Format::kBinarySI);
  CHECK(big->to_string() == "1180591620717411303424");
  CHECK(q(big->to_string()) == *big);
  // Still inside Ei: 1Ei × 1023.
  CHECK(q("1Ei").times(1023)->to_string() == "1023Ei");
  // TestBinarySIZeroExponentString: a binary value with no 1024 factor has no suffix.
  CHECK(q("2000Ki").times(1)->to_string() == "2000Ki");
  CHECK(q("1Ki").plus(q("976"))->to_string() == "2000");
  CHECK(q("-1Ki").plus(q("-976"))->to_string() == "-2000");
}

TEST_CASE("quantity: compares exactly, as TestQuantityCmp") {
  struct Case {
    std::string x, y;
    int expect;
  };
  const std::vector<Case> table = {
      {"0", "0", 0},
      {"100m", "50m", 1},
      {"50m", "100m", -1},
      {"10000T", "100Gi", 1},
      {"1", "1000m", 0},
      {"1Ki", "1024", 0},
      {"1e3", "1k", 0},
      {"0Ki", "0", 0},
      {"-1", "0", -1},
      {"-2", "-1", -1},
      {"-1000m", "-1", 0},
      {"1n", "0", 1},
      {"-1n", "0", -1},
      {"9010m", "9.01", 0},
      {"900m", "9.01", -1},
      {"1.5Gi", "1536Mi", 0},
      {"1G", "1Gi", -1},
      {"1e2147483647", "9Ei", 1},
      {"-1e2147483647", "-1", -1},
      {"1e-2147483647", "1n", 0},
      {"123456789012345678901234567890123456", "123456789012345678901234567890123457", -1},
      {"123456789012345678901234567890123456", "12345678901234567890123456789012345.6", 1},
      {"999999999999999999999999999999999999", "1e36", -1},
  };
  for (const auto& c : table) {
    INFO(c.x << " vs " << c.y);
    const Quantity x = q(c.x);
    const Quantity y = q(c.y);
    CHECK((x <=> y) == (c.expect <=> 0));
    CHECK((y <=> x) == (0 <=> c.expect));
    CHECK((x == y) == (c.expect == 0));
  }
}

TEST_CASE("quantity: value and milli_value round away from zero and saturate") {
  struct Case {
    std::string input;
    int64_t value;
    int64_t milli;
  };
  const std::vector<Case> table = {
      {"0", 0, 0},
      {"1", 1, 1000},
      {"1.5", 2, 1500},
      {"100m", 1, 100},
      {"1n", 1, 1},
      {"1.0001m", 1, 2},
      {"999m", 1, 999},
      {"1Ki", 1024, 1024000},
      {"1k", 1000, 1000000},
      {"9.01", 10, 9010},
      // Kubernetes' int64Amount path (math.go negativeScaleInt64) rounds away from zero.
      {"-1.5", -2, -1500},
      {"-1n", -1, -1},
      {"-9.01", -10, -9010},
      {"9223372036854775807", kInt64Max, kInt64Max},
      {"-9223372036854775808", kInt64Min, kInt64Min},
      {"9Ei", kInt64Max, kInt64Max},
      {"9223372036854775807m", 9223372036854776, kInt64Max},
      {"1e30", kInt64Max, kInt64Max},
      {"-1e30", kInt64Min, kInt64Min},
      {"1e2147483647", kInt64Max, kInt64Max},
      {"1e-2147483647", 1, 1},
  };
  for (const auto& c : table) {
    INFO("input " << c.input);
    CHECK(q(c.input).value() == c.value);
    CHECK(q(c.input).milli_value() == c.milli);
  }
}

TEST_CASE("quantity: is_integer and as_int64") {
  struct Case {
    std::string input;
    bool integer;
    std::optional<int64_t> as_int64;
  };
  const std::vector<Case> table = {
      {"0", true, 0},
      {"2", true, 2},
      {"2000m", true, 2},
      {"1k", true, 1000},
      {"1Ki", true, 1024},
      {"1e3", true, 1000},
      {"-7", true, -7},
      {"1.5", false, std::nullopt},
      {"500m", false, std::nullopt},
      {"1n", false, std::nullopt},
      {"9Ei", true, kInt64Max},
      {"9223372036854775807", true, kInt64Max},
      {"-9223372036854775808", true, kInt64Min},
      {"9223372036854775808", true, std::nullopt},
      {"1e19", true, std::nullopt},
      {"1e2147483647", true, std::nullopt},
  };
  for (const auto& c : table) {
    INFO("input " << c.input);
    CHECK(q(c.input).is_integer() == c.integer);
    CHECK(q(c.input).as_int64() == c.as_int64);
  }
}

TEST_CASE("quantity: from_int is DecimalSI") {
  CHECK(Quantity::from_int(0).to_string() == "0");
  CHECK(Quantity::from_int(0).is_zero());
  CHECK(Quantity().to_string() == "0");
  CHECK(Quantity().format() == Format::kDecimalSI);
  CHECK(Quantity::from_int(1000).to_string() == "1k");
  CHECK(Quantity::from_int(1024).to_string() == "1024");
  CHECK(Quantity::from_int(-5).to_string() == "-5");
  CHECK(Quantity::from_int(kInt64Min).to_string() == "-9223372036854775808");
  CHECK(Quantity::from_int(kInt64Max).as_int64() == kInt64Max);
  CHECK(Quantity::from_int(kInt64Min).as_int64() == kInt64Min);
  CHECK(Quantity::from_int(1000) == q("1k"));
  CHECK(Quantity::from_int(3).format() == Format::kDecimalSI);
}

TEST_CASE("quantity: times is exact and keeps the format") {
  struct Case {
    std::string input;
    int64_t factor;
    std::optional<std::string> expect;
  };
  const std::vector<Case> table = {
      {"500m", 3, "1500m"},
      {"500m", 2, "1"},
      {"1Gi", 2, "2Gi"},
      {"512Mi", 2, "1Gi"},
      {"1e3", 5, "5e3"},
      {"1", 0, "0"},
      {"1Ki", -1, "-1Ki"},
      {"1n", kInt64Max, "9223372036854775807n"},
      {"-1", kInt64Min, "9223372036854775808"},
      {"999999999999999999999999999999999999", 10, "9999999999999999999999999999999999990"},
      {"999999999999999999999999999999999999", 2, std::nullopt},
      {"123456789012345678901234567890", kInt64Max, std::nullopt},
      {"1e30", kInt64Max, "9223372036854775807e30"},
      {"1e2147483647", 10, std::nullopt},
  };
  for (const auto& c : table) {
    INFO(c.input << " × " << c.factor);
    auto product = q(c.input).times(c.factor);
    REQUIRE(product.has_value() == c.expect.has_value());
    if (product) {
      CHECK(product->to_string() == *c.expect);
      CHECK(product->format() == q(c.input).format());
    }
  }
}

TEST_CASE("quantity: plus is exact and takes the left format (Add)") {
  struct Case {
    std::string left, right;
    std::optional<std::string> expect;
    Format format;
  };
  const std::vector<Case> table = {
      {"100m", "1", "1100m", Format::kDecimalSI},
      {"1Gi", "512Mi", "1536Mi", Format::kBinarySI},
      {"1Ki", "1024", "2Ki", Format::kBinarySI},
      {"1024", "1Ki", "2048", Format::kDecimalSI},
      {"1", "-1", "0", Format::kDecimalSI},
      {"1e3", "1", "1001", Format::kDecimalExponent},
      {"-500m", "200m", "-300m", Format::kDecimalSI},
      // TestQuantityAddZeroPreservesSuffix: adding to zero takes the other operand's format.
      {"100m", "0", "100m", Format::kDecimalSI},
      {"0", "100m", "100m", Format::kDecimalSI},
      {"1Gi", "0", "1Gi", Format::kBinarySI},
      {"0", "1Gi", "1Gi", Format::kBinarySI},
      {"999999999999999999999999999999999999", "1", "1e36", Format::kDecimalSI},
      {"999999999999999999999999999999999999", "1n", std::nullopt, Format::kDecimalSI},
      {"1e2147483647", "1", std::nullopt, Format::kDecimalExponent},
      {"1e2147483647", "1e2147483647", "20e2147483646", Format::kDecimalExponent},
  };
  for (const auto& c : table) {
    INFO(c.left << " + " << c.right);
    auto sum = q(c.left).plus(q(c.right));
    REQUIRE(sum.has_value() == c.expect.has_value());
    if (sum) {
      CHECK(sum->to_string() == *c.expect);
      CHECK(sum->format() == c.format);
    }
  }
}

TEST_CASE("quantity: sub-nano precision rounds away from zero") {
  struct Case {
    std::string input, canonical;
  };
  const std::vector<Case> table = {
      {"0.1n", "1n"},
      {"-0.1n", "-1n"},
      {"-3.001n", "-4n"},
      {"1.0000000001", "1000000001n"},
      {"100.0000000001", "100000000001n"},
      {"999.9999999999", "1k"},
      {"1e-2147483647", "1e-9"},
      {"-1e-2147483647", "-1e-9"},
      {"0.00000000100", "1n"},
  };
  for (const auto& c : table) {
    INFO("input " << c.input);
    CHECK(q(c.input).to_string() == c.canonical);
  }
}

TEST_CASE("quantity: huge and hostile inputs never crash") {
  const std::string zeros(10000, '0');
  std::string noise;
  for (int i = 0; i < 10000; ++i) noise.push_back(static_cast<char>('1' + i % 9));

  // Representable: trailing zeros live in the exponent.
  CHECK(q("1" + zeros).to_string() == "10e9999");
  CHECK(q("1" + zeros + "E").to_string() == "10e10017");
  CHECK(q("0." + zeros + "1").to_string() == "1n");
  CHECK(q(zeros + "5").to_string() == "5");
  CHECK(q("1." + zeros).to_string() == "1");
  CHECK(q("1e2147483647").to_string() == "10e2147483646");
  CHECK(q("1e-2147483647").to_string() == "1e-9");
  CHECK(q("0.0000000000000000000000000001m").to_string() == "1n");
  CHECK(q(std::string(36, '9')).to_string() == std::string(36, '9'));

  // Beyond the 36-digit mantissa or the int32 exponent: rejected.
  CHECK_FALSE(Quantity::parse(noise).has_value());
  CHECK_FALSE(Quantity::parse(std::string(37, '9')).has_value());
  CHECK_FALSE(Quantity::parse("10e2147483647").has_value());
  CHECK_FALSE(Quantity::parse("1" + zeros + "e2147483647").has_value());
  CHECK_FALSE(Quantity::parse("1e" + noise).has_value());
  CHECK_FALSE(Quantity::parse(std::string(10000, '.')).has_value());
  CHECK_FALSE(Quantity::parse(std::string(10000, 'e')).has_value());

  // Binary quantities are capped at 2^63-1 however long they are.
  CHECK(q(noise + "Ki").to_string() == "9223372036854775807");
  CHECK(q("-" + noise + "Ei").to_string() == "-9223372036854775807");
  CHECK(q("1" + zeros + "Ki").value() == kInt64Max);
  CHECK(q(std::string(37, '9') + "Ki").as_int64() == kInt64Max);
  CHECK(q("8Ei").to_string() == "9223372036854775807");
  CHECK(q("7Ei").to_string() == "7Ei");
}
}  // namespace quantity_test
