// The path a code write is recorded under: absolute and normal, resolved
// against the folder the tool ran in, and left alone when none is known.
#include "memory/write_path.h"

#include "gtest/gtest.h"

namespace sessiondb::memory {
namespace {

TEST(ResolveWritePath, ARelativePathJoinsTheFolder) {
  EXPECT_EQ(ResolveWritePath("src/app.css", "/home/dev/app"), "/home/dev/app/src/app.css");
  EXPECT_EQ(ResolveWritePath("./src/../lib/x.rs", "/home/dev/app/"), "/home/dev/app/lib/x.rs");
  EXPECT_EQ(ResolveWritePath("../other/y.py", "/home/dev/app"), "/home/dev/other/y.py");
}

TEST(ResolveWritePath, AnAbsolutePathIsOnlyMadeNormal) {
  EXPECT_EQ(ResolveWritePath("/home/dev/app/src/app.css", "/elsewhere"),
            "/home/dev/app/src/app.css");
  EXPECT_EQ(ResolveWritePath("/home//dev/./app/src/../src/app.css", ""),
            "/home/dev/app/src/app.css");
  EXPECT_EQ(ResolveWritePath("/../../etc/x", ""), "/etc/x");  // never above the root
  EXPECT_EQ(ResolveWritePath("/", ""), "/");
}

TEST(ResolveWritePath, WithoutAnAbsoluteFolderARelativePathStaysAsWritten) {
  EXPECT_EQ(ResolveWritePath("src/app.css", ""), "src/app.css");
  EXPECT_EQ(ResolveWritePath("src/app.css", "relative/dir"), "src/app.css");
}

TEST(ResolveWritePath, WindowsPathsKeepTheirStyle) {
  EXPECT_TRUE(IsAbsolutePath("C:\\Users\\dev"));
  EXPECT_TRUE(IsAbsolutePath("c:/Users/dev"));
  EXPECT_TRUE(IsAbsolutePath("\\\\server\\share\\x"));
  EXPECT_FALSE(IsAbsolutePath("src\\app.css"));
  EXPECT_EQ(ResolveWritePath("src/app.css", "C:\\Users\\dev\\app"),
            "C:\\Users\\dev\\app\\src\\app.css");
  EXPECT_EQ(ResolveWritePath("C:\\Users\\dev\\app\\.\\src\\..\\src\\app.css", ""),
            "C:\\Users\\dev\\app\\src\\app.css");
}

}  // namespace
}  // namespace sessiondb::memory
