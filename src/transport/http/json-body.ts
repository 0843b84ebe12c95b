/**
 * Reading a POST's JSON body with a size limit, on plain `node:http`: what
 * the endpoint needs of a body parser, and no framework. A body that is not
 * `application/json` (or `+json`) is left unread for the SDK's transport to
 * refuse (415); an empty one reads as `{}`, which the JSON-RPC check refuses.
 * The limit counts decoded bytes, so a small gzip cannot expand past it.
 */
import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { DEFAULTS } from '../../defaults.js';
import { brotliWindowBits, type DecodeSlots } from './decode-slots.js';
import type { RequestId } from '../../wire/registry.js';
import { nestingDepth, requestIdOf } from '../envelope.js';

/** Why a body was refused: the HTTP status and a message for the JSON-RPC error. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 408 | 413 | 415 | 503,
    /**
     * `too-large` → 413 (InvalidRequest), `parse` → 400 (ParseError), `encoding` → 415, `deep` → 400
     * (InvalidRequest), `slow` → 408 (a body under the minimum rate), `busy` → 503 + Retry-After (no decode slot).
     */
    readonly kind: 'too-large' | 'parse' | 'encoding' | 'deep' | 'slow' | 'busy',
    message: string,
    /** The id of the request a `deep` body carried, so the refusal answers it. */
    readonly id: RequestId | null = null,
  ) {
    super(message);
  }
}

/** What bounds the reading of one body besides its size (src/transport/http/serve.ts builds it). */
export interface BodyBounds {
  /** Decoders in use per caller and in total; a compressed body takes one while it is decoded. */
  readonly slots?: DecodeSlots;
  /** Whose slot a compressed body takes. */
  readonly caller?: string;
  /** A body of which fewer than this many bytes arrive in one {@link BodyBounds.rateWindowMs} is refused (408). */
  readonly minBytesPerWindow?: number;
  readonly rateWindowMs?: number;
}

/** Whether the request says its body is JSON (`application/json` or `application/<x>+json`). */
export function isJson(req: IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[^/]+\+json$/.test(type);
}

/** A decoder for the request's Content-Encoding, or undefined for identity. */
function decoderFor(req: IncomingMessage): Transform | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      throw new BodyError(415, 'encoding', `unsupported content encoding "${encoding}"`);
  }
}

/** The largest brotli window (WBITS) a body of `limit` bytes needs: 22 (4 MiB) for the default limit. */
const windowBitsFor = (limit: number) => Math.max(16, Math.min(24, Math.ceil(Math.log2(limit))));

/**
 * The decoded chunks of the body, at most `limit` bytes in all. The raw bytes are pumped into the decoder by hand
 * (not `pipe`), so a refusal stops both at once: the decoder is destroyed, nothing more is read from the request,
 * and its connection closes after the answer (`http-errors.ts` sends `Connection: close` for an unread body).
 * Listeners, not `for await`: the async iterator cost a stream's worth of promises and objects per request (issue 53).
 */
function readAll(
  req: IncomingMessage,
  decoder: Transform | undefined,
  limit: number,
  bounds: BodyBounds,
  tooLarge: () => BodyError,
): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const out: Readable = decoder ?? req;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let raw = 0;
    let windowRaw = 0;
    // A body dripped slowly holds its connection (and its decoder): one slower than the minimum rate is refused.
    const min = bounds.minBytesPerWindow ?? DEFAULTS.minBodyBytesPerWindow;
    const every = bounds.rateWindowMs ?? DEFAULTS.bodyRateWindowMs;
    const timer = setInterval(() => {
      if (!req.complete && windowRaw < min)
        refuse(new BodyError(408, 'slow', `request body too slow: under ${min} bytes in ${every} ms`));
      windowRaw = 0;
    }, every);
    timer.unref();
    const finish = () => {
      settled = true;
      clearInterval(timer);
      req.off('data', onRaw);
      out.off('data', onData);
    };
    const refuse = (error: BodyError) => {
      if (settled) return;
      finish();
      req.pause();
      if (decoder) {
        req.off('end', endDecoder);
        decoder.destroy();
      }
      reject(error);
    };
    const maxBits = windowBitsFor(limit);
    const onRaw = (chunk: Buffer) => {
      if (raw === 0 && decoder && req.headers['content-encoding']?.toLowerCase() === 'br' && chunk.length > 0) {
        const bits = brotliWindowBits(chunk[0]!);
        if (bits === 'large' || bits > maxBits)
          return refuse(
            new BodyError(
              413,
              'too-large',
              `brotli window of ${bits === 'large' ? 'the large-window extension' : `2^${bits} bytes`} refused: a body of at most ${limit} bytes needs at most 2^${maxBits}`,
            ),
          );
      }
      raw += chunk.length;
      windowRaw += chunk.length;
      if (decoder && !decoder.write(chunk)) {
        req.pause();
        decoder.once('drain', () => settled || req.resume());
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      refuse(tooLarge());
    };
    const endDecoder = () => decoder?.end();
    if (decoder) {
      req.on('data', onRaw);
      req.once('end', endDecoder);
    } else req.on('data', onRaw);
    out.on('data', onData);
    out.once('end', () => {
      if (settled) return;
      finish();
      resolve(chunks);
    });
    out.once('error', (error: Error) => refuse(new BodyError(400, 'parse', `unreadable body: ${error.message}`)));
    // A client gone mid-body: nothing more comes, and nobody is left to answer. ('close' follows every 'end' too:
    // an error built there would cost its stack trace on every request.)
    const gone = () => settled || refuse(new BodyError(400, 'parse', 'unreadable body: the connection closed'));
    out.once('close', gone);
    // A decoder hears nothing of the client leaving: the request's own close says it, when the body had not all
    // arrived (its close also follows a whole body, which the decoder may still be flushing).
    if (decoder) req.once('close', () => req.complete || gone());
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
  bounds: BodyBounds = {},
): Promise<unknown> {
  if (!isJson(req)) return undefined;
  const declared = Number(req.headers['content-length']);
  const tooLarge = () => new BodyError(413, 'too-large', `request entity too large (limit ${limit} bytes)`);
  // Refused unread: the answer says Connection: close, so nothing more of it is read.
  if (Number.isFinite(declared) && declared > limit) throw tooLarge();
  const decoder = decoderFor(req);
  let release: (() => void) | undefined;
  if (decoder && bounds.slots) {
    const slot = bounds.slots.take(bounds.caller ?? '');
    if (typeof slot === 'string') {
      decoder.destroy();
      throw new BodyError(
        503,
        'busy',
        slot === 'caller'
          ? `too many compressed bodies of this caller being decoded at once (${bounds.slots.perCaller}); retry later`
          : `too many compressed bodies being decoded at once (${bounds.slots.total}); retry later`,
      );
    }
    release = slot;
  }
  let chunks: Buffer[];
  try {
    chunks = await readAll(req, decoder, limit, bounds, tooLarge);
  } finally {
    release?.();
  }
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
