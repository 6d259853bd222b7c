#include "cli/cli_context.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string_view>
#include <utility>

#include "cli/access_denied.h"
#include "cli/output.h"
#include "cli/session_ref.h"

namespace sessiondb::cli {

namespace {

const char* NonEmptyEnv(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// The library names its limits after the StoreOptions fields; people type flags.
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kLimitFlags{{
    {"max_image_bytes", "--max-image-bytes SIZE"},
    {"max_images_per_message", "--max-images N"},
    {"max_file_bytes", "--max-file-bytes SIZE"},
}};

}  // namespace

CliContext::CliContext() : stdout_is_terminal_(isatty(STDOUT_FILENO) != 0) {
  if (stdout_is_terminal_) {
    winsize size{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0) terminal_columns_ = size.ws_col;
    terminal_guard_ = std::make_unique<TerminalGuard>(
        std::cout, [this] { return options.json || writing_style_; });
  }
}

std::optional<std::string> CliContext::SessionId(std::string_view typed) {
  Store* store = OpenStore(/*create_if_missing=*/false);
  if (!store) return std::nullopt;
  auto id = ResolveSessionRef(*store, typed);
  if (!id) {
    Fail(id.error());
    return std::nullopt;
  }
  return *id;
}

void CliContext::StartPager() {
  if (!stdout_is_terminal_ || options.no_pager || pager_) return;
  pager_ = Pager::Start(PagerCommand());
}

size_t CliContext::OutputColumns() const {
  if (stdout_is_terminal_ && terminal_columns_ > 0) return terminal_columns_;
  if (const char* env = NonEmptyEnv("COLUMNS")) {
    size_t columns = 0;
    for (const char* c = env; *c != '\0'; ++c) {
      if (*c < '0' || *c > '9' || columns > 100000) return 80;
      columns = columns * 10 + static_cast<size_t>(*c - '0');
    }
    if (columns > 0) return columns;
  }
  return 80;
}

bool CliContext::UseColor() const {
  return stdout_is_terminal_ && !options.json && NonEmptyEnv("NO_COLOR") == nullptr;
}

void CliContext::WriteStyle(std::string_view sgr) {
  std::cout.flush();  // what came before is escaped first
  writing_style_ = true;
  std::cout << sgr;
  std::cout.flush();
  writing_style_ = false;
}

std::string CliContext::ForTerminal(std::string_view text) const {
  if (!stdout_is_terminal_ || options.json) return std::string(text);
  return EscapeForTerminal(text);
}

std::string CliContext::StorePath() const {
  if (!options.store.empty()) return options.store;
  if (const char* env = NonEmptyEnv("SESSIONDB_STORE")) return env;
  if (const char* xdg = NonEmptyEnv("XDG_DATA_HOME")) return std::string(xdg) + "/sessiondb";
  const char* home = NonEmptyEnv("HOME");
  return std::string(home ? home : ".") + "/.local/share/sessiondb";
}

StoreOptions CliContext::MakeStoreOptions(bool create_if_missing) const {
  StoreOptions o;
  o.durability = options.fast ? Durability::kProcessCrashSafe : Durability::kDurable;
  o.create_if_missing = create_if_missing;
  if (options.max_image_bytes > 0) o.max_image_bytes = options.max_image_bytes;
  if (options.max_file_bytes > 0) o.max_file_bytes = options.max_file_bytes;
  if (options.max_images >= 0) o.max_images_per_message = options.max_images;
  o.namespace_name = options.namespace_name;
  o.key_file = options.key_file;  // empty: the library reads $SESSIONDB_KEY_FILE
  if (o.namespace_name.empty()) {
    const char* env = std::getenv("SESSIONDB_NAMESPACE");
    if (env != nullptr) o.namespace_name = env;
  }
  return o;
}

Store* CliContext::OpenStore(bool create_if_missing) {
  if (borrowed_store_ != nullptr) return borrowed_store_;
  if (store_) return store_.get();
  const std::string path = StorePath();
  auto opened = Store::Open(path, MakeStoreOptions(create_if_missing));
  if (!opened) {
    // Permissions refused are said as such (the store's own error is an I/O
    // error, SQLite's "unable to open database file", or "no store").
    std::optional<std::string> denied;
    if (StoreKindOf(path) == StoreKind::kEmbedded) {
      denied = StoreAccessDenied(path, create_if_missing);
    }
    Fail(denied ? Status::FailedPrecondition(*denied) : opened.error());
    return nullptr;
  }
  store_ = std::move(*opened);
  return store_.get();
}

void CliContext::CloseStore() {
  code_memory_.reset();  // each holds the store, so they go first
  search_index_.reset();
  store_.reset();
}

SearchIndex* CliContext::OpenSearchIndex() {
  if (search_index_) return search_index_.get();
  Store* store = OpenStore(/*create_if_missing=*/false);  // with the hint to init
  if (!store) return nullptr;
  auto index = SearchIndex::Open(*store);
  if (!index) {
    Fail(index.error());
    return nullptr;
  }
  search_index_ = std::move(*index);
  return search_index_.get();
}

Result<int64_t> CliContext::CatchUpTextIndex() {
  SearchIndex* index = OpenSearchIndex();
  if (!index) return Err(Status::Internal("the search index did not open"));  // printed already
  ASSIGN_OR_RETURN(const int64_t pending, index->PendingDocuments());
  if (pending == 0) return int64_t{0};
  Progress progress(isatty(STDERR_FILENO) != 0, "full-text index");
  ASSIGN_OR_RETURN(const int64_t left, index->IndexPending(-1, std::ref(progress)));
  return pending - left;
}

CodeMemory* CliContext::OpenCodeMemory() {
  if (code_memory_) return code_memory_.get();
  Store* store = OpenStore(/*create_if_missing=*/false);
  if (!store) return nullptr;
  auto memory = CodeMemory::Open(*store);
  if (!memory) {
    Fail(memory.error());
    return nullptr;
  }
  code_memory_ = std::move(*memory);
  return code_memory_.get();
}

int CliContext::ExitCodeAfterFlush() const {
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "sessiondb: error: cannot write to standard output\n";
    return kExitStorageError;
  }
  return exit_code_;
}

void CliContext::Fail(const Status& status) {
  exit_code_ = ExitCodeFor(status.code());
  PrintError(StatusCodeName(status.code()), status.message(), options.json);
  if (status.code() != StatusCode::kInvalidArgument) return;
  for (const auto& [field, flag] : kLimitFlags) {
    if (status.message().find(field) != std::string::npos) {
      std::cerr << "sessiondb: hint: " << flag << " changes this limit for one command\n";
      return;
    }
  }
}

}  // namespace sessiondb::cli
