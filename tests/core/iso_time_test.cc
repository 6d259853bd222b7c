#include "core/iso_time.h"

#include <string>

#include "gtest/gtest.h"

namespace sessiondb {
namespace {

constexpr int64_t kJuneFirst = 1748781296789;  // 2025-06-01T12:34:56.789Z

TEST(FormatUtcTime, WritesEachForm) {
  EXPECT_EQ(FormatUtcTime(kJuneFirst, UtcTimeForm::kIsoMillis), "2025-06-01T12:34:56.789Z");
  EXPECT_EQ(FormatUtcTime(kJuneFirst, UtcTimeForm::kIsoSeconds), "2025-06-01T12:34:56Z");
  EXPECT_EQ(FormatUtcTime(kJuneFirst, UtcTimeForm::kReadable), "2025-06-01 12:34:56 UTC");
  EXPECT_EQ(FormatUtcTime(kJuneFirst, UtcTimeForm::kDate), "2025-06-01");
}

TEST(FormatUtcTime, ShorterFormsNeverRoundUp) {
  // 23:59:59.999 stays on its second and its day.
  const int64_t last = 1748822399999;  // 2025-06-01T23:59:59.999Z
  EXPECT_EQ(FormatUtcTime(last, UtcTimeForm::kIsoSeconds), "2025-06-01T23:59:59Z");
  EXPECT_EQ(FormatUtcTime(last, UtcTimeForm::kDate), "2025-06-01");
}

TEST(FormatUtcTime, TimesBeforeTheEpochKeepTheirMilliseconds) {
  EXPECT_EQ(FormatUtcTime(0, UtcTimeForm::kIsoMillis), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatUtcTime(-1, UtcTimeForm::kIsoMillis), "1969-12-31T23:59:59.999Z");
}

TEST(FormatUtcTime, WhatItWritesParsesBackToTheSameTime) {
  for (int64_t ms : {int64_t{0}, kJuneFirst, int64_t{4102444800000}}) {
    EXPECT_EQ(ParseIsoTime(FormatUtcTime(ms, UtcTimeForm::kIsoMillis)), ms);
  }
  EXPECT_EQ(ParseIsoTime(FormatUtcTime(kJuneFirst, UtcTimeForm::kIsoSeconds)), kJuneFirst - 789);
}

}  // namespace
}  // namespace sessiondb
