#include "core/json_parse.h"

#include <cstddef>
#include <string>

namespace sessiondb {
namespace {

constexpr std::string_view kNestingErrorPrefix = "JSON is nested deeper than ";

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ...".
std::string WithoutTag(std::string what) {
  if (auto tag_end = what.find("] ");
      what.starts_with("[json.exception.") && tag_end != std::string::npos) {
    what.erase(0, tag_end + 2);
  }
  return what;
}

// nlohmann's DOM builder with a depth counter in front: returning false from
// start_object/start_array stops the parser at once.
template <typename BasicJson>
class DepthCappedBuilder {
 public:
  using number_integer_t = typename BasicJson::number_integer_t;
  using number_unsigned_t = typename BasicJson::number_unsigned_t;
  using number_float_t = typename BasicJson::number_float_t;
  using string_t = typename BasicJson::string_t;
  using binary_t = typename BasicJson::binary_t;

  DepthCappedBuilder(BasicJson* root, int max_depth)
      : dom_(*root, /*allow_exceptions=*/false), max_depth_(max_depth) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  bool key(string_t& v) { return dom_.key(v); }
  bool start_object(std::size_t n) { return Enter() && dom_.start_object(n); }
  bool start_array(std::size_t n) { return Enter() && dom_.start_array(n); }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }

  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& ex) {
    syntax_error_ = WithoutTag(ex.what());
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& syntax_error() const { return syntax_error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<BasicJson> dom_;
  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::string syntax_error_;
};

// The same counter in front of nothing: checks without building a tree.
template <typename BasicJson>
class DepthCappedChecker {
 public:
  using number_integer_t = typename BasicJson::number_integer_t;
  using number_unsigned_t = typename BasicJson::number_unsigned_t;
  using number_float_t = typename BasicJson::number_float_t;
  using string_t = typename BasicJson::string_t;
  using binary_t = typename BasicJson::binary_t;

  explicit DepthCappedChecker(int max_depth) : max_depth_(max_depth) {}

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(number_integer_t) { return true; }
  bool number_unsigned(number_unsigned_t) { return true; }
  bool number_float(number_float_t, const string_t&) { return true; }
  bool string(string_t&) { return true; }
  bool binary(binary_t&) { return true; }
  bool key(string_t&) { return true; }
  bool start_object(std::size_t) { return Enter(); }
  bool start_array(std::size_t) { return Enter(); }
  bool end_object() {
    --depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& ex) {
    syntax_error_ = WithoutTag(ex.what());
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::string& syntax_error() const { return syntax_error_; }

 private:
  bool Enter() {
    if (++depth_ <= max_depth_) return true;
    too_deep_ = true;
    return false;
  }

  const int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  std::string syntax_error_;
};

// Byte offset of the bracket that opens level `level` (1-based), skipping
// strings. Runs only on the error path, to name the place in the message.
size_t OffsetOfLevel(std::string_view text, int level) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth == level) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return text.size();
}

// Runs `handler` over `text`: Ok, or the nesting or syntax error.
template <typename BasicJson, typename Handler>
Status RunSax(std::string_view text, int max_depth, Handler* handler) {
  const bool ok = BasicJson::sax_parse(text.begin(), text.end(), handler,
                                       nlohmann::detail::input_format_t::json, /*strict=*/true);
  if (handler->too_deep()) {
    const std::string limit = std::to_string(max_depth);
    return Status::InvalidArgument(std::string(kNestingErrorPrefix) + limit + " levels (at byte " +
                                   std::to_string(OffsetOfLevel(text, max_depth + 1)) +
                                   "); the limit is " + limit);
  }
  if (!ok) {
    return Status::InvalidArgument(handler->syntax_error().empty() ? "not valid JSON"
                                                                   : handler->syntax_error());
  }
  return Status::Ok();
}

template <typename BasicJson>
Result<BasicJson> Parse(std::string_view text, int max_depth) {
  BasicJson root;
  DepthCappedBuilder<BasicJson> builder(&root, max_depth);
  RETURN_IF_ERROR(RunSax<BasicJson>(text, max_depth, &builder));
  return root;
}

}  // namespace

Result<nlohmann::json> ParseJson(std::string_view text, int max_depth) {
  return Parse<nlohmann::json>(text, max_depth);
}

Result<nlohmann::ordered_json> ParseOrderedJson(std::string_view text, int max_depth) {
  return Parse<nlohmann::ordered_json>(text, max_depth);
}

bool IsJsonNestingError(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument && s.message().starts_with(kNestingErrorPrefix);
}

Status CheckJson(std::string_view text, int max_depth) {
  DepthCappedChecker<nlohmann::json> checker(max_depth);
  return RunSax<nlohmann::json>(text, max_depth, &checker);
}

bool IsJson(std::string_view text, int max_depth) { return CheckJson(text, max_depth).ok(); }

}  // namespace sessiondb
