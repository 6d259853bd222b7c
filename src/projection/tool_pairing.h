// Tool calls and their results, made into what every provider accepts. A
// log may hold a call whose result was never written (a tool still running,
// a server-side search whose result block was not imported, a window that
// ends between them), a result whose call is not in the window (it starts
// between them, a compaction covered the call, an import lost it), a call
// answered twice, results written one record at a time after calls made in
// parallel, or ids and names no provider takes. Providers refuse all of
// these (Anthropic: "tool_use ids were found without tool_result blocks
// immediately after"; OpenAI: "An assistant message with 'tool_calls' must
// be followed by tool messages responding to each 'tool_call_id'").
//
// PairToolCalls rewrites the turns so that:
//  - each result answers the earliest call with its id not yet answered
//    before it; such a pair is kept, the result moved to the kTool turn
//    right after the assistant turn of its call;
//  - consecutive assistant turns are one turn when the first holds calls, so
//    parallel calls written as separate messages share one turn and their
//    results follow it together;
//  - a call no result answers is dropped (a request cannot hold it); an
//    assistant turn left empty goes with it;
//  - a further result of a call already answered, with only tool turns
//    since (ChatGPT writes two for one web.run call), is appended to the
//    first result's text (a blank line between; an error if either is):
//    one result per call;
//  - any other result no call is paired with becomes a user text block in
//    its place, worded by descriptor.h (its output is part of what was seen);
//  - a call keeps its id when it matches [A-Za-z0-9_-]{1,40} and no other
//    call of the turns has it, else gets "call_" and 24 hex digits of the
//    SHA-256 of its call_key and id (40 is OpenAI Chat's limit, the smallest;
//    Anthropic accepts only that alphabet); its result takes the same id;
//  - a tool name is kept when it matches [A-Za-z0-9_-]{1,64} (what both
//    providers accept as a tool's name), else each other character becomes
//    '_' and it is cut to 64 ("browser.search" -> "browser_search"; an empty
//    name is "tool").
// Deterministic: the same turns give the same ids.
//
// Thread-safety: pure function.
#pragma once

#include <vector>

#include "projection/turns.h"

namespace sessiondb::projection {

void PairToolCalls(std::vector<Turn>* turns);

}  // namespace sessiondb::projection
