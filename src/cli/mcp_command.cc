// Verb of the MCP server: mcp. The protocol lives in src/server/mcp_server.h;
// this file opens the store and gives the server a stdout of its own.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <memory>
#include <streambuf>
#include <string>

#include "cli/commands.h"
#include "cli/numeric_options.h"
#include "server/mcp_server.h"

namespace sessiondb::cli {
namespace {

// An output stream buffer writing to a file descriptor: the JSON-RPC channel,
// once the process's own stdout has been pointed at stderr.
class FdOutBuf : public std::streambuf {
 public:
  explicit FdOutBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  ~FdOutBuf() override { Flush(); }
  FdOutBuf(const FdOutBuf&) = delete;
  FdOutBuf& operator=(const FdOutBuf&) = delete;

 protected:
  int_type overflow(int_type c) override {
    if (Flush() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return Flush(); }

 private:
  // Writes what is buffered; -1 once the descriptor fails (the client is gone).
  int Flush() {
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return -1;
      p += n;
    }
    setp(buf_, buf_ + sizeof buf_);
    return 0;
  }

  int fd_;
  char buf_[1 << 16];
};

constexpr const char* kMcpFooter = R"(
Speaks the Model Context Protocol (MCP, revision 2025-06-18; 2025-03-26 and
2024-11-05 clients are answered in theirs): JSON-RPC 2.0, one message per line
on stdin, answers on stdout, logs on stderr. It runs until stdin ends. An agent
gets these tools: list_sessions, read_session, search_history,
search_code_memory, code_churn, view_resource (docs/mcp.md). It reads the
history and never changes it; the one thing it writes is search vectors: new
documents are embedded in the background while it runs (--no-embed: never),
and a vector or hybrid search waits up to 2 s for a backlog of at most
--embed-limit documents, so it finds what was just written. Every tool works
on embedded and PostgreSQL stores, in the store's namespace.

Examples:
  claude mcp add sessiondb -- sessiondb mcp --store ~/chats
      registers it with Claude Code (`claude mcp add --scope user ...`: in
      every project)
  echo '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' | sessiondb mcp
      shows the tools, by hand

Other clients (Claude Desktop, Cursor, Windsurf...) take an entry under
"mcpServers" in their JSON settings; give the store as an absolute path:
  {"mcpServers": {"sessiondb": {"command": "sessiondb",
                                "args": ["mcp", "--store", "/home/me/chats"]}}})";

}  // namespace

void AddMcpCommand(CLI::App& app, CliContext& ctx) {
  auto embed_limit = std::make_shared<int64_t>(5000);
  auto no_embed = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "mcp", "Serve the store to AI agents over MCP (JSON-RPC on stdin/stdout) until stdin ends");
  cmd->add_option("--embed-limit", *embed_limit,
                  "A vector or hybrid search waits (up to 2 s) for the background embedding "
                  "when at most N documents are pending (default 5000; 0 never waits)")
      ->check(NumberIn(0, kMaxCount))
      ->option_text("N");
  cmd->add_flag("--no-embed", *no_embed,
                "Write nothing, not even search vectors (vector search then sees what "
                "`sessiondb reindex` embedded)");
  auto allow_rewind = std::make_shared<bool>(false);
  cmd->add_flag("--allow-rewind", *allow_rewind,
                "Offer the rewind_session tool, which records rewinds (the server is "
                "otherwise read-only)");
  cmd->footer(kMcpFooter);
  cmd->callback([&ctx, embed_limit, no_embed, allow_rewind] {
    // stdout is the JSON-RPC channel: errors go to stderr alone, never as JSON.
    ctx.options.json = false;
    Store* store = ctx.OpenStore(/*create_if_missing=*/false);
    if (!store) return;
    // Keep the channel for the server alone: the process's fd 1 now leads to
    // stderr, so nothing else (a library's stray print) can break a message.
    std::cout.flush();
    const int channel = dup(STDOUT_FILENO);
    if (channel < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      return ctx.Fail(Status::Io("cannot set up standard output for MCP"));
    }
    // A client that goes away makes writes fail (and Serve return), not kill us.
    signal(SIGPIPE, SIG_IGN);
    server::McpOptions options{.background_embedding = !*no_embed,
                               .embed_limit = *embed_limit,
                               .allow_rewind = *allow_rewind};
    if (ctx.options.max_image_bytes > 0) options.max_image_bytes = ctx.options.max_image_bytes;
    Status served;
    {
      FdOutBuf buffer(channel);
      std::ostream out(&buffer);
      server::McpServer server(*store, std::move(options));
      served = server.Serve(std::cin, out);
    }
    close(channel);
    if (!served.ok()) ctx.Fail(served);
  });
}

}  // namespace sessiondb::cli
