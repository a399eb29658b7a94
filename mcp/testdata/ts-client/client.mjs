// Drives Memento's MCP server with the official TypeScript MCP SDK, as an
// agent would: lists the tools, adds memories, waits for the background
// pipeline to learn them, searches them, gets the context, asks for a
// recommendation, forgets the user and checks that nothing of the user is
// left. cmd/memento's TestMCPTypeScriptClient runs it against
// `memento mcp` (stdio) and /mcp on `memento serve` (streamable HTTP).
//
//   node client.mjs stdio USER COMMAND [ARG...]
//   node client.mjs http USER URL
//
// It prints one JSON line with what it saw and exits 1 on the first check
// that fails, naming it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, user, ...rest] = process.argv.slice(2);
if (!["stdio", "http"].includes(mode) || !user || rest.length === 0) {
  console.error("usage: node client.mjs stdio USER COMMAND [ARG...] | http USER URL");
  process.exit(2);
}

const seen = { mode, user };

function check(ok, what) {
  if (!ok) {
    throw new Error(`check failed: ${what}`);
  }
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name} failed: ${res.content.map((c) => c.text).join("")}`);
  }
  check(res.structuredContent && typeof res.structuredContent === "object", `${name} returns structured content`);
  return res.structuredContent;
}

// callError calls a tool that must fail and returns Memento's error
// document from its text.
async function callError(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  check(res.isError === true, `${name} fails`);
  return JSON.parse(res.content.map((c) => c.text).join("")).error;
}

async function main() {
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), env: { ...process.env }, stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  const client = new Client({ name: "memento-ts-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const server = client.getServerVersion();
    check(server?.name === "memento", `server names itself memento, got ${JSON.stringify(server)}`);

    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    seen.tools = names;
    const want = ["add_memory", "delete_all_memories", "delete_memory", "get_context", "list_memories", "recommend", "record_event", "search_memory", "update_memory"];
    check(JSON.stringify(names) === JSON.stringify(want), `tools are ${want}, got ${names}`);
    for (const t of tools) {
      check(t.inputSchema?.type === "object" && t.outputSchema?.type === "object", `${t.name} has input and output schemas`);
      check(typeof t.description === "string" && t.description.length > 60, `${t.name} has a description`);
      check(t.annotations && typeof t.annotations.readOnlyHint === "boolean", `${t.name} has annotations`);
    }
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    check(byName.search_memory.annotations.readOnlyHint === true, "search_memory is read-only");
    check(byName.delete_all_memories.annotations.destructiveHint === true, "delete_all_memories is destructive");

    // The recommendation and the event come first, so that their
    // background jobs (summary, profile, preferences) have ended when the
    // user is forgotten: see the wait for the summary below.
    const rec = await call(client, "recommend", { user, thread: "ts-rec", message: "Recommend 2 crime thrillers." });
    check(typeof rec.reply === "string" && rec.reply.length > 0 && rec.titles.length > 0, "recommend answers with titles");
    check(rec.titles.every((t) => Array.isArray(t.why)), "every title has its reasons");
    check(rec.activeContext.genres.length > 0, "the answer carries its active context");
    seen.recommended = rec.titles.map((t) => t.title);
    const ev = await call(client, "record_event", { user, type: "watched", titleId: rec.titles[0].id });
    check(ev.inserted === true, "record_event stores the event");

    const a = await call(client, "add_memory", { user, text: "I love crime thrillers like Heat.", thread: "ts" });
    check(typeof a.messageId === "string" && a.queued === true, "add_memory queues the message");
    const b = await call(client, "add_memory", { user, text: "I watch everything on Netflix.", thread: "ts" });

    // add_memory never waits for the pipeline: poll until it learned
    // from both messages.
    const learned = (mems) => [a.messageId, b.messageId].every((id) => mems.some((m) => m.sources.includes(id)));
    let memories = [];
    for (let i = 0; i < 150 && !learned(memories); i++) {
      memories = (await call(client, "list_memories", { user })).memories;
      if (!learned(memories)) await new Promise((r) => setTimeout(r, 200));
    }
    seen.memories = memories.map((m) => `${m.attribute}: ${m.value}`);
    check(learned(memories), `the pipeline learned both messages, got ${seen.memories}`);
    check(memories.every((m) => m.sources.length > 0), "every memory names its sources");

    // The turn's summary is written in the background too.
    let summary = null;
    for (let i = 0; i < 150 && summary === null; i++) {
      summary = (await call(client, "get_context", { user, thread: "ts-rec" })).summary;
      if (summary === null) await new Promise((r) => setTimeout(r, 200));
    }
    check(summary !== null && summary.text.length > 0, "the recommendation's thread gets its summary");
    await new Promise((r) => setTimeout(r, 500));

    const found = await call(client, "search_memory", { user, query: "crime thrillers", k: 5 });
    seen.searched = found.items.length;
    check(found.items.length > 0, "search_memory finds the memory");
    check(found.items[0].text.toLowerCase().includes("thriller"), `the best item is about thrillers, got ${found.items[0].text}`);
    check(found.items[0].kind && found.items[0].scores && found.items[0].sources.length > 0, "items carry kind, scores and sources");

    const ctx = await call(client, "get_context", { user, query: "what should I watch tonight", thread: "ts" });
    check(ctx.user === user && ctx.text.length > 0 && ctx.attributes.length > 0, "get_context renders the user's memory");
    seen.contextTokens = ctx.tokens;

    const gone = await call(client, "delete_all_memories", { user });
    check(gone.deleted === user, "delete_all_memories forgets the user");

    // Nothing of the user is left.
    const after = await call(client, "list_memories", { user, includeHistory: true });
    check(after.memories.length === 0, `no memory left, got ${after.memories.length}`);
    const none = await call(client, "search_memory", { user, query: "crime thrillers Netflix Heat" });
    check(none.items.length === 0, `search finds nothing, got ${none.items.length}`);
    const empty = await call(client, "get_context", { user, query: "crime thrillers", thread: "ts" });
    check(empty.attributes.length === 0 && empty.items.length === 0 && empty.summary === null, "the context is empty");
    const again = await callError(client, "delete_all_memories", { user });
    check(again.code === "ENOTFOUND", `forgetting again says ENOTFOUND, got ${JSON.stringify(again)}`);
    const bad = await callError(client, "search_memory", { user, query: "x", k: 1000 });
    check(bad.code === "EINVALID", `k out of range is EINVALID, got ${JSON.stringify(bad)}`);
    seen.ok = true;
  } finally {
    await client.close();
  }
}

main().then(
  () => {
    console.log(JSON.stringify(seen));
  },
  (err) => {
    seen.ok = false;
    seen.error = String(err?.message ?? err);
    console.log(JSON.stringify(seen));
    process.exit(1);
  },
);
