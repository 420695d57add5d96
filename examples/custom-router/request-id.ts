/**
 * `request-id`: a plugin written inside the router project, the smallest kind.
 * Every operation gets an id (the client's `x-request-id` when it sends a
 * usable one, else a fresh UUID); every subgraph call carries it, and so does
 * the answer, so one id ties the client's request to the subgraphs' logs.
 */
import { randomUUID } from 'node:crypto';
import { StateKey, definePlugin, z } from 'switchyard';

/** The id of the current operation, for other plugins: `event.state.get(REQUEST_ID)`. */
export const REQUEST_ID = new StateKey<string>('request-id');

/** Options of `useRequestId`. */
export const requestIdOptionsSchema = z.strictObject({
  /** Header read from the client and sent to subgraphs and back. Default: `x-request-id`. */
  header: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be a lower-case header name')
    .default('x-request-id'),
});

// A client's id is kept only when it is short and plain, so it can go into logs as it is.
const USABLE_ID = /^[A-Za-z0-9._-]{1,128}$/;

export const useRequestId = definePlugin({
  name: 'request-id',
  options: requestIdOptionsSchema,
  setup(_ctx, { header }) {
    return {
      hooks: {
        onRequest(event) {
          const given = event.input.headers[header];
          const id = given !== undefined && USABLE_ID.test(given) ? given : randomUUID();
          event.state.set(REQUEST_ID, id);
          return function answerWithRequestId(after) {
            after.setOutput({ ...after.output, headers: { ...after.output.headers, [header]: id } });
          };
        },
        onFetch(event) {
          const id = event.state.get(REQUEST_ID);
          if (id !== undefined) event.setInput({ ...event.input, headers: { ...event.input.headers, [header]: id } });
        },
      },
    };
  },
});
