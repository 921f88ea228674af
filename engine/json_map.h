#pragma once
// The object type of gpuadmit's Json: nlohmann::ordered_map (a vector of key/value pairs in
// insertion order, the same interface and the same behaviour), except that the element is
// std::pair<Key, T> instead of std::pair<const Key, T>.
//
// Why: the const key makes the element's move constructor a (throwing) copy, so each time
// ordered_map's vector grows — a mutator adding `affinity` to a pod spec, `requests` to a
// container, an annotation to metadata — std::vector copies every sibling subtree instead of
// moving it. With a movable element, growing moves pointers. Iteration order, lookup, equality
// and erase (which keeps the order of the remaining keys) are unchanged.

#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuadmit {

// basic_json passes an allocator of pair<const Key, T>; it is rebound to the element type.
template <class Key, class T, class IgnoredLess = std::less<Key>,
          class PassedAllocator = std::allocator<std::pair<Key, T>>>
struct ordered_map
    : std::vector<std::pair<Key, T>, typename std::allocator_traits<PassedAllocator>::
                                         template rebind_alloc<std::pair<Key, T>>> {
  using Allocator =
      typename std::allocator_traits<PassedAllocator>::template rebind_alloc<std::pair<Key, T>>;
  using key_type = Key;
  using mapped_type = T;
  using Container = std::vector<std::pair<Key, T>, Allocator>;
  using iterator = typename Container::iterator;
  using const_iterator = typename Container::const_iterator;
  using size_type = typename Container::size_type;
  using value_type = typename Container::value_type;
  using key_compare = std::equal_to<>;

  template <class KeyType>
  static constexpr bool usable_key =
      nlohmann::detail::is_usable_as_key_type<key_compare, key_type, KeyType>::value;

  ordered_map() noexcept(noexcept(Container())) : Container{} {}
  explicit ordered_map(const Allocator& alloc) noexcept(noexcept(Container(alloc)))
      : Container{alloc} {}
  template <class It>
  ordered_map(It first, It last, const Allocator& alloc = Allocator())
      : Container{first, last, alloc} {}
  ordered_map(std::initializer_list<value_type> init, const Allocator& alloc = Allocator())
      : Container{init, alloc} {}

  std::pair<iterator, bool> emplace(const key_type& key, T&& t) {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return {it, false};
    }
    Container::emplace_back(key, std::forward<T>(t));
    return {std::prev(this->end()), true};
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  std::pair<iterator, bool> emplace(KeyType&& key, T&& t) {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return {it, false};
    }
    Container::emplace_back(std::forward<KeyType>(key), std::forward<T>(t));
    return {std::prev(this->end()), true};
  }

  T& operator[](const key_type& key) { return emplace(key, T{}).first->second; }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  T& operator[](KeyType&& key) {
    return emplace(std::forward<KeyType>(key), T{}).first->second;
  }

  const T& operator[](const key_type& key) const { return at(key); }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  const T& operator[](KeyType&& key) const {
    return at(std::forward<KeyType>(key));
  }

  T& at(const key_type& key) {
    auto it = find(key);
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  T& at(KeyType&& key) {
    auto it = find(std::forward<KeyType>(key));
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }

  const T& at(const key_type& key) const {
    auto it = find(key);
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  const T& at(KeyType&& key) const {
    auto it = find(std::forward<KeyType>(key));
    if (it == this->end()) throw std::out_of_range("key not found");
    return it->second;
  }

  size_type erase(const key_type& key) {
    auto it = find(key);
    if (it == this->end()) return 0;
    erase(it);
    return 1;
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  size_type erase(KeyType&& key) {
    auto it = find(std::forward<KeyType>(key));
    if (it == this->end()) return 0;
    erase(it);
    return 1;
  }

  // The remaining elements keep their order (std::vector::erase moves them down).
  iterator erase(iterator pos) { return Container::erase(pos); }
  iterator erase(iterator first, iterator last) { return Container::erase(first, last); }

  size_type count(const key_type& key) const { return find(key) == this->end() ? 0 : 1; }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  size_type count(KeyType&& key) const {
    return find(std::forward<KeyType>(key)) == this->end() ? 0 : 1;
  }

  iterator find(const key_type& key) {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return it;
    }
    return Container::end();
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  iterator find(KeyType&& key) {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return it;
    }
    return Container::end();
  }

  const_iterator find(const key_type& key) const {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return it;
    }
    return Container::end();
  }

  template <class KeyType, std::enable_if_t<usable_key<KeyType>, int> = 0>
  const_iterator find(KeyType&& key) const {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, key)) return it;
    }
    return Container::end();
  }

  std::pair<iterator, bool> insert(value_type&& value) {
    return emplace(value.first, std::move(value.second));
  }

  std::pair<iterator, bool> insert(const value_type& value) {
    for (auto it = this->begin(); it != this->end(); ++it) {
      if (m_compare(it->first, value.first)) return {it, false};
    }
    Container::push_back(value);
    return {--this->end(), true};
  }

  template <typename InputIt>
  using require_input_iter = typename std::enable_if<
      std::is_convertible<typename std::iterator_traits<InputIt>::iterator_category,
                          std::input_iterator_tag>::value>::type;

  template <typename InputIt, typename = require_input_iter<InputIt>>
  void insert(InputIt first, InputIt last) {
    for (auto it = first; it != last; ++it) insert(*it);
  }

 private:
  [[no_unique_address]] key_compare m_compare = key_compare();
};

}  // namespace gpuadmit
