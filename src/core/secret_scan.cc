#include "core/secret_scan.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/prefix_prefilter.h"

namespace sessiondb {
namespace {

// ---- Kinds -------------------------------------------------------------------

constexpr std::string_view kAwsAccessKey = "aws-access-key";
constexpr std::string_view kAwsSecretKey = "aws-secret-key";
constexpr std::string_view kGcpApiKey = "gcp-api-key";
constexpr std::string_view kAzureKey = "azure-key";
constexpr std::string_view kGithubToken = "github-token";
constexpr std::string_view kGitlabToken = "gitlab-token";
constexpr std::string_view kNpmToken = "npm-token";
constexpr std::string_view kPypiToken = "pypi-token";
constexpr std::string_view kOpenaiKey = "openai-key";
constexpr std::string_view kAnthropicKey = "anthropic-key";
constexpr std::string_view kSlackToken = "slack-token";
constexpr std::string_view kSlackWebhook = "slack-webhook";
constexpr std::string_view kDiscordWebhook = "discord-webhook";
constexpr std::string_view kTelegramBotToken = "telegram-bot-token";
constexpr std::string_view kStripeKey = "stripe-key";
constexpr std::string_view kPrivateKey = "private-key";
constexpr std::string_view kJwt = "jwt";
constexpr std::string_view kUrlPassword = "url-password";
constexpr std::string_view kConnectionPassword = "connection-string-password";

// How far the longest matchers look: every matcher looks a bounded distance
// ahead (the token ones at most a few hundred bytes), so a scan costs a
// bounded amount per trigger and stays linear in the text.
constexpr size_t kMaxJwtScan = size_t{16} * 1024;
constexpr size_t kMaxPrivateKeyScan = size_t{64} * 1024;

// ---- Character classes -----------------------------------------------------------

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsAlnum(char c) { return IsDigit(c) || IsUpper(c) || IsLower(c); }
bool IsUrlSafe(char c) { return IsAlnum(c) || c == '_' || c == '-'; }
bool IsBase64(char c) { return IsAlnum(c) || c == '+' || c == '/'; }
bool IsUpperOrDigit(char c) { return IsUpper(c) || IsDigit(c); }
bool IsWordish(char c) { return IsAlnum(c) || c == '_'; }
char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

template <typename Pred>
size_t RunLength(std::string_view t, size_t from, size_t limit, Pred pred) {
  size_t end = from;
  const size_t stop = std::min(t.size(), from + limit);
  while (end < stop && pred(t[end])) ++end;
  return end - from;
}

bool StartsWithAt(std::string_view t, size_t at, std::string_view prefix) {
  return t.size() >= at + prefix.size() && t.compare(at, prefix.size(), prefix) == 0;
}

bool StartsWithNoCase(std::string_view t, size_t at, std::string_view lower_prefix) {
  if (t.size() < at + lower_prefix.size()) return false;
  for (size_t i = 0; i < lower_prefix.size(); ++i) {
    if (Lower(t[at + i]) != lower_prefix[i]) return false;
  }
  return true;
}

bool ContainsNoCase(std::string_view t, std::string_view lower_needle) {
  if (t.size() < lower_needle.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= t.size(); ++i) {
    if (StartsWithNoCase(t, i, lower_needle)) return true;
  }
  return false;
}

// A token starts a word: nothing alphanumeric right before it.
bool LeftBoundary(std::string_view t, size_t at) { return at == 0 || !IsAlnum(t[at - 1]); }

// Text made to look like a key in documentation: an example, a run of x or *,
// too few distinct characters to be random.
bool LooksLikePlaceholder(std::string_view body) {
  if (ContainsNoCase(body, "example") || ContainsNoCase(body, "xxxx") ||
      body.find("****") != std::string_view::npos || body.find("....") != std::string_view::npos ||
      ContainsNoCase(body, "0000000")) {
    return true;
  }
  std::bitset<256> seen;
  for (char c : body) seen.set(static_cast<unsigned char>(c));
  const size_t needed = std::min<size_t>(10, body.size() / 3 + 1);
  return seen.count() < needed;
}

// ---- Checksums -----------------------------------------------------------------

uint32_t Crc32(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (char ch : data) crc = table[(crc ^ static_cast<unsigned char>(ch)) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string Base62Fixed6(uint32_t value, std::string_view alphabet) {
  std::string out(6, alphabet[0]);
  for (int i = 5; i >= 0 && value > 0; --i) {
    out[static_cast<size_t>(i)] = alphabet[value % 62];
    value /= 62;
  }
  return out;
}

constexpr std::string_view kBase62Upper =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kBase62Lower =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

// GitHub's and npm's tokens end in the base62 CRC32 of their 30 random
// characters. Both digit orders of base62 are accepted: a chance match is
// then 2 in 2^32.
bool ChecksumHolds(std::string_view body36) {
  const std::string_view random = body36.substr(0, 30);
  const std::string_view check = body36.substr(30, 6);
  const uint32_t crc = Crc32(random);
  return check == Base62Fixed6(crc, kBase62Upper) || check == Base62Fixed6(crc, kBase62Lower);
}

// ---- Base64url, for a JWT's header ----------------------------------------------

std::optional<std::string> DecodeBase64Url(std::string_view in) {
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v;
    if (IsUpper(c)) {
      v = c - 'A';
    } else if (IsLower(c)) {
      v = c - 'a' + 26;
    } else if (IsDigit(c)) {
      v = c - '0' + 52;
    } else if (c == '-' || c == '+') {
      v = 62;
    } else if (c == '_' || c == '/') {
      v = 63;
    } else {
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// ---- Matchers ----------------------------------------------------------------------
// Each looks at a trigger at `at` and returns the secret's span, or nullopt.

struct Span {
  std::string_view kind;
  size_t begin = 0;
  size_t end = 0;
};

using Match = std::optional<Span>;

// A token made of `prefix` and a body of `body_ok` characters, at least
// `min_body` (and at most `max_body`) long, ending where those characters end.
template <typename Pred>
Match PrefixedToken(std::string_view t, size_t at, std::string_view prefix, std::string_view kind,
                    size_t min_body, size_t max_body, Pred body_ok, bool check_placeholder = true) {
  if (!StartsWithAt(t, at, prefix) || !LeftBoundary(t, at)) return std::nullopt;
  const size_t body_at = at + prefix.size();
  const size_t n = RunLength(t, body_at, max_body + 1, body_ok);
  if (n < min_body || n > max_body) return std::nullopt;
  if (check_placeholder && LooksLikePlaceholder(t.substr(body_at, n))) return std::nullopt;
  return Span{kind, at, body_at + n};
}

Match AwsAccessKey(std::string_view t, size_t at) {
  static constexpr std::array<std::string_view, 4> kPrefixes = {"AKIA", "ASIA", "ABIA", "ACCA"};
  for (std::string_view p : kPrefixes) {
    if (!StartsWithAt(t, at, p)) continue;
    return PrefixedToken(t, at, p, kAwsAccessKey, 16, 16, IsUpperOrDigit);
  }
  return std::nullopt;
}

// "secret_access_key", "SecretAccessKey", "secret-access-key" ... then an
// assignment and 40 characters of base64.
Match AwsSecretKey(std::string_view t, size_t at) {
  size_t i = at;
  auto word = [&](std::string_view w) {
    if (!StartsWithNoCase(t, i, w)) return false;
    i += w.size();
    if (i < t.size() && (t[i] == '_' || t[i] == '-')) ++i;
    return true;
  };
  if (!word("secret") || !word("access") || !StartsWithNoCase(t, i, "key")) return std::nullopt;
  i += 3;
  // An assignment: quotes, spaces, '=', ':' (JSON, YAML, INI, shell), and
  // the backslashes of quotes escaped in JSON text (tool call arguments).
  const size_t gap = RunLength(t, i, 10, [](char c) {
    return c == '"' || c == '\'' || c == ' ' || c == '\t' || c == '=' || c == ':' || c == '\\';
  });
  if (gap == 0) return std::nullopt;
  i += gap;
  const size_t n = RunLength(t, i, 41, IsBase64);
  if (n != 40) return std::nullopt;
  const std::string_view body = t.substr(i, n);
  if (LooksLikePlaceholder(body)) return std::nullopt;
  if (std::none_of(body.begin(), body.end(), IsLower) ||
      std::none_of(body.begin(), body.end(), IsUpper)) {
    return std::nullopt;
  }
  return Span{kAwsSecretKey, i, i + n};
}

Match AzureKey(std::string_view t, size_t at) {
  for (std::string_view name :
       {std::string_view("AccountKey="), std::string_view("SharedAccessKey=")}) {
    if (!StartsWithAt(t, at, name)) continue;
    const size_t from = at + name.size();
    const size_t n = RunLength(t, from, 200, [](char c) { return IsBase64(c) || c == '='; });
    if (n < 40 || n >= 200) return std::nullopt;
    if (LooksLikePlaceholder(t.substr(from, n))) return std::nullopt;
    return Span{kAzureKey, from, from + n};
  }
  return std::nullopt;
}

Match GithubToken(std::string_view t, size_t at) {
  if (StartsWithAt(t, at, "github_pat_")) {
    return PrefixedToken(t, at, "github_pat_", kGithubToken, 70, 120, IsWordish);
  }
  if (t.size() < at + 4 || t[at] != 'g' || t[at + 1] != 'h' || t[at + 3] != '_')
    return std::nullopt;
  const char k = t[at + 2];
  if (k != 'p' && k != 'o' && k != 'u' && k != 's' && k != 'r') return std::nullopt;
  Match m = PrefixedToken(t, at, t.substr(at, 4), kGithubToken, 36, 36, IsAlnum, false);
  if (!m || !ChecksumHolds(t.substr(at + 4, 36))) return std::nullopt;
  return m;
}

Match NpmToken(std::string_view t, size_t at) {
  Match m = PrefixedToken(t, at, "npm_", kNpmToken, 36, 36, IsAlnum, false);
  if (!m || !ChecksumHolds(t.substr(at + 4, 36))) return std::nullopt;
  return m;
}

Match OpenaiOrStripeOrAnthropic(std::string_view t, size_t at) {
  if (StartsWithAt(t, at, "sk-ant-")) {
    for (std::string_view p :
         {std::string_view("sk-ant-api03-"), std::string_view("sk-ant-admin01-"),
          std::string_view("sk-ant-oat01-"), std::string_view("sk-ant-ort01-")}) {
      if (StartsWithAt(t, at, p)) return PrefixedToken(t, at, p, kAnthropicKey, 32, 200, IsUrlSafe);
    }
    return std::nullopt;
  }
  if (StartsWithAt(t, at, "sk_live_") || StartsWithAt(t, at, "sk_test_")) {
    return PrefixedToken(t, at, t.substr(at, 8), kStripeKey, 20, 255, IsAlnum);
  }
  if (!StartsWithAt(t, at, "sk-")) return std::nullopt;
  for (std::string_view p : {std::string_view("sk-proj-"), std::string_view("sk-svcacct-"),
                             std::string_view("sk-admin-")}) {
    if (StartsWithAt(t, at, p)) return PrefixedToken(t, at, p, kOpenaiKey, 40, 300, IsUrlSafe);
  }
  // The older form holds "T3BlbkFJ" ("OpenAI" in base64) in its middle.
  Match m = PrefixedToken(t, at, "sk-", kOpenaiKey, 40, 200, IsUrlSafe);
  if (!m || t.substr(m->begin, m->end - m->begin).find("T3BlbkFJ") == std::string_view::npos) {
    return std::nullopt;
  }
  return m;
}

Match RestrictedStripeKey(std::string_view t, size_t at) {
  if (!StartsWithAt(t, at, "rk_live_") && !StartsWithAt(t, at, "rk_test_")) return std::nullopt;
  return PrefixedToken(t, at, t.substr(at, 8), kStripeKey, 20, 255, IsAlnum);
}

Match SlackToken(std::string_view t, size_t at) {
  if (StartsWithAt(t, at, "xapp-")) {
    return PrefixedToken(t, at, "xapp-", kSlackToken, 30, 255,
                         [](char c) { return IsAlnum(c) || c == '-'; });
  }
  if (t.size() < at + 5 || !StartsWithAt(t, at, "xox") || t[at + 4] != '-') return std::nullopt;
  const char k = t[at + 3];
  if (k != 'a' && k != 'b' && k != 'p' && k != 'r' && k != 's' && k != 'e') return std::nullopt;
  Match m = PrefixedToken(t, at, t.substr(at, 5), kSlackToken, 20, 255,
                          [](char c) { return IsAlnum(c) || c == '-'; });
  if (!m) return std::nullopt;
  // Its segments: numbers, then the secret; at least one hyphen and digits.
  const std::string_view body = t.substr(at + 5, m->end - at - 5);
  if (body.find('-') == std::string_view::npos || std::none_of(body.begin(), body.end(), IsDigit)) {
    return std::nullopt;
  }
  return m;
}

Match SlackWebhook(std::string_view t, size_t at) {
  constexpr std::string_view kHost = "hooks.slack.com/services/";
  if (!StartsWithAt(t, at, kHost)) return std::nullopt;
  const size_t from = at + kHost.size();
  const size_t n = RunLength(t, from, 200, [](char c) { return IsAlnum(c) || c == '/'; });
  const std::string_view path = t.substr(from, n);
  // T<team>/B<bot>/<secret of 24>
  if (path.size() < 30 || path[0] != 'T' || std::count(path.begin(), path.end(), '/') != 2) {
    return std::nullopt;
  }
  const size_t last = path.rfind('/');
  if (path.size() - last - 1 < 20 || LooksLikePlaceholder(path.substr(last + 1))) {
    return std::nullopt;
  }
  return Span{kSlackWebhook, at, from + n};
}

Match DiscordWebhook(std::string_view t, size_t at) {
  for (std::string_view host : {std::string_view("discord.com/api/webhooks/"),
                                std::string_view("discordapp.com/api/webhooks/")}) {
    if (!StartsWithAt(t, at, host)) continue;
    size_t i = at + host.size();
    const size_t id = RunLength(t, i, 21, IsDigit);
    if (id < 17 || id > 20 || i + id >= t.size() || t[i + id] != '/') return std::nullopt;
    i += id + 1;
    const size_t n = RunLength(t, i, 101, IsUrlSafe);
    if (n < 60 || n > 100 || LooksLikePlaceholder(t.substr(i, n))) return std::nullopt;
    return Span{kDiscordWebhook, at, i + n};
  }
  return std::nullopt;
}

// <bot id of 8-10 digits>:AA<33 more>; the trigger is the ':'.
Match TelegramBotToken(std::string_view t, size_t at) {
  if (!StartsWithAt(t, at, ":AA")) return std::nullopt;
  size_t begin = at;
  while (begin > 0 && at - begin < 11 && IsDigit(t[begin - 1])) --begin;
  const size_t digits = at - begin;
  if (digits < 8 || digits > 10 || !LeftBoundary(t, begin)) return std::nullopt;
  const size_t n = RunLength(t, at + 1, 36, IsUrlSafe);
  if (n != 35 || LooksLikePlaceholder(t.substr(at + 1, n))) return std::nullopt;
  return Span{kTelegramBotToken, begin, at + 1 + n};
}

Match PypiToken(std::string_view t, size_t at) {
  return PrefixedToken(t, at, "pypi-AgEIcHlwaS5vcmc", kPypiToken, 50, 300, IsUrlSafe);
}

Match GitlabToken(std::string_view t, size_t at) {
  Match m = PrefixedToken(t, at, "glpat-", kGitlabToken, 20, 255,
                          [](char c) { return IsUrlSafe(c) || c == '.'; });
  if (!m) return std::nullopt;
  while (m->end > m->begin && t[m->end - 1] == '.') --m->end;  // a sentence's full stop
  return m;
}

Match GcpApiKey(std::string_view t, size_t at) {
  return PrefixedToken(t, at, "AIza", kGcpApiKey, 35, 35, IsUrlSafe);
}

// Three base64url segments; the header decodes to a JSON object with "alg".
Match Jwt(std::string_view t, size_t at) {
  if (!StartsWithAt(t, at, "eyJ") || !LeftBoundary(t, at)) return std::nullopt;
  const size_t header = RunLength(t, at, 2048, IsUrlSafe);
  if (header < 10 || at + header >= t.size() || t[at + header] != '.') return std::nullopt;
  const size_t p_at = at + header + 1;
  const size_t payload = RunLength(t, p_at, kMaxJwtScan, IsUrlSafe);
  if (payload < 4 || p_at + payload >= t.size() || t[p_at + payload] != '.') return std::nullopt;
  const size_t s_at = p_at + payload + 1;
  const size_t sig = RunLength(t, s_at, kMaxJwtScan, IsUrlSafe);
  if (sig < 16) return std::nullopt;
  std::optional<std::string> decoded = DecodeBase64Url(t.substr(at, header));
  if (!decoded || decoded->empty() || (*decoded)[0] != '{' ||
      decoded->find("\"alg\"") == std::string::npos) {
    return std::nullopt;
  }
  return Span{kJwt, at, s_at + sig};
}

// -----BEGIN ... PRIVATE KEY----- through its END line. One whose END is
// missing (a truncated paste) is taken to the end of its base64 body.
class PrivateKeyMatcher {
 public:
  Match operator()(std::string_view t, size_t at) {
    constexpr std::string_view kBegin = "-----BEGIN ";
    if (!StartsWithAt(t, at, kBegin)) return std::nullopt;
    const size_t label = at + kBegin.size();
    const size_t label_len =
        RunLength(t, label, 40, [](char c) { return IsUpperOrDigit(c) || c == ' '; });
    const std::string_view name = t.substr(label, label_len);
    const size_t key = name.find("PRIVATE KEY");
    if (key == std::string_view::npos) return std::nullopt;
    size_t body = label + label_len;
    const size_t dashes = RunLength(t, body, 5, [](char c) { return c == '-'; });
    if (dashes != 5) return std::nullopt;
    body += dashes;
    // The next END after the body, found once and kept for later triggers:
    // a text of many BEGINs without an END stays linear.
    if (!searched_ || (next_end_ != std::string_view::npos && next_end_ < body)) {
      next_end_ = t.find("-----END ", body);
      searched_ = true;
    }
    size_t end;
    size_t base64_chars = 0;
    if (next_end_ != std::string_view::npos && next_end_ - body <= kMaxPrivateKeyScan) {
      const std::string_view inside = t.substr(body, next_end_ - body);
      for (char c : inside) base64_chars += IsBase64(c) ? 1 : 0;
      end = next_end_ + 9;
      end += RunLength(t, end, 60, [](char c) { return IsUpperOrDigit(c) || c == ' '; });
      end += RunLength(t, end, 5, [](char c) { return c == '-'; });
    } else {
      // Base64 lines, with real or JSON-escaped line breaks.
      const size_t n = RunLength(t, body, kMaxPrivateKeyScan, [](char c) {
        return IsBase64(c) || c == '=' || c == '\n' || c == '\r' || c == '\\' || c == ' ' ||
               c == ':' || c == '-' || c == ',';
      });
      for (char c : t.substr(body, n)) base64_chars += IsBase64(c) ? 1 : 0;
      end = body + n;
    }
    // "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----" in a
    // document is no key.
    if (base64_chars < 64) return std::nullopt;
    return Span{kPrivateKey, at, end};
  }

 private:
  bool searched_ = false;
  size_t next_end_ = std::string_view::npos;
};

bool IsPlaceholderPassword(std::string_view pw) {
  if (pw.empty()) return true;
  const char first = pw.front();
  if (first == '$' || first == '{' || first == '<' || first == '%' || first == '[' ||
      first == '*' || first == '(') {
    return true;
  }
  if (std::all_of(pw.begin(), pw.end(), [&](char c) { return c == first; })) return true;
  std::string lower;
  for (char c : pw) lower.push_back(Lower(c));
  // Words a placeholder is made of; a random password of a dozen characters
  // holds one of these seven-letter-or-longer words by chance too rarely to count.
  static constexpr std::array<std::string_view, 13> kWords = {
      "password", "passwd",   "changeme",   "example",    "redacted", "placeholder", "secret",
      "your_",    "passwort", "wachtwoord", "motdepasse", "contrase", "senha"};
  for (std::string_view w : kWords) {
    if (lower.find(w) != std::string::npos) return true;
  }
  static constexpr std::array<std::string_view, 14> kWhole = {
      "pass", "pwd",   "pw",   "p",    "x",     "test",  "foo",
      "bar",  "admin", "root", "user", "token", "dummy", "hidden"};
  return std::find(kWhole.begin(), kWhole.end(), lower) != kWhole.end();
}

bool UserInfoChar(char c) {
  return c > ' ' && c != '/' && c != '@' && c != '"' && c != '\'' && c != '\\' && c != '<' &&
         c != '>' && c != '`' && c != '(' && c != ')' && c != '[' && c != ']' && c != '{' &&
         c != '}' && c != 0x7F;
}

// scheme://user:password@host; the trigger is the ':' of "://". Only the
// password is the secret.
Match UrlPassword(std::string_view t, size_t at) {
  if (!StartsWithAt(t, at, "://")) return std::nullopt;
  // A scheme of letters before it.
  size_t s = at;
  while (s > 0 && at - s < 32 &&
         (IsAlnum(t[s - 1]) || t[s - 1] == '+' || t[s - 1] == '.' || t[s - 1] == '-')) {
    --s;
  }
  if (s == at || !IsLower(Lower(t[s]))) return std::nullopt;
  const size_t user = at + 3;
  const size_t info = RunLength(t, user, 256, UserInfoChar);
  if (user + info >= t.size() || t[user + info] != '@') return std::nullopt;
  const std::string_view userinfo = t.substr(user, info);
  const size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view password = userinfo.substr(colon + 1);
  // A second ':' is CVS's ":pserver:user@host" or a port, not a password.
  if (password.find(':') != std::string_view::npos || IsPlaceholderPassword(password)) {
    return std::nullopt;
  }
  // A host after the '@'.
  const size_t host = user + info + 1;
  if (host >= t.size() || !(IsAlnum(t[host]) || t[host] == '[')) return std::nullopt;
  if (StartsWithNoCase(t, host, "example.") || StartsWithNoCase(t, host, "host")) {
    return std::nullopt;
  }
  return Span{kUrlPassword, user + colon + 1, user + info};
}

// Password=...; or Pwd=...; in a connection string: after ';' or at a line's
// start, and ended by ';'.
Match ConnectionPassword(std::string_view t, size_t at) {
  size_t value;
  if (StartsWithNoCase(t, at, "password=")) {
    value = at + 9;
  } else if (StartsWithNoCase(t, at, "pwd=")) {
    value = at + 4;
  } else {
    return std::nullopt;
  }
  size_t before = at;
  while (before > 0 && t[before - 1] == ' ') --before;
  const bool after_separator =
      before > 0 && (t[before - 1] == ';' || t[before - 1] == '"' || t[before - 1] == '\'');
  if (!after_separator && before != 0 && t[before - 1] != '\n') return std::nullopt;
  const size_t n = RunLength(t, value, 256, [](char c) {
    return c > ' ' && c != ';' && c != '"' && c != '\'' && c != '\\' && c != 0x7F;
  });
  if (value + n >= t.size() || t[value + n] != ';') return std::nullopt;
  const std::string_view pw = t.substr(value, n);
  if (pw.size() < 4 || IsPlaceholderPassword(pw)) return std::nullopt;
  return Span{kConnectionPassword, value, value + n};
}

// ---- The scan ---------------------------------------------------------------------

// The first three bytes of every kind's fixed prefix (each matcher needs at
// least those), found by the prefilter (prefix_prefilter.h: sixteen
// positions at a time, each candidate checked exactly there). Most text has
// pairs such as "se", "pa" or "di" everywhere, and only the pair was checked
// before: a call of MatchAt for each was 14 % of a batched append (issue
// 40's profile).
class TriggerPrefixes {
 public:
  TriggerPrefixes() {
    for (std::string_view p : {"AKI", "ASI", "ABI", "ACC", "AIz", "Acc", "Sha", "git", "ghp",
                               "gho", "ghu", "ghs", "ghr", "glp", "npm", "pyp", "sk-", "sk_",
                               "rk_", "xap", "xox", "hoo", "dis", "---", "eyJ", "://", ":AA"}) {
      Add(p[0], p[1], p[2]);
    }
    // Case-insensitive words: secret_access_key, password=, pwd=.
    for (std::string_view word : {"sec", "pas", "pwd"}) {
      for (int variant = 0; variant < 8; ++variant) {
        auto cased = [&](int k) {
          const char c = word[static_cast<size_t>(k)];
          return (variant >> k) & 1 ? static_cast<char>(c - 'a' + 'A') : c;
        };
        Add(cased(0), cased(1), cased(2));
      }
    }
  }
  // The first position from `from` on where some kind's prefix starts, or
  // t.size().
  size_t Next(std::string_view t, size_t from) const { return prefilter_.Next(t, from); }

 private:
  void Add(char a, char b, char c) {
    prefilter_.Add(static_cast<unsigned char>(a), static_cast<unsigned char>(b),
                   static_cast<unsigned char>(c));
  }
  PrefixPrefilter prefilter_;
};

Match MatchAt(std::string_view t, size_t i, PrivateKeyMatcher& private_key) {
  switch (t[i]) {
    case 'A':
      if (Match m = AwsAccessKey(t, i)) return m;
      if (Match m = GcpApiKey(t, i)) return m;
      return AzureKey(t, i);
    case 'S':
      if (Match m = AzureKey(t, i)) return m;
      return AwsSecretKey(t, i);
    case 's':
      if (Match m = OpenaiOrStripeOrAnthropic(t, i)) return m;
      return AwsSecretKey(t, i);
    case 'g':
      if (Match m = GithubToken(t, i)) return m;
      return GitlabToken(t, i);
    case 'n':
      return NpmToken(t, i);
    case 'p':
      if (Match m = PypiToken(t, i)) return m;
      return ConnectionPassword(t, i);
    case 'P':
      return ConnectionPassword(t, i);
    case 'r':
      return RestrictedStripeKey(t, i);
    case 'x':
      return SlackToken(t, i);
    case 'h':
      return SlackWebhook(t, i);
    case 'd':
      return DiscordWebhook(t, i);
    case '-':
      return private_key(t, i);
    case 'e':
      return Jwt(t, i);
    case ':':
      if (Match m = UrlPassword(t, i)) return m;
      return TelegramBotToken(t, i);
    default:
      return std::nullopt;
  }
}

}  // namespace

const std::vector<std::string_view> kSecretKinds = {
    kAwsAccessKey, kAwsSecretKey, kGcpApiKey,      kAzureKey,          kGithubToken,
    kGitlabToken,  kNpmToken,     kPypiToken,      kOpenaiKey,         kAnthropicKey,
    kSlackToken,   kSlackWebhook, kDiscordWebhook, kTelegramBotToken,  kStripeKey,
    kPrivateKey,   kJwt,          kUrlPassword,    kConnectionPassword};

std::vector<SecretFinding> FindSecrets(std::string_view text) {
  static const TriggerPrefixes kTriggers;
  std::vector<SecretFinding> found;
  PrivateKeyMatcher private_key;
  size_t covered = 0;  // the end of the last finding
  const size_t n = text.size();
  for (size_t i = kTriggers.Next(text, 0); i + 2 < n; i = kTriggers.Next(text, i + 1)) {
    Match m = MatchAt(text, i, private_key);
    if (!m || m->begin < covered || m->end <= m->begin) continue;
    found.push_back({m->kind, m->begin, m->end - m->begin});
    covered = m->end;
    i = m->end - 1;
  }
  return found;
}

bool HasRedactionMarker(std::string_view text) {
  return text.find("[REDACTED:") != std::string_view::npos;
}

SecretRedactor::SecretRedactor(std::string key, std::vector<std::string> allow)
    : key_(std::move(key)), allow_(std::move(allow)) {}

bool SecretRedactor::Allowed(std::string_view kind, std::string_view secret) const {
  return std::any_of(allow_.begin(), allow_.end(),
                     [&](const std::string& a) { return a == kind || a == secret; });
}

std::string SecretRedactor::Marker(std::string_view kind, std::string_view secret) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), mac, &mac_len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "[REDACTED:";
  out.append(kind);
  out.push_back(':');
  for (unsigned int i = 0; i < 4 && i < mac_len; ++i) {
    out.push_back(kHex[mac[i] >> 4]);
    out.push_back(kHex[mac[i] & 0xF]);
  }
  out.push_back(']');
  return out;
}

bool SecretRedactor::Redact(std::string* text, std::vector<std::string_view>* found) const {
  const std::vector<SecretFinding> findings = FindSecrets(*text);
  if (findings.empty()) return false;
  std::string out;
  size_t at = 0;
  bool changed = false;
  for (const SecretFinding& f : findings) {
    const std::string_view secret = std::string_view(*text).substr(f.offset, f.length);
    if (Allowed(f.kind, secret)) continue;
    if (!changed) out.reserve(text->size());
    out.append(*text, at, f.offset - at);
    out += Marker(f.kind, secret);
    at = f.offset + f.length;
    changed = true;
    if (found != nullptr) found->push_back(f.kind);
  }
  if (!changed) return false;
  out.append(*text, at, std::string::npos);
  *text = std::move(out);
  return true;
}

}  // namespace sessiondb
