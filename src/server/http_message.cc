#include "server/http_message.h"

#include <algorithm>
#include <cctype>

namespace sessiondb::server {

bool CaseInsensitiveLess::operator()(std::string_view a, std::string_view b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) <
           std::tolower(static_cast<unsigned char>(y));
  });
}

std::string HttpRequest::Header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string HttpRequest::ParamValue(std::string_view name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

std::string HttpRequest::MediaType() const {
  std::string type = Header("Content-Type");
  type = type.substr(0, type.find(';'));
  const size_t end = type.find_last_not_of(" \t");
  type.resize(end == std::string::npos ? 0 : end + 1);
  const size_t begin = type.find_first_not_of(" \t");
  type.erase(0, begin == std::string::npos ? type.size() : begin);
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

void HttpResponse::SetHeader(std::string_view name, std::string value) {
  headers.erase(std::string(name));
  headers.emplace(std::string(name), std::move(value));
}

std::string HttpResponse::Header(std::string_view name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

void HttpResponse::SetBody(std::string bytes, std::string_view content_type) {
  body = std::move(bytes);
  source = nullptr;
  ranged_source = nullptr;
  content_length = -1;
  SetHeader("Content-Type", std::string(content_type));
}

void HttpResponse::SetSource(ContentSource content, std::string_view content_type, int64_t length) {
  body.clear();
  source = std::move(content);
  content_length = length;
  SetHeader("Content-Type", std::string(content_type));
}

void HttpResponse::SetRangedSource(RangedContent content, std::string_view content_type,
                                   int64_t length) {
  SetSource(content(0, length), content_type, length);
  ranged_source = std::move(content);
  ranges_allowed = true;
}

}  // namespace sessiondb::server
