#pragma once
// A value or the error that kept it from being made: the one shape of "value or error" in
// gpuadmit (for example PodView::make, webhook::Server::create). The subset of C++23's
// std::expected the project uses, spelled the same, so it can be swapped for it.
//
//   Expected<PodView> made = PodView::make(object, location);
//   if (!made) return Unexpected(made.error());   // or: made->containers()
//   return Unexpected<std::string>("spec: must be an object");

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace gpuadmit {

template <typename E>
class Unexpected {
 public:
  explicit Unexpected(E error) : error_(std::move(error)) {}
  E& error() & { return error_; }
  E&& error() && { return std::move(error_); }

 private:
  E error_;
};
template <typename E>
Unexpected(E) -> Unexpected<E>;

template <typename T, typename E = std::string>
class Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  template <typename G, typename = std::enable_if_t<std::is_constructible_v<E, G>>>
  Expected(Unexpected<G> unexpected)  // NOLINT: implicit, as std::expected's
      : state_(std::in_place_index<1>, E(std::move(unexpected).error())) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  // Only when has_value().
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // Only when !has_value().
  E& error() & { return std::get<1>(state_); }
  const E& error() const& { return std::get<1>(state_); }
  E&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, E> state_;
};

}  // namespace gpuadmit
