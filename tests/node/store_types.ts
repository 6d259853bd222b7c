// Compiled by types.test.mjs with tsc --strict, the package's index.d.ts
// checked too (no skipLibCheck): a program using the Store as the docs show
// must type-check, values typed as the engine returns them. (The drop-ins'
// types are checked by ai_chat.test.mjs against the real packages.)
import { Store, image, toolCall, NotFoundError, type Message, type Session } from "sessiondb";

export async function chat(shot: Buffer): Promise<string> {
  const store: Store = await Store.open("/tmp/chats", { durability: "durable", maxImageBytes: 1 << 20 });
  const s: Session = await store.createSession({ title: "t", metadata: { project: "/src" } });
  await store.append(s.id, { role: "user", content: ["What is this?", image(shot, { mime: "image/png" })] });
  await store.append(s.id, { role: "assistant", parts: [toolCall("c1", "read", { path: "a" })] });
  const messages: Message[] = await store.read(s.id, { fromSeq: 1, limit: 10 });
  for await (const m of store.messages(s.id)) void m.seq;
  const part = messages[0].parts[1];
  const bytes: Buffer = part.type === "image" && part.resource
    ? await store.readBlob(part.resource.content_sha256) : Buffer.alloc(0);
  const fork = await store.fork(s.id, { atSeq: 1 });
  const body = await store.project(fork.id, "anthropic");
  const hits = await store.search("what", { mode: "keyword", limit: 5 });
  try {
    await store.getSession("nope");
  } catch (e) {
    if (e instanceof NotFoundError) void e.code;
  }
  await store.close();
  return `${bytes.length} ${JSON.stringify(body).length} ${hits.hits.length}`;
}
