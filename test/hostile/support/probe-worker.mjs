/**
 * The well-behaved client of the hostile suite, in a worker thread of its
 * own: its timings measure the router, not the test thread that is busy
 * attacking. Plain JavaScript, as Node runs worker files without vitest's
 * transform.
 *
 * workerData: { requests: [{ url, headers, body, expected, label }], pauseMs, deadlineMs }
 * Sends the requests in turn, one at a time, each on a fresh connection,
 * until it gets a message (any) or the deadline passes; then posts every
 * sample `{ at, ms, ok, problem? }` and exits.
 */
import { request } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

const { requests, pauseMs, deadlineMs } = workerData;
let running = true;
parentPort.once('message', () => (running = false));
const deadline = Date.now() + deadlineMs;

function once({ url, headers, body }) {
  const target = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (error) => resolve({ status: 0, text: error.message }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10000ms')));
    req.on('error', (error) => resolve({ status: 0, text: error.code ?? error.message }));
    req.end(body);
  });
}

const samples = [];
for (let i = 0; running && Date.now() < deadline; i++) {
  const probe = requests[i % requests.length];
  const at = Date.now();
  const started = performance.now();
  const answer = await once(probe);
  const ms = Math.round(performance.now() - started);
  const ok = answer.status === 200 && answer.text === probe.expected;
  samples.push(ok ? { at, ms, ok, label: probe.label } : { at, ms, ok, label: probe.label, problem: `${probe.label}: ${answer.status} ${answer.text.slice(0, 200)}` });
  await new Promise((resolve) => setTimeout(resolve, pauseMs));
}
parentPort.postMessage(samples);
