/**
 * Inbound requests straight to the SDK's request dispatch. The SDK's
 * `Protocol.connect` hands every message to `isJSONRPCResultResponse`, then
 * `isJSONRPCErrorResponse`, then `isJSONRPCRequest`: three zod parses, of
 * which the two that fail on a request are the dearest (each builds its
 * issues and a `ZodError`, about 6 KB of a zero-work call's ~33 KB of
 * garbage; BENCHMARKS.md, section 3, seventh and ninth passes). Both response
 * schemas are strict objects that require a `result` or an `error` key, so a
 * message with neither key cannot pass them: such a message is checked with
 * `isJSONRPCRequest` alone and handed to the dispatch the SDK would have
 * reached, and every other message takes the SDK's own path unchanged.
 *
 * The dispatch (`_onrequest`) is declared private in the SDK's types; it is
 * looked up at run time and, if an SDK release renames it, nothing is
 * rerouted (test/request-route.test.ts pins that it is found).
 */
import {
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
} from '@modelcontextprotocol/server';

type RequestDispatch = (request: JSONRPCRequest, extra?: MessageExtraInfo) => void;

/** The SDK's request dispatch of `server`, or undefined when this SDK release has none by that name. */
export function requestDispatchOf(server: object): RequestDispatch | undefined {
  const dispatch: unknown = Reflect.get(server, '_onrequest');
  return typeof dispatch === 'function' ? (dispatch as RequestDispatch).bind(server) : undefined;
}

/**
 * Called right after the SDK's `connect` set `transport.onmessage` (it does so
 * before its first `await`). `before` is the handler the transport had until
 * then: the SDK's handler calls it first, so when there was one nothing is
 * rerouted.
 */
export function routeRequestsDirectly(server: object, transport: Transport, before: Transport['onmessage']): boolean {
  const sdk = transport.onmessage;
  const dispatch = requestDispatchOf(server);
  if (before !== undefined || sdk === undefined || sdk === before || dispatch === undefined) return false;
  transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
    if (!('result' in message) && !('error' in message) && isJSONRPCRequest(message)) dispatch(message, extra);
    else sdk(message, extra);
  };
  return true;
}
