// Types of the `sessiondb` package (docs/node.md). The values the engine
// returns are the JSON forms every face of sessiondb shares (docs/cli.md,
// "JSON shapes"; src/api/json_forms.h): snake_case fields, every field
// present. Methods and their options are camelCase. Every method that
// reaches the engine runs off the main thread and returns a Promise.

/// <reference types="node" />

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** An image's or file's bytes: a Buffer or Uint8Array, an ArrayBuffer, a
 * `data:` URL, or a path on this machine (read by the engine, capped). */
export type Source = Buffer | Uint8Array | ArrayBuffer | string;

// ---- Errors: one class per engine status code (include/sessiondb/status.h)

export class SessiondbError extends Error {
  /** "invalid_argument", "not_found", "already_exists", "failed_precondition",
   * "busy", "corruption", "io_error", "internal" */
  readonly code: string;
}
export class InvalidArgumentError extends SessiondbError {}
export class NotFoundError extends SessiondbError {}
export class AlreadyExistsError extends SessiondbError {}
export class FailedPreconditionError extends SessiondbError {}
export class BusyError extends SessiondbError {}
export class CorruptionError extends SessiondbError {}
export class IoError extends SessiondbError {}
export class InternalError extends SessiondbError {}

// ---- Values (what the engine returns)

export interface Resource {
  resource_id: string; content_sha256: string; mime: string; size: number;
  width?: number; height?: number; origin?: string; name?: string; uri?: string;
  not_stored?: string; missing: boolean;
}

export type Part =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "image" | "file" | "resource_link"; resource: Resource | null }
  | { type: "tool_call"; tool_call_id: string; tool_name: string; arguments: Json }
  | { type: "tool_result"; tool_call_id: string; text: string; is_error: boolean };

// input_tokens is the whole input (cached reads and cache writes inside);
// output_tokens the whole output (reasoning inside). docs/usage.md.
export interface Usage {
  input_tokens: number; output_tokens: number; cached_tokens: number; reasoning_tokens: number;
  cache_write_tokens: number;
}

export interface Message {
  id: string; session_id: string; seq: number; ts_ms: number;
  role: "user" | "assistant" | "system" | "tool";
  parts: Part[]; files: string[]; files_modified: string[]; edit_results: Json[];
  model: string; provider: string; usage: Usage | null;
  metadata: { [key: string]: Json }; pruned: boolean;
}

export interface Session {
  id: string; title: string; preview: string; created_ms: number; updated_ms: number;
  message_count: number; last_seq: number; archived: boolean;
  metadata: { [key: string]: Json }; parent_id: string | null; fork_seq: number;
  trashed_ms?: number;
}

export interface SessionPage { sessions: Session[]; next_cursor: string | null }

export interface AppendResult {
  message_id: string; seq: number; ts_ms: number; resources: Resource[];
}

export interface Compaction {
  from_seq: number; to_seq: number; summary: string; strategy: string; model: string;
  limitations: string; images: Resource[];
}

export interface Event {
  id: string; session_id: string; seq: number; ts_ms: number;
  type: "message" | "resource_view" | "compaction" | "rewind";
  message?: Message;
  resource_view?: { resource_id: string; reason: string; message_seq: number; resource: Resource };
  compaction?: Compaction;
  rewind?: { to_seq: number };
}

export interface Draft {
  id: string; session_id: string; role: string; text: string; reasoning: string;
  model: string; created_ms: number; updated_ms: number; incomplete: boolean;
}

// ---- Inputs

/** A part to append. Images and files take `source` (bytes, a data: URL or a
 * path); the other kinds are the JSON form above. */
export type PartInput =
  | string
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string; signature?: string }
  | { type: "image" | "file"; source: Source; mime?: string; name?: string }
  | { type: "resource_link"; uri: string; name?: string; mime?: string; size?: number }
  | { type: "tool_call"; tool_call_id: string; tool_name: string; arguments?: Json }
  | { type: "tool_result"; tool_call_id: string; text: string; is_error?: boolean };

export interface MessageInput {
  role: "user" | "assistant" | "system" | "tool";
  /** Shorthand for parts: a string is one text part. */
  content?: string | PartInput[];
  parts?: PartInput[];
  id?: string; model?: string; provider?: string;
  usage?: Partial<Usage>;
  metadata?: { [key: string]: Json };
  files?: string[]; files_modified?: string[];
}

export function text(text: string): PartInput;
export function reasoning(text: string, signature?: string): PartInput;
export function image(source: Source, options?: { mime?: string; name?: string }): PartInput;
export function file(source: Source, options?: { mime?: string; name?: string }): PartInput;
export function link(uri: string, options?: { name?: string; mime?: string; size?: number }): PartInput;
export function toolCall(id: string, name: string, args?: Json): PartInput;
export function toolResult(toolCallId: string, output: string, isError?: boolean): PartInput;

export interface OpenOptions {
  /** "durable" (the default: fsync on commit) or "process-crash-safe". */
  durability?: "durable" | "process-crash-safe";
  maxImageBytes?: number; maxImagesPerMessage?: number; maxFileBytes?: number;
  createIfMissing?: boolean; readOnly?: boolean; busyTimeoutMs?: number;
  /** PostgreSQL: the namespace (tenant) inside the database. */
  namespace?: string; maxConnections?: number;
  /** Who the ledger names for erasures and retention runs. */
  actor?: string;
  /** The master key file of an encrypted store (docs/encryption.md). */
  keyFile?: string;
}

export interface ReadOptions { fromSeq?: number; limit?: number }

export interface SearchOptions {
  mode?: "hybrid" | "keyword" | "semantic"; sessionId?: string; role?: string;
  sinceMs?: number; untilMs?: number; project?: string;
  archived?: "active" | "archived" | "all"; events?: boolean; codeWrites?: boolean;
  limit?: number; offset?: number; catchUpLimit?: number;
}

export interface RecordWriteOptions {
  oldCode?: string; wholeFile?: boolean; fileContext?: string; language?: string;
  sessionId?: string; project?: string; tool?: string; timeMs?: number;
}

export class Store {
  /** Opens (creating by default) the store at a directory, or a `postgresql://` URI. */
  static open(location: string, options?: OpenOptions): Promise<Store>;
  readonly location: string;
  readonly closed: boolean;
  /** Waits for calls under way, then closes. Later calls reject with FailedPreconditionError. */
  close(): Promise<void>;

  // sessions
  createSession(options?: { id?: string; title?: string; metadata?: { [k: string]: Json } }): Promise<Session>;
  getSession(id: string): Promise<Session>;
  listSessions(options?: { limit?: number; cursor?: string; archived?: "active" | "archived" | "all";
                           metadataKey?: string; metadataValue?: string }): Promise<SessionPage>;
  /** Every session, page after page. */
  sessions(options?: { pageSize?: number; archived?: "active" | "archived" | "all" }): AsyncIterableIterator<Session>;
  renameSession(id: string, title: string): Promise<void>;
  archiveSession(id: string, archived?: boolean): Promise<void>;
  deleteSession(id: string): Promise<void>;
  purgeArchived(beforeMs: number): Promise<number>;

  // messages
  append(sessionId: string, message: MessageInput): Promise<AppendResult>;
  appendBatch(sessionId: string, messages: MessageInput[]): Promise<AppendResult[]>;
  read(sessionId: string, options?: ReadOptions): Promise<Message[]>;
  readLast(sessionId: string, count: number): Promise<Message[]>;
  /** The session's messages in pages of `pageSize` (default 500), for long sessions. */
  messages(sessionId: string, options?: { fromSeq?: number; pageSize?: number }): AsyncIterableIterator<Message>;
  readEvents(sessionId: string, options?: ReadOptions): Promise<Event[]>;
  readForProjection(sessionId: string): Promise<Event[]>;

  // the harness
  fork(parentId: string, options?: { atSeq?: number; id?: string; title?: string; metadata?: { [k: string]: Json } }): Promise<Session>;
  compact(sessionId: string, fromSeq: number, toSeq: number, summary: string,
          options?: { strategy?: string; model?: string; limitations?: string }): Promise<Event>;
  prune(sessionId: string, compactionSeq: number): Promise<{ events_pruned: number; blobs_deleted: number; bytes_freed: number }>;
  rewind(sessionId: string, toSeq: number): Promise<Event>;
  /** The rewind only if the session's last seq is still `expectedLastSeq`; null otherwise. */
  rewindIfUnchanged(sessionId: string, toSeq: number, expectedLastSeq: number): Promise<Event | null>;
  viewResource(sessionId: string, resourceId: string, reason?: string): Promise<Event>;
  usage(sessionId: string): Promise<{ turns: number; total: Usage; by_model: Json[] }>;
  openDraft(sessionId: string, options?: { role?: string; model?: string }): Promise<Draft>;
  saveDraft(draft: Draft): Promise<void>;
  listDrafts(sessionId: string): Promise<Draft[]>;
  finishDraft(draftId: string, message?: MessageInput): Promise<AppendResult>;
  discardDraft(draftId: string): Promise<void>;

  // blobs, housekeeping, projections
  readBlob(sha256: string, options?: { verify?: boolean }): Promise<Buffer>;
  dataUri(resource: Resource): Promise<string>;
  collectGarbage(options?: { graceMs?: number; dryRun?: boolean }): Promise<{ [k: string]: number }>;
  verify(): Promise<{ clean: boolean; [k: string]: Json }>;
  stats(): Promise<{ [k: string]: number }>;
  /** The provider request body: "openai-chat", "openai-responses" or "anthropic". */
  project(sessionId: string, format?: "openai-chat" | "openai-responses" | "anthropic"): Promise<{ [k: string]: Json }>;

  // search and code memory
  search(query: string, options?: SearchOptions): Promise<{ hits: Json[]; [k: string]: Json }>;
  embed(options?: { maxDocuments?: number }): Promise<{ [k: string]: Json }>;
  recordWrite(filePath: string, newCode: string, options?: RecordWriteOptions): Promise<{ [k: string]: Json }>;
  recall(filePath: string, code: string, options?: { limit?: number }): Promise<Json[]>;
  hotspots(options?: { pathPrefix?: string; functions?: boolean; limit?: number }): Promise<Json[]>;
  fileChurn(filePath: string): Promise<{ [k: string]: Json }>;

  // import and export
  importPath(path: string, options?: { format?: string; maxAttachmentBytes?: number }): Promise<{ [k: string]: Json }>;
  export(out: string, options?: { format?: string; sessions?: string[]; replace?: boolean }): Promise<{ [k: string]: Json }>;

  // forgetting (docs/retention.md)
  trashSession(id: string): Promise<void>;
  restoreFromTrash(id: string): Promise<Session>;
  listTrash(options?: { limit?: number; cursor?: string }): Promise<SessionPage>;
  emptyTrash(options?: { olderThanDays?: number }): Promise<{ [k: string]: Json }>;
  erase(request: { sessionIds?: string[]; project?: string; before?: Date | number;
                   everything?: boolean; messages?: { session_id: string; seq: number }[];
                   reason?: string }): Promise<{ [k: string]: Json }>;
  verifyErased(receipt: { [k: string]: Json } | string): Promise<{ erased: boolean; [k: string]: Json }>;
  ledger(options?: { limit?: number; beforeId?: number }): Promise<Json[]>;
  applyRetention(options?: { dryRun?: boolean }): Promise<{ [k: string]: Json }>;
  getRetentionPolicy(): Promise<{ [k: string]: Json }>;
  setRetentionPolicy(policy: { [k: string]: Json }): Promise<void>;
}
