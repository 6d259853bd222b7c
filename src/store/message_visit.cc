// Backend::VisitMessages's default: every Message built by ReadMessages,
// then visited. A backend that retries a read (PostgreSQL) must not have
// called the visitor for rows of an attempt that failed, so it reads first.
#include "store/backend.h"

namespace sessiondb::store {

Result<bool> Backend::VisitMessages(std::string_view session_id, const HistoryRead& read,
                                    const MessageRowVisitor& visit) {
  std::vector<Message> messages;
  RETURN_IF_ERROR(ReadMessages(
      session_id,
      {.from_seq = read.from_seq, .to_seq = read.to_seq, .filter = HistoryFilter::kMessages},
      &messages));
  for (Message& m : messages) {
    const MessageView view{.id = m.id,
                           .session_id = m.session_id,
                           .seq = m.seq,
                           .ts_ms = m.ts_ms,
                           .role = m.role,
                           .message = &m};
    if (!visit(view, &m)) return false;
  }
  return true;
}

}  // namespace sessiondb::store
