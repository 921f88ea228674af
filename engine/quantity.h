#pragma once
// Kubernetes resource.Quantity: parsing, exact comparison, arithmetic and canonical printing,
// mirroring k8s.io/apimachinery/pkg/api/resource (quantity.go, amount.go, suffix.go).
//
//   auto q = Quantity::parse("1500m");   // q->to_string() == "1500m", q->milli_value() == 1500
//   Quantity::parse("3Ki")->to_string() == "3Ki";  Quantity::parse("abc") == std::nullopt

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuadmit {

class Quantity {
 public:
  // How the quantity prints, as Kubernetes' resource.Format.
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Parses a Kubernetes quantity string ("1", "500m", "1.5Gi", "1e3", "+2", "-1k").
  // Returns nullopt for anything ParseQuantity rejects (garbage, empty, bad suffix, values too
  // large to represent). Precision below 1n is rounded up as ParseQuantity does.
  static std::optional<Quantity> parse(std::string_view text);

  // Whole-number constructor (DecimalSI).
  static Quantity from_int(int64_t value);

  // The canonical string, exactly as Kubernetes' Quantity.CanonicalizeBytes() builds it
  // ("0.5" -> "500m", "1.5Gi" -> "1536Mi", "1000" -> "1k"). Kubernetes' String() differs only for
  // a parsed value whose input it judged already canonical: it then returns the input verbatim,
  // quirks included ("+1", "1E3", "1.500"), where this prints "1", "1e3", "1500m".
  std::string to_string() const;

  Format format() const { return format_; }
  bool is_zero() const;
  bool is_negative() const;
  // True when the value is a whole number (no fractional part): "2", "2000m", "1k".
  bool is_integer() const;
  // The exact value when it is a whole number that fits in int64.
  std::optional<int64_t> as_int64() const;
  // Kubernetes' Value(): rounded up to the nearest integer away from zero, so -1.5 gives -2
  // (math.go negativeScaleInt64); saturates at the int64 bounds where Kubernetes overflows.
  int64_t value() const;
  // Kubernetes' MilliValue(): value × 1000, rounded and saturated like value().
  int64_t milli_value() const;

  // Exact multiplication by a whole number; nullopt on overflow. Keeps the format.
  std::optional<Quantity> times(int64_t factor) const;
  // Exact sum; nullopt on overflow. Format of the left operand (as Kubernetes' Add).
  std::optional<Quantity> plus(const Quantity& other) const;

  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b);
  friend bool operator==(const Quantity& a, const Quantity& b) { return (a <=> b) == 0; }

 private:
  // value = mantissa_ × 10^exponent_ (exact). Normalised so that mantissa_ has no trailing
  // decimal zeros unless it is zero (then exponent_ == 0).
  __int128 mantissa_ = 0;
  int32_t exponent_ = 0;
  Format format_ = Format::kDecimalSI;

  // The value × 10^shift, rounded away from zero, saturating at the int64 bounds.
  int64_t scaled_value(int shift) const;
};

}  // namespace gpuadmit
