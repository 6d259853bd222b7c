// A search hit's snippet as text to show: the Markdown markers a message was
// written with (emphasis, strikethrough, inline code, headings, links) taken
// out, and the highlight ranges moved with the text. Every face shows the
// snippet its own way (the CLI and MCP wrap matches in **, the page in
// <mark>), so a match inside **word** must not come out as ****word****, nor
// show its asterisks on the page.
//
// Example:
//   PlainSnippet({"the **parser** fails", {{6, 12}}})
//     == {"the parser fails", {{4, 10}}}
//
// Thread-safety: a pure function.
#pragma once

#include "store/index_backend.h"

namespace sessiondb::search {

// `snippet` with Markdown markers removed, highlights re-based onto the text
// that remains (a range wholly inside a removed marker, such as a link's URL,
// is dropped). Afterwards no highlight begins right after, or ends right
// before, a `*` or `~`. Text in `code` keeps its characters; a `**` that
// touches a word outside code (x**2) is taken for a marker.
store::Snippet PlainSnippet(const store::Snippet& snippet);

}  // namespace sessiondb::search
