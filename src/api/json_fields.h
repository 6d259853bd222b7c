// The fields of a JSON object a face was sent (an HTTP body, an MCP call's
// arguments, a Node call's options), read with the type checked: an absent
// or null field is the fallback, a field of the wrong type is
// kInvalidArgument naming it.
//
// Example:
//   ASSIGN_OR_RETURN(std::string title, StringField(body, "title"));
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_forms.h"
#include "sessiondb/status.h"

namespace sessiondb {

// The string field `key` of `object`; "" when absent; kInvalidArgument when
// it is not a string.
Result<std::string> StringField(const Json& object, const char* key);
// An integer field; `fallback` when absent.
Result<int64_t> IntField(const Json& object, const char* key, int64_t fallback);
// A boolean field; `fallback` when absent.
Result<bool> BoolField(const Json& object, const char* key, bool fallback);
// A list of strings; empty when absent.
Result<std::vector<std::string>> StringListField(const Json& object, const char* key);

// kInvalidArgument: "\"<key>\" must be <want>" (want: "a string", "true or false"...).
Status WrongType(std::string_view key, std::string_view want);

}  // namespace sessiondb
