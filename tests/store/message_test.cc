// Messages: appending, reading whole/page/last, every part type round trip,
// and bad messages refused without a trace.
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

class MessageLog : public BackendTest {};
SESSIONDB_FOR_EACH_BACKEND(MessageLog);

TEST_P(MessageLog, AppendsGetDenseSeqsAndReadBackInOrder) {
  std::string id = NewSessionId();
  for (int i = 1; i <= 30; ++i) {
    AppendResult r =
        AppendText(id, "message " + std::to_string(i), i % 2 ? Role::kUser : Role::kAssistant);
    EXPECT_EQ(r.seq, i);
    EXPECT_EQ(r.message_id.size(), 36u);
  }
  auto all = store_->ReadMessages(id);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 30u);
  for (int i = 0; i < 30; ++i) {
    EXPECT_EQ((*all)[i].seq, i + 1);
    EXPECT_EQ((*all)[i].Text(), "message " + std::to_string(i + 1));
    EXPECT_EQ((*all)[i].role, i % 2 ? Role::kAssistant : Role::kUser);
    EXPECT_EQ((*all)[i].session_id, id);
  }
  auto page = store_->ReadMessages(id, 11, 5);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 5u);
  EXPECT_EQ(page->front().seq, 11);
  EXPECT_EQ(page->back().seq, 15);
  auto last = store_->ReadLastMessages(id, 3);
  ASSERT_TRUE(last);
  ASSERT_EQ(last->size(), 3u);
  EXPECT_EQ(last->front().seq, 28);
  EXPECT_EQ(last->back().seq, 30);
  EXPECT_EQ(store_->GetSession(id)->message_count, 30);
}

TEST_P(MessageLog, EveryPartTypeAndOptionalFieldRoundTrips) {
  std::string id = NewSessionId();
  Message m;
  m.id = "msg-caller-chosen";
  m.role = Role::kAssistant;
  m.parts = {Part::Reasoning("thinking about it"), Part::Text("Let me look."),
             Part::ToolCall("call_1", "read_file", R"({"path":"a.txt","lines":[1,2]})"),
             Part::ToolResult("call_1", "file contents", true),
             Part::Link("https://example.com/cat.png", "cat", "image/png", 1234)};
  m.files = {"src/a.cc", "src/b.cc"};
  m.files_modified = {"src/a.cc"};
  m.edit_results_json = R"([{"file":"src/a.cc","status":"applied"}])";
  m.model = "gpt-test";
  m.usage =
      Usage{.input_tokens = 10, .output_tokens = 20, .cached_tokens = 3, .reasoning_tokens = 4};
  m.metadata_json = R"({"turn_id":"t1"})";
  auto r = store_->Append(id, m);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->message_id, "msg-caller-chosen");
  ASSERT_EQ(r->resources.size(), 1u);
  EXPECT_EQ(r->resources[0].origin, Origin::kRemoteLink);
  EXPECT_TRUE(r->resources[0].content_sha256.empty());

  Reopen();
  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 1u);
  const Message& got = read->front();
  EXPECT_EQ(got.id, "msg-caller-chosen");
  EXPECT_EQ(got.role, Role::kAssistant);
  ASSERT_EQ(got.parts.size(), 5u);
  EXPECT_EQ(got.parts[0].type, PartType::kReasoning);
  EXPECT_EQ(got.parts[0].text, "thinking about it");
  EXPECT_EQ(got.parts[1].text, "Let me look.");
  EXPECT_EQ(got.parts[2].type, PartType::kToolCall);
  EXPECT_EQ(got.parts[2].tool_call_id, "call_1");
  EXPECT_EQ(got.parts[2].tool_name, "read_file");
  EXPECT_EQ(got.parts[2].arguments_json, R"({"path":"a.txt","lines":[1,2]})");
  EXPECT_EQ(got.parts[3].type, PartType::kToolResult);
  EXPECT_EQ(got.parts[3].text, "file contents");
  EXPECT_TRUE(got.parts[3].is_error);
  ASSERT_TRUE(got.parts[4].resource);
  EXPECT_EQ(got.parts[4].resource->uri, "https://example.com/cat.png");
  EXPECT_EQ(got.parts[4].resource->size, 1234);
  EXPECT_EQ(got.files, m.files);
  EXPECT_EQ(got.files_modified, m.files_modified);
  EXPECT_EQ(got.edit_results_json, R"([{"file":"src/a.cc","status":"applied"}])");
  EXPECT_EQ(got.model, "gpt-test");
  EXPECT_EQ(got.usage, m.usage);
  EXPECT_EQ(got.metadata_json, R"({"turn_id":"t1"})");
  EXPECT_EQ(got.Text(), "Let me look.");
  // No blob was written for the link, and nothing was fetched.
  EXPECT_EQ(BlobCount(), 0u);
}

// Encrypted reasoning (OpenAI's encrypted_content, Anthropic's redacted
// thinking) has no text: its signature is the content, kept byte for byte.
TEST_P(MessageLog, ReasoningWithOnlyASignatureIsKept) {
  std::string id = NewSessionId();
  Message m;
  m.role = Role::kAssistant;
  m.provider = "openai";
  m.parts = {Part::Reasoning("", "gAAAAABo+/enc=="), Part::Reasoning("plan", "EqQB")};
  auto r = store_->Append(id, m);
  ASSERT_TRUE(r) << r.error().ToString();
  Reopen();
  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->front().parts.size(), 2u);
  EXPECT_EQ(read->front().parts[0].signature, "gAAAAABo+/enc==");
  EXPECT_EQ(read->front().parts[1].signature, "EqQB");
  EXPECT_EQ(read->front().parts[1].text, "plan");
  // Without a signature, empty reasoning is still no content.
  Message empty;
  empty.parts = {Part::Reasoning(" ")};
  EXPECT_EQ(store_->Append(id, empty).error().code(), StatusCode::kInvalidArgument);
}

TEST_P(MessageLog, ARepeatedMessageIdIsRefusedAndTheLogIsUnchanged) {
  std::string id = NewSessionId();
  Message m;
  m.id = "dup";
  m.parts = {Part::Text("once")};
  ASSERT_TRUE(store_->Append(id, m));
  auto again = store_->Append(id, m);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->GetSession(id)->message_count, 1);
  EXPECT_EQ(store_->GetSession(id)->last_seq, 1);
}

// Bad messages: each is refused with kInvalidArgument and leaves nothing.
struct BadMessageCase {
  std::string name;
  Message message;
  std::string expected_fragment;
};

class BadMessages : public StoreTest,
                    public ::testing::WithParamInterface<std::tuple<Backend, int>> {
 protected:
  Backend backend() const override { return std::get<0>(GetParam()); }
};

std::vector<BadMessageCase> BadMessageCases() {
  auto msg = [](std::vector<Part> parts) {
    Message m;
    m.parts = std::move(parts);
    return m;
  };
  Message bad_meta = msg({Part::Text("x")});
  bad_meta.metadata_json = "[]";
  Message bad_edits = msg({Part::Text("x")});
  bad_edits.edit_results_json = "{\"a\":1}";
  return {
      {"empty", msg({}), "empty"},
      {"blank", msg({Part::Text("  \n ")}), "empty"},
      {"bad utf8", msg({Part::Text("caf\xC3")}), "not valid UTF-8"},
      {"overlong utf8", msg({Part::Text("\xC0\xAF")}), "not valid UTF-8"},
      {"tool call args", msg({Part::ToolCall("c", "f", "{oops")}), "not valid JSON"},
      {"tool without name", msg({Part::ToolCall("c", "", "{}")}), "no tool name"},
      {"file link", msg({Part::Link("file:///etc/passwd")}), "only http:// and https://"},
      {"metadata", bad_meta, "JSON object"},
      {"edit results", bad_edits, "JSON array"},
  };
}

TEST_P(BadMessages, AreRefusedWithAClearErrorAndNothingIsWritten) {
  BadMessageCase c = BadMessageCases()[std::get<1>(GetParam())];
  std::string id = NewSessionId();
  AppendText(id, "before");
  auto r = store_->Append(id, c.message);
  ASSERT_FALSE(r) << c.name;
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument) << c.name;
  EXPECT_NE(r.error().message().find(c.expected_fragment), std::string::npos)
      << c.name << ": " << r.error().message();
  auto s = store_->GetSession(id);
  EXPECT_EQ(s->message_count, 1) << c.name;
  EXPECT_EQ(s->last_seq, 1) << c.name;
  EXPECT_EQ(store_->ReadMessages(id)->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, BadMessages,
    ::testing::Combine(::testing::Values(Backend::kEmbedded, Backend::kPostgres),
                       ::testing::Range(0, static_cast<int>(BadMessageCases().size()))),
    [](const auto& info) {
      return BackendName(std::get<0>(info.param)) + "_" + std::to_string(std::get<1>(info.param));
    });

TEST_P(MessageLog, AppendingToAMissingSessionIsNotFound) {
  Message m;
  m.parts = {Part::Text("hi")};
  auto r = store_->Append("ghost", m);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kNotFound);
  EXPECT_NE(r.error().message().find("ghost"), std::string::npos);
  EXPECT_FALSE(store_->GetSession("ghost"));
}

TEST_P(MessageLog, ABatchCommitsWholeOrNotAtAll) {
  std::string id = NewSessionId();
  std::vector<Message> batch(3);
  for (auto& m : batch) m.parts = {Part::Text("ok")};
  batch[2].parts = {Part::Text("bad \xFF")};
  auto r = store_->AppendBatch(id, batch);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("message 3 of the batch"), std::string::npos);
  EXPECT_EQ(store_->GetSession(id)->message_count, 0);

  batch[2].parts = {Part::Text("fine")};
  auto ok = store_->AppendBatch(id, batch);
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[2].seq, 3);
  EXPECT_EQ(store_->GetSession(id)->message_count, 3);
}

// A batch's plain messages are stored from the caller's own (not copied),
// its attachments and links from a rewritten copy: both keep the id given or
// made for them, their parts, and the caller's messages are left as they were.
TEST_P(MessageLog, ABatchOfPlainAndAttachedMessagesReadsBackAsAppended) {
  std::string id = NewSessionId();
  std::vector<Message> batch(5);
  batch[0].parts = {Part::Text("plain, no id")};
  batch[1].id = "given-id-1";
  batch[1].parts = {Part::Text("plain, given id")};
  batch[2].parts = {Part::Text("with an image"),
                    Part::ImageFromBytes(MakePng(4, 4, "batch-borrow"), "image/png")};
  batch[3].parts = {Part::Text("tool call"), Part::ToolCall("call-1", "grep", R"({"q":"x"})")};
  batch[3].role = Role::kAssistant;
  batch[4].parts = {Part::Link("https://example.com/a.pdf", "a.pdf")};
  const std::vector<Message> before = batch;
  auto appended = store_->AppendBatch(id, batch);
  ASSERT_TRUE(appended) << appended.error().ToString();
  ASSERT_EQ(appended->size(), 5u);
  EXPECT_EQ((*appended)[1].message_id, "given-id-1");
  EXPECT_EQ((*appended)[0].message_id.size(), 36u);
  EXPECT_EQ((*appended)[2].resources.size(), 1u);
  EXPECT_EQ((*appended)[4].resources.size(), 1u);
  auto read = store_->ReadMessages(id);
  ASSERT_TRUE(read) << read.error().ToString();
  ASSERT_EQ(read->size(), 5u);
  for (size_t i = 0; i < read->size(); ++i) {
    EXPECT_EQ((*read)[i].id, (*appended)[i].message_id) << "message " << i;
    EXPECT_EQ((*read)[i].Text(), before[i].Text()) << "message " << i;
    ASSERT_EQ((*read)[i].parts.size(), before[i].parts.size()) << "message " << i;
  }
  EXPECT_EQ((*read)[3].role, Role::kAssistant);
  EXPECT_EQ((*read)[3].parts[1].tool_name, "grep");
  ASSERT_TRUE((*read)[2].parts[1].resource);
  EXPECT_EQ((*read)[2].parts[1].resource->mime, "image/png");
  // The caller's messages are untouched: no id written into them, sources kept.
  EXPECT_TRUE(batch[0].id.empty());
  EXPECT_TRUE(batch[2].parts[1].source.has_value());
  EXPECT_FALSE(batch[2].parts[1].resource.has_value());
}

}  // namespace
}  // namespace sessiondb::testing
