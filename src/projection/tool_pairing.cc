// PairToolCalls: three passes over the turns. The first pairs each result
// with the earliest unanswered call of its id before it (a further result of
// a call just answered joins that call's result); the second gives
// every kept call its id; the third writes the turns again, results moved
// right after the assistant turn of their calls.
#include "projection/tool_pairing.h"

#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "blob/sha256.h"
#include "projection/descriptor.h"

namespace sessiondb::projection {
namespace {

// Where a block is among the input turns: (turn index, block index).
using Position = std::pair<size_t, size_t>;

constexpr size_t kMaxCallIdLength = 40;  // OpenAI Chat's limit, the smallest
constexpr size_t kMaxToolNameLength = 64;

bool IsIdChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '-'; }

bool IsPlainId(std::string_view id, size_t max_length) {
  if (id.empty() || id.size() > max_length) return false;
  for (unsigned char c : id) {
    if (!IsIdChar(c)) return false;
  }
  return true;
}

std::string ToolName(const std::string& name) {
  if (IsPlainId(name, kMaxToolNameLength)) return name;
  std::string out;
  for (unsigned char c : name) {
    if (out.size() == kMaxToolNameLength) break;
    out += IsIdChar(c) ? static_cast<char>(c) : '_';
  }
  return out.empty() ? "tool" : out;
}

struct Pairs {
  std::map<Position, Position> call_of;  // result -> the call it answers
  std::set<Position> answered;           // calls with a result
  // A further result of a call already answered, with no user or assistant
  // turn between (ChatGPT writes two for one web.run call) -> that call: it
  // goes out with the first result, one result per call for every provider.
  std::map<Position, Position> more_of;
};

Pairs PairResults(const std::vector<Turn>& turns) {
  Pairs pairs;
  std::map<std::string, std::deque<Position>> open;  // id -> calls not yet answered
  std::map<std::string, Position> just_answered;     // id -> its call, since the last turn
  for (size_t t = 0; t < turns.size(); ++t) {
    if (turns[t].role != Role::kTool) just_answered.clear();
    for (size_t b = 0; b < turns[t].blocks.size(); ++b) {
      const Block& block = turns[t].blocks[b];
      if (block.kind == Block::Kind::kToolCall) {
        open[block.tool_call_id].push_back({t, b});
      } else if (block.kind == Block::Kind::kToolResult) {
        auto it = open.find(block.tool_call_id);
        if (it == open.end() || it->second.empty()) {
          auto again = just_answered.find(block.tool_call_id);
          if (again != just_answered.end()) pairs.more_of[{t, b}] = again->second;
          continue;
        }
        pairs.call_of[{t, b}] = it->second.front();
        pairs.answered.insert(it->second.front());
        just_answered[block.tool_call_id] = it->second.front();
        it->second.pop_front();
      }
    }
  }
  return pairs;
}

// The id each kept call goes out with.
std::map<Position, std::string> CallIds(const std::vector<Turn>& turns, const Pairs& pairs) {
  std::map<std::string, int> uses;
  for (const Position& p : pairs.answered) ++uses[turns[p.first].blocks[p.second].tool_call_id];
  std::map<Position, std::string> ids;
  for (const Position& p : pairs.answered) {
    const Block& call = turns[p.first].blocks[p.second];
    if (IsPlainId(call.tool_call_id, kMaxCallIdLength) && uses[call.tool_call_id] == 1) {
      ids[p] = call.tool_call_id;
    } else {
      ids[p] = "call_" + blob::Sha256Hex(call.call_key + "\n" + call.tool_call_id).substr(0, 24);
    }
  }
  return ids;
}

}  // namespace

void PairToolCalls(std::vector<Turn>* turns) {
  const Pairs pairs = PairResults(*turns);
  const std::map<Position, std::string> ids = CallIds(*turns, pairs);
  std::vector<Turn> out;
  std::map<Position, size_t> results_turn;  // call -> index in `out` of its results
  std::map<Position, size_t> result_block;  // call -> index of its result in that turn
  // The assistant turn with calls that later assistant turns join: while
  // its results turn is the last one written and still empty.
  bool group_open = false;
  for (size_t t = 0; t < turns->size(); ++t) {
    Turn& turn = (*turns)[t];
    if (turn.role == Role::kTool) {
      Turn notes{.role = Role::kUser};
      for (size_t b = 0; b < turn.blocks.size(); ++b) {
        Block& result = turn.blocks[b];
        auto paired = pairs.call_of.find({t, b});
        auto more = pairs.more_of.find({t, b});
        if (more != pairs.more_of.end() && result_block.contains(more->second)) {
          Block& first = out[results_turn.at(more->second)].blocks[result_block.at(more->second)];
          first.text += (first.text.empty() ? "" : "\n\n") + result.text;
          first.is_error = first.is_error || result.is_error;
          continue;
        }
        if (paired == pairs.call_of.end()) {
          Block note;
          note.text = ToolResultWithoutCall(result.tool_call_id, result.text, result.is_error);
          notes.blocks.push_back(std::move(note));
          continue;
        }
        result.tool_call_id = ids.at(paired->second);
        Turn& results = out[results_turn.at(paired->second)];
        result_block[paired->second] = results.blocks.size();
        results.blocks.push_back(std::move(result));
      }
      if (!notes.blocks.empty()) {
        out.push_back(std::move(notes));
        group_open = false;
      }
      continue;
    }
    if (turn.role != Role::kAssistant) {
      out.push_back(std::move(turn));
      group_open = false;
      continue;
    }
    Turn kept{.role = Role::kAssistant};
    std::vector<Position> calls;
    for (size_t b = 0; b < turn.blocks.size(); ++b) {
      Block& block = turn.blocks[b];
      if (block.kind == Block::Kind::kToolCall) {
        if (!pairs.answered.contains({t, b})) continue;  // no result: cannot be sent
        block.tool_call_id = ids.at({t, b});
        block.tool_name = ToolName(block.tool_name);
        calls.push_back({t, b});
      }
      kept.blocks.push_back(std::move(block));
    }
    if (kept.blocks.empty()) continue;
    const bool joins = group_open && out.back().blocks.empty();
    if (!joins) {
      out.push_back(std::move(kept));
      if (calls.empty()) {
        group_open = false;
        continue;
      }
      out.push_back(Turn{.role = Role::kTool});
      group_open = true;
    } else {
      Turn& group = out[out.size() - 2];
      for (Block& b : kept.blocks) group.blocks.push_back(std::move(b));
    }
    for (const Position& c : calls) results_turn[c] = out.size() - 1;
  }
  std::erase_if(out, [](const Turn& turn) { return turn.blocks.empty(); });
  *turns = std::move(out);
}

}  // namespace sessiondb::projection
