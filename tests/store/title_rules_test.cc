// One title rule on every path that sets a title: create, rename, fork,
// restore (imports and copies) and the automatic title of a first message.
// Control characters never reach the index, and no title is longer than
// kMaxTitleLength code points. Runs on both backends.
#include "core/text_rules.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class Titles : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(Titles);

// Escape sequences, NUL, DEL and a C1 control (U+009B, the one-byte CSI).
const std::string kHostile = std::string("a\x1b[2J\x1b]0;pwned\x07 b") + '\0' + "c\x7f" +
                             "d\xC2\x9B"
                             "31m e";

bool HasControl(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return true;
  }
  return false;
}

std::string Long(size_t code_points) {
  std::string s;
  for (size_t i = 0; i < code_points; ++i) s += "\xC3\xA9";  // é: two bytes each
  return s;
}

void ExpectCapped(const std::string& title) {
  EXPECT_TRUE(IsValidUtf8(title));
  EXPECT_EQ(CountCodePoints(title), kMaxTitleLength);
  EXPECT_TRUE(title.ends_with(kEllipsis)) << title;
}

TEST_P(Titles, CreateStripsControlCharactersAndCapsTheLength) {
  auto s = store_->CreateSession({.id = "hostile", .title = kHostile});
  ASSERT_TRUE(s) << s.error().ToString();
  EXPECT_FALSE(HasControl(s->title)) << s->title;
  EXPECT_EQ(s->title, "a[2J]0;pwned bcd31m e");
  EXPECT_FALSE(HasControl(store_->GetSession("hostile")->title));

  auto big = store_->CreateSession({.id = "big", .title = Long(5000)});
  ASSERT_TRUE(big) << big.error().ToString();
  ExpectCapped(big->title);
  ExpectCapped(store_->GetSession("big")->title);
}

TEST_P(Titles, RenameAndForkFollowTheSameRule) {
  NewSessionId("r");
  ASSERT_TRUE(store_->RenameSession("r", kHostile).ok());
  EXPECT_FALSE(HasControl(store_->GetSession("r")->title));
  ASSERT_TRUE(store_->RenameSession("r", Long(300)).ok());
  ExpectCapped(store_->GetSession("r")->title);
  // A title of nothing but controls is empty, which a rename refuses.
  EXPECT_EQ(store_->RenameSession("r", "\x1b\x07").code(), StatusCode::kInvalidArgument);
  ExpectCapped(store_->GetSession("r")->title);

  auto fork = store_->ForkSession("r", 0, {.id = "f", .title = kHostile + Long(300)});
  ASSERT_TRUE(fork) << fork.error().ToString();
  EXPECT_FALSE(HasControl(fork->title));
  EXPECT_LE(CountCodePoints(fork->title), kMaxTitleLength);
}

TEST_P(Titles, TheFirstMessageMakesATitleWithoutControlCharacters) {
  const std::string id = NewSessionId("auto");
  AppendText(id, "\x1b[31mred\x1b[0m alert\r\nnow");
  auto s = store_->GetSession(id);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->title, "[31mred[0m alert now");
  EXPECT_EQ(s->preview, "[31mred[0m alert now");
}

TEST_P(Titles, RestoreAndImportFollowTheSameRule) {
  Event e;
  e.id = "evt-1";
  e.seq = 1;
  e.ts_ms = 1000;
  e.message.id = e.id;
  e.message.parts = {Part::Text("hi")};
  Session hostile{.id = "imported", .title = kHostile, .created_ms = 1000, .updated_ms = 1000};
  ASSERT_TRUE(store_->RestoreSession(hostile, std::span<const Event>(&e, 1), {}).ok());
  EXPECT_FALSE(HasControl(store_->GetSession("imported")->title));

  Event e2 = e;
  e2.id = e2.message.id = "evt-2";
  Session big{.id = "imported-big", .title = Long(10'000), .created_ms = 1000, .updated_ms = 1000};
  ASSERT_TRUE(store_->RestoreSession(big, std::span<const Event>(&e2, 1), {}).ok());
  ExpectCapped(store_->GetSession("imported-big")->title);

  // A title that is not UTF-8 is refused, and nothing is stored.
  Session bad{.id = "bad-title", .title = "\xFF\xFE", .created_ms = 1000, .updated_ms = 1000};
  Status s = store_->RestoreSession(bad, {}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(store_->GetSession("bad-title").error().code(), StatusCode::kNotFound);
  // The store still serves others.
  EXPECT_TRUE(store_->GetSession("imported"));
}

}  // namespace
}  // namespace sessiondb::testing
