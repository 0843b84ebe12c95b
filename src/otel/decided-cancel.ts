/**
 * A cancel decided somewhere else than on this process's pool: a front end
 * whose calls run on worker hosts asks Redis, which decides. Its `cancel`
 * span (who asked, who won) lasts until that decision; the host's own
 * `cancel` span shows the work stopping (src/otel/job-trace.ts).
 */
import { context, SpanKind, type Context } from '@opentelemetry/api';
import type { CancelResult } from '../backend/backend.js';
import { ATTR } from './attributes.js';
import type { CancelSource } from '../state/cancel-source.js';
import { liveTracer } from './tracer.js';

/** The context a call started in, kept for its later cancel; undefined (nothing kept) while no SDK is registered. */
export function callContext(): Context | undefined {
  return liveTracer() === undefined ? undefined : context.active();
}

/** Records a cancel asked by `source` in the call's context, ended when `decision` resolves. */
export function traceDecidedCancel(parent: Context, source: CancelSource, decision: Promise<CancelResult>): void {
  const tracer = liveTracer();
  if (tracer === undefined) return;
  const span = tracer.startSpan(
    'cancel',
    { kind: SpanKind.INTERNAL, attributes: { [ATTR.cancelSource]: source } },
    parent,
  );
  void decision.then(
    (result) => {
      const won = result === 'cancelled-queued' || result === 'cancelled-running';
      span.setAttribute(ATTR.cancelWinner, won ? 'cancel' : 'completion');
      if (won) span.setAttribute(ATTR.cancelFrom, result === 'cancelled-queued' ? 'queued' : 'running');
      span.end();
    },
    () => span.end(),
  );
}
