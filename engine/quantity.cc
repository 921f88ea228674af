// Kubernetes resource.Quantity in exact fixed-point form.
//
// Reference: k8s.io/apimachinery/pkg/api/resource
//   quantity.go  parseQuantityString, ParseQuantity, CanonicalizeBytes, Cmp, Add, Mul, ScaledValue
//   suffix.go    newSuffixer / interpret / constructBytes
//   amount.go    int64Amount / infDecAmount AsCanonicalBytes, AsCanonicalBase1024Bytes
//   math.go      negativeScaleInt64 (rounding away from zero)
//
// Kubernetes keeps arbitrary precision (inf.Dec); we keep value = mantissa × 10^exponent with an
// __int128 mantissa and an int32 exponent. The representable range is therefore
//   |mantissa| < 10^36 (kMantissaLimit) after trailing decimal zeros are moved to the exponent,
//   exponent in [INT32_MIN, INT32_MAX],
// which covers every quantity a pod spec can sensibly carry (36 significant digits at nano
// resolution is 10^27). Anything Kubernetes accepts beyond that is rejected with nullopt.

#include "engine/quantity.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <limits>
#include <string>

namespace gpuadmit {
namespace {

using i128 = __int128;

// Exclusive bound on |mantissa_|; 10^36 × 100 (the most AsCanonicalBytes ever multiplies by) is
// still below the __int128 maximum (~1.7 × 10^38).
constexpr int kMantissaDigits = 36;
// The nano scale (10^-9) every parsed value is rounded up to (quantity.go: ParseQuantity).
constexpr int64_t kNanoExponent = -9;
// Binary quantities are capped at 2^63-1 by ParseQuantity (quantity.go: maxAllowed).
constexpr int64_t kMaxAllowed = std::numeric_limits<int64_t>::max();

constexpr i128 pow10_i128(int n) {
  i128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

const i128 kMantissaLimit = pow10_i128(kMantissaDigits);

// 10^n for 0 <= n <= 38.
i128 pow10(int n) {
  static const auto table = [] {
    struct T {
      i128 v[39];
    } t{};
    for (int i = 0; i <= 38; ++i) t.v[i] = pow10_i128(i);
    return t;
  }();
  return table.v[n];
}

i128 abs128(i128 v) { return v < 0 ? -v : v; }

// Number of decimal digits of |v| (0 for zero).
int digit_count(i128 v) {
  v = abs128(v);
  int n = 0;
  while (v != 0) {
    v /= 10;
    ++n;
  }
  return n;
}

std::string i128_to_string(i128 v) {
  if (v == 0) return "0";
  bool negative = v < 0;
  // Work on the negative value so that no magnitude can overflow.
  if (!negative) v = -v;
  std::string out;
  while (v != 0) {
    out.push_back(static_cast<char>('0' - static_cast<int>(v % 10)));
    v /= 10;
  }
  if (negative) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Multiplies a decimal digit string in place by a small factor.
void multiply_digits(std::string& digits, uint32_t factor) {
  uint64_t carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    uint64_t v = static_cast<uint64_t>(digits[i] - '0') * factor + carry;
    digits[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  std::string prefix;
  while (carry != 0) {
    prefix.push_back(static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  std::reverse(prefix.begin(), prefix.end());
  digits.insert(0, prefix);
}

// Divides a decimal digit string in place by a small divisor, returning the remainder.
uint32_t divide_digits(std::string& digits, uint32_t divisor) {
  uint64_t rem = 0;
  std::string out;
  for (char c : digits) {
    rem = rem * 10 + static_cast<uint64_t>(c - '0');
    out.push_back(static_cast<char>('0' + rem / divisor));
    rem %= divisor;
  }
  size_t first = out.find_first_not_of('0');
  digits = first == std::string::npos ? std::string() : out.substr(first);
  return static_cast<uint32_t>(rem);
}

// Moves trailing decimal zeros of `m` into `e` and checks the representable range.
bool normalize(i128& m, int64_t& e) {
  if (m == 0) {
    e = 0;
    return true;
  }
  while (m % 10 == 0) {
    m /= 10;
    ++e;
  }
  return abs128(m) < kMantissaLimit && e >= std::numeric_limits<int32_t>::min() &&
         e <= std::numeric_limits<int32_t>::max();
}

// Result of suffix.go's interpret(): base 10 or 2, exponent, and the format it implies.
struct Suffix {
  int base;
  int32_t exponent;
  Quantity::Format format;
};

// suffix.go: fastLookup.interpret / suffixHandler.interpret. Suffixes are case-sensitive
// ("1gi", "0.1mi" are rejected, quantity_test.go TestQuantityParse `invalid`). The decimal
// exponent is Go's strconv.ParseInt of everything after the e/E; like current Kubernetes
// (TestInterpretExponentInt32Bounds) anything outside [-MaxInt32, MaxInt32] is rejected
// instead of being truncated to int32.
std::optional<Suffix> interpret_suffix(std::string_view s) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view text;
    int base;
    int32_t exponent;
    F format;
  };
  static constexpr Entry kTable[] = {
      {"", 10, 0, F::kDecimalSI},   {"n", 10, -9, F::kDecimalSI}, {"u", 10, -6, F::kDecimalSI},
      {"m", 10, -3, F::kDecimalSI}, {"k", 10, 3, F::kDecimalSI},  {"M", 10, 6, F::kDecimalSI},
      {"G", 10, 9, F::kDecimalSI},  {"T", 10, 12, F::kDecimalSI}, {"P", 10, 15, F::kDecimalSI},
      {"E", 10, 18, F::kDecimalSI}, {"Ki", 2, 10, F::kBinarySI},  {"Mi", 2, 20, F::kBinarySI},
      {"Gi", 2, 30, F::kBinarySI},  {"Ti", 2, 40, F::kBinarySI},  {"Pi", 2, 50, F::kBinarySI},
      {"Ei", 2, 60, F::kBinarySI},
  };
  for (const Entry& entry : kTable) {
    if (entry.text == s) return Suffix{entry.base, entry.exponent, entry.format};
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return std::nullopt;
  std::string_view rest = s.substr(1);
  bool negative = false;
  if (rest[0] == '+' || rest[0] == '-') {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return std::nullopt;
  int64_t value = 0;
  for (char c : rest) {
    if (!is_digit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > std::numeric_limits<int32_t>::max()) return std::nullopt;
  }
  return Suffix{10, static_cast<int32_t>(negative ? -value : value), F::kDecimalExponent};
}

// The pieces quantity.go's parseQuantityString splits a quantity into.
struct Lexed {
  bool positive = true;
  std::string_view num;    // integer digits without leading zeros (may be empty)
  std::string_view denom;  // fraction digits (may be empty)
  std::string_view suffix;
};

// A line-by-line port of parseQuantityString, which is deliberately more permissive than the
// documented grammar: "+", "-", "." and "-." all scan as zero, "1." and ".5" are numbers, and the
// suffix only has to look like [eEinumkKMGTP]*[-+]?[0-9]* here (interpret_suffix checks it).
std::optional<Lexed> lex(std::string_view str) {
  Lexed out;
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end) {
    if (str[0] == '-') {
      out.positive = false;
      ++pos;
    } else if (str[0] == '+') {
      ++pos;
    }
  }
  while (pos < end && str[pos] == '0') ++pos;
  if (pos >= end) return out;  // all zeros (or just a sign): the value is 0
  size_t num_start = pos;
  while (pos < end && is_digit(str[pos])) ++pos;
  out.num = str.substr(num_start, pos - num_start);
  if (pos >= end) return out;
  if (str[pos] == '.') {
    ++pos;
    size_t denom_start = pos;
    while (pos < end && is_digit(str[pos])) ++pos;
    out.denom = str.substr(denom_start, pos - denom_start);
    if (pos >= end) return out;
  }
  const size_t suffix_start = pos;
  constexpr std::string_view kSuffixChars = "eEinumkKMGTP";
  while (pos < end && kSuffixChars.find(str[pos]) != std::string_view::npos) ++pos;
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && is_digit(str[pos])) ++pos;
  if (pos < end) return std::nullopt;  // ErrFormatWrong
  out.suffix = str.substr(suffix_start);
  return out;
}

// Rounds the non-zero magnitude digits × 10^exponent to whole nanos, as ParseQuantity does:
// amount.Round(amount, Nano.infScale(), inf.RoundUp) on the absolute value, so any non-zero digit
// below 1n rounds the magnitude up (away from zero): "0.1n" -> "1n", "-3.001n" -> "-4n". Leading
// zeros go; true when the caller must add 1 to the digits' value (then trailing zeros stay).
bool round_to_nano(std::string& digits, int64_t& exponent) {
  bool round_up = false;
  if (exponent < kNanoExponent) {
    const uint64_t drop = static_cast<uint64_t>(kNanoExponent - exponent);
    const size_t keep = drop >= digits.size() ? 0 : digits.size() - static_cast<size_t>(drop);
    round_up = digits.find_first_not_of('0', keep) != std::string::npos;
    digits.resize(keep);
    exponent = kNanoExponent;
  }
  const size_t first = digits.find_first_not_of('0');
  digits.erase(0, first == std::string::npos ? digits.size() : first);
  if (!round_up) {
    // Trailing zeros move into the exponent before the length check so "1" + 10k zeros fits.
    size_t last = digits.find_last_not_of('0');
    size_t zeros = digits.size() - (last + 1);
    digits.resize(last + 1);
    exponent += static_cast<int64_t>(zeros);
  }
  return round_up;
}

// ParseQuantity: "The max is just a simple cap" -- binary values above 2^63-1 become 2^63-1
// ("9Ei" -> 9223372036854775807). Any value too long for the mantissa (!fits) is far above the
// cap.
void cap_binary(i128& mantissa, int64_t& exponent, bool& fits) {
  bool above = !fits || exponent + digit_count(mantissa) > 19;
  if (!above) {
    above = exponent >= 0 ? mantissa * pow10(static_cast<int>(exponent)) > kMaxAllowed
                          : mantissa > i128{kMaxAllowed} * pow10(static_cast<int>(-exponent));
  }
  if (above) {
    mantissa = kMaxAllowed;
    exponent = 0;
    fits = true;
  }
}

}  // namespace

std::optional<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::optional<Lexed> lexed = lex(text);
  if (!lexed) return std::nullopt;
  std::optional<Suffix> suffix = interpret_suffix(lexed->suffix);
  if (!suffix) return std::nullopt;

  Quantity q;
  q.format_ = suffix->format;

  // The magnitude as a digit string and a base-10 exponent: value = digits × 10^exponent. The
  // digit string is only as long as the input, so even a 10k-digit number is linear work.
  std::string digits;
  digits.reserve(lexed->num.size() + lexed->denom.size() + 20);
  digits.append(lexed->num);
  digits.append(lexed->denom);
  int64_t exponent = -static_cast<int64_t>(lexed->denom.size());
  if (suffix->base == 10) {
    exponent += suffix->exponent;
  } else {
    // 2^(10k) = 1024^k; ParseQuantity multiplies the unscaled value by the power of two.
    for (int32_t i = 0; i < suffix->exponent / 10; ++i) multiply_digits(digits, 1024);
  }
  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return q;  // zero keeps its suffix's format ("0Ki" is BinarySI)
  digits.erase(0, first);

  const bool round_up = round_to_nano(digits, exponent);

  i128 mantissa = 0;
  bool fits = digits.size() <= static_cast<size_t>(kMantissaDigits);
  if (fits) {
    for (char c : digits) mantissa = mantissa * 10 + (c - '0');
    if (round_up) mantissa += 1;
    fits = normalize(mantissa, exponent);
  }

  if (q.format_ == Format::kBinarySI) {
    cap_binary(mantissa, exponent, fits);
    // ParseQuantity: a binary value in (0, 1) becomes DecimalSI "to avoid rounding".
    if (exponent < 0 && digit_count(mantissa) + exponent <= 0) q.format_ = Format::kDecimalSI;
  }
  if (!fits) return std::nullopt;

  q.mantissa_ = lexed->positive ? mantissa : -mantissa;
  q.exponent_ = static_cast<int32_t>(exponent);
  return q;
}

Quantity Quantity::from_int(int64_t value) {
  Quantity q;
  i128 m = value;
  int64_t e = 0;
  normalize(m, e);  // an int64 always fits
  q.mantissa_ = m;
  q.exponent_ = static_cast<int32_t>(e);
  return q;
}

bool Quantity::is_zero() const { return mantissa_ == 0; }

bool Quantity::is_negative() const { return mantissa_ < 0; }

bool Quantity::is_integer() const { return mantissa_ == 0 || exponent_ >= 0; }

std::optional<int64_t> Quantity::as_int64() const {
  if (!is_integer()) return std::nullopt;
  if (mantissa_ == 0) return 0;
  if (digit_count(mantissa_) + static_cast<int64_t>(exponent_) > 19) return std::nullopt;
  i128 v = mantissa_ * pow10(exponent_);
  if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

// quantity.go ScaledValue / math.go negativeScaleInt64: the value × 10^shift, rounded away from
// zero when inexact. Kubernetes silently overflows int64 here; we saturate instead.
int64_t Quantity::scaled_value(int shift) const {
  if (mantissa_ == 0) return 0;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t t = static_cast<int64_t>(exponent_) + shift;
  i128 v;
  if (t >= 0) {
    if (digit_count(mantissa_) + t > 19) return mantissa_ > 0 ? kMax : kMin;
    v = mantissa_ * pow10(static_cast<int>(t));
  } else if (-t > 38) {
    v = mantissa_ > 0 ? 1 : -1;  // |value| < 1: rounds away from zero to ±1
  } else {
    const i128 divisor = pow10(static_cast<int>(-t));
    v = mantissa_ / divisor;
    if (mantissa_ % divisor != 0) v += mantissa_ > 0 ? 1 : -1;
  }
  if (v > kMax) return kMax;
  if (v < kMin) return kMin;
  return static_cast<int64_t>(v);
}

int64_t Quantity::value() const { return scaled_value(0); }

int64_t Quantity::milli_value() const { return scaled_value(3); }

std::optional<Quantity> Quantity::times(int64_t factor) const {
  i128 m;
  if (__builtin_mul_overflow(mantissa_, static_cast<i128>(factor), &m)) return std::nullopt;
  int64_t e = exponent_;
  if (!normalize(m, e)) return std::nullopt;
  Quantity q;
  q.mantissa_ = m;
  q.exponent_ = static_cast<int32_t>(e);
  q.format_ = format_;
  return q;
}

std::optional<Quantity> Quantity::plus(const Quantity& other) const {
  // quantity.go Add: "If the current value is zero, the format of the quantity will be updated
  // to the format of y" (TestQuantityAddZeroPreservesSuffix: 0 + 1Gi prints "1Gi").
  if (is_zero()) return other;
  if (other.is_zero()) return *this;
  const Quantity& hi = exponent_ >= other.exponent_ ? *this : other;
  const Quantity& lo = exponent_ >= other.exponent_ ? other : *this;
  const int64_t diff = static_cast<int64_t>(hi.exponent_) - lo.exponent_;
  i128 scaled;
  if (diff > 38 || __builtin_mul_overflow(hi.mantissa_, pow10(static_cast<int>(diff)), &scaled)) {
    return std::nullopt;
  }
  i128 m;
  if (__builtin_add_overflow(scaled, lo.mantissa_, &m)) return std::nullopt;
  int64_t e = lo.exponent_;
  if (!normalize(m, e)) return std::nullopt;
  Quantity q;
  q.mantissa_ = m;
  q.exponent_ = static_cast<int32_t>(e);
  q.format_ = format_;
  return q;
}

std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
  const int sa = a.mantissa_ > 0 ? 1 : (a.mantissa_ < 0 ? -1 : 0);
  const int sb = b.mantissa_ > 0 ? 1 : (b.mantissa_ < 0 ? -1 : 0);
  if (sa != sb || sa == 0) return sa <=> sb;
  // Same non-zero sign: compare magnitudes by the position of the leading digit first, so no
  // scaling can overflow; only equal positions are aligned (at most 36 digits apart).
  const int64_t top_a = digit_count(a.mantissa_) + static_cast<int64_t>(a.exponent_);
  const int64_t top_b = digit_count(b.mantissa_) + static_cast<int64_t>(b.exponent_);
  std::strong_ordering magnitude = std::strong_ordering::equal;
  if (top_a != top_b) {
    magnitude = top_a <=> top_b;
  } else {
    i128 ma = abs128(a.mantissa_);
    i128 mb = abs128(b.mantissa_);
    if (a.exponent_ > b.exponent_) ma *= pow10(a.exponent_ - b.exponent_);
    if (b.exponent_ > a.exponent_) mb *= pow10(b.exponent_ - a.exponent_);
    magnitude = ma <=> mb;
  }
  return sa > 0 ? magnitude : 0 <=> magnitude;
}

namespace {

// amount.go AsCanonicalBytes: trailing zeros already live in the exponent; then the exponent is
// lowered to a multiple of 3 (Go's % truncates, so -1 goes to -3: "1.5" -> "1500", -3).
std::string decimal_exponent_form(i128 mantissa, int64_t exponent, bool si) {
  while (exponent % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  std::string number = i128_to_string(mantissa);
  if (si) {
    // suffix.go decSuffixes. Beyond E or below n DecimalSI has no suffix; like current Kubernetes
    // (TestQuantityString "1e21", TestQuantityStringBelowNano "1e-12") we fall back to exponent
    // notation rather than drop the magnitude (older releases printed "1000E" as "1").
    static constexpr std::string_view kSi[] = {"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
    if (exponent >= -9 && exponent <= 18) return number.append(kSi[(exponent + 9) / 3]);
  }
  if (exponent == 0) return number;
  return number.append("e").append(std::to_string(exponent));
}

}  // namespace

std::string Quantity::to_string() const {
  // quantity.go CanonicalizeBytes.
  if (mantissa_ == 0) return "0";
  if (format_ == Format::kDecimalExponent) {
    return decimal_exponent_form(mantissa_, exponent_, /*si=*/false);
  }
  if (format_ == Format::kDecimalSI || exponent_ < 0 ||
      (*this > from_int(-1024) && *this < from_int(1024))) {
    // BinarySI values in (-1024, 1024) or with a fractional part print as DecimalSI.
    return decimal_exponent_form(mantissa_, exponent_, /*si=*/true);
  }
  // amount.go AsCanonicalBase1024Bytes: strip whole factors of 1024. value = m × 2^e × 5^e, so
  // the count of 1024s is known without building the (possibly huge) integer.
  static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (exponent_ <= 18 && abs128(mantissa_) <= i128{std::numeric_limits<int64_t>::max()} /
                                                  pow10(static_cast<int>(exponent_))) {
    // The value fits in 64 bits (any memory a pod asks for): its trailing zero bits are the
    // factors of 2, at most 63, so at most 6 whole factors of 1024 — the same digits as below.
    const auto value =
        static_cast<uint64_t>(abs128(mantissa_) * pow10(static_cast<int>(exponent_)));
    const int power = std::countr_zero(value) / 10;
    std::string out = mantissa_ < 0 ? "-" : "";
    return out.append(std::to_string(value >> (10 * power))).append(kBinary[power]);
  }
  int twos = 0;
  for (i128 m = abs128(mantissa_); m % 2 == 0 && twos < 100; m /= 2) ++twos;
  const int64_t power = (static_cast<int64_t>(twos) + exponent_) / 10;
  if (power > 6) {
    // Past "Ei" there is no binary suffix; current Kubernetes falls back to the exact decimal
    // form (TestQuantityString: 10^70 BinarySI -> "10e69", TestBinarySIPastEiArithmeticRoundTrip:
    // 2^70 -> "1180591620717411303424").
    return decimal_exponent_form(mantissa_, exponent_, /*si=*/false);
  }
  // Here exponent_ < 70, so the integer has at most ~106 digits.
  std::string digits = i128_to_string(abs128(mantissa_));
  digits.append(static_cast<size_t>(exponent_), '0');
  for (int64_t i = 0; i < power; ++i) divide_digits(digits, 1024);
  std::string out = mantissa_ < 0 ? "-" : "";
  return out.append(digits).append(kBinary[power]);
}

}  // namespace gpuadmit
