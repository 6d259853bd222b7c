// The Store's forgetting (forget.h): the trash, erasure, the ledger and
// retention. The contract is in store.h; the implementation lands here.
#include "sessiondb/forget.h"
#include "store/store_front.h"

namespace sessiondb {
namespace {

Status NotYet(std::string_view what) {
  return Status::Internal(std::string(what) + " is not implemented yet");
}

}  // namespace

std::string ErasureReceiptToJson(const ErasureReceipt& receipt) {
  (void)receipt;
  return "{}";
}

Result<ErasureReceipt> ParseErasureReceipt(std::string_view json) {
  (void)json;
  return Err(NotYet("reading an erasure receipt"));
}

std::string ErasureReceiptDigest(const ErasureReceipt& receipt) {
  (void)receipt;
  return "";
}

namespace store {

Status StoreFront::TrashSession(std::string_view id) {
  (void)id;
  return NotYet("the trash");
}

Result<Session> StoreFront::RestoreFromTrash(std::string_view id) {
  (void)id;
  return Err(NotYet("the trash"));
}

Result<ErasureReceipt> StoreFront::EmptyTrash(int64_t trashed_before_ms) {
  (void)trashed_before_ms;
  return Err(NotYet("the trash"));
}

Result<ErasureReceipt> StoreFront::Erase(const EraseRequest& request) {
  (void)request;
  return Err(NotYet("erasure"));
}

Result<ErasureCheck> StoreFront::VerifyErased(const ErasureReceipt& receipt) {
  (void)receipt;
  return Err(NotYet("erasure"));
}

Result<std::vector<LedgerEntry>> StoreFront::ReadLedger(const LedgerQuery& query) {
  (void)query;
  return Err(NotYet("the ledger"));
}

}  // namespace store
}  // namespace sessiondb
