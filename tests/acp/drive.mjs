// Drives `agentcli acp` with the client side of the protocol's official TypeScript SDK
// (@agentclientprotocol/sdk): the SDK speaks the protocol and validates every message agentcli
// sends; this script only plays the editor's part of a scenario and reports what it saw.
//
//   node drive.mjs SDK_PATH SCENARIO_JSON -- agentcli acp [options]
//
// SCENARIO_JSON: {"cwd": "...", "steps": [...]}; each step is one of
//   {"prompt": "text" | [content blocks], "answer": "allow_once" | "reject_once" | ...}
//   {"prompt": "text", "cancelAfterChunk": true}
//   {"setMode": "acceptEdits"}
//   {"load": "<session id>" | "$session"}   (in a fresh agentcli process)
// Prints one JSON object: {"initialize": ..., "sessionId": ..., "turns": [...], "loaded": ...}.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const [sdkPath, scenarioJson, separator, ...command] = process.argv.slice(2);
if (separator !== "--" || command.length === 0) {
  console.error("usage: node drive.mjs SDK_PATH SCENARIO_JSON -- COMMAND...");
  process.exit(2);
}
const { ClientApp, ndJsonStream } = await import(pathToFileURL(sdkPath).href);
const scenario = JSON.parse(scenarioJson);

function startAgent() {
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return { child, stream, exited };
}

function client(state) {
  return new ClientApp()
    .onRequest("session/request_permission", async ({ params }) => {
      state.permissions.push({ toolCall: params.toolCall, options: params.options });
      const wanted = state.answer ?? "reject_once";
      const option = params.options.find((o) => o.kind === wanted);
      return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
    })
    .onNotification("session/update", async ({ params }) => {
      state.updates.push(params.update);
      if (state.onUpdate) state.onUpdate(params.update);
    });
}

const report = { turns: [] };
const state = { permissions: [], updates: [], answer: null, onUpdate: null };
const first = startAgent();
await client(state).connectWith(first.stream, async (ctx) => {
  report.initialize = await ctx.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const session = await ctx.buildSession(scenario.cwd).start();
  report.sessionId = session.sessionId;
  report.modes = session.modes;
  for (const step of scenario.steps) {
    if (step.setMode) {
      report.turns.push({ setMode: await ctx.request("session/set_mode", { sessionId: session.sessionId, modeId: step.setMode }) });
      continue;
    }
    if (step.load) continue;
    state.permissions = [];
    state.updates = [];
    state.answer = step.answer ?? null;
    state.onUpdate = null;
    if (step.cancelAfterChunk) {
      state.onUpdate = (update) => {
        if (update.sessionUpdate === "agent_message_chunk" && state.onUpdate) {
          state.onUpdate = null;
          ctx.notify("session/cancel", { sessionId: session.sessionId });
        }
      };
    }
    let response;
    try {
      response = await ctx.request("session/prompt", { sessionId: session.sessionId, prompt: typeof step.prompt === "string" ? [{ type: "text", text: step.prompt }] : step.prompt });
    } catch (error) {
      response = { error: { code: error.code, message: error.message } };
    }
    report.turns.push({ response, updates: state.updates, permissions: state.permissions });
  }
});
first.child.stdin.end();
report.firstExit = await first.exited;

const load = scenario.steps.find((step) => step.load);
if (load) {
  const loadState = { permissions: [], updates: [], answer: null, onUpdate: null };
  const second = startAgent();
  await client(loadState).connectWith(second.stream, async (ctx) => {
    await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const sessionId = load.load === "$session" ? report.sessionId : load.load;
    try {
      const response = await ctx.request("session/load", { sessionId, cwd: scenario.cwd, mcpServers: [] });
      report.loaded = { response, updates: loadState.updates };
    } catch (error) {
      report.loaded = { error: { code: error.code, message: error.message } };
    }
  });
  second.child.stdin.end();
  report.secondExit = await second.exited;
}
process.stdout.write(JSON.stringify(report) + "\n");
