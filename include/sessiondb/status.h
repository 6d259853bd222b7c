// Errors as values: a Status (code + message) and Result<T> (a value or a
// Status). Every fallible sessiondb call returns one of these; nothing in the
// public API throws.
//
// Codes map cleanly to the edges of the system:
//   kNotFound          -> HTTP 404, CLI exit 3
//   kInvalidArgument   -> HTTP 400, CLI exit 2
//   kAlreadyExists     -> HTTP 409, CLI exit 4
//   kBusy              -> HTTP 503, CLI exit 5
//   kCorruption, kIo   -> HTTP 500, CLI exit 6
//   kFailedPrecondition (e.g. store written by a newer version) -> 409, exit 7
//
// Example:
//   Result<Session> s = store->GetSession(id);
//   if (!s) { std::cerr << s.error().ToString(); return; }
//
//   ASSIGN_OR_RETURN(Session s, store->GetSession(id));
//   RETURN_IF_ERROR(store->Rename(id, "x"));
//
// Result is tl::expected (Debian's libexpected-dev) rather than std::expected
// so that clang 14, which cannot compile g++ 12's <expected>, builds the code
// too: the fuzz targets and clang-tidy need it. Code never names either
// library: it uses Result, Err, RETURN_IF_ERROR and ASSIGN_OR_RETURN.
//
// Thread-safety: values; safe to copy between threads.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <type_traits>
#include <utility>

namespace sessiondb {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kBusy,
  kCorruption,
  kIo,
  kInternal,
};

// Returns a stable lowercase name ("not_found", ...), used on the wire.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  // Lets RETURN_IF_ERROR return Err(...) from functions that return Status.
  Status(tl::unexpected<Status> error) : Status(std::move(error.value())) {}  // NOLINT

  static Status Ok() { return {}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status Busy(std::string m) { return {StatusCode::kBusy, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status Io(std::string m) { return {StatusCode::kIo, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "not_found: session 'x' does not exist"
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none. Never holds an OK
// status without a value. Like Status it is [[nodiscard]]: a call whose
// Result is dropped does not compile (-Werror=unused-result); a caller that
// really has nothing to do with it writes `(void)` and a comment saying why.
//
// It is tl::expected<T, Status> with the attribute (an alias cannot carry
// one): every constructor, assignment and member of tl::expected works, and
// a plain tl::expected<T, Status> (what map() and and_then() return) converts.
template <typename T>
class [[nodiscard]] Result : public tl::expected<T, Status> {
  using Base = tl::expected<T, Status>;

 public:
  using Base::Base;
  Result() = default;
  Result(const Base& b) : Base(b) {}        // NOLINT(google-explicit-constructor)
  Result(Base&& b) : Base(std::move(b)) {}  // NOLINT(google-explicit-constructor)
  // Assigning a value, an Err(...) or a tl::expected: forwarded, so that
  // `r = 5` picks tl::expected's assignment instead of being ambiguous
  // between it and a conversion to Result.
  template <typename U>
  requires std::is_assignable_v<Base&, U&&> Result& operator=(U&& value) {
    Base::operator=(std::forward<U>(value));
    return *this;
  }
};

}  // namespace sessiondb

// and_then() and or_else() take a function returning a tl::expected; a
// Result is one.
template <typename T>
struct tl::detail::is_expected_impl<sessiondb::Result<T>> : std::true_type {};

namespace sessiondb {

// Turns a failed Status into the error side of a Result.
inline tl::unexpected<Status> Err(Status s) { return tl::unexpected<Status>(std::move(s)); }

namespace internal {
inline Status ToStatus(Status s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r ? Status::Ok() : r.error();
}
}  // namespace internal

}  // namespace sessiondb

#define SESSIONDB_CONCAT_INNER(a, b) a##b
#define SESSIONDB_CONCAT(a, b) SESSIONDB_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function if it failed.
// Works in functions returning Status or Result<T>.
#define RETURN_IF_ERROR(expr)                                                \
  do {                                                                       \
    ::sessiondb::Status _sdb_status = ::sessiondb::internal::ToStatus(expr); \
    if (!_sdb_status.ok()) return ::sessiondb::Err(std::move(_sdb_status));  \
  } while (0)

// Evaluates a Result<T>; on error returns its Status, else binds the value.
#define ASSIGN_OR_RETURN(decl, expr) \
  ASSIGN_OR_RETURN_IMPL(SESSIONDB_CONCAT(_sdb_result_, __LINE__), decl, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, decl, expr)               \
  auto tmp = (expr);                                         \
  if (!tmp) return ::sessiondb::Err(std::move(tmp).error()); \
  decl = std::move(*tmp)
