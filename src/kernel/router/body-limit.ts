import { GraphQLError } from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';

function tooLarge(limit: number): GraphQLError {
  return new GraphQLError(`The request body is larger than the limit of ${limit} bytes.`, {
    extensions: { code: 'REQUEST_TOO_LARGE', http: { status: 413 } },
  });
}

/**
 * `limits.max_request_body`: refuses a declared Content-Length over the
 * limit before reading anything, and stops reading a body without one
 * (chunked) as soon as it passes the limit. Answers 413 `REQUEST_TOO_LARGE`.
 */
export function useRequestBodyLimit(limit: number): YogaPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      const declared = request.headers.get('content-length');
      if (declared !== null) {
        if (!/^\d+$/.test(declared)) {
          throw new GraphQLError('The Content-Length header is not a number.', { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        }
        if (Number(declared) > limit) throw tooLarge(limit);
        return;
      }
      if (!requestParser || !request.body) return;
      const parse = requestParser;
      setRequestParser(async (original) => {
        const reader = original.body!.getReader();
        const chunks: Uint8Array[] = [];
        let size = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > limit) {
            await reader.cancel();
            throw tooLarge(limit);
          }
          chunks.push(value);
        }
        return parse(new Request(original.url, { method: original.method, headers: original.headers, body: Buffer.concat(chunks) }));
      });
    },
  };
}
