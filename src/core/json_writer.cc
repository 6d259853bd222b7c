#include "core/json_writer.h"

#include <charconv>

#include "core/text_rules.h"

namespace sessiondb {

void JsonWriter::Separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_) out_->push_back(',');
  first_ = false;
}

JsonWriter& JsonWriter::Open(char bracket) {
  Separate();
  out_->push_back(bracket);
  first_ = true;
  return *this;
}

JsonWriter& JsonWriter::Close(char bracket) {
  out_->push_back(bracket);
  first_ = false;
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view name) {
  String(name);
  out_->push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view value) {
  Separate();
  if (!IsValidUtf8(value)) ok_ = false;
  static constexpr char kHex[] = "0123456789abcdef";
  // Room for a few escapes and what follows, so that a long value does not
  // make the next push_back double the buffer (a 50 MiB text became a
  // 100 MiB message body).
  out_->reserve(out_->size() + value.size() + value.size() / 64 + 256);
  out_->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out_->append(value.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out_->append("\\\"");
        break;
      case '\\':
        out_->append("\\\\");
        break;
      case '\b':
        out_->append("\\b");
        break;
      case '\f':
        out_->append("\\f");
        break;
      case '\n':
        out_->append("\\n");
        break;
      case '\r':
        out_->append("\\r");
        break;
      case '\t':
        out_->append("\\t");
        break;
      default:
        out_->append("\\u00");
        out_->push_back(kHex[c >> 4]);
        out_->push_back(kHex[c & 0xF]);
    }
  }
  out_->append(value.data() + run, value.size() - run);
  out_->push_back('"');
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t value) {
  Separate();
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out_->append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_->append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json) {
  Separate();
  out_->append(json);
  return *this;
}

}  // namespace sessiondb
