#include "core/secret_scan.h"

#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "secret_corpus.h"

namespace sessiondb {
namespace {

using testing::GeneratedSecret;
using testing::SecretCorpus;

// Whether FindSecrets finds exactly `s.secret`, as its kind, in `s.text`.
bool FoundExactly(const GeneratedSecret& s) {
  const size_t at = s.text.find(s.secret);
  if (at == std::string::npos) return false;
  for (const SecretFinding& f : FindSecrets(s.text)) {
    if (f.kind == s.kind && f.offset == at && f.length == s.secret.size()) return true;
  }
  return false;
}

TEST(SecretScan, EveryKindIsKnownByItsName) {
  SecretCorpus corpus;
  for (const GeneratedSecret& s : corpus.OneOfEach()) {
    EXPECT_NE(std::find(kSecretKinds.begin(), kSecretKinds.end(), s.kind), kSecretKinds.end())
        << s.kind;
  }
  EXPECT_EQ(kSecretKinds.size(), corpus.OneOfEach().size());
}

TEST(SecretScan, RecallOnTheGeneratedCorpusIsAtLeast99PercentForEveryKind) {
  SecretCorpus corpus;
  const std::vector<GeneratedSecret> all = corpus.Generate(300);
  std::map<std::string, int> total;
  std::map<std::string, int> found;
  for (const GeneratedSecret& s : all) {
    ++total[s.kind];
    if (FoundExactly(s)) {
      ++found[s.kind];
    } else if (total[s.kind] - found[s.kind] <= 2) {
      ADD_FAILURE() << "missed " << s.kind << " in: " << s.text;
    }
  }
  for (const auto& [kind, n] : total) {
    EXPECT_GE(found[kind] * 100, n * 99) << kind << ": " << found[kind] << " of " << n;
  }
}

// The scan checks three bytes of a kind's prefix before it looks further:
// a secret right after pairs that start other kinds' prefixes ("se", "pa",
// "gh", ...) but not their third byte is still found, and those alone are
// not secrets.
TEST(SecretScan, EveryKindIsFoundAfterTwoByteTriggersOfOtherKinds) {
  SecretCorpus corpus;
  const std::string near_misses = "sea pat ghx gix sko ey. :-- dim hop xa. npx pyt AKx rk. ";
  for (int variant = 0; variant < 6; ++variant) {
    for (const GeneratedSecret& s : corpus.OneOfEach(variant)) {
      GeneratedSecret after = s;
      after.text = near_misses + s.text;
      EXPECT_TRUE(FoundExactly(after)) << s.kind << " in " << after.text;
    }
  }
  EXPECT_TRUE(FindSecrets(near_misses).empty());
}

// The scan looks for prefixes sixteen bytes at a time, then byte by byte in
// the tail: every kind is found starting at any offset of a block, and with
// any number of bytes after it.
TEST(SecretScan, EveryKindIsFoundAtEveryOffsetOfABlock) {
  SecretCorpus corpus;
  for (const GeneratedSecret& s : corpus.OneOfEach()) {
    for (size_t offset = 0; offset < 34; ++offset) {
      GeneratedSecret moved = s;
      moved.text = std::string(offset, ' ') + s.text;
      EXPECT_TRUE(FoundExactly(moved)) << s.kind << " at " << offset;
      moved.text += std::string(offset, ' ');
      EXPECT_TRUE(FoundExactly(moved)) << s.kind << " at " << offset << " with a tail";
    }
  }
}

// Tool call arguments and metadata are JSON text: quotes and line breaks
// escaped. Every kind is still found there.
TEST(SecretScan, EveryKindIsFoundInsideJsonText) {
  SecretCorpus corpus;
  for (int variant = 0; variant < 6; ++variant) {
    for (const GeneratedSecret& s : corpus.OneOfEach(variant)) {
      const std::string json = nlohmann::json({{"command", s.text}}).dump();
      bool found = false;
      for (const SecretFinding& f : FindSecrets(json)) found = found || f.kind == s.kind;
      EXPECT_TRUE(found) << s.kind << " in " << json;
    }
  }
}

TEST(SecretScan, GithubAndNpmTokensWithAWrongChecksumAreNotSecrets) {
  SecretCorpus corpus;
  for (int i = 0; i < 50; ++i) {
    std::string body = corpus.ChecksummedBody();
    ASSERT_EQ(FindSecrets("ghp_" + body).size(), 1u);
    ASSERT_EQ(FindSecrets("npm_" + body).size(), 1u);
    body[35] = body[35] == 'a' ? 'b' : 'a';
    EXPECT_TRUE(FindSecrets("ghp_" + body).empty()) << body;
    EXPECT_TRUE(FindSecrets("npm_" + body).empty()) << body;
  }
}

TEST(SecretScan, DocumentationPlaceholdersAreNotSecrets) {
  const std::vector<std::string> texts = {
      "AKIAIOSFODNN7EXAMPLE",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      "postgres://user:password@localhost/db",
      "mysql://root:${DB_PASSWORD}@db:3306/app",
      "https://user:***@example.com",
      "redis://:<password>@cache:6379",
      "https://github.com/owner/repo",
      "std::string s = a::b; http://host/path",
      "sk-proj-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
      "sk_live_XXXXXXXXXXXXXXXXXXXXXXXX",
      "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
      "-----BEGIN PUBLIC "
      "KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
      "-----END PUBLIC KEY-----",
      "eyJub3QiOiJhIGp3dCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlc2lnbmF0dXJl",
      "Password=;",
      "the password= field is required",
      "ghp_ is GitHub's prefix for personal access tokens",
      "xoxb-your-token-here",
      "maskAKIA1234567890ABCDEF",
  };
  for (const std::string& t : texts) {
    const std::vector<SecretFinding> f = FindSecrets(t);
    EXPECT_TRUE(f.empty()) << t << " -> " << (f.empty() ? "" : std::string(f[0].kind));
  }
}

TEST(SecretScan, FindingsAreInOrderAndDoNotOverlap) {
  SecretCorpus corpus;
  std::string text;
  for (const GeneratedSecret& s : corpus.OneOfEach(3)) text += s.text + "\n\n";
  const std::vector<SecretFinding> f = FindSecrets(text);
  EXPECT_EQ(f.size(), kSecretKinds.size());
  for (size_t i = 1; i < f.size(); ++i) {
    EXPECT_GE(f[i].offset, f[i - 1].offset + f[i - 1].length);
  }
}

TEST(SecretRedactor, ReplacesEachSecretByAMarkerNamingItsKind) {
  SecretCorpus corpus;
  const SecretRedactor redactor(std::string(32, 'k'), {});
  for (const GeneratedSecret& s : corpus.OneOfEach()) {
    std::string text = "before " + s.text + " after";
    std::vector<std::string_view> kinds;
    ASSERT_TRUE(redactor.Redact(&text, &kinds)) << s.kind;
    EXPECT_EQ(text.find(s.secret), std::string::npos) << text;
    const std::string marker = redactor.Marker(s.kind, s.secret);
    EXPECT_NE(text.find(marker), std::string::npos) << text;
    EXPECT_EQ(marker.rfind("[REDACTED:" + s.kind + ":", 0), 0u) << marker;
    EXPECT_EQ(marker.size(), std::string("[REDACTED:").size() + s.kind.size() + 1 + 8 + 1);
    EXPECT_TRUE(text.starts_with("before ")) << text;
    EXPECT_TRUE(text.ends_with(" after")) << text;
    ASSERT_EQ(kinds.size(), 1u);
    EXPECT_EQ(kinds[0], s.kind);
  }
}

TEST(SecretRedactor, TheSameSecretGetsTheSameMarkerAndAnotherKeyAnother) {
  SecretCorpus corpus;
  const std::string token = "ghp_" + corpus.ChecksummedBody();
  const std::string other = "ghp_" + corpus.ChecksummedBody();
  const SecretRedactor a(std::string(32, 'a'), {});
  const SecretRedactor b(std::string(32, 'b'), {});
  std::string text = token + " and " + token + " and " + other;
  ASSERT_TRUE(a.Redact(&text));
  const std::string ma = a.Marker("github-token", token);
  EXPECT_EQ(text, ma + " and " + ma + " and " + a.Marker("github-token", other));
  EXPECT_NE(ma, a.Marker("github-token", other));
  EXPECT_NE(ma, b.Marker("github-token", token));
}

TEST(SecretRedactor, TheAllowListLetsThroughAValueOrAKind) {
  SecretCorpus corpus;
  const std::string token = "ghp_" + corpus.ChecksummedBody();
  const std::string other = "ghp_" + corpus.ChecksummedBody();
  const std::string key = "AKIA" + corpus.Pick(SecretCorpus::kBase32, 16);
  const SecretRedactor by_value("k", {token});
  std::string text = token + " " + other;
  ASSERT_TRUE(by_value.Redact(&text));
  EXPECT_NE(text.find(token), std::string::npos);
  EXPECT_EQ(text.find(other), std::string::npos);

  const SecretRedactor by_kind("k", {"github-token"});
  text = token + " " + key;
  ASSERT_TRUE(by_kind.Redact(&text));
  EXPECT_TRUE(text.starts_with(token + " [REDACTED:aws-access-key:")) << text;
  std::string only_allowed = token;
  EXPECT_FALSE(by_kind.Redact(&only_allowed));
  EXPECT_EQ(only_allowed, token);
}

TEST(SecretRedactor, TextWithoutSecretsIsLeftAlone) {
  const SecretRedactor redactor("k", {});
  std::string text = "A plain sentence about passwords, keys and ssh://host/path.";
  const std::string before = text;
  EXPECT_FALSE(redactor.Redact(&text));
  EXPECT_EQ(text, before);
}

TEST(SecretRedactor, AMarkerIsNotRedactedAgain) {
  SecretCorpus corpus;
  const SecretRedactor redactor("k", {});
  for (const GeneratedSecret& s : corpus.OneOfEach()) {
    std::string text = s.text;
    ASSERT_TRUE(redactor.Redact(&text));
    const std::string once = text;
    EXPECT_FALSE(redactor.Redact(&text)) << once;
    EXPECT_TRUE(HasRedactionMarker(text));
  }
}

// Hostile inputs: every trigger repeated, keys that never end, bytes that are
// not UTF-8. The scan must finish (each matcher looks a bounded distance, the
// private key's END is searched once) and find nothing.
TEST(SecretScan, HostileInputsOfTriggersFindNothingAndDoNotCrash) {
  const std::vector<std::string> units = {"ghp_",
                                          "github_pat_",
                                          "-----BEGIN RSA PRIVATE KEY-----",
                                          "://",
                                          ":AA",
                                          "eyJ",
                                          "eyJhbGciOi.",
                                          "Password=",
                                          "secret_access_key=",
                                          "sk-",
                                          "xoxb-1-",
                                          "AKIA",
                                          "AIza",
                                          "hooks.slack.com/services/T",
                                          "discord.com/api/webhooks/"};
  for (const std::string& unit : units) {
    std::string text;
    while (text.size() < (2u << 20)) text += unit;
    const std::vector<SecretFinding> f = FindSecrets(text);
    // A long run of a token's own characters may form one finding at most
    // per window; nothing overlaps and nothing runs past the text.
    for (const SecretFinding& x : f) EXPECT_LE(x.offset + x.length, text.size());
  }
  std::mt19937 rng(7);
  std::string bytes(4u << 20, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  for (const SecretFinding& x : FindSecrets(bytes)) {
    EXPECT_LE(x.offset + x.length, bytes.size());
  }
  std::string invalid = "\xFF\xFE ghp_\xC3 sk-ant-api03-\x80 postgres://u:\xF0\x9F@h";
  EXPECT_TRUE(FindSecrets(invalid).empty());
}

TEST(SecretScan, PrivateKeyBlocksWithoutAnEndAreTakenToTheEndOfTheirBody) {
  SecretCorpus corpus;
  std::string body;
  for (int i = 0; i < 8; ++i) body += corpus.Pick(SecretCorpus::kBase62, 64) + "\n";
  const std::string text = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "(cut off)";
  const std::vector<SecretFinding> f = FindSecrets(text);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, "private-key");
  EXPECT_EQ(f[0].offset, 0u);
  EXPECT_EQ(text.substr(f[0].offset + f[0].length), "(cut off)");
}

TEST(SecretScan, AKeyInsideJsonTextIsFoundWithItsEscapedLineBreaks) {
  SecretCorpus corpus;
  std::string body;
  for (int i = 0; i < 8; ++i) body += corpus.Pick(SecretCorpus::kBase62, 64) + "\\n";
  const std::string key = "-----BEGIN PRIVATE KEY-----\\n" + body + "-----END PRIVATE KEY-----\\n";
  const std::string json = R"({"type":"service_account","private_key":")" + key + R"("})";
  const std::vector<SecretFinding> f = FindSecrets(json);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, "private-key");
  EXPECT_EQ(json.substr(f[0].offset, f[0].length), key.substr(0, key.size() - 2));
}

}  // namespace
}  // namespace sessiondb
