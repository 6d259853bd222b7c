// Reading members of JSON that came from outside without exceptions.
// nlohmann's `obj.value("key", fallback)` throws when `obj` is not an object
// (type_error 306) and when the member is not of the fallback's type
// (type_error 302): one array where an importer expected an object, or
// "is_archived": "yes", ended the process (found by fuzz_import_chatgpt).
// These return the fallback instead, so a caller reading foreign data never
// meets an exception; src/ reads members through them (a test forbids
// `.value("` elsewhere).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace sessiondb {

// The member `key` of `obj`, or a null value when `obj` is not an object or
// has no such member. The reference stays valid as long as `obj` does.
// J is nlohmann::json or nlohmann::ordered_json.
template <typename J>
const J& MemberOf(const J& obj, std::string_view key) {
  static const J kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(std::string(key));  // ordered_json has no find(string_view)
  return it == obj.end() ? kNull : *it;
}

// The member `key` of `obj` as a T (bool, std::string, int64_t, int, double
// or the JSON type itself), or `fallback` when there is none or it is of
// another type. An integer type takes only an integer that fits in it; a
// double takes any number.
template <typename J, typename T>
T MemberOr(const J& obj, std::string_view key, T fallback) {
  const J& m = MemberOf(obj, key);
  if constexpr (std::is_same_v<T, J>) {
    return m.is_null() ? fallback : m;
  } else if constexpr (std::is_same_v<T, bool>) {
    return m.is_boolean() ? m.template get<bool>() : fallback;
  } else if constexpr (std::is_same_v<T, std::string>) {
    return m.is_string() ? m.template get<std::string>() : fallback;
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int>) {
    if (m.is_number_unsigned()) {
      const uint64_t u = m.template get<uint64_t>();
      return u <= static_cast<uint64_t>(std::numeric_limits<T>::max()) ? static_cast<T>(u)
                                                                       : fallback;
    }
    if (!m.is_number_integer()) return fallback;
    const int64_t v = m.template get<int64_t>();
    return v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max()
               ? static_cast<T>(v)
               : fallback;
  } else if constexpr (std::is_same_v<T, double>) {
    return m.is_number() ? m.template get<double>() : fallback;
  } else {
    static_assert(!sizeof(T), "MemberOr reads bool, std::string, int64_t, int, double or J");
  }
}

// A string literal fallback reads as std::string.
template <typename J>
std::string MemberOr(const J& obj, std::string_view key, const char* fallback) {
  return MemberOr<J, std::string>(obj, key, std::string(fallback));
}

}  // namespace sessiondb
