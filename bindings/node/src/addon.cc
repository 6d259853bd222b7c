// The native half of the Node package (docs/node.md), on Node-API (ABI-stable
// across Node versions, no header but node_api.h). Three functions, each
// returning a Promise and doing its engine work on a libuv worker thread:
//
//   open(location, optionsJson)             -> Promise<handle>
//   call(handle, verb, argsJson, buffers[])  -> Promise<string | Buffer | null>
//   close(handle)                            -> Promise<undefined>
//
// `call` names a verb (verbs.h); its answer is the verb's JSON as text (the
// JavaScript layer parses it, which is faster than building objects here
// call by call) or a Buffer that takes over the bytes without a copy. A
// failure rejects with an Error whose `code` is the engine's status code
// name (status.h); lib/index.js turns it into the matching subclass.
//
// Buffers passed in are copied on the main thread before the work starts:
// JavaScript may change or drop them while the worker runs.
#include <node_api.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "api/message_json.h"
#include "core/json_parse.h"
#include "node_store.h"
#include "sessiondb/store.h"
#include "verbs.h"

namespace sessiondb::node {

namespace {

// What a JavaScript Store object holds (an external): shared with the calls
// under way, so a Store dropped by JavaScript mid-call stays alive until they end.
using StoreHandle = std::shared_ptr<NodeStore>;

// ---- Small helpers over the C API ---------------------------------------

// Throws a JavaScript TypeError and returns nullptr (what a callback returns then).
napi_value ThrowType(napi_env env, const std::string& message) {
  napi_throw_type_error(env, "invalid_argument", message.c_str());
  return nullptr;
}

bool StringArg(napi_env env, napi_value value, std::string* out) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, nullptr, 0, &length) != napi_ok) return false;
  out->resize(length);
  size_t written = 0;
  if (napi_get_value_string_utf8(env, value, out->data(), length + 1, &written) != napi_ok) {
    return false;
  }
  out->resize(written);
  return true;
}

napi_value ErrorOf(napi_env env, const Status& status) {
  napi_value code;
  napi_value message;
  napi_value error;
  const std::string code_name(StatusCodeName(status.code()));
  napi_create_string_utf8(env, code_name.data(), code_name.size(), &code);
  napi_create_string_utf8(env, status.message().data(), status.message().size(), &message);
  napi_create_error(env, code, message, &error);
  return error;
}

// ---- Async work: a Promise settled by a worker-thread job ---------------

// One call under way: Execute runs `job` on a worker, Complete settles the Promise.
struct Work {
  napi_async_work work = nullptr;
  napi_deferred deferred = nullptr;
  // Runs on the worker: fills `status` and what the call answers.
  std::function<void(Work&)> job;
  Status status;
  std::string json;  // the answer as JSON text, when !has_bytes and !has_handle
  bool has_bytes = false;
  std::string bytes;
  StoreHandle opened;  // open()'s answer
};

void Execute(napi_env, void* data) {
  auto* w = static_cast<Work*>(data);
  w->job(*w);
}

void FinalizeHandle(napi_env, void* data, void*) { delete static_cast<StoreHandle*>(data); }

void FinalizeBytes(napi_env, void*, void* hint) { delete static_cast<std::string*>(hint); }

void Complete(napi_env env, napi_status, void* data) {
  std::unique_ptr<Work> w(static_cast<Work*>(data));
  napi_value result = nullptr;
  if (!w->status.ok()) {
    napi_reject_deferred(env, w->deferred, ErrorOf(env, w->status));
  } else {
    if (w->opened) {
      napi_create_external(env, new StoreHandle(std::move(w->opened)), FinalizeHandle, nullptr,
                           &result);
    } else if (w->has_bytes) {
      // The Buffer takes the string's bytes; its finalizer frees them.
      auto* owned = new std::string(std::move(w->bytes));
      if (napi_create_external_buffer(env, owned->size(), owned->data(), FinalizeBytes, owned,
                                      &result) != napi_ok) {
        // External buffers can be refused (a V8 with a sandbox): copy instead.
        napi_create_buffer_copy(env, owned->size(), owned->data(), nullptr, &result);
        delete owned;
      }
    } else if (w->json.empty()) {
      napi_get_null(env, &result);
    } else {
      napi_create_string_utf8(env, w->json.data(), w->json.size(), &result);
    }
    napi_resolve_deferred(env, w->deferred, result);
  }
  napi_delete_async_work(env, w->work);
}

// Queues `w` and returns its Promise.
napi_value Start(napi_env env, std::unique_ptr<Work> w, const char* name) {
  napi_value promise;
  napi_value resource_name;
  napi_create_promise(env, &w->deferred, &promise);
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &resource_name);
  napi_create_async_work(env, nullptr, resource_name, Execute, Complete, w.get(), &w->work);
  napi_queue_async_work(env, w->work);
  w.release();  // Complete owns it now
  return promise;
}

// The StoreHandle inside a handle argument, or nullptr after a TypeError.
StoreHandle* HandleArg(napi_env env, napi_value value) {
  napi_valuetype type;
  void* data = nullptr;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external ||
      napi_get_value_external(env, value, &data) != napi_ok || data == nullptr) {
    ThrowType(env, "not a sessiondb store handle");
    return nullptr;
  }
  return static_cast<StoreHandle*>(data);
}

// JSON text from JavaScript, parsed with the one nesting cap (core/json_parse.h).
Result<Json> ArgsJson(const std::string& text) {
  if (text.empty()) return Json::object();
  ASSIGN_OR_RETURN(auto parsed, ParseJson(text));
  if (!parsed.is_object()) return Err(Status::InvalidArgument("the arguments must be an object"));
  return Json(parsed);
}

// Answer JSON as text; strings the engine holds are UTF-8, and a stray byte
// (a damaged row) becomes U+FFFD rather than failing the whole answer.
std::string JsonText(const Json& json) {
  if (json.is_null()) return std::string();
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// ---- open ---------------------------------------------------------------

Result<StoreOptions> OpenOptions(const Json& j) {
  StoreOptions o;
  auto text = [&j](const char* key) -> Result<std::string> {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::string();
    if (!it->is_string())
      return Err(Status::InvalidArgument(std::string(key) + " must be a string"));
    return it->get<std::string>();
  };
  auto number = [&j](const char* key, int64_t fallback) -> Result<int64_t> {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() < 0) {
      return Err(Status::InvalidArgument(std::string(key) + " must be a whole number, 0 or more"));
    }
    return it->get<int64_t>();
  };
  auto flag = [&j](const char* key, bool fallback) -> Result<bool> {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_boolean())
      return Err(Status::InvalidArgument(std::string(key) + " must be true or false"));
    return it->get<bool>();
  };
  ASSIGN_OR_RETURN(std::string durability, text("durability"));
  if (durability == "process-crash-safe" || durability == "processCrashSafe") {
    o.durability = Durability::kProcessCrashSafe;
  } else if (!durability.empty() && durability != "durable") {
    return Err(Status::InvalidArgument("durability is '" + durability +
                                       "'; expected one of: durable, process-crash-safe"));
  }
  ASSIGN_OR_RETURN(o.max_image_bytes, number("maxImageBytes", o.max_image_bytes));
  ASSIGN_OR_RETURN(int64_t images, number("maxImagesPerMessage", o.max_images_per_message));
  o.max_images_per_message = static_cast<int>(std::min<int64_t>(images, 1'000'000));
  ASSIGN_OR_RETURN(o.max_file_bytes, number("maxFileBytes", o.max_file_bytes));
  ASSIGN_OR_RETURN(o.create_if_missing, flag("createIfMissing", true));
  ASSIGN_OR_RETURN(o.read_only, flag("readOnly", false));
  ASSIGN_OR_RETURN(int64_t busy, number("busyTimeoutMs", o.busy_timeout_ms));
  o.busy_timeout_ms = static_cast<int>(std::min<int64_t>(busy, 86'400'000));
  ASSIGN_OR_RETURN(o.namespace_name, text("namespace"));
  ASSIGN_OR_RETURN(int64_t connections, number("maxConnections", o.max_connections));
  o.max_connections = static_cast<int>(std::min<int64_t>(connections, 10'000));
  ASSIGN_OR_RETURN(o.actor, text("actor"));
  ASSIGN_OR_RETURN(o.key_file, text("keyFile"));
  return o;
}

napi_value Open(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  std::string location;
  std::string options_text;
  if (argc < 2 || !StringArg(env, argv[0], &location) || !StringArg(env, argv[1], &options_text)) {
    return ThrowType(env, "open(location: string, optionsJson: string)");
  }
  auto w = std::make_unique<Work>();
  w->job = [location = std::move(location), options_text = std::move(options_text)](Work& work) {
    auto opened = [&]() -> Result<StoreHandle> {
      ASSIGN_OR_RETURN(Json j, ArgsJson(options_text));
      ASSIGN_OR_RETURN(StoreOptions options, OpenOptions(j));
      ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(location, options));
      return std::make_shared<NodeStore>(location, std::move(store));
    }();
    if (!opened) {
      work.status = opened.error();
      return;
    }
    work.opened = std::move(*opened);
  };
  return Start(env, std::move(w), "sessiondb.open");
}

// ---- call ---------------------------------------------------------------

// The bytes of a Buffer, TypedArray or ArrayBuffer, copied; false for anything else.
bool BytesArg(napi_env env, napi_value value, std::string* out) {
  bool is = false;
  void* data = nullptr;
  size_t length = 0;
  if (napi_is_buffer(env, value, &is) == napi_ok && is) {
    napi_get_buffer_info(env, value, &data, &length);
  } else if (napi_is_typedarray(env, value, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t count = 0;
    size_t offset = 0;
    napi_value buffer;
    napi_get_typedarray_info(env, value, &type, &count, &data, &buffer, &offset);
    if (type != napi_uint8_array && type != napi_uint8_clamped_array && type != napi_int8_array) {
      return false;
    }
    length = count;
  } else if (napi_is_arraybuffer(env, value, &is) == napi_ok && is) {
    napi_get_arraybuffer_info(env, value, &data, &length);
  } else {
    return false;
  }
  out->assign(static_cast<const char*>(data), length);
  return true;
}

napi_value Call(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 3) return ThrowType(env, "call(handle, verb, argsJson, buffers?)");
  StoreHandle* handle = HandleArg(env, argv[0]);
  if (!handle) return nullptr;
  std::string verb_name;
  std::string args_text;
  if (!StringArg(env, argv[1], &verb_name) || !StringArg(env, argv[2], &args_text)) {
    return ThrowType(env, "call(handle, verb: string, argsJson: string, buffers?)");
  }
  const Verb* verb = FindVerb(verb_name);
  if (!verb) return ThrowType(env, "no sessiondb call named '" + verb_name + "'");

  Attachments attachments;
  if (argc > 3) {
    bool is_array = false;
    napi_is_array(env, argv[3], &is_array);
    if (is_array) {
      uint32_t count = 0;
      napi_get_array_length(env, argv[3], &count);
      for (uint32_t i = 0; i < count; ++i) {
        napi_value item;
        napi_get_element(env, argv[3], i, &item);
        Attachment a;
        if (!BytesArg(env, item, &a.content)) {
          return ThrowType(env, "attachment " + std::to_string(i) +
                                    " is not a Buffer, Uint8Array or ArrayBuffer");
        }
        attachments.emplace(std::to_string(i), std::move(a));
      }
    }
  }

  auto w = std::make_unique<Work>();
  w->job = [store = *handle, verb, args_text = std::move(args_text),
            attachments = std::move(attachments)](Work& work) {
    Result<Json> args = ArgsJson(args_text);
    if (!args) {
      work.status = args.error();
      return;
    }
    Result<Reply> reply = (*verb)(*store, *args, attachments);
    if (!reply) {
      work.status = reply.error();
      return;
    }
    if (reply->has_bytes) {
      work.has_bytes = true;
      work.bytes = std::move(reply->bytes);
    } else if (!reply->text.empty()) {
      work.json = std::move(reply->text);
    } else {
      work.json = JsonText(reply->json);
    }
  };
  return Start(env, std::move(w), "sessiondb.call");
}

// ---- close --------------------------------------------------------------

napi_value Close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  if (argc < 1) return ThrowType(env, "close(handle)");
  StoreHandle* handle = HandleArg(env, argv[0]);
  if (!handle) return nullptr;
  auto w = std::make_unique<Work>();
  w->job = [store = *handle](Work&) { store->Close(); };
  return Start(env, std::move(w), "sessiondb.close");
}

napi_value Init(napi_env env, napi_value exports) {
  const napi_property_descriptor functions[] = {
      {"open", nullptr, Open, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"call", nullptr, Call, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"close", nullptr, Close, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(functions) / sizeof(functions[0]), functions);
  return exports;
}

}  // namespace

}  // namespace sessiondb::node

NAPI_MODULE(NODE_GYP_MODULE_NAME, sessiondb::node::Init)
