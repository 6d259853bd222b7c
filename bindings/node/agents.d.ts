// Types of `sessiondb/agents`: the OpenAI Agents SDK's Session on sessiondb
// (lib/agents.js). The SDK's types are imported for the compiler only; the
// package does not load @openai/agents at run time.

import type { AgentInputItem, Session } from "@openai/agents";
import type { OpenOptions, Store } from "./index";

export interface SessiondbSessionOptions {
  /** The SDK's session id. Default: a random UUID. Any string: one the store
   * cannot take as a session id is kept under "agents-" and a hash of it. */
  sessionId?: string;
  /** A Store (shared, left open), a directory or `postgresql://` URI (opened
   * on first use, shared by this process's sessions on it), or nothing: a
   * temporary store of the session's own, deleted by close() or at exit. */
  store?: Store | string;
  /** Store.open's options when the session opens the store. */
  openOptions?: OpenOptions;
  /** The store session's title and metadata, when this creates it. */
  title?: string;
  metadata?: { [key: string]: import("./index").Json };
}

/** A drop-in for the SDK's MemorySession that keeps the items in sessiondb. */
export class SessiondbSession implements Session {
  constructor(options?: SessiondbSessionOptions);
  getSessionId(): Promise<string>;
  /** The items in chronological order; with a limit, the latest `limit` (0 or less: none). */
  getItems(limit?: number): Promise<AgentInputItem[]>;
  /** Appends the items, in order, in one transaction. */
  addItems(items: AgentInputItem[]): Promise<void>;
  /** Removes and returns the latest item, atomically across processes; undefined if none. */
  popItem(): Promise<AgentInputItem | undefined>;
  /** Removes every item (a rewind: the store's log keeps them). */
  clearSession(): Promise<void>;
  /** The store's id of this session (the SDK's id, or "agents-" and its hash). */
  readonly storeSessionId: string;
  /** The Store the items are kept in. */
  getStore(): Promise<Store>;
  /** Later calls reject; a store the session opened closes with its last user. */
  close(): Promise<void>;
}
