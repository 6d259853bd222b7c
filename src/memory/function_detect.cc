#include "memory/function_detect.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>

namespace sessiondb::memory {
namespace {

// Line numbers and line text of the code being scanned.
class LineIndex {
 public:
  explicit LineIndex(std::string_view code) : code_(code) {
    starts_.push_back(0);
    for (size_t i = 0; i < code.size(); ++i) {
      if (code[i] == '\n' && i + 1 < code.size()) starts_.push_back(i + 1);
    }
  }
  int count() const { return code_.empty() ? 0 : static_cast<int>(starts_.size()); }
  // The 1-based line holding byte `offset`.
  int LineOf(size_t offset) const {
    return static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), offset) -
                            starts_.begin());
  }
  // Lines first..last (1-based, inclusive), without the final line break.
  std::string_view Lines(int first, int last) const {
    const size_t begin = starts_[first - 1];
    size_t end = last < count() ? starts_[last] - 1 : code_.size();
    if (last >= count() && end > begin && code_[end - 1] == '\n') --end;
    return code_.substr(begin, end - begin);
  }
  std::string_view Line(int line) const { return Lines(line, line); }

 private:
  std::string_view code_;
  std::vector<size_t> starts_;
};

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool IsIdentChar(char c) { return IsIdentStart(c) || (c >= '0' && c <= '9'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

enum class Lang { kPython, kJs, kGo, kRust, kC };  // kJs covers TypeScript, kC covers C++

// ---------------------------------------------------------------------------
// Brace languages: blank comments and literals, tokenize, match brackets.

// `code` with comments, string and character literals (and, for C/C++,
// preprocessor lines) replaced by spaces; line breaks are kept, so offsets
// and line numbers stay those of `code`.
std::string Blank(std::string_view code, Lang lang) {
  std::string s(code);
  const size_t n = code.size();
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k) {
      if (s[k] != '\n') s[k] = ' ';
    }
  };
  // Index just past a quoted literal that opens at `i` (escapes honoured).
  auto quoted_end = [&](size_t i, char quote) {
    size_t k = i + 1;
    while (k < n && code[k] != quote) {
      if (code[k] == '\\') ++k;
      // Unterminated ' and " literals stop at the line end (not for templates).
      else if (code[k] == '\n' && quote != '`')
        return k;
      ++k;
    }
    return std::min(k + 1, n);
  };
  bool line_has_code = false;
  size_t i = 0;
  while (i < n) {
    const char c = code[i];
    if (c == '\n') {
      line_has_code = false;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    const bool first_on_line = !line_has_code;
    line_has_code = true;
    const char next = i + 1 < n ? code[i + 1] : '\0';
    if (lang == Lang::kC && c == '#' && first_on_line) {
      size_t k = i;
      while (k < n && !(code[k] == '\n' && (k == 0 || code[k - 1] != '\\'))) ++k;
      blank(i, k);
      i = k;
      continue;
    }
    if (c == '/' && next == '/') {
      size_t k = code.find('\n', i);
      if (k == std::string_view::npos) k = n;
      blank(i, k);
      i = k;
      continue;
    }
    if (c == '/' && next == '*') {
      size_t k = i + 2;
      int depth = 1;
      while (k < n && depth > 0) {
        if (code[k] == '*' && k + 1 < n && code[k + 1] == '/') {
          --depth;
          k += 2;
        } else if (lang == Lang::kRust && code[k] == '/' && k + 1 < n && code[k + 1] == '*') {
          ++depth;
          k += 2;
        } else {
          ++k;
        }
      }
      blank(i, k);
      i = k;
      continue;
    }
    if (c == '"') {
      // C++ raw string R"delim( ... )delim".
      if (lang == Lang::kC && i > 0 && code[i - 1] == 'R' &&
          (i < 2 || !IsIdentChar(code[i - 2]) ||
           std::string_view("8LuU").find(code[i - 2]) != std::string_view::npos)) {
        const size_t paren = code.find('(', i);
        if (paren != std::string_view::npos && paren - i <= 17) {
          const std::string close = ")" + std::string(code.substr(i + 1, paren - i - 1)) + "\"";
          size_t k = code.find(close, paren);
          k = k == std::string_view::npos ? n : k + close.size();
          blank(i, k);
          i = k;
          continue;
        }
      }
      // Rust raw string r"..." / r#"..."# (also br"...").
      if (lang == Lang::kRust) {
        size_t r = i;
        while (r > 0 && code[r - 1] == '#') --r;
        if (r > 0 && code[r - 1] == 'r' &&
            (r < 2 || !IsIdentChar(code[r - 2]) ||
             (code[r - 2] == 'b' && (r < 3 || !IsIdentChar(code[r - 3]))))) {
          const std::string close = "\"" + std::string(i - r, '#');
          size_t k = code.find(close, i + 1);
          k = k == std::string_view::npos ? n : k + close.size();
          blank(i, k);
          i = k;
          continue;
        }
      }
      const size_t k = quoted_end(i, '"');
      blank(i, k);
      i = k;
      continue;
    }
    if (c == '`' && (lang == Lang::kJs || lang == Lang::kGo)) {
      size_t k;
      if (lang == Lang::kGo) {  // raw string: no escapes
        k = code.find('`', i + 1);
        k = k == std::string_view::npos ? n : k + 1;
      } else {
        k = quoted_end(i, '`');
      }
      blank(i, k);
      i = k;
      continue;
    }
    if (c == '\'') {
      if (lang == Lang::kRust) {
        // A char literal ('x', '\n', 'é'), else a lifetime ('a) left alone.
        size_t k = std::string_view::npos;
        if (next == '\\') {
          k = quoted_end(i, '\'');
        } else if (i + 1 < n) {
          size_t len = 1;
          const auto lead = static_cast<unsigned char>(code[i + 1]);
          if (lead >= 0xF0)
            len = 4;
          else if (lead >= 0xE0)
            len = 3;
          else if (lead >= 0xC0)
            len = 2;
          if (i + 1 + len < n && code[i + 1 + len] == '\'') k = i + 2 + len;
        }
        if (k == std::string_view::npos) {
          ++i;
          continue;
        }
        blank(i, k);
        i = k;
        continue;
      }
      if (lang == Lang::kC) {
        // A C++14 digit separator (1'000'000) is not a literal.
        size_t b = i;
        while (b > 0 && (IsIdentChar(code[b - 1]) || code[b - 1] == '\'')) --b;
        if (b < i && IsDigit(code[b])) {
          ++i;
          continue;
        }
      }
      const size_t k = quoted_end(i, '\'');
      blank(i, k);
      i = k;
      continue;
    }
    ++i;
  }
  return s;
}

enum class TokKind { kIdent, kNumber, kPunct };

struct Token {
  TokKind kind;
  std::string_view text;
  size_t pos;
  int line;
};

std::vector<Token> Tokenize(std::string_view s) {
  static constexpr std::string_view kMulti[] = {"===", "!==", "...", "::", "->", "=>",
                                                "==",  "!=",  "<=",  ">=", "&&", "||"};
  std::vector<Token> out;
  size_t i = 0;
  int line = 1;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    size_t k = i + 1;
    TokKind kind = TokKind::kPunct;
    if (IsIdentStart(c) || (c == '#' && i + 1 < s.size() && IsIdentStart(s[i + 1]))) {
      kind = TokKind::kIdent;
      while (k < s.size() && IsIdentChar(s[k])) ++k;
    } else if (IsDigit(c)) {
      kind = TokKind::kNumber;
      while (k < s.size() && (IsIdentChar(s[k]) || s[k] == '.' || s[k] == '\'')) ++k;
    } else {
      for (std::string_view m : kMulti) {
        if (s.substr(i, m.size()) == m) {
          k = i + m.size();
          break;
        }
      }
    }
    out.push_back({kind, s.substr(i, k - i), i, line});
    i = k;
  }
  return out;
}

// The tokens of a brace language, with matched brackets and, for each token,
// the innermost `{` around it.
class Tokens {
 public:
  explicit Tokens(std::string_view blanked) : t_(Tokenize(blanked)) {
    match_.assign(t_.size(), -1);
    parent_.assign(t_.size(), -1);
    std::vector<int> stack;
    std::vector<int> braces;
    for (int i = 0; i < size(); ++i) {
      parent_[i] = braces.empty() ? -1 : braces.back();
      const std::string_view x = t_[i].text;
      if (x == "(" || x == "[" || x == "{") {
        stack.push_back(i);
        if (x == "{") braces.push_back(i);
        continue;
      }
      if (x != ")" && x != "]" && x != "}") continue;
      const char open = x == ")" ? '(' : x == "]" ? '[' : '{';
      // Pop to the nearest matching opener; a closer with none is ignored.
      auto it =
          std::find_if(stack.rbegin(), stack.rend(), [&](int k) { return t_[k].text[0] == open; });
      if (it == stack.rend()) continue;
      const int k = *it;
      while (stack.back() != k) {
        if (t_[stack.back()].text == "{") braces.pop_back();
        stack.pop_back();
      }
      stack.pop_back();
      if (open == '{') braces.pop_back();
      match_[k] = i;
      match_[i] = k;
      parent_[i] = braces.empty() ? -1 : braces.back();
    }
  }

  int size() const { return static_cast<int>(t_.size()); }
  const Token& operator[](int i) const { return t_[i]; }
  bool Is(int i, std::string_view text) const { return i >= 0 && i < size() && t_[i].text == text; }
  bool IsIdent(int i) const { return i >= 0 && i < size() && t_[i].kind == TokKind::kIdent; }
  // The partner of a bracket, or -1.
  int Match(int i) const { return match_[i]; }
  // The innermost `{` enclosing token i, or -1 at the top level.
  int Parent(int i) const { return parent_[i]; }
  // The index after the group opening at i (to the end when it never closes).
  int SkipGroup(int i) const { return match_[i] < 0 ? size() : match_[i] + 1; }
  // The index after the `>` matching the `<` at i, or -1 if none nearby.
  int SkipAngles(int i) const {
    int depth = 0;
    for (int k = i; k < size() && k < i + 200; ++k) {
      const std::string_view x = t_[k].text;
      if (x == "<") {
        ++depth;
      } else if (x == ">") {
        if (--depth == 0) return k + 1;
      } else if (x == "(" || x == "[") {
        k = SkipGroup(k) - 1;
      } else if (x == ";" || x == "{" || x == "}" || x == ")" || x == "]") {
        return -1;
      }
    }
    return -1;
  }

 private:
  std::vector<Token> t_;
  std::vector<int> match_;
  std::vector<int> parent_;
};

// A class-like scope whose functions are named after it.
struct Container {
  std::string name;
  int open = -1;  // its `{` token
};

// A function found in the tokens: its name, first token and body braces.
struct Candidate {
  std::string name;
  int first = 0;       // token of the header's first line
  int body_open = -1;  // its `{`, or -1 for an expression body
  int body_last = -1;  // last token of an expression body
};

template <size_t N>
bool OneOf(std::string_view x, const std::string_view (&set)[N]) {
  return std::find(std::begin(set), std::end(set), x) != std::end(set);
}

// Prefixes `name` with the containers directly around token `at` (a class in
// a class: both), outermost first. A function inside a function body is not
// qualified by the body's class.
std::string Qualify(const Tokens& t, int at, const std::map<int, std::string>& containers,
                    std::string_view sep, std::string name) {
  for (int b = t.Parent(at); b >= 0; b = t.Parent(b)) {
    auto it = containers.find(b);
    if (it == containers.end()) break;
    name = it->second + std::string(sep) + name;
  }
  return name;
}

// ---- C and C++ ----

// After the `)` of a parameter list at `close`: the `{` of the body, or -1
// for a declaration (`;`, `= 0`, `= default`) or anything else.
int CBodyAfterParams(const Tokens& t, int close) {
  int k = close + 1;
  for (int steps = 0; k < t.size() && steps < 60; ++steps) {
    const std::string_view x = t[k].text;
    if (x == "{") return k;
    if (x == "(" || x == "[") {
      k = t.SkipGroup(k);
    } else if (x == "<") {
      k = t.SkipAngles(k);
      if (k < 0) return -1;
    } else if (x == ":") {
      // Constructor initializer list: name(...) or name{...}, separated by commas.
      ++k;
      while (k < t.size()) {
        while (k < t.size() && (t.IsIdent(k) || t.Is(k, "::"))) ++k;
        if (t.Is(k, "<")) {
          k = t.SkipAngles(k);
          if (k < 0) return -1;
        }
        if (!t.Is(k, "(") && !t.Is(k, "{")) return -1;
        k = t.SkipGroup(k);
        if (!t.Is(k, ",")) break;
        ++k;
      }
      return t.Is(k, "{") ? k : -1;
    } else if (t[k].kind == TokKind::kIdent || OneOf(x, {"->", "&", "&&", "*", "::", ">"})) {
      ++k;
    } else {
      return -1;
    }
  }
  return -1;
}

constexpr std::string_view kCNotNames[] = {"if",
                                           "for",
                                           "while",
                                           "switch",
                                           "catch",
                                           "return",
                                           "sizeof",
                                           "alignof",
                                           "decltype",
                                           "new",
                                           "delete",
                                           "throw",
                                           "static_assert",
                                           "defined",
                                           "__attribute__",
                                           "__declspec",
                                           "alignas",
                                           "noexcept",
                                           "typeid",
                                           "co_await",
                                           "co_return",
                                           "co_yield",
                                           "using",
                                           "case",
                                           "do",
                                           "else",
                                           "asm",
                                           "__asm__",
                                           "requires",
                                           "_Generic",
                                           "_Static_assert",
                                           "__typeof__",
                                           "typeof",
                                           "constexpr",
                                           "consteval",
                                           "goto"};

void FindC(const Tokens& t, std::vector<Candidate>* out) {
  // class / struct / union bodies name their inline methods.
  std::map<int, std::string> containers;
  for (int i = 0; i + 1 < t.size(); ++i) {
    if (!OneOf(t[i].text, {"class", "struct", "union"}) || t.Is(i - 1, "enum")) continue;
    int k = i + 1;
    while (t.Is(k, "[") || t.Is(k, "alignas")) k = t.Is(k, "[") ? t.SkipGroup(k) : k + 1;
    if (t.Is(k, "(")) k = t.SkipGroup(k);
    if (!t.IsIdent(k)) continue;
    std::string name(t[k].text);
    ++k;
    if (t.Is(k, "<")) k = t.SkipAngles(k);
    if (k < 0) continue;
    if (t.Is(k, "final")) ++k;
    if (t.Is(k, ":")) {
      while (k < t.size() && !OneOf(t[k].text, {"{", ";", "=", ")", "}"})) {
        k = t.Is(k, "(") ? t.SkipGroup(k) : k + 1;
      }
    }
    if (t.Is(k, "{")) containers[k] = name;
  }
  for (int p = 1; p < t.size(); ++p) {
    if (!t.Is(p, "(")) continue;
    // The name before the `(`: ident, ~ident, operator<symbols>, qualified by A:: or A<T>::.
    int k = p - 1;
    std::string name;
    if (t.IsIdent(k)) {
      // `operator()(...)`: the name ends at the second `(`, seen next.
      if (OneOf(t[k].text, kCNotNames) || t[k].text == "operator") continue;
      name = t[k].text;
      if (t.Is(k - 1, "operator")) {
        name = "operator " + name;
        --k;
      } else if (t.Is(k - 1, "~")) {
        name = "~" + name;
        --k;
      }
    } else {
      // operator==, operator(), operator[] ...: 1-3 symbol tokens after `operator`.
      int o = k;
      while (o >= 0 && o > p - 4 && t[o].kind == TokKind::kPunct) --o;
      if (!t.Is(o, "operator") || o == p - 1) continue;
      name = "operator";
      for (int q = o + 1; q < p; ++q) name += t[q].text;
      k = o;
    }
    while (t.Is(k - 1, "::")) {
      int q = k - 2;
      if (t.Is(q, ">")) {  // A<T>::f: back to the `<`
        int depth = 0;
        for (; q >= 0; --q) {
          if (t.Is(q, ">")) ++depth;
          if (t.Is(q, "<") && --depth == 0) break;
        }
        --q;
      }
      if (!t.IsIdent(q)) {  // ::f, the global scope
        name = "::" + name;
        k = k - 1;
        break;
      }
      name = std::string(t[q].text) + "::" + name;
      k = q;
    }
    // What precedes the name must look like a declaration: type words,
    // pointers, references, templates, attributes, back to a statement end.
    int first = k;
    bool declaration = true;
    for (int q = k - 1, steps = 0; q >= 0 && steps < 60; --q, ++steps) {
      const std::string_view x = t[q].text;
      if (OneOf(x, {";", "{", "}", ")", ":"})) break;
      if (x == ">") {  // template arguments: skip to the `<`
        int depth = 0;
        for (; q >= 0; --q) {
          if (t.Is(q, ">")) ++depth;
          if (t.Is(q, "<") && --depth == 0) break;
        }
        if (q < 0) break;
        first = q;
        --q;
        if (t.IsIdent(q))
          first = q;
        else
          ++q;
        continue;
      }
      if (x == "]" && t.Match(q) >= 0) {
        q = t.Match(q);
        first = q;
        continue;
      }
      if (t[q].kind == TokKind::kIdent) {
        if (OneOf(x, {"return", "else", "new", "delete", "throw", "case", "goto", "co_return",
                      "co_await", "co_yield", "sizeof", "typeid", "operator"})) {
          declaration = false;
          break;
        }
        first = q;
        continue;
      }
      if (OneOf(x, {"*", "&", "&&", "::", "~"})) {
        first = q;
        continue;
      }
      declaration = false;
      break;
    }
    if (!declaration || t.Match(p) < 0) continue;
    const int open = CBodyAfterParams(t, t.Match(p));
    if (open < 0) continue;
    if (name.find("::") == std::string::npos) name = Qualify(t, k, containers, "::", name);
    out->push_back({name, first, open, -1});
    // Skip the body: calls and macros inside it are not definitions.
    if (t.Match(open) >= 0) p = t.Match(open);
  }
}

// ---- Go ----

void FindGo(const Tokens& t, std::vector<Candidate>* out) {
  for (int i = 0; i + 1 < t.size(); ++i) {
    if (!t.Is(i, "func")) continue;
    int k = i + 1;
    std::string name;
    if (t.Is(k, "(")) {
      // A method's receiver, or a func literal's parameters.
      const int close = t.Match(k);
      if (close < 0 || !t.IsIdent(close + 1) || !(t.Is(close + 2, "(") || t.Is(close + 2, "["))) {
        continue;
      }
      std::string recv;
      for (int q = k + 1; q < close; ++q) {
        if (t.Is(q, "[")) break;
        if (t.IsIdent(q)) recv = t[q].text;
      }
      name = recv.empty() ? std::string(t[close + 1].text)
                          : recv + "." + std::string(t[close + 1].text);
      k = close + 2;
    } else if (t.IsIdent(k)) {
      name = t[k].text;
      ++k;
    } else {
      continue;
    }
    if (t.Is(k, "[")) k = t.SkipGroup(k);  // type parameters
    if (!t.Is(k, "(") || t.Match(k) < 0) continue;
    // Results, then `{` on the same line as what precedes it (Go's semicolon rule).
    int q = t.Match(k) + 1;
    int line = t[q - 1].line;
    int open = -1;
    for (int steps = 0; q < t.size() && steps < 60; ++steps) {
      if (t[q].line > line) break;
      const std::string_view x = t[q].text;
      if (x == "{") {
        if (t.Is(q - 1, "struct") || t.Is(q - 1, "interface")) {  // a type literal
          q = t.SkipGroup(q);
          line = t[q - 1].line;
          continue;
        }
        open = q;
        break;
      }
      if (x == "(" || x == "[") {
        q = t.SkipGroup(q);
        line = t[q - 1].line;
        continue;
      }
      if (OneOf(x, {";", "=", "}", ")", ",", ":="})) break;
      line = t[q].line;
      ++q;
    }
    if (open < 0) continue;
    out->push_back({name, i, open, -1});
  }
}

// ---- Rust ----

void FindRust(const Tokens& t, std::vector<Candidate>* out) {
  std::map<int, std::string> containers;
  for (int i = 0; i + 1 < t.size(); ++i) {
    if (t.Is(i, "trait") && t.IsIdent(i + 1)) {
      int k = i + 2;
      while (k < t.size() && !t.Is(k, "{") && !t.Is(k, ";")) {
        k = t.Is(k, "<") && t.SkipAngles(k) > 0 ? t.SkipAngles(k) : k + 1;
      }
      if (t.Is(k, "{")) containers[k] = t[i + 1].text;
      continue;
    }
    // `impl` as an item, not `-> impl Trait` or `x: impl Trait`.
    if (!t.Is(i, "impl") ||
        !(i == 0 || OneOf(t[i - 1].text, {"}", ";", "{", "]", "unsafe", "default"}))) {
      continue;
    }
    int k = i + 1;
    if (t.Is(k, "<")) k = t.SkipAngles(k);
    if (k < 0) continue;
    // impl<T> Trait for Type<T> where ... {  -> Type
    std::string type;
    bool in_where = false;
    while (k < t.size() && !t.Is(k, "{") && !t.Is(k, ";") && !t.Is(k, "}")) {
      if (t.Is(k, "<")) {
        const int after = t.SkipAngles(k);
        k = after > 0 ? after : k + 1;
        continue;
      }
      if (t.Is(k, "(") || t.Is(k, "[")) {
        k = t.SkipGroup(k);
        continue;
      }
      if (t.Is(k, "where")) in_where = true;
      if (t.Is(k, "for")) type.clear();
      if (!in_where && t.IsIdent(k) &&
          !OneOf(t[k].text, {"for", "dyn", "mut", "const", "unsafe"})) {
        type = t[k].text;
      }
      ++k;
    }
    if (t.Is(k, "{") && !type.empty()) containers[k] = type;
  }
  for (int i = 0; i + 2 < t.size(); ++i) {
    if (!t.Is(i, "fn") || !t.IsIdent(i + 1)) continue;
    int k = i + 2;
    if (t.Is(k, "<")) k = t.SkipAngles(k);
    if (k < 0 || !t.Is(k, "(") || t.Match(k) < 0) continue;
    int q = t.Match(k) + 1;
    int open = -1;
    for (int steps = 0; q < t.size() && steps < 80; ++steps) {
      const std::string_view x = t[q].text;
      if (x == "{") {
        open = q;
        break;
      }
      if (x == ";" || x == "}" || x == ")") break;
      if (x == "(" || x == "[") {
        q = t.SkipGroup(q);
      } else if (x == "<") {
        const int after = t.SkipAngles(q);
        q = after > 0 ? after : q + 1;
      } else {
        ++q;
      }
    }
    if (open < 0) continue;
    int first = i;
    while (first > 0) {
      if (t.IsIdent(first - 1) &&
          OneOf(t[first - 1].text, {"pub", "async", "unsafe", "const", "extern", "default"})) {
        --first;
      } else if (t.Is(first - 1, ")") && t.Match(first - 1) > 0 &&
                 t.Is(t.Match(first - 1) - 1, "pub")) {
        first = t.Match(first - 1) - 1;  // pub(crate)
      } else {
        break;
      }
    }
    out->push_back({Qualify(t, i, containers, "::", std::string(t[i + 1].text)), first, open, -1});
  }
}

// ---- JavaScript and TypeScript ----

// After the `)` of a parameter list at `close`, an optional `: ReturnType`;
// returns the index of the token after the type (the `{` or `=>` expected).
int SkipJsReturnType(const Tokens& t, int close) {
  int k = close + 1;
  if (!t.Is(k, ":")) return k;
  ++k;
  for (int steps = 0; k < t.size() && steps < 80; ++steps) {
    const std::string_view x = t[k].text;
    const bool type_expected = OneOf(t[k - 1].text, {":", "|", "&", "=>", ",", "<", "keyof"});
    if (x == "{" && !type_expected) return k;
    if (x == "=>" && !OneOf(t[k - 1].text, {":", "|", "&"})) {
      // `(a): T => ...`: the arrow of the function itself, unless in a function type.
      return k;
    }
    if (x == "{" || x == "(" || x == "[") {
      k = t.SkipGroup(k);
    } else if (x == "<") {
      const int after = t.SkipAngles(k);
      k = after > 0 ? after : k + 1;
    } else if (x == ";" || x == "}" || x == ")" || x == "=") {
      return k;
    } else {
      ++k;
    }
  }
  return k;
}

// The last token of an arrow's expression body starting at `k`.
int JsExpressionEnd(const Tokens& t, int k) {
  int last = k;
  for (int q = k; q < t.size(); ++q) {
    const std::string_view x = t[q].text;
    if (x == ";" || x == "}" || x == ")" || x == "]" || x == ",") break;
    if (q > k && t[q].line > t[last].line &&
        !OneOf(t[last].text, {"=>", "?", ":", "+", "-", "*", "/", "&&", "||", "(", ",", "=",
                              "==", "===", "!=", "!==", ".", "??"}) &&
        !OneOf(x, {".", "?", ":", "+", "-", "*", "/", "&&", "||", "??"})) {
      break;
    }
    if (x == "(" || x == "[" || x == "{") {
      q = t.SkipGroup(q) - 1;
      if (q >= t.size()) return t.size() - 1;
    }
    last = q;
  }
  return last;
}

// From the token after `=` of `name = ...`: an arrow or function expression.
bool JsFunctionValue(const Tokens& t, int k, Candidate* c) {
  if (t.Is(k, "async")) ++k;
  if (t.Is(k, "function")) {
    ++k;
    if (t.Is(k, "*")) ++k;
    if (t.IsIdent(k)) ++k;
    if (!t.Is(k, "(") || t.Match(k) < 0) return false;
    const int open = SkipJsReturnType(t, t.Match(k));
    if (!t.Is(open, "{")) return false;
    c->body_open = open;
    return true;
  }
  if (t.Is(k, "<")) k = t.SkipAngles(k);
  if (k < 0) return false;
  int arrow;
  if (t.Is(k, "(") && t.Match(k) >= 0) {
    arrow = SkipJsReturnType(t, t.Match(k));
  } else if (t.IsIdent(k)) {
    arrow = k + 1;
  } else {
    return false;
  }
  if (!t.Is(arrow, "=>") || arrow + 1 >= t.size()) return false;
  if (t.Is(arrow + 1, "{")) {
    c->body_open = arrow + 1;
  } else {
    c->body_last = JsExpressionEnd(t, arrow + 1);
  }
  return true;
}

constexpr std::string_view kJsModifiers[] = {"public", "private",  "protected", "static",
                                             "async",  "readonly", "override",  "abstract",
                                             "get",    "set",      "declare",   "accessor"};

constexpr std::string_view kJsNotNames[] = {
    "if",  "for",    "while", "switch", "catch",  "function", "return", "with",
    "new", "typeof", "await", "yield",  "delete", "void",     "super",  "import"};

void FindJs(const Tokens& t, std::vector<Candidate>* out) {
  std::map<int, std::string> classes;
  for (int i = 0; i + 1 < t.size(); ++i) {
    if (!t.Is(i, "class") || !t.IsIdent(i + 1)) continue;
    int k = i + 2;
    for (int steps = 0; k < t.size() && steps < 60 && !t.Is(k, "{") && !t.Is(k, ";"); ++steps) {
      k = t.Is(k, "(")                          ? t.SkipGroup(k)
          : t.Is(k, "<") && t.SkipAngles(k) > 0 ? t.SkipAngles(k)
                                                : k + 1;
    }
    if (t.Is(k, "{")) classes[k] = t[i + 1].text;
  }
  auto first_of = [&](int k) {
    while (k > 0 && t.IsIdent(k - 1) &&
           (OneOf(t[k - 1].text, kJsModifiers) || OneOf(t[k - 1].text, {"export", "default"}))) {
      --k;
    }
    return k;
  };
  for (int i = 0; i + 1 < t.size(); ++i) {
    Candidate c;
    if (t.Is(i, "function")) {
      int k = i + 1;
      if (t.Is(k, "*")) ++k;
      if (!t.IsIdent(k)) continue;
      c.name = t[k].text;
      ++k;
      if (t.Is(k, "<")) k = t.SkipAngles(k);
      if (k < 0 || !t.Is(k, "(") || t.Match(k) < 0) continue;
      const int open = SkipJsReturnType(t, t.Match(k));
      if (!t.Is(open, "{")) continue;  // an overload signature
      c.first = first_of(i);
      c.body_open = open;
      c.name = Qualify(t, i, classes, ".", c.name);
    } else if (OneOf(t[i].text, {"const", "let", "var"}) && t.IsIdent(i + 1)) {
      int k = i + 2;
      if (t.Is(k, ":")) {  // a type annotation, up to the `=`
        while (k < t.size() && !t.Is(k, "=") && !t.Is(k, ";")) {
          if (t.Is(k, "(") || t.Is(k, "[") || t.Is(k, "{")) {
            k = t.SkipGroup(k);
          } else if (t.Is(k, "<") && t.SkipAngles(k) > 0) {
            k = t.SkipAngles(k);
          } else {
            ++k;
          }
        }
      }
      if (!t.Is(k, "=") || !JsFunctionValue(t, k + 1, &c)) continue;
      c.name = Qualify(t, i, classes, ".", std::string(t[i + 1].text));
      c.first = first_of(i);
    } else if (t.IsIdent(i) && classes.count(t.Parent(i)) && !OneOf(t[i].text, kJsNotNames) &&
               !OneOf(t[i].text, kJsModifiers) &&
               !(t.Is(i - 1, ".") || t.Is(i - 1, "=") || t.Is(i - 1, "new") || t.Is(i - 1, "@"))) {
      // A class member: method `name(...) {` or arrow field `name = (...) => ...`.
      int k = i + 1;
      if (t.Is(k, "?") || t.Is(k, "!")) ++k;
      if (t.Is(k, "<")) k = t.SkipAngles(k);
      if (k < 0) continue;
      if (t.Is(k, "(") && t.Match(k) >= 0) {
        const int open = SkipJsReturnType(t, t.Match(k));
        if (!t.Is(open, "{")) continue;
        c.body_open = open;
      } else {
        if (t.Is(k, ":")) {
          while (k < t.size() && !t.Is(k, "=") && !t.Is(k, ";") && !t.Is(k, "}")) {
            k = t.Is(k, "(") || t.Is(k, "[") || t.Is(k, "{") ? t.SkipGroup(k) : k + 1;
          }
        }
        if (!t.Is(k, "=") || !JsFunctionValue(t, k + 1, &c)) continue;
      }
      int first = i;
      if (t.Is(first - 1, "*")) --first;
      c.first = first_of(first);
      c.name = Qualify(t, i, classes, ".", std::string(t[i].text));
    } else {
      continue;
    }
    out->push_back(std::move(c));
  }
}

std::vector<FunctionSpan> DetectBraced(std::string_view code, Lang lang) {
  const LineIndex lines(code);
  const std::string blanked = Blank(code, lang);
  const Tokens t(blanked);
  std::vector<Candidate> found;
  switch (lang) {
    case Lang::kC:
      FindC(t, &found);
      break;
    case Lang::kGo:
      FindGo(t, &found);
      break;
    case Lang::kRust:
      FindRust(t, &found);
      break;
    case Lang::kJs:
      FindJs(t, &found);
      break;
    case Lang::kPython:
      break;
  }
  std::vector<FunctionSpan> out;
  std::unordered_set<int> bodies;
  for (const Candidate& c : found) {
    int last_line;
    if (c.body_open >= 0) {
      if (!bodies.insert(c.body_open).second) continue;  // one body, one function
      const int close = t.Match(c.body_open);
      last_line = close >= 0 ? t[close].line : lines.count();
    } else {
      last_line = t[c.body_last].line;
    }
    const int first_line = t[c.first].line;
    out.push_back({c.name, first_line, last_line, std::string(lines.Lines(first_line, last_line))});
  }
  std::stable_sort(out.begin(), out.end(), [](const FunctionSpan& a, const FunctionSpan& b) {
    return a.first_line < b.first_line;
  });
  return out;
}

// ---------------------------------------------------------------------------
// Python: blocks by indentation.

struct PyLine {
  bool logical_start = true;  // not inside brackets, a string or after a backslash
  bool blank = true;          // only whitespace, or (at a logical start) only a comment
  int indent = 0;
};

std::vector<PyLine> ScanPython(const LineIndex& lines) {
  std::vector<PyLine> out(lines.count());
  int depth = 0;
  char quote = 0;  // the open string's quote character, or 0
  bool triple = false;
  bool continued = false;
  for (int l = 1; l <= lines.count(); ++l) {
    const std::string_view text = lines.Line(l);
    PyLine& info = out[l - 1];
    info.logical_start = quote == 0 && depth == 0 && !continued;
    continued = false;
    int indent = 0;
    size_t i = 0;
    for (; i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\f'); ++i) {
      indent = text[i] == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
    }
    info.indent = indent;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (quote != 0) {
        info.blank = info.blank && (c == ' ' || c == '\t' || c == '\r');
        if (c == '\\') {
          ++i;
        } else if (c == quote) {
          if (!triple) {
            quote = 0;
          } else if (text.substr(i, 3) == std::string(3, quote)) {
            quote = 0;
            i += 2;
          }
        }
        continue;
      }
      if (c == '#') {
        if (!info.logical_start) info.blank = false;
        break;
      }
      if (c == ' ' || c == '\t' || c == '\r') continue;
      info.blank = false;
      if (c == '"' || c == '\'') {
        quote = c;
        triple = text.substr(i, 3) == std::string(3, c);
        if (triple) i += 2;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
        --depth;
      } else if (c == '\\' && i + 1 == text.size() - (text.back() == '\r' ? 1 : 0)) {
        continued = true;
      }
    }
    if (quote != 0 && !triple) quote = 0;  // an unterminated one-line string
  }
  return out;
}

// The name defined by a `def`, `async def` or `class` statement, and whether it is a class.
bool PythonDefinition(std::string_view line, std::string* name, bool* is_class) {
  size_t i = line.find_first_not_of(" \t\f");
  if (i == std::string_view::npos) return false;
  std::string_view rest = line.substr(i);
  auto keyword = [&](std::string_view word) {
    if (rest.substr(0, word.size()) != word || rest.size() == word.size() ||
        (rest[word.size()] != ' ' && rest[word.size()] != '\t')) {
      return false;
    }
    rest.remove_prefix(word.size());
    rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
    return true;
  };
  if (keyword("async") && !rest.starts_with("def")) return false;
  if (keyword("def")) {
    *is_class = false;
  } else if (keyword("class")) {
    *is_class = true;
  } else {
    return false;
  }
  size_t k = 0;
  while (k < rest.size() && IsIdentChar(rest[k]) && rest[k] != '$') ++k;
  if (k == 0 || IsDigit(rest[0])) return false;
  *name = std::string(rest.substr(0, k));
  size_t after = rest.find_first_not_of(" \t", k);
  if (after == std::string_view::npos) return false;
  const char c = rest[after];
  return c == '(' || c == '[' || (*is_class && c == ':');
}

std::vector<FunctionSpan> DetectPython(std::string_view code) {
  const LineIndex lines(code);
  const std::vector<PyLine> info = ScanPython(lines);
  struct Open {
    int indent;
    std::string name;
    bool is_class;
  };
  std::vector<Open> stack;
  std::vector<FunctionSpan> out;
  const int n = lines.count();
  for (int l = 1; l <= n; ++l) {
    const PyLine& li = info[l - 1];
    if (!li.logical_start || li.blank) continue;
    while (!stack.empty() && stack.back().indent >= li.indent) stack.pop_back();
    std::string name;
    bool is_class = false;
    if (!PythonDefinition(lines.Line(l), &name, &is_class)) continue;
    if (!is_class) {
      // Qualified by the classes directly around it (not through a function).
      std::string qualified = name;
      for (auto o = stack.rbegin(); o != stack.rend() && o->is_class; ++o) {
        qualified = o->name + "." + qualified;
      }
      // The block: every line up to the next logical line indented no deeper.
      int last = l;
      for (int m = l + 1; m <= n; ++m) {
        const PyLine& lm = info[m - 1];
        if (lm.blank) continue;
        if (lm.logical_start && lm.indent <= li.indent) break;
        last = m;
      }
      out.push_back({qualified, l, last, std::string(lines.Lines(l, last))});
    }
    stack.push_back({li.indent, name, is_class});
  }
  return out;
}

std::optional<Lang> ParseLang(std::string_view language) {
  if (language == "python") return Lang::kPython;
  if (language == "javascript" || language == "typescript") return Lang::kJs;
  if (language == "go") return Lang::kGo;
  if (language == "rust") return Lang::kRust;
  if (language == "c" || language == "cpp") return Lang::kC;
  return std::nullopt;
}

// The innermost function of `context` that contains an occurrence of `text`.
void AddEnclosing(std::string_view text, std::string_view context, std::string_view language,
                  std::set<std::string>* names) {
  // Leading and trailing blank lines of the fragment do not decide its place.
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos || context.empty()) return;
  const size_t end = text.find_last_not_of(" \t\r\n") + 1;
  const std::string_view core = text.substr(begin, end - begin);
  const std::vector<FunctionSpan> functions = DetectFunctions(context, language);
  if (functions.empty()) return;
  const LineIndex lines(context);
  for (size_t at = context.find(core); at != std::string_view::npos;
       at = context.find(core, at + 1)) {
    const int first = lines.LineOf(at);
    const int last = lines.LineOf(at + core.size() - 1);
    const FunctionSpan* best = nullptr;
    for (const FunctionSpan& f : functions) {
      if (f.first_line <= first && last <= f.last_line &&
          (best == nullptr || f.last_line - f.first_line < best->last_line - best->first_line)) {
        best = &f;
      }
    }
    if (best != nullptr) names->insert(best->name);
  }
}

}  // namespace

std::vector<FunctionSpan> DetectFunctions(std::string_view code, std::string_view language) {
  const std::optional<Lang> lang = ParseLang(language);
  if (!lang || code.empty()) return {};
  if (*lang == Lang::kPython) return DetectPython(code);
  return DetectBraced(code, *lang);
}

std::vector<std::string> ChangedFunctions(std::string_view old_code, std::string_view new_code,
                                          std::string_view language, WriteKind kind,
                                          std::string_view file_context) {
  std::set<std::string> names;
  const std::vector<FunctionSpan> before = DetectFunctions(old_code, language);
  const std::vector<FunctionSpan> after = DetectFunctions(new_code, language);
  if (kind == WriteKind::kWholeFile) {
    // Overloads share a name: compare all the bodies of a name, in order.
    std::map<std::string, std::vector<std::string_view>> old_bodies;
    std::map<std::string, std::vector<std::string_view>> new_bodies;
    for (const FunctionSpan& f : before) old_bodies[f.name].push_back(f.body);
    for (const FunctionSpan& f : after) new_bodies[f.name].push_back(f.body);
    for (const auto& [name, bodies] : new_bodies) {
      auto it = old_bodies.find(name);
      if (it == old_bodies.end() || it->second != bodies) names.insert(name);
    }
  } else {
    for (const FunctionSpan& f : before) names.insert(f.name);
    for (const FunctionSpan& f : after) names.insert(f.name);
    if (after.empty()) AddEnclosing(new_code, file_context, language, &names);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> ChangedFunctions(std::string_view old_code, std::string_view new_code,
                                          std::string_view language,
                                          std::string_view file_context) {
  const bool snippet = !file_context.empty() && file_context != new_code;
  return ChangedFunctions(old_code, new_code, language,
                          snippet ? WriteKind::kSnippet : WriteKind::kWholeFile, file_context);
}

}  // namespace sessiondb::memory
