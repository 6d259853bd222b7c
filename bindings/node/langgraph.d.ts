// Types of `sessiondb/langgraph`: a LangGraph.js checkpoint saver on
// sessiondb (lib/langgraph.js). @langchain/langgraph-checkpoint is a peer
// dependency: the saver extends the BaseCheckpointSaver it exports.

import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import type { OpenOptions, Store } from "./index";

export interface SessiondbSaverOptions {
  /** LangGraph's serializer; default its JsonPlusSerializer. */
  serde?: SerializerProtocol;
  /** Store.open's options when the saver opens the store. */
  openOptions?: OpenOptions;
}

/**
 * LangGraph checkpoints in a sessiondb store: a thread (and namespace) is a
 * session, each checkpoint and each task's writes one message of it, and a
 * put from an older checkpoint (time travel) goes to a fork of the session.
 */
export class SessiondbSaver extends BaseCheckpointSaver {
  /** store: a Store (shared, left open), a directory or `postgresql://` URI
   * (opened on first use), or nothing: a temporary store of the saver's own. */
  constructor(store?: Store | string, options?: SessiondbSaverOptions);
  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined>;
  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple>;
  put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
      newVersions: ChannelVersions): Promise<RunnableConfig>;
  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void>;
  /** Moves every session of the thread (all namespaces) to the store's trash. */
  deleteThread(threadId: string): Promise<void>;
  /** The Store the checkpoints are kept in. */
  getStore(): Promise<Store>;
  /** Closes the store if the saver opened it. */
  close(): Promise<void>;
}
