#include "workload_data.h"

#include <openssl/evp.h>

#include <array>
#include <cstdio>

#include "blob/sha256.h"

namespace sessiondb::bench {
namespace {

constexpr std::array<const char*, 256> kWords = {
    "the",      "of",       "and",       "to",      "in",       "is",      "it",       "that",
    "for",      "on",       "with",      "as",      "this",     "be",      "are",      "was",
    "by",       "at",       "or",        "from",    "not",      "but",     "have",     "has",
    "had",      "can",      "will",      "would",   "should",   "could",   "may",      "might",
    "must",     "do",       "does",      "did",     "done",     "make",    "makes",    "made",
    "use",      "uses",     "used",      "using",   "get",      "gets",    "set",      "run",
    "runs",     "add",      "adds",      "change",  "changes",  "fix",     "fixes",    "check",
    "test",     "tests",    "build",     "builds",  "write",    "read",    "load",     "save",
    "open",     "close",    "start",     "stop",    "return",   "call",    "calls",    "value",
    "values",   "file",     "files",     "line",    "lines",    "code",    "function", "method",
    "class",    "type",     "types",     "object",  "list",     "array",   "string",   "number",
    "index",    "key",      "keys",      "map",     "table",    "row",     "rows",     "column",
    "data",     "database", "query",     "cache",   "memory",   "buffer",  "stream",   "error",
    "errors",   "warning",  "issue",     "bug",     "patch",    "version", "release",  "branch",
    "commit",   "merge",    "review",    "log",     "logs",     "output",  "input",    "user",
    "users",    "server",   "client",    "request", "response", "message", "messages", "session",
    "sessions", "history",  "context",   "model",   "models",   "token",   "tokens",   "prompt",
    "answer",   "question", "example",   "case",    "cases",    "path",    "paths",    "module",
    "package",  "library",  "system",    "service", "process",  "thread",  "lock",     "time",
    "timeout",  "size",     "limit",     "first",   "last",     "next",    "previous", "new",
    "old",      "same",     "different", "other",   "each",     "every",   "all",      "some",
    "any",      "more",     "most",      "less",    "few",      "many",    "small",    "large",
    "fast",     "slow",     "simple",    "complex", "good",     "better",  "best",     "clear",
    "correct",  "wrong",    "safe",      "here",    "there",    "now",     "then",     "when",
    "where",    "why",      "how",       "what",    "which",    "who",     "because",  "before",
    "after",    "while",    "until",     "if",      "else",     "also",    "only",     "just",
    "still",    "again",    "very",      "really",  "quite",    "already", "often",    "never",
    "always",   "maybe",    "probably",  "think",   "know",     "see",     "look",     "need",
    "want",     "try",      "keep",      "find",    "show",     "works",   "working",  "seems",
    "like",     "instead",  "rather",    "please",  "thanks",   "sure",    "okay",     "yes",
    "no",       "step",     "plan",      "idea",    "reason",   "result",  "results",  "problem",
    "solution", "approach", "design",    "layer",   "config",   "option",  "options",  "default"};

const char* Role(int j) { return j % 2 == 0 ? "user" : "assistant"; }

std::string U32Be(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}
std::string U32Le(uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}

uint32_t Crc32(const std::string& data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : data) crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string Chunk(const std::string& type, const std::string& data) {
  return U32Be(static_cast<uint32_t>(data.size())) + type + data + U32Be(Crc32(type + data));
}

std::string Sha256Raw(const std::string& data) {
  unsigned char digest[32];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(digest), 32);
}

}  // namespace

uint64_t SplitMix64::Next() {
  state_ += 0x9E3779B97F4A7C15ull;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::string MessageText(SplitMix64& rng) {
  const uint64_t target = 388 + rng.Next() % 161;
  std::string out;
  bool first = true;
  while (out.size() < target) {
    if (!first) out += (rng.Next() % 6 == 0) ? "\n\n" : " ";
    const uint64_t nwords = 4 + rng.Next() % 13;
    for (uint64_t w = 0; w < nwords; ++w) {
      std::string word = kWords[rng.Next() % 256];
      if (w == 0) word[0] = static_cast<char>(word[0] - 'a' + 'A');
      if (w > 0) out += ' ';
      out += word;
    }
    out += (rng.Next() % 8 == 0) ? "?" : ".";
    first = false;
  }
  return out;
}

std::vector<WorkloadMessage> W1Messages() {
  SplitMix64 rng(1001);
  std::vector<WorkloadMessage> out;
  for (int j = 0; j < 10000; ++j) out.push_back({"w1-s0", Role(j), MessageText(rng)});
  return out;
}

std::vector<WorkloadMessage> W2Messages() {
  SplitMix64 rng(1002);
  std::vector<WorkloadMessage> out;
  char sid[16];
  for (int s = 0; s < 1000; ++s) {
    std::snprintf(sid, sizeof(sid), "w2-s%04d", s);
    for (int j = 0; j < 20; ++j) out.push_back({sid, Role(j), MessageText(rng)});
  }
  return out;
}

std::vector<WorkloadMessage> W5Messages() {
  SplitMix64 rng(1005);
  std::vector<WorkloadMessage> out;
  for (int i = 0; i < kW5Images; ++i) out.push_back({"w5-s0", "user", MessageText(rng)});
  return out;
}

std::string W5Image(uint32_t index) {
  const std::string ihdr = U32Be(1) + U32Be(1) + std::string("\x08\x00\x00\x00\x00", 5);
  const std::string idat("\x78\x9c\x63\x60\x00\x00\x00\x02\x00\x01", 10);
  const std::string head =
      std::string("\x89PNG\r\n\x1a\n", 8) + Chunk("IHDR", ihdr) + Chunk("IDAT", idat);
  const std::string tail = Chunk("IEND", "");
  const size_t payload_len = kW5ImageBytes - head.size() - tail.size() - 12;
  const std::string prefix = "peerbench-img" + U32Le(index);
  std::string payload;
  payload.reserve(payload_len + 32);
  for (uint32_t k = 0; payload.size() < payload_len; ++k) payload += Sha256Raw(prefix + U32Le(k));
  payload.resize(payload_len);
  return head + Chunk("rnDm", payload) + tail;
}

std::string TextDigest(const std::vector<WorkloadMessage>& messages) {
  std::string all;
  for (const auto& m : messages) all += m.session_id + "\t" + m.role + "\t" + m.text + "\n";
  return blob::Sha256Hex(all);
}

}  // namespace sessiondb::bench
