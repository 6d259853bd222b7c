// A chat route's use of sessiondb/ai, typed with the AI SDK's own UIMessage
// (with its metadata, data-part and tool type parameters): ai_chat.test.mjs
// compiles it with tsc --strict and expects no error.
import type { UIMessage } from "ai";
import { Store } from "sessiondb";
import { createChat, loadChat, saveChat } from "sessiondb/ai";

type ChatMessage = UIMessage<
  { model: string },
  { progress: { percent: number } },
  { weather: { input: { city: string }; output: { tempC: number } } }
>;

export async function chatRoute(store: Store, chatId: string, latest: ChatMessage): Promise<number> {
  const history = await loadChat<ChatMessage>(store, chatId);
  const messages: ChatMessage[] = [...history, latest];
  const saved: { kept: number; appended: number } = await saveChat(store, chatId, messages);
  let degrees = 0;
  for (const part of history.flatMap((m) => m.parts)) {
    if (part.type === "tool-weather" && part.state === "output-available") degrees += part.output.tempC;
    if (part.type === "data-progress") degrees += part.data.percent;
    if (part.type === "file") degrees += part.url.length;
  }
  const model: string | undefined = history[0]?.metadata?.model;
  return saved.appended + degrees + (model ?? "").length;
}

export async function plainChat(store: Store): Promise<UIMessage[]> {
  const id: string = await createChat(store, { title: "untyped" });
  await saveChat(store, id, [{ id: "m1", role: "user", parts: [{ type: "text", text: "hi" }] }]);
  return loadChat(store, id);
}
