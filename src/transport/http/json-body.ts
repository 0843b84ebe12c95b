/**
 * Reading a POST's JSON body with a size limit, on plain `node:http`: what
 * the endpoint needs of a body parser, and no framework. A body that is not
 * `application/json` (or `+json`) is left unread for the SDK's transport to
 * refuse (415); an empty one reads as `{}`, which the JSON-RPC check refuses.
 * The limit counts decoded bytes, so a small gzip cannot expand past it.
 */
import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { RequestId } from '../../wire/registry.js';
import { nestingDepth, requestIdOf } from '../envelope.js';

/** Why a body was refused: the HTTP status and a message for the JSON-RPC error. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413 | 415,
    /** `too-large` → 413 (InvalidRequest), `parse` → 400 (ParseError), `encoding` → 415, `deep` → 400 (InvalidRequest). */
    readonly kind: 'too-large' | 'parse' | 'encoding' | 'deep',
    message: string,
    /** The id of the request a `deep` body carried, so the refusal answers it. */
    readonly id: RequestId | null = null,
  ) {
    super(message);
  }
}

/** Whether the request says its body is JSON. */
function isJson(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[^/]+\+json$/.test(type);
}

/** The body as decoded bytes, per its Content-Encoding. */
function decoded(req: IncomingMessage): Readable {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  switch (encoding) {
    case 'identity':
      return req;
    case 'gzip':
    case 'x-gzip':
      return req.pipe(createGunzip());
    case 'deflate':
      return req.pipe(createInflate());
    case 'br':
      return req.pipe(createBrotliDecompress());
    default:
      throw new BodyError(415, 'encoding', `unsupported content encoding "${encoding}"`);
  }
}

/**
 * The chunks of `stream`, at most `limit` bytes in all. Listeners, not `for await`: the async iterator cost a
 * stream's worth of promises and objects per request (issue 53's profile).
 */
function readAll(stream: Readable, req: IncomingMessage, limit: number, tooLarge: () => BodyError): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      stream.off('data', onData);
      req.resume(); // drain, so the connection can answer
      reject(tooLarge());
    };
    let ended = false;
    stream.on('data', onData);
    stream.once('end', () => {
      ended = true;
      resolve(chunks);
    });
    stream.once('error', (error: Error) => reject(new BodyError(400, 'parse', `unreadable body: ${error.message}`)));
    // A client gone mid-body: nothing more comes, and nobody is left to answer. ('close' follows every 'end' too:
    // an error built there would cost its stack trace on every request.)
    const gone = () => ended || reject(new BodyError(400, 'parse', 'unreadable body: the connection closed'));
    stream.once('close', gone);
    // A decoder piped from `req` hears nothing of the client leaving: the request's own close says it, when the body
    // had not all arrived (its close also follows a whole body, which the decoder may still be flushing).
    if (stream !== req) req.once('close', () => req.complete || gone());
  });
}

/**
 * The parsed JSON body of `req`, or undefined when it is not JSON. Rejects
 * with a {@link BodyError} for a body over `limit` bytes, bad JSON, or a
 * top-level value that is neither an object nor an array.
 */
export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
  maxDepth = Number.POSITIVE_INFINITY,
): Promise<unknown> {
  if (!isJson(req)) return undefined;
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => new BodyError(413, 'too-large', `request entity too large (limit ${limit} bytes)`);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume(); // drain, so the connection can answer
    throw tooLarge();
  }
  const chunks = await readAll(decoded(req), req, limit, tooLarge);
  const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8');
  if (text.trim() === '') return {};
  // Objects and arrays only: a JSON-RPC message or batch is never a bare string or number.
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[')
    throw new BodyError(
      400,
      'parse',
      `expected a JSON object or array, got ${JSON.stringify(text.trimStart().slice(0, 16))}`,
    );
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (error) {
    throw new BodyError(400, 'parse', (error as Error).message);
  }
  // The nesting rule of stdio, checked on the text before anything recursive (the SDK's schemas, JSON.stringify,
  // a structured clone to a worker) reads the value: ~5,000 levels overflowed the stack there. JSON.parse does not
  // recurse. Valid JSON of n bytes nests at most n/2 deep, so a short body is never scanned.
  if (text.length > 2 * maxDepth && nestingDepth(text, maxDepth) > maxDepth) {
    throw new BodyError(400, 'deep', `message nested deeper than ${maxDepth} levels`, requestIdOf(body) ?? null);
  }
  return body;
}
