// A generated corpus of credentials in valid formats, every kind the secret
// detector knows (src/core/secret_scan.h), each in a few surroundings, with
// real checksums where the format has one (GitHub's and npm's CRC32). Shared
// by the detector's suite, the store's (every part type, both backends) and
// the CLI's. Deterministic: the same seed gives the same corpus.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace sessiondb::testing {

struct GeneratedSecret {
  std::string kind;    // the detector's name for it
  std::string secret;  // the bytes that must never be stored
  std::string text;    // the secret in a sentence, a config line, JSON...
};

class SecretCorpus {
 public:
  explicit SecretCorpus(uint32_t seed = 20261205) : rng_(seed) {}

  // `per_kind` secrets of every kind (each of a kind's forms in turn), each
  // in one of the surroundings in turn.
  std::vector<GeneratedSecret> Generate(int per_kind) {
    std::vector<GeneratedSecret> out;
    for (int i = 0; i < per_kind; ++i) {
      for (GeneratedSecret s : OneOfEach(i)) {
        s.text = Surround(s.secret, s.text, i);
        out.push_back(std::move(s));
      }
    }
    return out;
  }

  // Every kind once.
  std::vector<GeneratedSecret> OneOfEach(int variant = 0) {
    const bool odd = variant % 2 == 1;
    std::vector<GeneratedSecret> v;
    v.push_back({"aws-access-key", (odd ? "ASIA" : "AKIA") + Pick(kBase32, 16), ""});
    {
      const std::string key = Base64(40);
      v.push_back({"aws-secret-key", key,
                   (odd ? "aws_secret_access_key = " : "\"SecretAccessKey\": \"") + key +
                       (odd ? "" : "\"")});
    }
    v.push_back({"gcp-api-key", "AIza" + Pick(kUrlSafe, 35), ""});
    {
      const std::string key = Base64(86) + "==";
      v.push_back({"azure-key", key,
                   "DefaultEndpointsProtocol=https;AccountName=acct" + Pick(kLower, 6) +
                       ";AccountKey=" + key + ";EndpointSuffix=core.windows.net"});
    }
    if (odd) {
      v.push_back(
          {"github-token", "github_pat_" + Pick(kBase62, 22) + "_" + Pick(kBase62, 59), ""});
    } else {
      static const char* kPrefixes[] = {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"};
      v.push_back({"github-token", kPrefixes[(variant / 2) % 5] + ChecksummedBody(), ""});
    }
    v.push_back({"gitlab-token", "glpat-" + Pick(kUrlSafe, 20), ""});
    v.push_back({"npm-token", "npm_" + ChecksummedBody(), ""});
    v.push_back({"pypi-token", "pypi-AgEIcHlwaS5vcmc" + Pick(kUrlSafe, 150), ""});
    v.push_back({"openai-key",
                 odd ? "sk-" + Pick(kBase62, 20) + "T3BlbkFJ" + Pick(kBase62, 20)
                     : "sk-proj-" + Pick(kUrlSafe, 156),
                 ""});
    v.push_back({"anthropic-key",
                 (odd ? "sk-ant-admin01-" : "sk-ant-api03-") + Pick(kUrlSafe, 93) + "AA", ""});
    v.push_back({"slack-token",
                 std::string(odd ? "xoxp-" : "xoxb-") + Pick(kDigits, 12) + "-" +
                     Pick(kDigits, 13) + "-" + Pick(kBase62, 24),
                 ""});
    {
      const std::string url = "hooks.slack.com/services/T" + Pick(kUpperDigits, 8) + "/B" +
                              Pick(kUpperDigits, 10) + "/" + Pick(kBase62, 24);
      v.push_back({"slack-webhook", url, "https://" + url});
    }
    {
      const std::string url = std::string(odd ? "discordapp.com" : "discord.com") +
                              "/api/webhooks/1" + Pick(kDigits, 17) + "/" + Pick(kUrlSafe, 68);
      v.push_back({"discord-webhook", url, "https://" + url});
    }
    v.push_back({"telegram-bot-token", "1" + Pick(kDigits, 8) + ":AA" + Pick(kUrlSafe, 33), ""});
    {
      static const char* kStripe[] = {"sk_live_", "rk_live_", "sk_test_", "rk_test_"};
      v.push_back({"stripe-key", kStripe[variant % 4] + Pick(kBase62, 24 + variant % 76), ""});
    }
    {
      static const char* kLabels[] = {"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY",
                                      "OPENSSH PRIVATE KEY", "ENCRYPTED PRIVATE KEY"};
      const std::string label = kLabels[variant % 5];
      std::string block = "-----BEGIN " + label + "-----\n";
      for (int line = 0; line < 12; ++line) block += Base64(64) + "\n";
      block += Base64(20) + "==\n-----END " + label + "-----";
      v.push_back({"private-key", block, ""});
    }
    {
      const std::string header =
          Base64Url(odd ? R"({"typ":"JWT","alg":"RS256"})" : R"({"alg":"HS256","typ":"JWT"})");
      const std::string payload =
          Base64Url(R"({"sub":")" + Pick(kBase62, 12) + R"(","iat":1733380000})");
      v.push_back({"jwt", header + "." + payload + "." + Pick(kUrlSafe, 43), ""});
    }
    {
      const std::string pw = Pick(kBase62, 12 + variant % 8);
      static const char* kSchemes[] = {"postgres",    "mysql", "https",
                                       "mongodb+srv", "redis", "amqp"};
      v.push_back({"url-password", pw,
                   std::string(kSchemes[variant % 6]) + "://app_" + Pick(kLower, 4) + ":" + pw +
                       "@db" + Pick(kDigits, 2) + ".internal.net:5432/prod"});
    }
    {
      const std::string pw = Pick(kBase62, 16);
      v.push_back({"connection-string-password", pw,
                   std::string("Server=tcp:sql.internal,1433;Database=app;User Id=sa;") +
                       (odd ? "Pwd=" : "Password=") + pw + ";Encrypt=true;"});
    }
    for (GeneratedSecret& s : v) {
      if (s.text.empty()) s.text = s.secret;
    }
    return v;
  }

  // A CRC32 computed bit by bit (the detector uses a table).
  static uint32_t Crc32(std::string_view data) {
    uint32_t crc = 0xFFFFFFFFu;
    for (char ch : data) {
      crc ^= static_cast<unsigned char>(ch);
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
  }

  // 30 random base62 characters and the 6-character base62 CRC32 of them.
  std::string ChecksummedBody() {
    std::string body = Pick(kBase62, 30);
    uint32_t crc = Crc32(body);
    std::string check(6, '0');
    for (int i = 5; i >= 0; --i) {
      check[static_cast<size_t>(i)] = kBase62[crc % 62];
      crc /= 62;
    }
    return body + check;
  }

  std::string Pick(std::string_view alphabet, int n) {
    std::uniform_int_distribution<size_t> d(0, alphabet.size() - 1);
    std::string out;
    for (int i = 0; i < n; ++i) out.push_back(alphabet[d(rng_)]);
    return out;
  }

  static constexpr std::string_view kDigits = "0123456789";
  static constexpr std::string_view kLower = "abcdefghijklmnopqrstuvwxyz";
  static constexpr std::string_view kUpperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static constexpr std::string_view kBase32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  static constexpr std::string_view kBase62 =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  static constexpr std::string_view kUrlSafe =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

 private:
  std::string Base64(int n) {
    return Pick("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", n);
  }

  static std::string Base64Url(std::string_view in) {
    static constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : in) {
      acc = (acc << 8) | static_cast<unsigned char>(c);
      bits += 8;
      while (bits >= 6) {
        bits -= 6;
        out.push_back(kAlphabet[(acc >> bits) & 63]);
      }
    }
    if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 63]);
    return out;
  }

  // The secret's own text (a config line, or the bare secret) in one of a
  // few places a conversation holds one.
  static std::string Surround(const std::string& secret, const std::string& text, int variant) {
    (void)secret;
    switch (variant % 6) {
      case 0:
        return text;
      case 1:
        return "Here is the credential: " + text + ". Keep it safe.";
      case 2:
        return "export SECRET_VALUE=\"" + text + "\"\n";
      case 3:
        return "```\n" + text + "\n```";
      case 4:
        return "config:\n  value: '" + text + "'\n";
      default:
        return "(" + text + ")";
    }
  }

  std::mt19937 rng_;
};

}  // namespace sessiondb::testing
