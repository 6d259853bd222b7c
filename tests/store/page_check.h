// What IndexBackend::LoadPage answers must be what the per-document calls
// answer (LoadHitDetails, MatchSnippet, ReadDocumentText), document by
// document, in the order asked: each backend loads a page its own way (one
// PostgreSQL query; one walk of FTS5's matches), and both are checked
// against the calls they replace.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "store/index_backend.h"

namespace sessiondb::testing {

inline void ExpectPageAsEachDocument(store::IndexBackend& backend, const store::TextQuery& query,
                                     std::span<const store::IndexBackend::PageRequest> asked,
                                     const std::vector<store::IndexBackend::PageDocument>& page) {
  ASSERT_EQ(page.size(), asked.size());
  for (size_t i = 0; i < asked.size(); ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const store::IndexBackend::PageDocument& got = page[i];
    SearchHit want;
    auto present = backend.LoadHitDetails(asked[i].doc_id, &want);
    ASSERT_TRUE(present);
    ASSERT_EQ(got.present, *present);
    if (!got.present) continue;
    EXPECT_EQ(got.hit.session_id, want.session_id);
    EXPECT_EQ(got.hit.seq, want.seq);
    EXPECT_EQ(got.hit.event_id, want.event_id);
    EXPECT_EQ(got.hit.kind, want.kind);
    EXPECT_EQ(got.hit.role, want.role);
    EXPECT_EQ(got.hit.time_ms, want.time_ms);
    EXPECT_EQ(got.hit.code_id, want.code_id);
    EXPECT_EQ(got.hit.file_path, want.file_path);
    if (asked[i].keyword) {
      auto snippet = backend.MatchSnippet(query, asked[i].doc_id);
      ASSERT_TRUE(snippet) << snippet.error().ToString();
      EXPECT_EQ(got.snippet.text, snippet->text);
      EXPECT_EQ(got.snippet.highlights, snippet->highlights);
      EXPECT_FALSE(got.text);
    } else {
      auto text = backend.ReadDocumentText(asked[i].doc_id);
      ASSERT_TRUE(text) << text.error().ToString();
      EXPECT_EQ(got.text, *text);
      EXPECT_TRUE(got.snippet.text.empty());
    }
  }
}

}  // namespace sessiondb::testing
