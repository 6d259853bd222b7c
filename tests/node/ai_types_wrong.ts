// Misuses of sessiondb/ai that the types must refuse: ai_chat.test.mjs
// compiles this with tsc --strict and expects each marked line to fail.
import { Store } from "sessiondb";
import { loadChat, saveChat } from "sessiondb/ai";

export async function wrong(store: Store): Promise<void> {
  // WRONG 1: not a UIMessage (no id, content instead of parts)
  await saveChat(store, "chat", [{ role: "user", content: "hi" }]);
  // WRONG 2: a role the SDK does not have
  await saveChat(store, "chat", [{ id: "m", role: "tool", parts: [] }]);
  // WRONG 3: loadChat gives messages, not a string
  const text: string = await loadChat(store, "chat");
  // WRONG 4: the chat id is a string
  await loadChat(store, 42);
  void text;
}
