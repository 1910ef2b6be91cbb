// The TypeScript client's chatbot turn against the plain `fetch` turn, alternating (bench/client.py runs this).
//
//   node bench/client_turns.mjs CLIENT_MODULE PLAIN_MODULE TURNS WARM_UP USER
//
// Each module exports `turn(userId, sessionId, userMessage, replyWith)`: docs/integrations.md's two blocks
// ("TypeScript client", and its "Without the client"), written out by bench/client.py. Prints one JSON
// object: for each way, the milliseconds and the CPU milliseconds of this process per timed turn.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const [clientModule, plainModule, turnsArg, warmUpArg, user] = process.argv.slice(2);
const TURNS_PER_SESSION = 10;
const ASKS = [
  "Any idea what I could cook for dinner tonight?",
  "I have cabbage, eggs and some pork in the fridge.",
  "Is there a sauce I should avoid?",
  "What about dessert?",
  "Thanks, that sounds good.",
];
const ways = {
  typescript: (await import(pathToFileURL(clientModule).href)).turn,
  fetch: (await import(pathToFileURL(plainModule).href)).turn,
};

async function replyWith(system) {
  if (!system.includes("## Recent conversation")) throw new Error(`no context came back: ${system}`);
  return "How about a vegetable stir-fry?";
}

const timings = Object.fromEntries(Object.keys(ways).map((name) => [name, { ms: [], cpuMs: [] }]));
const turns = Number(turnsArg);
for (let i = -Number(warmUpArg); i < turns; i++) {
  const order = i % 2 === 0 ? Object.keys(ways) : Object.keys(ways).reverse();
  for (const name of order) {
    const session = `${name}-${Math.floor(i / TURNS_PER_SESSION)}`;
    const started = performance.now();
    const cpu = process.cpuUsage();
    await ways[name](user, session, ASKS[((i % ASKS.length) + ASKS.length) % ASKS.length], replyWith);
    if (i >= 0) {
      timings[name].ms.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      timings[name].cpuMs.push((used.user + used.system) / 1000);
    }
  }
}
console.log(JSON.stringify(timings));
