// SharedLibrary opens a library when a feature first needs it: a missing file
// tells the user what to install, a file lacking a function says which, and
// $<path_variable> names another file.
#include "core/shared_library.h"

#include <stdlib.h>

#include <string>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

// libm is on every glibc system; its functions have known values.
constexpr LibrarySpec kLibM = {.soname = "libm.so.6",
                               .path_variable = "SESSIONDB_TEST_LIBM",
                               .feature = "the test's arithmetic",
                               .package = "libc6"};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class SharedLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(kLibM.path_variable); }
  void TearDown() override { unsetenv(kLibM.path_variable); }
};

TEST_F(SharedLibraryTest, BindsAFunctionThatThenWorks) {
  Result<SharedLibrary> lib = SharedLibrary::Open(kLibM);
  ASSERT_TRUE(lib) << lib.error().ToString();
  EXPECT_EQ(lib->file(), "libm.so.6");
  double (*cbrt_fn)(double) = nullptr;
  ASSERT_TRUE(lib->Bind("cbrt", &cbrt_fn).ok());
  EXPECT_DOUBLE_EQ(cbrt_fn(27.0), 3.0);
}

TEST_F(SharedLibraryTest, AMissingLibrarySaysWhichPackageToInstall) {
  setenv(kLibM.path_variable, "/nonexistent-sessiondb-lib/libm.so.6", 1);
  Result<SharedLibrary> lib = SharedLibrary::Open(kLibM);
  ASSERT_FALSE(lib);
  EXPECT_EQ(lib.error().code(), StatusCode::kFailedPrecondition);
  const std::string& m = lib.error().message();
  EXPECT_TRUE(Contains(m, "the test's arithmetic needs libc6 (libm.so.6): apt install libc6")) << m;
  EXPECT_TRUE(Contains(m, "cannot load /nonexistent-sessiondb-lib/libm.so.6")) << m;
  EXPECT_TRUE(Contains(m, "$SESSIONDB_TEST_LIBM names another file")) << m;
}

TEST_F(SharedLibraryTest, TheVariableNamesTheFileOpened) {
  // A soname nobody has: only the variable can make this open.
  constexpr LibrarySpec kAbsent = {.soname = "libsessiondb-absent.so.1",
                                   .path_variable = "SESSIONDB_TEST_ABSENT",
                                   .feature = "the test",
                                   .package = "nothing"};
  unsetenv(kAbsent.path_variable);
  EXPECT_FALSE(SharedLibrary::Open(kAbsent));
  setenv(kAbsent.path_variable, "libm.so.6", 1);
  Result<SharedLibrary> lib = SharedLibrary::Open(kAbsent);
  ASSERT_TRUE(lib) << lib.error().ToString();
  EXPECT_EQ(lib->file(), "libm.so.6");
  double (*cbrt_fn)(double) = nullptr;
  ASSERT_TRUE(lib->Bind("cbrt", &cbrt_fn).ok());
  EXPECT_DOUBLE_EQ(cbrt_fn(8.0), 2.0);
  // An empty variable is as good as unset.
  setenv(kAbsent.path_variable, "", 1);
  EXPECT_FALSE(SharedLibrary::Open(kAbsent));
  unsetenv(kAbsent.path_variable);
}

TEST_F(SharedLibraryTest, AFunctionTheLibraryLacksIsNamed) {
  Result<SharedLibrary> lib = SharedLibrary::Open(kLibM);
  ASSERT_TRUE(lib) << lib.error().ToString();
  void (*missing)() = nullptr;
  Status bound = lib->Bind("sessiondb_no_such_function", &missing);
  EXPECT_EQ(bound.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(bound.message(), "sessiondb_no_such_function")) << bound.message();
  EXPECT_TRUE(Contains(bound.message(), "libm.so.6")) << bound.message();
  EXPECT_EQ(missing, nullptr);
}

// A table for LazyLibrary, and a bind that counts its runs and can be told
// to fail once (a library's own setup failing, like libcurl's global init).
struct MathTable {
  double (*cbrt)(double) = nullptr;
};
int math_binds = 0;
bool fail_next_bind = false;
Status BindMath(const SharedLibrary& lib, MathTable* table) {
  ++math_binds;
  if (fail_next_bind) {
    fail_next_bind = false;
    return Status::Internal("the setup failed");
  }
  return lib.Bind("cbrt", &table->cbrt);
}

TEST_F(SharedLibraryTest, ALazyLibraryBindsOnceAndTriesAgainAfterAFailure) {
  constexpr LibrarySpec kLater = {.soname = "libsessiondb-absent.so.1",
                                  .path_variable = "SESSIONDB_TEST_LATER",
                                  .feature = "the test",
                                  .package = "nothing"};
  static LazyLibrary<MathTable> math(kLater, BindMath);
  unsetenv(kLater.path_variable);
  math_binds = 0;
  Result<const MathTable*> missing = math.Load();
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(math_binds, 0);

  setenv(kLater.path_variable, "libm.so.6", 1);
  fail_next_bind = true;
  Result<const MathTable*> failed = math.Load();
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message(), "the setup failed");

  Result<const MathTable*> loaded = math.Load();
  ASSERT_TRUE(loaded) << loaded.error().ToString();
  EXPECT_DOUBLE_EQ((*loaded)->cbrt(27.0), 3.0);
  EXPECT_EQ(math_binds, 2);
  // Bound once: later calls hand out the same table without binding again.
  unsetenv(kLater.path_variable);
  Result<const MathTable*> again = math.Load();
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *loaded);
  EXPECT_EQ(&math.Get(), *loaded);
  EXPECT_EQ(math_binds, 2);
}

TEST(SharedLibraryDeathTest, ALazyLibraryUsedBeforeItLoadedAborts) {
  static LazyLibrary<MathTable> never(kLibM, BindMath);
  EXPECT_DEATH((void)never.Get(), "libm.so.6 used before it was loaded");
}

}  // namespace
}  // namespace sessiondb
