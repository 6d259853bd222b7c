// Secrets never stored (docs/retention.md), on both backends: every kind of
// credential in every place a store writes text is replaced by its marker
// before a byte is written; then nothing of it is in any file of the store
// (embedded) or any row (PostgreSQL). The scan and rewrite of what was
// stored while redaction was off; the store's own settings.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "secret_corpus.h"
#include "sessiondb/memory.h"
#include "sessiondb/search.h"
#include "store/store_fixture.h"

namespace sessiondb::testing {
namespace {

constexpr std::string_view kSignature = "EqQBCkYIARABGAIiQGNsYXVkZS1zaWduYXR1cmUtb3BhcXVl";

// The last run of 12 letters and digits of `secret`: random in every kind,
// and untouched by JSON escaping, so it is what a file would hold of it.
std::string Needle(const std::string& secret) {
  int run = 0;
  for (size_t i = secret.size(); i-- > 0;) {
    const char c = secret[i];
    const bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    run = alnum ? run + 1 : 0;
    if (run == 12) return secret.substr(i, 12);
  }
  return secret;
}

class SecretRedaction : public BackendTest {
 protected:
  // True if `needle` is anywhere the store keeps bytes: every file of the
  // embedded store's directory (database, WAL, blobs), every row of every
  // table of the PostgreSQL database.
  bool StoredAnywhere(const std::string& needle) const {
    if (!embedded()) {
      const std::string sql =
          "SELECT coalesce(sum((xpath('/row/c/text()', query_to_xml(format("
          "'SELECT count(*) AS c FROM %I.%I t WHERE position(%L in t::text) > 0', "
          "schemaname, tablename, '" +
          needle +
          "'), false, true, '')))[1]::text::int), 0) FROM pg_tables "
          "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')";
      return pg_->Query(sql) != "0";
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(StoreDir())) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::string content((std::istreambuf_iterator<char>(in)), {});
      if (content.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  std::string Session() {
    auto s = store_->CreateSession(NewSession{});
    EXPECT_TRUE(s) << s.error().ToString();
    return s ? s->id : "";
  }

  // Writes `secret`'s text through place number `place` of the store.
  void WriteIn(int place, const GeneratedSecret& s) {
    const std::string text = s.text;
    switch (place % 10) {
      case 0: {
        AppendText(Session(), "see " + text);
        break;
      }
      case 1: {
        Message m;
        m.role = Role::kAssistant;
        m.parts.push_back(
            Part::ToolCall("call_1", "bash", nlohmann::json({{"command", text}}).dump()));
        ASSERT_TRUE(store_->Append(Session(), m));
        break;
      }
      case 2: {
        Message m;
        m.role = Role::kTool;
        m.parts.push_back(Part::ToolResult("call_1", "output:\n" + text));
        ASSERT_TRUE(store_->Append(Session(), m));
        break;
      }
      case 3: {
        Message m;
        m.role = Role::kAssistant;
        m.provider = "anthropic";
        m.parts.push_back(Part::Reasoning("I found " + text, std::string(kSignature)));
        m.parts.push_back(Part::Text("done"));
        ASSERT_TRUE(store_->Append(Session(), m));
        break;
      }
      case 4: {
        auto created = store_->CreateSession(NewSession{.title = "deploy with " + text});
        ASSERT_TRUE(created) << created.error().ToString();
        break;
      }
      case 5: {
        auto created = store_->CreateSession(
            NewSession{.metadata_json = nlohmann::json({{"env", text}}).dump()});
        ASSERT_TRUE(created) << created.error().ToString();
        break;
      }
      case 6: {
        ::sessiondb::Session restored;
        restored.id = "imported-" + std::to_string(place);
        restored.title = "Imported";
        restored.preview = text.substr(0, 400);
        restored.created_ms = restored.updated_ms = now_ms_;
        Event e;
        e.id = "ev-" + std::to_string(place);
        e.seq = 1;
        e.ts_ms = now_ms_;
        e.message.role = Role::kUser;
        e.message.parts.push_back(Part::Text(text));
        ASSERT_TRUE(store_->RestoreSession(restored, std::span<const Event>(&e, 1), {}).ok());
        break;
      }
      case 7: {
        const std::string session = Session();
        auto d = store_->OpenDraft(session, Role::kAssistant, "m");
        ASSERT_TRUE(d);
        Draft draft = *d;
        draft.text = "streaming " + text;
        draft.reasoning = text;
        ASSERT_TRUE(store_->SaveDraft(draft).ok());
        if (place % 20 == 7) {
          ASSERT_TRUE(store_->FinishDraft(d->id, {}));
        }
        break;
      }
      case 8: {
        const std::string session = Session();
        AppendText(session, "a");
        AppendText(session, "b", Role::kAssistant);
        auto c = store_->Compact(
            session, CompactionRequest{.from_seq = 1, .to_seq = 2, .summary = "We used " + text});
        ASSERT_TRUE(c) << c.error().ToString();
        break;
      }
      default: {
        auto memory = CodeMemory::Open(*store_);
        ASSERT_TRUE(memory) << memory.error().ToString();
        CodeWrite w;
        w.file_path = "/src/app/config" + std::to_string(place) + ".py";
        w.new_code = "KEY = '''" + text + "'''\n";
        w.whole_file = true;
        w.session_id = Session();
        auto r = (*memory)->RecordWrite(w);
        ASSERT_TRUE(r) << r.error().ToString();
        break;
      }
    }
  }
};

TEST_P(SecretRedaction, NoKindOfSecretInAnyPlaceReachesAnyFileOrRow) {
  SecretCorpus corpus;
  std::vector<GeneratedSecret> all;
  for (int variant = 0; variant < 10; ++variant) {
    for (GeneratedSecret& s : corpus.OneOfEach(variant)) all.push_back(std::move(s));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_NO_FATAL_FAILURE(WriteIn(static_cast<int>(i), all[i])) << all[i].kind;
  }
  store_.reset();  // closed: the WAL checkpointed as far as it goes
  int stored = 0;
  for (const GeneratedSecret& s : all) {
    if (StoredAnywhere(Needle(s.secret))) {
      ++stored;
      ADD_FAILURE() << s.kind << " was stored: " << s.text;
    }
  }
  EXPECT_EQ(stored, 0) << "of " << all.size();
  // The signature, which replay needs byte for byte, is stored as given
  // (sealed, in an encrypted namespace).
  EXPECT_EQ(StoredAnywhere(std::string(kSignature)), !encrypted());
}

TEST_P(SecretRedaction, ReadsShowTheMarkerAndLeaveSignaturesByteExact) {
  SecretCorpus corpus;
  const std::string token = "ghp_" + corpus.ChecksummedBody();
  // A signature that looks like a secret is still never touched.
  const std::string signature = "sig " + token;
  const std::string session = Session();
  Message m;
  m.role = Role::kAssistant;
  m.provider = "anthropic";
  m.parts.push_back(Part::Reasoning("thinking about " + token, signature));
  m.parts.push_back(Part::Text("use " + token + " then " + token));
  ASSERT_TRUE(store_->Append(session, m));
  AppendText(session, "again " + token);
  auto read = store_->ReadMessages(session, 1, -1);
  ASSERT_TRUE(read);
  ASSERT_EQ(read->size(), 2u);
  const Message& first = (*read)[0];
  EXPECT_EQ(first.parts[0].signature, signature);
  const std::string text = first.parts[1].text;
  const size_t at = text.find("[REDACTED:github-token:");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string marker = text.substr(at, text.find(']', at) - at + 1);
  EXPECT_EQ(text, "use " + marker + " then " + marker);
  EXPECT_EQ(first.parts[0].text, "thinking about " + marker);
  EXPECT_EQ((*read)[1].parts[0].text, "again " + marker);
  // The key is the store's: reopened, the same secret reads the same.
  Reopen();
  AppendText(session, token);
  auto again = store_->ReadMessages(session, 3, -1);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->at(0).parts[0].text, marker);
}

TEST_P(SecretRedaction, TheSettingIsTheStoresAndTheOptionOverridesIt) {
  SecretCorpus corpus;
  const std::string token = "npm_" + corpus.ChecksummedBody();
  auto settings = store_->GetRedactionSettings();
  ASSERT_TRUE(settings);
  EXPECT_TRUE(settings->enabled);
  ASSERT_TRUE(store_->SetRedactionSettings(RedactionSettings{.enabled = false}).ok());
  Reopen();  // a later Store follows the stored setting
  ASSERT_TRUE(store_->GetRedactionSettings());
  EXPECT_FALSE(store_->GetRedactionSettings()->enabled);
  const std::string session = Session();
  AppendText(session, token);
  StoreOptions on = Options();
  on.redact_secrets = true;
  Reopen(on);
  AppendText(session, token);
  auto read = store_->ReadMessages(session, 1, -1);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->at(0).parts[0].text, token);
  EXPECT_TRUE(read->at(1).parts[0].text.starts_with("[REDACTED:npm-token:"));
}

TEST_P(SecretRedaction, TheAllowListLetsAValueOrAKindThrough) {
  SecretCorpus corpus;
  const std::string allowed = "ghp_" + corpus.ChecksummedBody();
  const std::string other = "ghp_" + corpus.ChecksummedBody();
  const std::string jwt = corpus.OneOfEach()[16].secret;
  ASSERT_EQ(corpus.OneOfEach()[16].kind, "jwt");
  ASSERT_TRUE(store_->SetRedactionSettings(RedactionSettings{.allow = {allowed, "jwt"}}).ok());
  const std::string session = Session();
  AppendText(session, allowed + " " + other + " " + jwt);
  auto read = store_->ReadMessages(session, 1, -1);
  ASSERT_TRUE(read);
  const std::string text = read->at(0).parts[0].text;
  EXPECT_TRUE(text.starts_with(allowed + " [REDACTED:github-token:")) << text;
  EXPECT_TRUE(text.ends_with(" " + jwt)) << text;
}

TEST_P(SecretRedaction, ScanListsStoredSecretsAndApplyRewritesAndErasesThem) {
  SecretCorpus corpus;
  const std::string token = "ghp_" + corpus.ChecksummedBody();
  const std::string key = "AKIA" + corpus.Pick(SecretCorpus::kBase32, 16);
  StoreOptions off = Options();
  off.redact_secrets = false;
  Reopen(off);
  const std::string session = Session();
  AppendText(session, "plain words");
  AppendText(session, "the token is " + token + " and a zebra");
  auto c = store_->Compact(session,
                           CompactionRequest{.from_seq = 1, .to_seq = 2, .summary = "key " + key});
  ASSERT_TRUE(c);
  ASSERT_TRUE(store_->RenameSession(session, "about " + key).ok());
  auto found = store_->ScanSecrets();
  ASSERT_TRUE(found) << found.error().ToString();
  ASSERT_EQ(found->size(), 3u);
  EXPECT_EQ(found->at(0).kind, "aws-access-key");
  EXPECT_EQ(found->at(0).seq, 0);
  EXPECT_EQ(found->at(1).kind, "github-token");
  EXPECT_EQ(found->at(1).seq, 2);
  EXPECT_EQ(found->at(2).kind, "aws-access-key");
  EXPECT_EQ(found->at(2).seq, 3);
  for (const StoredSecret& s : *found) EXPECT_EQ(s.session_id, session);

  auto report = store_->RedactStoredSecrets();
  ASSERT_TRUE(report) << report.error().ToString();
  EXPECT_EQ(report->events_rewritten, 2);
  EXPECT_EQ(report->sessions_rewritten, 1);
  EXPECT_EQ(report->secrets_redacted, 3);
  // The rewrite is recorded in the ledger of forgetting: counts, never the secrets.
  auto ledger = store_->ReadLedger({.limit = 10});
  ASSERT_TRUE(ledger) << ledger.error().ToString();
  ASSERT_FALSE(ledger->empty());
  EXPECT_EQ(ledger->front().action, "redact");
  EXPECT_EQ(ledger->front().scope, "session " + session);
  const std::vector<std::pair<std::string, int64_t>> counts = {
      {"events", 2}, {"titles", 1}, {"secrets", 3}};
  EXPECT_EQ(ledger->front().counts, counts);
  auto after = store_->ScanSecrets();
  ASSERT_TRUE(after) << after.error().ToString();
  EXPECT_TRUE(after->empty());
  auto read = store_->ReadMessages(session, 2, 1);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->at(0).parts[0].text.starts_with("the token is [REDACTED:github-token:"));
  auto info = store_->GetSession(session);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->title.starts_with("about [REDACTED:aws-access-key:")) << info->title;
  // The rewritten text is still searched, without the token.
  auto index = SearchIndex::Open(*store_);
  ASSERT_TRUE(index) << index.error().ToString();
  SearchRequest q;
  q.query = "zebra";
  q.mode = SearchMode::kKeyword;
  auto hits = (*index)->Search(q);
  ASSERT_TRUE(hits) << hits.error().ToString();
  EXPECT_EQ(hits->hits.size(), 1u);
  index->reset();
  store_.reset();
  EXPECT_FALSE(StoredAnywhere(Needle(token)));
  EXPECT_FALSE(StoredAnywhere(Needle(key)));
}

TEST_P(SecretRedaction, HostileTextIsStoredWhole) {
  std::string text;
  while (text.size() < (1u << 20))
    text +=
        "ghp_-----BEGIN PRIVATE KEY-----://:AA\xC3\xA9"
        "eyJ";
  const std::string session = Session();
  AppendText(session, text);
  auto read = store_->ReadMessages(session, 1, -1);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->at(0).parts[0].text, text);
}

SESSIONDB_FOR_EACH_BACKEND(SecretRedaction);

}  // namespace
}  // namespace sessiondb::testing
