// The TypeScript client against the service served for real (tests/client/test_typescript.py starts it,
// with its worker, and runs `node --test` with MEMORY_URL and MEMORY_API_KEY: an all-users key that may curate).
import assert from "node:assert/strict";
import { test } from "node:test";

import { ForbiddenError, InputError, MemoryClient, UnauthenticatedError } from "../dist/index.js";

const URL = process.env.MEMORY_URL;
const KEY = process.env.MEMORY_API_KEY;
const USER = "ts-user-42";
const EARLIER = [
  { role: "user", content: "My favourite food is okonomiyaki, Hiroshima style.", createdAt: "2024-05-01T09:00:00+09:00" },
  { role: "assistant", content: "Noted! Do you cook it at home?", createdAt: "2024-05-01T09:00:05+09:00" },
  { role: "user", content: "Sometimes, but I am allergic to peanuts so I check the sauce.", createdAt: "2024-05-01T09:00:30+09:00" },
];
const ASK = "Any idea what I could cook for dinner tonight?";

async function processed(memory, userId) {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const backlog = await memory.backlog(userId);
    if (backlog.allProcessed) return backlog;
    assert.ok(Date.now() < deadline, `the worker did not process ${userId}'s turns: ${JSON.stringify(backlog)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test("a chatbot turn, search, facts, the backlog, export and forgetting", async () => {
  const memory = new MemoryClient(URL, KEY);
  const stored = await memory.addMessages(USER, "2024-05-01", EARLIER);
  assert.deepEqual(stored.messages.map((m) => m.content), EARLIER.map((m) => m.content));
  const waiting = await memory.backlog(USER);
  assert.equal(waiting.allProcessed, false);
  assert.equal(waiting.messagesWaitingForFacts, 2);

  assert.deepEqual(await memory.createSummaries(USER), ["2024-05-01"]);
  const done = await processed(memory, USER);
  assert.deepEqual(done.sessionsWaitingForSummary, []);

  const context = await memory.turn(USER, "2024-05-20", ASK, { createdAt: "2024-05-20T18:30:00+09:00", parts: true });
  assert.deepEqual(context.window.map((t) => t.content), [ASK]);
  assert.ok(context.memories.some((m) => m.content.includes("peanuts")), JSON.stringify(context.memories));
  assert.ok(context.prompt.includes(ASK));
  const prompt = await memory.turn(USER, "2024-05-20", "And for dessert?");
  assert.ok(prompt.tokens.prompt > 0);
  assert.equal("window" in prompt, false); // the prompt only, unless parts: true
  await memory.addMessages(USER, "2024-05-20", [{ role: "assistant", content: "A vegetable stir-fry?" }]);
  const now = await memory.context(USER, "2024-05-20", { query: ASK, windowTurns: 2 });
  assert.deepEqual(now.window.map((t) => t.speaker), ["user", "assistant"]);

  const answer = await memory.search(USER, "What am I allergic to?", { topK: 3 });
  assert.equal(answer.found, true);
  assert.match(answer.answer, /peanuts/);
  assert.ok(answer.hits.some((hit) => hit.cited));

  const raised = (await memory.facts(USER)).filter((fact) => !fact.reviewed);
  assert.ok(raised.length > 0, "the worker raised facts from the earlier session");
  const approved = await memory.approveFact(USER, Number(raised[0].id));
  assert.equal(approved.reviewed, true);
  await assert.rejects(memory.rejectFact(USER, raised[0].id), (error) => {
    assert.ok(error instanceof InputError);
    assert.equal(error.fieldErrors[0].field, "id");
    assert.match(error.fieldErrors[0].message, /not awaiting review/);
    return true;
  });

  const added = await memory.addFact(USER, "The user is vegetarian.");
  const corrected = await memory.correctFact(USER, added.id, "The user is vegan.");
  assert.deepEqual([corrected.id, corrected.content], [added.id, "The user is vegan."]);
  assert.equal(await memory.forgetFact(USER, added.id), added.id);
  assert.ok(!(await memory.facts(USER)).some((fact) => fact.id === added.id));

  const document = await memory.exportUser(USER);
  assert.equal(document.messages.length, 6);

  const forgotten = await memory.forgetUser(USER);
  assert.deepEqual([forgotten.deletedMessages, forgotten.sessions], [6, 2]);
  assert.deepEqual(await memory.facts(USER), []);
});

test("a user token acts on its user only", async () => {
  const backend = new MemoryClient(URL, KEY);
  const minted = await backend.createUserToken("ts-alice", { ttlSeconds: 60 });
  assert.match(minted.token, /^memu_/);
  assert.equal(minted.userId, "ts-alice");

  let calls = 0;
  const browser = new MemoryClient(URL, () => (calls++, minted.token));
  await browser.addMessages("ts-alice", "s1", [{ role: "user", content: "I play the cello." }]);
  assert.equal((await browser.backlog("ts-alice")).messagesWaitingForFacts, 1);
  assert.equal(calls, 2);
  await assert.rejects(browser.facts("ts-bob"), (error) => error instanceof ForbiddenError && error.code === "FORBIDDEN");
  await assert.rejects(browser.addMessages("ts-bob", "s1", [{ role: "user", content: "Hi" }]), ForbiddenError);
  await assert.rejects(browser.createUserToken("ts-alice"), ForbiddenError);
  await backend.forgetUser("ts-alice");
});

test("errors carry the API's codes", async () => {
  await assert.rejects(new MemoryClient(URL, "mem_wrong").facts(USER), (error) => {
    assert.ok(error instanceof UnauthenticatedError);
    assert.deepEqual([error.code, error.status], ["UNAUTHENTICATED", 401]);
    return true;
  });
  await assert.rejects(new MemoryClient(URL, KEY).addMessages(USER, "s", [{ role: "robot", content: "" }]), (error) => {
    assert.ok(error instanceof InputError);
    assert.equal(error.code, "VALIDATION");
    assert.deepEqual(error.fieldErrors.map((e) => e.field), ["messages.0.role", "messages.0.content"]);
    return true;
  });
  await assert.rejects(new MemoryClient(URL, KEY).facts(USER, { limit: 10 ** 6 }), (error) => error.code === "BAD_USER_INPUT");
});
