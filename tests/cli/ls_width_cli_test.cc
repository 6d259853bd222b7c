// `sessiondb ls` fits its width: the terminal's when stdout is one (its
// window size), else $COLUMNS, else 80 columns. Titles are cut with "…" to
// make room, a CJK character counting two columns; the ARCHIVED and FORKED
// FROM columns appear only when a listed session has one. Against the real
// binary, and the table itself (cli/output) as a unit.
#include "cli/output.h"
#include "cli_fixture.h"

namespace sessiondb::testing {
namespace {

// Columns a terminal gives `line`: two for the CJK characters used here.
size_t Columns(const std::string& line) {
  size_t columns = 0;
  for (size_t i = 0; i < line.size();) {
    const auto lead = static_cast<unsigned char>(line[i]);
    const size_t len = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    // U+3000..U+9FFF (kana, kanji) are three bytes starting E3..E9; "…" is E2 80 A6.
    columns += (lead >= 0xE3 && lead <= 0xE9) ? 2 : 1;
    i += len;
  }
  return columns;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

class LsWidth : public Cli {
 protected:
  void SetUp() override {
    const std::string long_title =
        "A title much longer than any terminal would show in one line of a table of sessions";
    ASSERT_FALSE(NewSession({"--title", long_title}).empty());
    ASSERT_FALSE(
        NewSession({"--title", "日本語のとても長いタイトルは二つの列を使う文字でできています"})
            .empty());
    ASSERT_FALSE(NewSession({"--title", "short"}).empty());
  }

  // Runs `sessiondb --store <store> ls ARGS` with stdout on a pseudo-terminal
  // `columns` wide; $COLUMNS is set to 200, so that only the window size can
  // be what the table fits.
  CliRun LsOnTerminal(unsigned short columns, const std::vector<std::string>& args = {}) {
    std::vector<std::string> ls = {"--no-pager", "ls"};
    ls.insert(ls.end(), args.begin(), args.end());
    return RunOnTerminal(ls, {{"COLUMNS", "200"}}, columns);
  }
};

TEST_F(LsWidth, NoLineIsWiderThan80ColumnsByDefault) {
  const CliRun r = Run({"ls"}, {.env = {{"COLUMNS", std::nullopt}}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  for (const std::string& line : lines) EXPECT_LE(Columns(line), 80u) << line;
  EXPECT_TRUE(Contains(r.out, "A title much longer than")) << r.out;
  EXPECT_TRUE(Contains(r.out, "…")) << r.out;
  // No session is archived or a fork: no empty columns for them.
  EXPECT_FALSE(Contains(lines[0], "ARCHIVED")) << lines[0];
  EXPECT_FALSE(Contains(lines[0], "FORKED FROM")) << lines[0];

  // Whole ids leave the title 14 columns: as much of it as fits, then "…".
  const CliRun full = Run({"ls", "--full"}, {.env = {{"COLUMNS", std::nullopt}}});
  size_t widest = 0;
  for (const std::string& line : Lines(full.out)) widest = std::max(widest, Columns(line));
  EXPECT_EQ(widest, 80u) << full.out;
  EXPECT_TRUE(Contains(full.out, "  A title much …  ")) << full.out;
  EXPECT_TRUE(Contains(full.out, "  日本語のとて…  ")) << full.out;
}

TEST_F(LsWidth, ColumnsSetsTheWidthWhenStdoutIsNoTerminal) {
  for (int columns : {80, 70, 60}) {
    const CliRun r = Run({"ls", "--all"}, {.env = {{"COLUMNS", std::to_string(columns)}}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const std::string& line : Lines(r.out)) {
      EXPECT_LE(Columns(line), static_cast<size_t>(columns)) << columns << ": " << line;
    }
  }
  // An archived session and a fork bring their columns back, and still fit.
  const std::string id = NewSession({"--title", "parent"});
  ASSERT_EQ(Sdb({"fork", id, "--title", "a fork of the parent with a long title too"}).exit_code,
            0);
  ASSERT_EQ(Sdb({"archive", id}).exit_code, 0);
  const CliRun all = Run({"ls", "--all"}, {.env = {{"COLUMNS", "80"}}});
  const std::vector<std::string> lines = Lines(all.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(Contains(lines[0], "ARCHIVED")) << all.out;
  EXPECT_TRUE(Contains(lines[0], "FORKED FROM")) << all.out;
  for (const std::string& line : lines) EXPECT_LE(Columns(line), 80u) << line;
}

TEST_F(LsWidth, OnATerminalItsWindowSizeIsTheWidth) {
  const CliRun narrow = LsOnTerminal(64);
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  const std::vector<std::string> lines = Lines(narrow.out);
  ASSERT_EQ(lines.size(), 4u) << narrow.out;
  for (const std::string& line : lines) EXPECT_LE(Columns(line), 64u) << line;
  // A wide one shows the titles up to their 40 characters, not 200 columns of them.
  const CliRun wide = LsOnTerminal(160);
  EXPECT_TRUE(Contains(wide.out, "A title much longer than any terminal w…")) << wide.out;
}

TEST(TableWidth, FitToWidthCutsOneColumnSoTheLinesFit) {
  cli::Table table({"ID", "TITLE", "N"});
  table.AddRow({"abc", "a title of thirty characters!!", "1"});
  table.AddRow({"abd", "日本語の題名です", "22"});
  table.FitToWidth(1, 20, 5);
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "ID   TITLE        N\n"
            "abc  a title of…  1\n"
            "abd  日本語の題…  22\n");
}

TEST(TableWidth, TheFittedColumnKeepsItsMinimumWhenTheOthersTakeEverything) {
  cli::Table table({"ID", "TITLE"});
  table.AddRow({std::string(30, 'x'), "a title"});
  table.FitToWidth(1, 20, 5);
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "ID" + std::string(30, ' ') + "TITLE\n" + std::string(30, 'x') + "  a ti…\n");
}

TEST(TableWidth, FitWidthCountsWideCharactersAsTwoColumns) {
  EXPECT_EQ(cli::FitWidth("abcdef", 6), "abcdef");
  EXPECT_EQ(cli::FitWidth("abcdefg", 6), "abcde…");
  EXPECT_EQ(cli::FitWidth("日本語の題名", 12), "日本語の題名");
  EXPECT_EQ(cli::FitWidth("日本語の題名", 7), "日本語…");  // 6 columns and the ellipsis
  EXPECT_EQ(cli::FitWidth("日本語の題名", 6), "日本…");    // a third one would need 7
  EXPECT_EQ(cli::FitWidth("x", 0), "");
}

}  // namespace
}  // namespace sessiondb::testing
