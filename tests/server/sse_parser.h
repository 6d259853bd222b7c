// A Server-Sent Events reader for the stream tests: splits what arrives into
// events (id, event, data as JSON) as each completes.
#pragma once

#include <functional>
#include <string>

#include "server/server_fixture.h"

namespace sessiondb::testing {

struct SseEvent {
  std::string id;  // "" for an event outside the log (a draft)
  std::string event;
  json data;
};

// Splits a stream into events as they complete; `on_event` returns false to
// hang up.
class SseParser {
 public:
  explicit SseParser(std::function<bool(const SseEvent&)> on_event)
      : on_event_(std::move(on_event)) {}
  bool Feed(const char* data, size_t size) {
    buffer_.append(data, size);
    size_t end;
    while ((end = buffer_.find("\n\n")) != std::string::npos) {
      std::string block = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      SseEvent e;
      size_t at = 0;
      bool any = false;
      while (at <= block.size()) {
        size_t nl = block.find('\n', at);
        if (nl == std::string::npos) nl = block.size();
        const std::string line = block.substr(at, nl - at);
        at = nl + 1;
        if (line.rfind("id: ", 0) == 0) e.id = line.substr(4);
        if (line.rfind("event: ", 0) == 0) e.event = line.substr(7);
        if (line.rfind("data: ", 0) == 0) {
          e.data = json::parse(line.substr(6));
          any = true;
        }
      }
      if (any && !on_event_(e)) return false;
    }
    return true;
  }

 private:
  std::function<bool(const SseEvent&)> on_event_;
  std::string buffer_;
};

}  // namespace sessiondb::testing
