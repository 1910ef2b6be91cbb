// The example chat page: static, no build step. It imports the TypeScript client's compiled module and acts
// with a user token its backend mints (server.py, POST /token): the API key never reaches the browser.
import { MemoryClient, UnauthenticatedError } from "/client/index.js";

const $ = (id) => document.getElementById(id);
let memory, userId, sessionId;
let changes = 0; // a backlog asked for before the latest change says nothing about it

// The token for the signed-in user, minted again shortly before it expires.
function tokenFor(user) {
  let current;
  return async () => {
    if (!current || Date.parse(current.expiresAt) - Date.now() < 30_000) {
      const answer = await fetch("/token", { method: "POST", body: JSON.stringify({ userId: user }) });
      if (!answer.ok) throw new Error((await answer.json()).error);
      current = await answer.json();
    }
    return current.token;
  };
}

function newSessionId() {
  return new Date().toISOString();
}

function show(role, content) {
  const item = document.createElement("li");
  item.className = role;
  item.textContent = content;
  $("turns").append(item);
}

function showContext(context) {
  $("memories").replaceChildren(
    ...(context.memories.length ? context.memories : [null]).map((hit) => {
      const item = document.createElement("li");
      if (!hit) {
        item.className = "empty";
        item.textContent = "No memory bears on this message.";
        return item;
      }
      const kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = hit.kind;
      item.append(kind, hit.content);
      return item;
    }),
  );
  $("prompt").textContent = context.prompt;
}

// A stand-in for the bot's LLM: it answers from the memories it was given (your LLM gets context.prompt).
function reply(context) {
  const fact = context.memories.find((hit) => hit.kind === "KNOWLEDGE") ?? context.memories[0];
  return fact ? `I remember: ${fact.content}` : "Noted.";
}

async function refreshStatus() {
  if (!memory) return;
  const seen = changes;
  try {
    const backlog = await memory.backlog(userId);
    if (seen !== changes) return;
    $("status").textContent = backlog.allProcessed
      ? "All remembered: every turn is embedded, summarised and read for facts."
      : `Remembering: ${backlog.messagesWaitingForVector} turns to embed, ` +
        `${backlog.sessionsWaitingForSummary.length} sessions to summarise, ` +
        `${backlog.messagesWaitingForFacts} turns to read for facts.`;
    $("status").dataset.processed = String(backlog.allProcessed);
  } catch (error) {
    fail(error);
  }
}

function fail(error) {
  $("error").hidden = false;
  $("error").textContent = error instanceof UnauthenticatedError ? "Signed out: reload the page." : String(error);
}

function startSession() {
  changes++;
  delete $("status").dataset.processed; // known again at the next look at the backlog
  sessionId = newSessionId();
  $("session").textContent = sessionId;
  $("turns").replaceChildren();
}

$("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  userId = $("user").value.trim();
  const { memoryUrl } = await (await fetch("/config.json")).json();
  memory = new MemoryClient(memoryUrl, tokenFor(userId));
  $("login").hidden = true;
  $("who").hidden = $("say").hidden = false;
  $("user-name").textContent = userId;
  startSession();
  refreshStatus();
  setInterval(refreshStatus, 1000);
  $("message").focus();
});

$("say").addEventListener("submit", async (event) => {
  event.preventDefault();
  const content = $("message").value.trim();
  $("message").value = "";
  changes++;
  delete $("status").dataset.processed;
  show("user", content);
  try {
    const context = await memory.turn(userId, sessionId, content, { parts: true });
    showContext(context);
    const answer = reply(context);
    await memory.addMessages(userId, sessionId, [{ role: "assistant", content: answer }]);
    show("assistant", answer);
  } catch (error) {
    fail(error);
  }
});

// Ending a session summarises it now (its facts follow) instead of once it has been idle a while.
$("new-session").addEventListener("click", async () => {
  try {
    await memory.createSummaries(userId, { sessionId });
  } catch (error) {
    fail(error);
  }
  startSession();
  refreshStatus();
});
