// Which functions a piece of code defines, and which of them a write
// touched: the function-level half of the agents' code memory (per-function
// churn, "this function was rewritten 4 times today" warnings).
//
// Detection is lexical, not a parser: comments, string and character
// literals (and C/C++ preprocessor lines) are blanked first, then function
// headers are recognised token by token and their bodies end where the
// braces balance (Python: at the dedent). It is best effort by design: code
// that does not compile still gives an answer, and odd constructs may be
// missed, never crash it.
//
// Names, per language:
//   python      f, and Class.method (Outer.Inner.method for nested classes)
//   javascript,
//   typescript  f for `function f(`, `const f = (..) =>` and `const f =
//               function(`; Class.method for class methods and arrow fields
//   go          f, and Recv.method for methods (pointer or not)
//   rust        f, and Type::method inside `impl .. Type` / `trait Type`
//   c, cpp      f, Class::method as written outside the class, and
//               Class::method for methods defined inside `class`/`struct`
// Only classes directly around a definition qualify it: a function nested in
// a function or method body keeps its own name. Lambdas and anonymous
// functions that are not assigned are not reported.
//
// Thread-safety: pure functions.
//
// Example:
//   for (const FunctionSpan& f : DetectFunctions(code, "go")) {
//     std::cout << f.name << " " << f.first_line << "-" << f.last_line << "\n";
//   }
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::memory {

struct FunctionSpan {
  std::string name;
  int first_line = 0;  // 1-based, the line of the header (`def`, `func`, the return type...)
  int last_line = 0;   // 1-based, the line of the closing brace or last line of the block
  std::string body;    // the text of lines first_line..last_line, without the final line break
};

// The function (and method) definitions in `code`, in the order they start.
// `language` is a LanguageForPath name; any other gives an empty vector.
// Declarations without a body (prototypes, trait/interface signatures,
// overload signatures) are not definitions. A body whose braces never
// balance runs to the end of the code.
std::vector<FunctionSpan> DetectFunctions(std::string_view code, std::string_view language);

// What kind of write ChangedFunctions looks at.
enum class WriteKind {
  // old_code is the whole file before (empty for a new file), new_code the whole file after.
  kWholeFile,
  // old_code and new_code are the replaced and replacing fragments of an
  // edit (Claude Code Edit, an apply_patch hunk).
  kSnippet,
};

// Names of the functions a write touched, sorted and unique.
//   kWholeFile: the functions of new_code whose body differs from the body of
//     old_code's function of the same name, or that old_code does not define
//     (so for a new file, all of them). Functions that were removed are not
//     listed. Bodies are compared as text, so moving a function is no change.
//   kSnippet: the functions defined in either fragment; and when new_code
//     defines none, the innermost function of `file_context` (the whole file
//     after the edit; may be empty when unknown) whose span contains an
//     occurrence of new_code's text (leading and trailing blank lines aside).
std::vector<std::string> ChangedFunctions(std::string_view old_code, std::string_view new_code,
                                          std::string_view language, WriteKind kind,
                                          std::string_view file_context = {});

// As above, with the kind inferred: kSnippet when file_context is given (and
// is not new_code itself), else kWholeFile. Callers that know the kind (an
// ExtractedWrite's whole_file) should say it; a snippet without context read
// as a whole file misses only functions that were deleted or left unchanged.
std::vector<std::string> ChangedFunctions(std::string_view old_code, std::string_view new_code,
                                          std::string_view language,
                                          std::string_view file_context = {});

}  // namespace sessiondb::memory
