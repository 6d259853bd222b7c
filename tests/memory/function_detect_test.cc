// Function detection per language, and which functions a write touched.
#include "memory/function_detect.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace sessiondb::memory {
namespace {

using Names = std::vector<std::string>;

Names NamesOf(const std::vector<FunctionSpan>& spans) {
  Names out;
  for (const FunctionSpan& s : spans) out.push_back(s.name);
  return out;
}

const FunctionSpan* Find(const std::vector<FunctionSpan>& spans, const std::string& name) {
  for (const FunctionSpan& s : spans) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

// Expects `name` at lines first..last.
void ExpectSpan(const std::vector<FunctionSpan>& spans, const std::string& name, int first,
                int last) {
  const FunctionSpan* s = Find(spans, name);
  ASSERT_NE(s, nullptr) << name << " not found";
  EXPECT_EQ(s->first_line, first) << name;
  EXPECT_EQ(s->last_line, last) << name;
}

// --- Python ---

constexpr const char* kPython = R"(import os

def top(a, b):
    """Adds.

Docstring text at column 0 does not end the function.
    """
    return a + b


class Shape:
    def area(self):
        return 0

    async def load(self,
                   path):
        # a comment
        data = {
            "k": 1,
        }
        return data

    class Inner:
        def deep(self):
            pass

def after():
    def helper():
        return 1
    return helper()
x = 1
)";

TEST(DetectFunctionsPython, FindsFunctionsMethodsAndNestedClassMethods) {
  auto spans = DetectFunctions(kPython, "python");
  EXPECT_EQ(NamesOf(spans),
            (Names{"top", "Shape.area", "Shape.load", "Shape.Inner.deep", "after", "helper"}));
}

TEST(DetectFunctionsPython, BodyEndsAtTheDedent) {
  auto spans = DetectFunctions(kPython, "python");
  ExpectSpan(spans, "top", 3, 8);  // the docstring's column-0 line is inside; blank lines are not
  ExpectSpan(spans, "Shape.area", 12, 13);
  ExpectSpan(spans, "Shape.load", 15, 21);  // a multi-line signature and dict
  ExpectSpan(spans, "Shape.Inner.deep", 24, 25);
  ExpectSpan(spans, "after", 27, 30);  // ends before `x = 1` at column 0
  ExpectSpan(spans, "helper", 28, 29);
  EXPECT_EQ(Find(spans, "Shape.area")->body, "    def area(self):\n        return 0");
}

TEST(DetectFunctionsPython, DefInsideAStringIsNotAFunction) {
  auto spans =
      DetectFunctions("s = '''\ndef fake():\n    pass\n'''\ndef real():\n    pass\n", "python");
  EXPECT_EQ(NamesOf(spans), (Names{"real"}));
}

// --- JavaScript and TypeScript ---

constexpr const char* kJs = R"(import x from "y";

function plain(a) {
  if (a) {
    return "}";
  }
  return 1;
}

const arrow = (a, b) => {
  return a + b;
};

const short = x => x * 2;

let expr = function (q) {
  return q;
};

export async function loader() {
  // } in a comment
  const s = `template ${1} }`;
  return s;
}

class Widget extends Base {
  constructor(props) {
    super(props);
  }

  render() {
    for (const p of this.parts) {
      draw(p);
    }
  }

  static async create() {
    return new Widget();
  }

  onClick = (e) => {
    this.clicked = true;
  };
}
)";

TEST(DetectFunctionsJavaScript, FindsDeclarationsArrowsExpressionsAndClassMethods) {
  auto spans = DetectFunctions(kJs, "javascript");
  EXPECT_EQ(NamesOf(spans),
            (Names{"plain", "arrow", "short", "expr", "loader", "Widget.constructor",
                   "Widget.render", "Widget.create", "Widget.onClick"}));
  ExpectSpan(spans, "plain", 3, 8);  // the "}" string does not close it
  ExpectSpan(spans, "arrow", 10, 12);
  ExpectSpan(spans, "short", 14, 14);
  ExpectSpan(spans, "expr", 16, 18);
  ExpectSpan(spans, "loader", 20, 24);  // comment and template braces ignored
  ExpectSpan(spans, "Widget.render", 31, 35);
  ExpectSpan(spans, "Widget.create", 37, 39);  // from the `static async` modifiers
  ExpectSpan(spans, "Widget.onClick", 41, 43);
}

TEST(DetectFunctionsJavaScript, CallsAndControlStatementsAreNotMethods) {
  auto spans = DetectFunctions(kJs, "javascript");
  EXPECT_EQ(Find(spans, "draw"), nullptr);
  EXPECT_EQ(Find(spans, "Widget.for"), nullptr);
  EXPECT_EQ(Find(spans, "Widget.super"), nullptr);
}

constexpr const char* kTs = R"(interface Repo {
  find(id: string): Promise<User>;
}

function overloaded(x: string): string;
function overloaded(x: any): any {
  return x;
}

export const typed = async (id: string): Promise<{ name: string }> => {
  return { name: id };
};

export class Service<T> implements Repo {
  private cache: Map<string, T> = new Map();

  public async find(id: string): Promise<User> {
    return this.cache.get(id) as User;
  }

  get size(): number {
    return this.cache.size;
  }
}
)";

TEST(DetectFunctionsTypeScript, SkipsSignaturesAndHandlesTypes) {
  auto spans = DetectFunctions(kTs, "typescript");
  EXPECT_EQ(NamesOf(spans), (Names{"overloaded", "typed", "Service.find", "Service.size"}));
  ExpectSpan(spans, "overloaded", 6, 8);  // the overload signature on line 5 is not a definition
  ExpectSpan(spans, "typed", 10, 12);     // the `{ name: string }` return type is not the body
  ExpectSpan(spans, "Service.find", 17, 19);
}

// --- Go ---

constexpr const char* kGo = R"(package main

import "fmt"

func Hello(name string) string {
	return fmt.Sprintf("hi %s }", name)
}

func (s *Server) Handle(w Writer, r *Request) (int, error) {
	go func() {
		s.count++
	}()
	return 0, nil
}

func (c Counter) Value() int { return c.n }

func Map[T any](xs []T, f func(T) T) []T {
	out := make([]T, 0)
	return out
}

func empty() interface{} {
	return nil
}

func external(x int) int
)";

TEST(DetectFunctionsGo, FindsFunctionsAndMethodsByReceiver) {
  auto spans = DetectFunctions(kGo, "go");
  EXPECT_EQ(NamesOf(spans), (Names{"Hello", "Server.Handle", "Counter.Value", "Map", "empty"}));
  ExpectSpan(spans, "Hello", 5, 7);
  ExpectSpan(spans, "Server.Handle", 9, 14);  // the func literal inside is not a function
  ExpectSpan(spans, "Counter.Value", 16, 16);
  ExpectSpan(spans, "Map", 18, 21);
  ExpectSpan(spans, "empty", 23, 25);  // interface{} is the result type, not the body
}

// --- Rust ---

constexpr const char* kRust = R"(use std::fmt;

pub fn parse<'a>(input: &'a str) -> Result<Vec<&'a str>, Error> {
    let c = '{';
    input.split(' ').collect()
}

struct Stack<T> {
    items: Vec<T>,
}

impl<T: Clone> Stack<T> {
    pub fn new() -> Self {
        Stack { items: Vec::new() }
    }

    pub async fn pop(&mut self) -> Option<T>
    where
        T: Send,
    {
        self.items.pop()
    }
}

impl fmt::Display for Stack<i32> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", r#"raw } string"#)
    }
}

trait Named {
    fn name(&self) -> String;
    fn greet(&self) -> String {
        format!("hi {}", self.name())
    }
}

fn make_adder() -> impl Fn(i32) -> i32 {
    fn inner(x: i32) -> i32 { x }
    move |x| inner(x) + 1
}
)";

TEST(DetectFunctionsRust, FindsFnsAndImplMethods) {
  auto spans = DetectFunctions(kRust, "rust");
  EXPECT_EQ(NamesOf(spans), (Names{"parse", "Stack::new", "Stack::pop", "Stack::fmt",
                                   "Named::greet", "make_adder", "inner"}));
  ExpectSpan(spans, "parse", 3, 6);  // lifetimes and the '{' char literal are not braces
  ExpectSpan(spans, "Stack::new", 13, 15);
  ExpectSpan(spans, "Stack::pop", 17, 22);  // a where clause before the body
  ExpectSpan(spans, "Stack::fmt", 26, 28);  // the raw string's brace is ignored
  ExpectSpan(spans, "make_adder", 38, 41);
}

// --- C and C++ ---

constexpr const char* kC = R"(#include <stdio.h>
#define MAX(a, b) { (a) > (b) ? (a) : (b) }

static int helper(int x);

int helper(int x) {
  if (x > 0) {
    return x;
  }
  while (x < 0) {
    x++;
  }
  printf("}");
  return helper2(x);
}

struct point *
make_point(int x,
           int y)
{
  /* { not a brace */
  return 0;
}
)";

TEST(DetectFunctionsC, FindsDefinitionsNotPrototypesCallsOrControlStatements) {
  auto spans = DetectFunctions(kC, "c");
  EXPECT_EQ(NamesOf(spans), (Names{"helper", "make_point"}));
  ExpectSpan(spans, "helper", 6, 15);
  ExpectSpan(spans, "make_point", 17, 23);  // return type on its own line, brace on the next
}

constexpr const char* kCpp = R"(namespace app {

class Parser : public Base {
 public:
  Parser() = default;
  explicit Parser(int n) : n_(n), items_{} {}
  int size() const { return n_; }
  void Parse(const std::string& s) override;
  virtual void Reset() = 0;

 private:
  int n_;
};

void Parser::Parse(const std::string& s) {
  for (char c : s) {
    if (c == '{') Push(c);
  }
  auto f = [&](int x) { return x + 1; };
  std::sort(v.begin(), v.end(), [](int a, int b) { return a < b; });
}

template <typename T>
std::vector<T> Collect(const std::map<int, T>& in) {
  return {};
}

bool operator==(const Parser& a, const Parser& b) {
  return a.size() == b.size();
}

}  // namespace app
)";

TEST(DetectFunctionsCpp, FindsClassMethodsInsideAndOutsideTheClass) {
  auto spans = DetectFunctions(kCpp, "cpp");
  EXPECT_EQ(NamesOf(spans),
            (Names{"Parser::Parser", "Parser::size", "Parser::Parse", "Collect", "operator=="}));
  ExpectSpan(spans, "Parser::Parser", 6, 6);  // through the initializer list
  ExpectSpan(spans, "Parser::Parse", 15, 21);
  ExpectSpan(spans, "Collect", 23, 26);  // the template line starts it
  ExpectSpan(spans, "operator==", 28, 30);
}

TEST(DetectFunctionsCpp, IfStatementsCallsAndPrototypesAreNotFunctions) {
  auto spans = DetectFunctions("void f();\nint main() {\n  if (x) {\n    g(1);\n  }\n}\n", "cpp");
  EXPECT_EQ(NamesOf(spans), (Names{"main"}));
  ExpectSpan(spans, "main", 2, 6);
  // Alone, outside any function, control statements and calls are still not definitions.
  EXPECT_TRUE(DetectFunctions("if (x) {\n  y();\n}\nfoo(1, 2);\nwhile (z) { }\n", "c").empty());
}

TEST(DetectFunctions, UnknownLanguageAndEmptyCodeGiveNothing) {
  EXPECT_TRUE(DetectFunctions("def f():\n    pass\n", "cobol").empty());
  EXPECT_TRUE(DetectFunctions("def f():\n    pass\n", "").empty());
  EXPECT_TRUE(DetectFunctions("", "python").empty());
}

TEST(DetectFunctions, AnUnclosedBodyRunsToTheEnd) {
  auto spans = DetectFunctions("int f() {\n  return 1;\n\n", "c");
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].last_line, 3);
}

// --- ChangedFunctions ---

constexpr const char* kBefore = R"(def a():
    return 1

def b():
    return 2

def gone():
    return 3
)";

constexpr const char* kAfter = R"(import os

def a():
    return 1

def b():
    return 20

def c():
    return 4
)";

TEST(ChangedFunctions, WholeFileCountsOnlyChangedAndNewBodies) {
  // a moved down a line but is unchanged; b changed; c is new; gone was removed.
  EXPECT_EQ(ChangedFunctions(kBefore, kAfter, "python", WriteKind::kWholeFile), (Names{"b", "c"}));
  EXPECT_EQ(ChangedFunctions(kBefore, kAfter, "python"), (Names{"b", "c"}));
}

TEST(ChangedFunctions, NewFileCountsAllItsFunctions) {
  EXPECT_EQ(ChangedFunctions("", kAfter, "python"), (Names{"a", "b", "c"}));
}

TEST(ChangedFunctions, UnchangedFileCountsNothing) {
  EXPECT_TRUE(ChangedFunctions(kAfter, kAfter, "python").empty());
}

TEST(ChangedFunctions, WholeFileComparesOverloadsAsAGroup) {
  const char* before = "int f(int x) {\n  return x;\n}\nint f(double x) {\n  return 1;\n}\n";
  const char* after = "int f(int x) {\n  return x;\n}\nint f(double x) {\n  return 2;\n}\n";
  EXPECT_EQ(ChangedFunctions(before, after, "cpp", WriteKind::kWholeFile), (Names{"f"}));
}

TEST(ChangedFunctions, SnippetCountsFunctionsDefinedInEitherFragment) {
  const char* old_fragment = "def old_name(x):\n    return x\n";
  const char* new_fragment = "def new_name(x):\n    return x\n\ndef extra():\n    pass\n";
  EXPECT_EQ(ChangedFunctions(old_fragment, new_fragment, "python", WriteKind::kSnippet),
            (Names{"extra", "new_name", "old_name"}));
}

constexpr const char* kFileAfterEdit = R"(class Cart:
    def total(self):
        s = 0
        for i in self.items:
            s += i.price * i.qty
        return s

    def clear(self):
        self.items = []
)";

TEST(ChangedFunctions, SnippetInsideAFunctionIsFoundThroughTheFileContext) {
  // The edit touched one line of Cart.total; the fragments define no function.
  const char* old_fragment = "            s += i.price";
  const char* new_fragment = "            s += i.price * i.qty\n";
  EXPECT_EQ(ChangedFunctions(old_fragment, new_fragment, "python", kFileAfterEdit),
            (Names{"Cart.total"}));
  EXPECT_EQ(
      ChangedFunctions(old_fragment, new_fragment, "python", WriteKind::kSnippet, kFileAfterEdit),
      (Names{"Cart.total"}));
  EXPECT_EQ(ChangedFunctions("pass", "        self.items = []", "python", WriteKind::kSnippet,
                             kFileAfterEdit),
            (Names{"Cart.clear"}));
}

TEST(ChangedFunctions, SnippetWithoutContextOrOutsideFunctionsCountsNothing) {
  EXPECT_TRUE(ChangedFunctions("x = 1", "x = 2", "python", WriteKind::kSnippet).empty());
  EXPECT_TRUE(
      ChangedFunctions("import sys", "class Cart:", "python", WriteKind::kSnippet, kFileAfterEdit)
          .empty());
}

TEST(ChangedFunctions, SnippetInACppMethodUsesTheInnermostFunction) {
  const char* file =
      "struct S {\n  int get() const {\n    return v_ + 1;\n  }\n  int v_;\n};\n"
      "int main() {\n  return S{}.get();\n}\n";
  EXPECT_EQ(ChangedFunctions("return v_;", "return v_ + 1;", "cpp", file), (Names{"S::get"}));
}

}  // namespace
}  // namespace sessiondb::memory

namespace sessiondb::memory {
namespace {

// Every prefix of every sample (unclosed strings, comments, bodies) gives
// spans that lie within the code, in order.
TEST(DetectFunctions, TruncatedCodeGivesSaneSpans) {
  const std::pair<const char*, const char*> samples[] = {
      {kPython, "python"}, {kJs, "javascript"}, {kTs, "typescript"}, {kGo, "go"},
      {kRust, "rust"},     {kC, "c"},           {kCpp, "cpp"}};
  for (const auto& [code, language] : samples) {
    const std::string full(code);
    for (size_t n = 0; n <= full.size(); n += 3) {
      const std::string prefix = full.substr(0, n);
      const int lines = static_cast<int>(std::count(prefix.begin(), prefix.end(), '\n')) + 1;
      int previous_first = 0;
      for (const FunctionSpan& s : DetectFunctions(prefix, language)) {
        EXPECT_LE(1, s.first_line) << language << " " << n;
        EXPECT_LE(s.first_line, s.last_line) << language << " " << n;
        EXPECT_LE(s.last_line, lines) << language << " " << n;
        EXPECT_LE(previous_first, s.first_line) << language << " " << n;
        previous_first = s.first_line;
      }
    }
  }
}

}  // namespace
}  // namespace sessiondb::memory
