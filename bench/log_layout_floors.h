// Floors for batched appends: the same rows inserted with SQLite alone, in
// each layout the event log could have, so the store's batch rate can be read
// against what one row per message costs on this machine and disk
// (issue 19, item 2: "a cheaper log: measure, choose").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sessiondb::bench {

struct LogLayoutFloor {
  std::string layout;  // see MeasureLogLayouts
  double rows_per_s = 0;
};

// One layout's floor a batch at a time (MeasureLogLayouts, below, is the
// whole run), so that a workload can alternate it with the engine batch by
// batch (the batched append's interleaved ratio in bench_main.cc): a new
// database at `path` (removed again on destruction) with the layout named
// `layout`, taking its rows from `texts` in batches of `batch`. Throws
// std::runtime_error on a failed call.
class LogLayoutWriter {
 public:
  LogLayoutWriter(const std::string& path, const std::string& layout,
                  const std::vector<std::string>& texts, int batch);
  ~LogLayoutWriter();
  LogLayoutWriter(const LogLayoutWriter&) = delete;
  LogLayoutWriter& operator=(const LogLayoutWriter&) = delete;

  int batches() const;  // texts.size() / batch
  // Writes batch `b` (0 .. batches() - 1) in one durable transaction: its
  // nanoseconds.
  int64_t WriteBatch(int b);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Inserts texts.size() rows (texts[i], with an id and a seq like an event's)
// in batches of `batch` rows, one durable transaction each (WAL,
// synchronous=FULL), spread over 100 sessions, into a new database in `dir`,
// once per layout:
//   rows_only               a rowid table, no index: one row per message, nothing else
//   integer_key_batch_docs  rowid = session key * 2^32 + seq, the id index, search
//                           documents recorded by one INSERT ... SELECT per batch
//   text_key_batch_docs     schema v6: keyed by (session id text, seq) WITHOUT ROWID,
//                           the id index, documents recorded per batch
//   text_key_trigger        schema v5: the same, documents recorded by an AFTER
//                           INSERT trigger per row
// With `only` non-empty, only the layout of that name.
std::vector<LogLayoutFloor> MeasureLogLayouts(const std::string& dir,
                                              const std::vector<std::string>& texts, int batch,
                                              const std::string& only = "");

}  // namespace sessiondb::bench
