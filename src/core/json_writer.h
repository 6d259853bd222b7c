// JsonWriter: appends compact JSON to a string, byte for byte as nlohmann's
// dump() writes it (members in the order the caller gives, which callers keep
// sorted as nlohmann's std::map does; strings escaped the same way: \" \\ \b
// \f \n \r \t, other control bytes as \u00xx, everything else as is). It
// exists for the hot path of the log, the message body: building a JSON tree
// and dumping it cost as much as the database write.
// Thread-safety: none; one writer per string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sessiondb {

class JsonWriter {
 public:
  explicit JsonWriter(std::string* out) : out_(out) {}

  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  // A member's name, inside an object; its value comes next.
  JsonWriter& Key(std::string_view name);
  JsonWriter& String(std::string_view value);
  JsonWriter& Int(int64_t value);
  JsonWriter& Bool(bool value);
  // A value that is already compact JSON text.
  JsonWriter& Raw(std::string_view json);

  // False once a string held bytes that are not UTF-8 (nlohmann refuses to
  // dump those); the output is then not to be used.
  bool ok() const { return ok_; }

 private:
  // A comma before a value or key that is not the first of its container.
  void Separate();
  JsonWriter& Open(char bracket);
  JsonWriter& Close(char bracket);

  std::string* out_;
  bool first_ = true;  // nothing written yet in the open container
  bool after_key_ = false;
  bool ok_ = true;
};

}  // namespace sessiondb
