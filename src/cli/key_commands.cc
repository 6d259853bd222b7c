// Verbs of encryption at rest (docs/encryption.md): `key new FILE` makes a
// master key, `key status` says whether the store is encrypted and with
// what, `key rotate --new-key-file FILE` re-wraps the store's data key under
// a new master key without rewriting any data, `key rekey` re-encrypts the
// store under a new data key, and `encrypt` / `decrypt` convert a store.
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/iso_time.h"
#include "core/key_file.h"
#include "sessiondb/encryption.h"

namespace sessiondb::cli {
namespace {

void AddKeyNew(CLI::App& group, CliContext& ctx) {
  auto path = std::make_shared<std::string>();
  auto* cmd = group.add_subcommand("new", "Write a new random master key to FILE (mode 0600)");
  cmd->add_option("FILE", *path, "Where to write it; never overwritten")->required();
  cmd->footer(
      "\nKeep FILE private and backed up apart from the store: without it an encrypted "
      "store cannot be read.\n\nExample:\n  sessiondb key new ~/.config/sessiondb/key && "
      "sessiondb --key-file ~/.config/sessiondb/key init");
  cmd->callback([&ctx, path] {
    if (Status s = NewKeyFile(*path); !s.ok()) return ctx.Fail(s);
    if (ctx.options.json) return ctx.PrintJson(Json{{"key_file", *path}});
    std::cout << "wrote a new key to " << *path << "\nuse it with --key-file " << *path
              << " or SESSIONDB_KEY_FILE=" << *path << "\n";
  });
}

void AddKeyStatus(CLI::App& group, CliContext& ctx) {
  auto* cmd = group.add_subcommand("status", "Say whether the store is encrypted, and how");
  cmd->footer("\nNeeds no key; prints nothing secret.\n\nExample:\n  sessiondb key status --json");
  cmd->callback([&ctx] {
    Result<EncryptionStatus> status =
        GetEncryptionStatus(ctx.StorePath(), ctx.MakeStoreOptions(false));
    if (!status) return ctx.Fail(status.error());
    if (ctx.options.json) {
      Json j{{"store", ctx.StorePath()}, {"encrypted", status->encrypted}};
      if (status->encrypted) {
        j["kdf"] = status->kdf;
        j["key_id"] = status->key_id;
        j["created"] = FormatUtcTime(status->created_ms, UtcTimeForm::kIsoMillis);
        j["wrapped"] = FormatUtcTime(status->wrapped_ms, UtcTimeForm::kIsoMillis);
        j["envelope"] = status->envelope;
      }
      return ctx.PrintJson(j);
    }
    if (!status->encrypted) {
      std::cout << ctx.StorePath() << " is not encrypted\n";
      return;
    }
    std::cout << ctx.StorePath() << " is encrypted (AES-256-GCM)\n"
              << "  master key: "
              << (status->kdf == "scrypt" ? "a passphrase (scrypt)" : "a generated key")
              << "\n  data key:   " << status->key_id << ", made "
              << FormatUtcTime(status->created_ms, UtcTimeForm::kReadable)
              << "\n  wrapped:    " << FormatUtcTime(status->wrapped_ms, UtcTimeForm::kReadable)
              << "\n  envelope:   " << status->envelope << " (back it up with the store)\n";
  });
}

void AddKeyRotate(CLI::App& group, CliContext& ctx) {
  auto new_key = std::make_shared<std::string>();
  auto* cmd = group.add_subcommand(
      "rotate", "Re-wrap the store's data key under a new master key (no data is rewritten)");
  cmd->add_option("--new-key-file", *new_key, "The new master key or passphrase (mode 0600)")
      ->required()
      ->option_text("FILE");
  cmd->footer(
      "\nThe current key comes from --key-file or SESSIONDB_KEY_FILE. The envelope is "
      "replaced atomically: a rotation cut short leaves the store readable with the old key "
      "or the new one.\n\nExample:\n  sessiondb key new new.key && sessiondb --key-file old.key "
      "key rotate --new-key-file new.key");
  cmd->callback([&ctx, new_key] {
    Status s = RotateStoreKey(ctx.StorePath(), ctx.MakeStoreOptions(false), *new_key);
    if (!s.ok()) return ctx.Fail(s);
    if (ctx.options.json) {
      return ctx.PrintJson(
          Json{{"store", ctx.StorePath()}, {"rotated", true}, {"key_file", *new_key}});
    }
    std::cout << "the store at " << ctx.StorePath() << " now opens with " << *new_key
              << "; the old key no longer does\n";
  });
}

// What a conversion did: where the old copy is, what was converted.
void ReportConversion(CliContext& ctx, const ConvertReport& report, const std::string& done) {
  if (ctx.options.json) {
    return ctx.PrintJson(Json{{"store", ctx.StorePath()},
                              {"database_bytes", report.database_bytes},
                              {"rows", report.rows},
                              {"blobs", report.blobs},
                              {"blobs_resumed", report.blobs_resumed},
                              {"key_id", report.key_id},
                              {"old_copy", report.old_copy}});
  }
  std::cout << "the store at " << ctx.StorePath() << " " << done << " (";
  if (StoreKindOf(ctx.StorePath()) == StoreKind::kPostgres) {
    std::cout << report.rows << " rows";
  } else {
    std::cout << "database " << FormatBytes(report.database_bytes);
  }
  std::cout << ", " << report.blobs << " blobs";
  if (report.blobs_resumed > 0) {
    std::cout << ", " << report.blobs_resumed << " of them converted by the run killed before";
  }
  std::cout << ")\n";
  if (!report.old_copy.empty()) {
    std::cout << "the store as it was is kept at " << report.old_copy
              << "; remove it once you have checked this one (or pass --remove-old)\n";
  }
}

struct ConvertArgs {
  std::string new_key_file;
  bool remove_old = false;
};

void AddConversionOptions(CLI::App* cmd, ConvertArgs& args, bool new_key, bool new_key_required) {
  if (new_key) {
    auto* opt = cmd->add_option("--new-key-file", args.new_key_file,
                                "The master key the store's new data key is wrapped under")
                    ->option_text("FILE");
    if (new_key_required) opt->required();
  }
  cmd->add_flag("--remove-old", args.remove_old,
                "Remove the store as it was once the converted one is in place");
}

ConvertOptions ToConvertOptions(const ConvertArgs& args, Progress* progress) {
  ConvertOptions o;
  o.new_key_file = args.new_key_file;
  o.remove_old = args.remove_old;
  o.progress = [progress](int64_t done, int64_t total) { (*progress)(done, total); };
  return o;
}

// Runs a conversion with its progress bar on a terminal, then reports it
// ("the store at DIR " + done(report)).
void RunConversion(CliContext& ctx, const std::string& verb,
                   const std::function<Result<ConvertReport>(Progress*)>& convert,
                   const std::function<std::string(const ConvertReport&)>& done) {
  Result<ConvertReport> report;
  {
    // An embedded store's pass over its blobs, a namespace's over its rows.
    const bool rows = StoreKindOf(ctx.StorePath()) == StoreKind::kPostgres;
    Progress progress(isatty(STDERR_FILENO) != 0, verb + (rows ? " rows" : " blobs"));
    report = convert(&progress);
  }
  if (!report) return ctx.Fail(report.error());
  ReportConversion(ctx, *report, done(*report));
}

void AddKeyRekey(CLI::App& group, CliContext& ctx) {
  auto args = std::make_shared<ConvertArgs>();
  auto* cmd = group.add_subcommand(
      "rekey", "Re-encrypt the store under a new data key (the old one then opens nothing)");
  AddConversionOptions(cmd, *args, /*new_key=*/true, /*new_key_required=*/false);
  cmd->footer(
      "\nThe current key comes from --key-file or SESSIONDB_KEY_FILE; the new data key is "
      "wrapped under --new-key-file, or the current master key. An embedded store is copied "
      "beside itself and swapped in when whole: a rekey killed at any point leaves the store "
      "as it was, and running it again resumes it. A PostgreSQL namespace is re-encrypted in "
      "place, in batches that each record how far the run got: killed, it refuses to open "
      "until the rekey is run again, which goes on from there. Stop processes that keep the "
      "store open first.\n\nExample:\n  sessiondb --key-file my.key key rekey --remove-old\n"
      "  sessiondb --store 'postgresql://me@db/chats?namespace=team-a' --key-file my.key key "
      "rekey");
  cmd->callback([&ctx, args] {
    RunConversion(
        ctx, "re-encrypting",
        [&](Progress* progress) {
          return RekeyStore(ctx.StorePath(), ctx.MakeStoreOptions(false),
                            ToConvertOptions(*args, progress));
        },
        [](const ConvertReport& r) { return "is re-encrypted under data key " + r.key_id; });
  });
}

void AddEncrypt(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand("encrypt", "Turn a plaintext store into an encrypted one");
  AddConversionOptions(cmd, *args, /*new_key=*/false, false);
  cmd->footer(
      "\nThe key is --key-file or SESSIONDB_KEY_FILE (make one with `sessiondb key new FILE`). "
      "An embedded store is copied beside itself, encrypted, and swapped in when whole; the "
      "plaintext store is kept beside it unless --remove-old. A PostgreSQL namespace is "
      "encrypted in place, resumable (run it again after a kill). Stop processes that keep the "
      "store open first.\n\nExample:\n  sessiondb key new ~/.config/sessiondb/key\n"
      "  sessiondb --key-file ~/.config/sessiondb/key encrypt --remove-old");
  cmd->callback([&ctx, args] {
    StoreOptions store_options = ctx.MakeStoreOptions(false);
    // The store is plaintext: the key is the one to encrypt with, not to open it.
    ConvertArgs with_key = *args;
    with_key.new_key_file = store_options.key_file;
    if (with_key.new_key_file.empty()) {
      if (const char* env = std::getenv(cipher::kKeyFileEnv.data())) with_key.new_key_file = env;
    }
    store_options.key_file.clear();
    RunConversion(
        ctx, "encrypting",
        [&](Progress* progress) {
          return EncryptStore(ctx.StorePath(), store_options, ToConvertOptions(with_key, progress));
        },
        [](const ConvertReport& r) { return "is encrypted (data key " + r.key_id + ")"; });
  });
}

void AddDecrypt(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand("decrypt", "Turn an encrypted store back into a plaintext one");
  AddConversionOptions(cmd, *args, /*new_key=*/false, false);
  cmd->footer(
      "\nThe key is --key-file or SESSIONDB_KEY_FILE. An embedded store is copied beside itself "
      "in plaintext and swapped in when whole; a PostgreSQL namespace is decrypted in place, "
      "resumable (run it again after a kill).\n\nExample:\n"
      "  sessiondb --key-file ~/.config/sessiondb/key decrypt");
  cmd->callback([&ctx, args] {
    RunConversion(
        ctx, "decrypting",
        [&](Progress* progress) {
          return DecryptStore(ctx.StorePath(), ctx.MakeStoreOptions(false),
                              ToConvertOptions(*args, progress));
        },
        [](const ConvertReport&) { return std::string("is now plaintext"); });
  });
}

}  // namespace

void AddKeyCommands(CLI::App& app, CliContext& ctx) {
  auto* group = app.add_subcommand("key", "Manage the keys of an encrypted store");
  group->require_subcommand(1);
  AddKeyNew(*group, ctx);
  AddKeyStatus(*group, ctx);
  AddKeyRotate(*group, ctx);
  AddKeyRekey(*group, ctx);
  AddEncrypt(app, ctx);
  AddDecrypt(app, ctx);
}

}  // namespace sessiondb::cli
