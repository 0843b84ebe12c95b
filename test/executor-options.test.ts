/**
 * Executor.create checks its options and names the bad one; every error the
 * package throws on purpose has a base class and a stable code.
 */
import { describe, expect, it } from 'vitest';
import {
  DuplicateRequestError,
  Executor,
  ExecutorClosedError,
  InvalidOptionError,
  McpCancelPoolError,
  ToolModuleError,
  type ExecutorOptions,
} from '../dist/src/index.js';

const bad: [ExecutorOptions, string, RegExp][] = [
  [{ threads: 0 }, 'threads', /expected an integer >= 1, got 0/],
  [{ threads: 1.5 }, 'threads', /got 1\.5/],
  [{ spareThreads: -1 }, 'spareThreads', /expected an integer >= 0/],
  [{ cores: 0 }, 'cores', /expected an integer >= 1/],
  [{ handoffDelayMs: Number.NaN }, 'handoffDelayMs', /got NaN/],
  [{ queueLimit: '10' as unknown as number }, 'queueLimit', /got "10"/],
  [{ graceMs: -5 }, 'graceMs', /got -5/],
  [{ progressIntervalMs: Infinity }, 'progressIntervalMs', /got Infinity/],
  [{ toolModules: 'x.js' as unknown as string[] }, 'toolModules', /expected an array/],
  [{ toolModules: [42 as unknown as string] }, 'toolModules', /got number/],
  [{ toolSettings: 'root' as unknown as Record<string, unknown> }, 'toolSettings', /expected an object/],
];

describe('Executor.create options', () => {
  it.each(bad)('%j is refused, naming %s', async (options, name, detail) => {
    const error = (await Executor.create({ builtins: false, ...options }).catch(
      (e: unknown) => e,
    )) as InvalidOptionError;
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect(error).toBeInstanceOf(McpCancelPoolError);
    expect(error.code).toBe('ERR_INVALID_OPTION');
    expect(error.option).toBe(name);
    expect(error.name).toBe('InvalidOptionError');
    expect(error.message).toMatch(new RegExp(`^invalid option ${name}: `));
    expect(error.message).toMatch(detail);
  });

  it('a tool defined twice is a ToolModuleError', async () => {
    const builtins = new URL('../dist/workers/tools/index.js', import.meta.url).href;
    const error = (await Executor.create({ threads: 1, toolModules: [builtins] }).catch(
      (e: unknown) => e,
    )) as ToolModuleError;
    expect(error).toBeInstanceOf(ToolModuleError);
    expect(error.code).toBe('ERR_TOOL_MODULE');
    expect(error.message).toMatch(/is defined twice/);
  });

  it('reserve: a duplicate id and a closed executor throw coded errors', async () => {
    const ex = await Executor.create({ threads: 1, spareThreads: 0 });
    try {
      ex.reserve('s', 1);
      const duplicate = (() => {
        try {
          ex.reserve('s', 1);
        } catch (e) {
          return e;
        }
      })() as DuplicateRequestError;
      expect(duplicate).toBeInstanceOf(DuplicateRequestError);
      expect(duplicate).toMatchObject({
        code: 'ERR_DUPLICATE_REQUEST',
        session: 's',
        id: 1,
        name: 'DuplicateRequestError',
      });
    } finally {
      await ex.close();
    }
    expect(() => ex.reserve('s', 2)).toThrow(ExecutorClosedError);
    expect(() => ex.reserve('s', 2)).toThrow(
      expect.objectContaining({ code: 'ERR_EXECUTOR_CLOSED', message: 'executor is closed' }),
    );
  });
});
