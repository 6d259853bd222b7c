#include "core/search_text.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "core/json_parse.h"

namespace sessiondb {
namespace {

// Reads the tool calls and results out of a message body in one pass,
// building no tree. Catching the index up after an import reads every body
// that holds tools, and nlohmann's lexer and tree were a third of that work.
// It accepts exactly the JSON that ParseJson accepts (RFC 8259, UTF-8
// checked, finite numbers, an optional byte order mark, kMaxJsonDepth
// levels) and reads repeated keys as nlohmann's tree does (the last one
// counts), so the index holds what every other reader of the body sees;
// tests/core/search_text_test.cc compares the two. Pointers only move
// forward and nesting is counted, so any input ends in one pass.
class ToolTextReader {
 public:
  explicit ToolTextReader(std::string_view body)
      : p_(body.data()), end_(body.data() + body.size()) {}

  // The lines SearchText adds, in order; nullopt if the body is not JSON.
  std::optional<std::vector<std::string>> Read() {
    if (end_ - p_ >= 3 && std::string_view(p_, 3) == "\xEF\xBB\xBF") p_ += 3;
    SkipSpace();
    std::vector<std::string> lines;
    if (Peek() == '{') {
      if (!Body(&lines)) return std::nullopt;
    } else if (!Value(0)) {
      return std::nullopt;
    }
    SkipSpace();
    // nlohmann takes a NUL byte for the end of its input (a C string's), so
    // whatever follows one after the document is not read.
    if (p_ != end_ && *p_ != '\0') return std::nullopt;
    return lines;
  }

 private:
  // The fields of a part that the index reads; a later repeat of a key
  // replaces the earlier one, and a value that is not a string reads as "".
  struct PartFields {
    std::string type, name, arguments, output;
  };

  char Peek() const { return p_ < end_ ? *p_ : '\0'; }

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (Peek() != c) return false;
    ++p_;
    return true;
  }

  // The members of the object at p_ ('{'); `read_value(key)` reads each
  // member's value, p_ at its first byte.
  template <typename ReadValue>
  bool Members(ReadValue read_value) {
    ++p_;
    SkipSpace();
    if (Peek() == '}') return ++p_, true;
    for (;;) {
      std::string key;
      SkipSpace();
      if (!String(&key) || !Consume(':')) return false;
      SkipSpace();
      if (!read_value(key)) return false;
      SkipSpace();
      if (Peek() != ',') return Consume('}');
      ++p_;
    }
  }

  // The elements of the array at p_ ('['), each read by `read_element()`.
  template <typename ReadElement>
  bool Elements(ReadElement read_element) {
    ++p_;
    SkipSpace();
    if (Peek() == ']') return ++p_, true;
    for (;;) {
      SkipSpace();
      if (!read_element()) return false;
      SkipSpace();
      if (Peek() != ',') return Consume(']');
      ++p_;
    }
  }

  // The root object: the last "parts" member that is an array gives the
  // lines (a later "parts" that is not one leaves none).
  bool Body(std::vector<std::string>* lines) {
    return Members([&](const std::string& key) {
      if (key != "parts") return Value(1);
      lines->clear();
      return Peek() == '[' ? Parts(lines) : Value(1);
    });
  }

  // The parts array, at depth 2: each object part adds its line.
  bool Parts(std::vector<std::string>* lines) {
    return Elements([&] {
      if (Peek() != '{') return Value(2);
      PartFields part;
      if (!Part(&part)) return false;
      if (part.type == "tool_call") lines->push_back(part.name + ' ' + part.arguments);
      if (part.type == "tool_result") lines->push_back(part.output);
      return true;
    });
  }

  // One part object, at depth 3.
  bool Part(PartFields* part) {
    return Members([&](const std::string& key) {
      std::string* field = key == "type"        ? &part->type
                           : key == "name"      ? &part->name
                           : key == "arguments" ? &part->arguments
                           : key == "output"    ? &part->output
                                                : nullptr;
      if (field == nullptr) return Value(3);
      field->clear();
      return Peek() == '"' ? String(field) : Value(3);
    });
  }

  // Any value, checked and skipped; `depth` is the levels around it. Arrays
  // and objects are walked with an explicit stack of closers, no recursion.
  bool Value(int depth) {
    std::vector<char> closers;
    for (;;) {
      SkipSpace();
      const char c = Peek();
      bool opened = false;
      if (c == '{' || c == '[') {
        if (depth + static_cast<int>(closers.size()) + 1 > kMaxJsonDepth) return false;
        ++p_;
        closers.push_back(c == '{' ? '}' : ']');
        SkipSpace();
        if (Peek() == closers.back()) {
          ++p_;
          closers.pop_back();
        } else {
          opened = true;
        }
      } else if (c == '"') {
        if (!String(nullptr)) return false;
      } else if (c == 't') {
        if (!Word("true")) return false;
      } else if (c == 'f') {
        if (!Word("false")) return false;
      } else if (c == 'n') {
        if (!Word("null")) return false;
      } else if (!Number()) {
        return false;
      }
      if (opened && closers.back() == '}') {
        // The first member's key; its value is read by the next turn.
        SkipSpace();
        if (!String(nullptr) || !Consume(':')) return false;
        continue;
      }
      if (opened) continue;  // the first element of an array
      // After a value: the next member or element, or the end of containers.
      for (;;) {
        if (closers.empty()) return true;
        SkipSpace();
        if (Peek() == ',') {
          ++p_;
          if (closers.back() == '}') {
            SkipSpace();
            if (!String(nullptr) || !Consume(':')) return false;
          }
          break;
        }
        if (Peek() != closers.back()) return false;
        ++p_;
        closers.pop_back();
      }
    }
  }

  bool Word(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }

  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // RFC 8259's number, which nlohmann also refuses when it is too large for
  // a double.
  bool Number() {
    const char* start = p_;
    if (Peek() == '-') ++p_;
    if (Peek() == '0') {
      ++p_;
    } else if (Peek() >= '1' && Peek() <= '9') {
      while (IsDigit(Peek())) ++p_;
    } else {
      return false;
    }
    bool exponent = false;
    if (Peek() == '.') {
      ++p_;
      if (!IsDigit(Peek())) return false;
      while (IsDigit(Peek())) ++p_;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      exponent = true;
      ++p_;
      if (Peek() == '+' || Peek() == '-') ++p_;
      if (!IsDigit(Peek())) return false;
      while (IsDigit(Peek())) ++p_;
    }
    // Without an exponent, only a number of over 300 digits can overflow.
    if (!exponent && p_ - start <= 300) return true;
    // As nlohmann reads it (strtod; sessiondb never leaves the C locale).
    const std::string token(start, p_);
    return std::isfinite(std::strtod(token.c_str(), nullptr));
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits after "\u"; -1 if they are not.
  int32_t Hex4() {
    if (end_ - p_ < 4) return -1;
    int32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = Hex(p_[i]);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    p_ += 4;
    return value;
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // The bytes of one well-formed UTF-8 sequence starting at p_ (RFC 3629:
  // no overlong forms, no surrogates, nothing past U+10FFFF); 0 if not.
  size_t Utf8Length() const {
    const auto byte = [&](ptrdiff_t i) { return static_cast<unsigned char>(p_[i]); };
    const ptrdiff_t left = end_ - p_;
    const unsigned char b0 = byte(0);
    auto cont = [&](ptrdiff_t i, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
      return i < left && byte(i) >= lo && byte(i) <= hi;
    };
    if (b0 >= 0xC2 && b0 <= 0xDF) return cont(1) ? 2 : 0;
    if (b0 == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
    if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) return cont(1) && cont(2) ? 3 : 0;
    if (b0 == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
    if (b0 == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
    if (b0 >= 0xF1 && b0 <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
    if (b0 == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
    return 0;
  }

  // A string at p_ ('"'), decoded onto *out (checked only when null).
  bool String(std::string* out) {
    if (Peek() != '"') return false;
    ++p_;
    for (;;) {
      // The plain run up to the next quote, escape, control or non-ASCII byte.
      const char* run = p_;
      while (p_ < end_) {
        const auto b = static_cast<unsigned char>(*p_);
        if (b == '"' || b == '\\' || b < 0x20 || b >= 0x80) break;
        ++p_;
      }
      if (out != nullptr) out->append(run, static_cast<size_t>(p_ - run));
      if (p_ == end_) return false;
      const auto b = static_cast<unsigned char>(*p_);
      if (b == '"') return ++p_, true;
      if (b < 0x20) return false;
      if (b >= 0x80) {
        const size_t n = Utf8Length();
        if (n == 0) return false;
        if (out != nullptr) out->append(p_, n);
        p_ += n;
        continue;
      }
      ++p_;  // '\\'
      if (p_ == end_) return false;
      const char e = *p_++;
      char plain = 0;
      switch (e) {
        case '"':
          plain = '"';
          break;
        case '\\':
          plain = '\\';
          break;
        case '/':
          plain = '/';
          break;
        case 'b':
          plain = '\b';
          break;
        case 'f':
          plain = '\f';
          break;
        case 'n':
          plain = '\n';
          break;
        case 'r':
          plain = '\r';
          break;
        case 't':
          plain = '\t';
          break;
        case 'u': {
          int32_t cp = Hex4();
          if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!Word("\\u")) return false;
            const int32_t low = Hex4();
            if (low < 0xDC00 || low > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          if (out != nullptr) AppendUtf8(static_cast<uint32_t>(cp), out);
          continue;
        }
        default:
          return false;
      }
      if (out != nullptr) *out += plain;
    }
  }

  const char* p_;
  const char* const end_;
};

}  // namespace

std::string SearchText(std::string_view text, std::string_view body) {
  std::string out(text);
  // Most bodies hold no tool parts: skip the read for them.
  if (body.empty() || body.find("\"tool_") == std::string_view::npos) return out;
  std::optional<std::vector<std::string>> lines = ToolTextReader(body).Read();
  if (!lines) return out;
  for (const std::string& line : *lines) {
    out += '\n';
    out += line;
  }
  return out;
}

std::string MessageSearchText(std::string_view text, const Message& message) {
  std::string out(text);
  for (const Part& part : message.parts) {
    if (part.type == PartType::kToolCall) {
      // The body keeps "{}" for empty arguments (message_codec.cc).
      out += '\n';
      out += part.tool_name;
      out += ' ';
      out += part.arguments_json.empty() ? std::string_view("{}") : part.arguments_json;
    } else if (part.type == PartType::kToolResult) {
      out += '\n';
      out += part.text;
    }
  }
  return out;
}

}  // namespace sessiondb
