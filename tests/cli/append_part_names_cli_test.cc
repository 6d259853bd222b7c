// Errors about a message's attachments name them as the user typed them:
// the first --image is "image 1" whether or not there is text before it.
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

class AppendPartNames : public Cli {
 protected:
  void SetUp() override {
    ASSERT_EQ(NewSession({"--id", "chat-1"}), "chat-1");
    ASSERT_EQ(Sdb({"append", "chat-1", "the first message"}).exit_code, 0);
  }
};

TEST_F(AppendPartNames, ImagesAndFilesAreNumberedAsTypedNotAsStored) {
  const std::string good = WritePng("good.png", "ok");
  CliRun first = Sdb({"append", "chat-1", "look", "--image", dir_.Sub("missing.png")});
  EXPECT_EQ(first.exit_code, 3) << first.err;
  EXPECT_TRUE(Contains(first.err, "error: image 1: cannot read")) << first.err;
  EXPECT_FALSE(Contains(first.err, "part")) << first.err;

  CliRun second =
      Sdb({"append", "chat-1", "look", "--image", good, "--image", dir_.Sub("missing.png")});
  EXPECT_TRUE(Contains(second.err, "error: image 2: cannot read")) << second.err;

  CliRun file = Sdb({"append", "chat-1", "--image", good, "--file", dir_.Sub("gone.pdf")});
  EXPECT_TRUE(Contains(file.err, "error: file 1: cannot read")) << file.err;

  // Without text the first --image is still image 1.
  CliRun no_text = Sdb({"append", "chat-1", "--image", WriteFile("fake.png", "not a png")});
  EXPECT_EQ(no_text.exit_code, 2) << no_text.err;
  EXPECT_TRUE(Contains(no_text.err, "error: image 1")) << no_text.err;
  EXPECT_FALSE(Contains(no_text.err, "part")) << no_text.err;
  EXPECT_EQ(MessageCount("chat-1"), 1u);
}

}  // namespace
}  // namespace sessiondb::testing
