// Types of `sessiondb/ai`: chats of the Vercel AI SDK (its UIMessage, from
// the `ai` package) kept in sessiondb (lib/ai.js). `ai` is imported for the
// compiler only; the package does not load it at run time.

import type { UIMessage } from "ai";
import type { Json, Store } from "./index";

/** A new chat (a session of the store); resolves to its id. */
export function createChat(
  store: Store,
  options?: { id?: string; title?: string; metadata?: { [key: string]: Json } },
): Promise<string>;

/** The chat's messages as saveChat was last given them; [] for a chat never saved. */
export function loadChat<MESSAGE extends UIMessage = UIMessage>(
  store: Store,
  chatId: string,
): Promise<MESSAGE[]>;

/**
 * Saves the chat as `messages` (the whole list, as onFinish gives it): the
 * messages already stored unchanged are kept, the rest appended; a changed
 * one rewinds the chat to before it (the log keeps the old versions). File
 * parts with data URLs go to the blob store and come back identical.
 */
export function saveChat<MESSAGE extends UIMessage>(
  store: Store,
  chatId: string,
  messages: readonly MESSAGE[],
): Promise<{ kept: number; appended: number }>;
