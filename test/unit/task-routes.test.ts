/**
 * The client's early task statuses (src/client/task-routes.ts) are bounded: a
 * server that sends statuses for task ids the client never registers cannot
 * grow the client's memory.
 */
import { describe, expect, it } from 'vitest';
import { TaskRoutes } from '../../dist/src/client/task-routes.js';

describe('TaskRoutes', () => {
  it('keeps a few statuses for a bounded number of unknown task ids, oldest dropped first', () => {
    const routes = new TaskRoutes();
    for (let i = 0; i < 10_000; i++) routes.status({ taskId: `t${i}`, status: 'working' });
    for (let n = 0; n < 10; n++) routes.status({ taskId: 't9999', status: n === 9 ? 'completed' : 'working' });
    expect(routes.takeEarly('t0')).toEqual([]);
    expect(routes.takeEarly('t9936')).toHaveLength(1);
    const last = routes.takeEarly('t9999');
    expect(last).toHaveLength(4);
    expect(last.at(-1)).toEqual({ taskId: 't9999', status: 'completed' });
    expect(routes.takeEarly('t9999')).toEqual([]); // taken once
    routes.status({ status: 'working' }); // no task id: ignored
    routes.status({ taskId: 7, status: 'working' });
    expect(routes.takeEarly('7')).toEqual([]);
  });
});
