// The HTTP request and response as the routes see them, free of any HTTP
// library: the transport (http_daemon.h) fills an HttpRequest once the
// request is read in full and within its caps, runs the handler, and sends
// the HttpResponse it filled. So the routes, the router and the checks of
// http_server.cc can be tested and moved without touching a socket.
//
// Example (a route):
//   void Health(const HttpRequest& req, HttpResponse& res) {
//     if (req.Header("Accept") == "text/plain") return res.SetBody("ok", "text/plain");
//     res.SetBody(R"({"ok":true})", "application/json");
//   }
//
// Thread-safety: plain values; one request and its response belong to the
// thread serving that request.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "api/message_json.h"

namespace sessiondb::server {

// Orders header names as HTTP compares them: without regard to case.
struct CaseInsensitiveLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const;
};

// The fields of a multipart/form-data body: the attachments a message part
// names by "upload" (api/message_json.h).
using UploadedFile = Attachment;
using UploadedFiles = Attachments;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded, without the query
  std::multimap<std::string, std::string, std::less<>> params;  // decoded query
  std::multimap<std::string, std::string, CaseInsensitiveLess> headers;
  std::string body;     // empty for a multipart/form-data body (see files)
  UploadedFiles files;  // the fields of a multipart/form-data body
  std::string remote_address;

  // The first value of header `name`, "" when absent.
  std::string Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const { return headers.contains(name); }
  // The first value of query parameter `name`, "" when absent.
  std::string ParamValue(std::string_view name) const;
  bool HasParam(std::string_view name) const { return params.contains(name); }
  // The media type of Content-Type, lower case, without its parameters.
  std::string MediaType() const;
  bool IsMultipartFormData() const { return MediaType() == "multipart/form-data"; }
};

// What a streaming answer writes to. Write returns false once the transport
// knows the client is gone (it may only learn so when it sends what was
// written, which then ends the answer); Done ends the answer after what was
// written.
class ContentSink {
 public:
  virtual ~ContentSink() = default;
  virtual bool Write(std::string_view bytes) = 0;
  virtual void Done() = 0;
  // False once the client closed its side (checked without blocking).
  virtual bool Connected() const = 0;
};

// Called again and again (from the thread serving the request, which it may
// block) until it calls sink.Done() or returns false (ending the answer at
// once, as an error). It should write something, or wait, on each call.
using ContentSource = std::function<bool(ContentSink& sink)>;

// Makes the streamed body of bytes [offset, offset + length) of an answer
// whose whole is known (a blob read in pieces), so that a Range is answered
// without the whole in memory.
using RangedContent = std::function<ContentSource(int64_t offset, int64_t length)>;

struct HttpResponse {
  int status = 200;
  std::multimap<std::string, std::string, CaseInsensitiveLess> headers;
  std::string body;
  // Set for an answer produced while it is sent (live events, exports):
  // `body` is then unused; `content_length` is its size when known, else -1.
  ContentSource source;
  int64_t content_length = -1;
  // The body may be sent in part for a "Range: bytes=..." request (blobs).
  bool ranges_allowed = false;
  // Set by SetRangedSource: what makes the part a Range asks for.
  RangedContent ranged_source;

  // Replaces header `name`.
  void SetHeader(std::string_view name, std::string value);
  std::string Header(std::string_view name) const;
  void SetBody(std::string bytes, std::string_view content_type);
  // A streamed body; `length` -1 when not known in advance (sent chunked).
  void SetSource(ContentSource content, std::string_view content_type, int64_t length = -1);
  // A streamed body of `length` bytes that may be sent in part: `content`
  // makes the whole now and the part a Range asks for later (ranges_allowed).
  void SetRangedSource(RangedContent content, std::string_view content_type, int64_t length);
};

}  // namespace sessiondb::server
