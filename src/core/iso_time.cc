#include "core/iso_time.h"

#include <cstdio>
#include <ctime>
#include <string_view>

namespace sessiondb {
namespace {

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

int ToInt(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

}  // namespace

std::optional<int64_t> ParseIsoTime(std::string_view t) {
  // YYYY-MM-DD[THH:MM[:SS[.fff...]]][Z|+HH:MM|-HH:MM]
  if (t.size() < 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  if (!IsDigits(t.substr(0, 4)) || !IsDigits(t.substr(5, 2)) || !IsDigits(t.substr(8, 2))) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = ToInt(t.substr(0, 4)) - 1900;
  tm.tm_mon = ToInt(t.substr(5, 2)) - 1;
  tm.tm_mday = ToInt(t.substr(8, 2));
  int64_t millis = 0;
  int64_t offset_s = 0;
  size_t i = 10;
  if (i < t.size() && (t[i] == 'T' || t[i] == ' ')) {
    if (t.size() < i + 6 || t[i + 3] != ':' || !IsDigits(t.substr(i + 1, 2)) ||
        !IsDigits(t.substr(i + 4, 2))) {
      return std::nullopt;
    }
    tm.tm_hour = ToInt(t.substr(i + 1, 2));
    tm.tm_min = ToInt(t.substr(i + 4, 2));
    i += 6;
    if (i < t.size() && t[i] == ':') {
      if (t.size() < i + 3 || !IsDigits(t.substr(i + 1, 2))) return std::nullopt;
      tm.tm_sec = ToInt(t.substr(i + 1, 2));
      i += 3;
    }
    if (i < t.size() && t[i] == '.') {
      size_t j = i + 1;
      int64_t scale = 100;
      while (j < t.size() && t[j] >= '0' && t[j] <= '9') {
        millis += (t[j] - '0') * scale;
        scale /= 10;
        ++j;
      }
      i = j;
    }
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) {
      if (t.size() < i + 6 || !IsDigits(t.substr(i + 1, 2)) || !IsDigits(t.substr(i + 4, 2))) {
        return std::nullopt;
      }
      offset_s =
          (int64_t{ToInt(t.substr(i + 1, 2))} * 3600 + int64_t{ToInt(t.substr(i + 4, 2))} * 60) *
          (t[i] == '-' ? -1 : 1);
      i += 6;
    } else if (i < t.size() && t[i] == 'Z') {
      ++i;
    }
  }
  if (i != t.size()) return std::nullopt;
  const time_t secs = timegm(&tm);
  if (secs == static_cast<time_t>(-1)) return std::nullopt;
  return (static_cast<int64_t>(secs) - offset_s) * 1000 + millis;
}

std::string FormatUtcTime(int64_t unix_ms, UtcTimeForm form) {
  // Floor division, so a time before 1970 keeps its milliseconds positive.
  int64_t secs = unix_ms / 1000;
  int64_t millis = unix_ms % 1000;
  if (millis < 0) {
    millis += 1000;
    secs -= 1;
  }
  const time_t t = static_cast<time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  const int year = tm.tm_year + 1900;
  const int month = tm.tm_mon + 1;
  char buf[64];
  switch (form) {
    case UtcTimeForm::kIsoMillis:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(millis));
      break;
    case UtcTimeForm::kIsoSeconds:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec);
      break;
    case UtcTimeForm::kReadable:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d UTC", year, month, tm.tm_mday,
                    tm.tm_hour, tm.tm_min, tm.tm_sec);
      break;
    case UtcTimeForm::kDate:
      std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", year, month, tm.tm_mday);
      break;
  }
  return buf;
}

}  // namespace sessiondb
