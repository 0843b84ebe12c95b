/**
 * The pub/sub listener wrapper of front ends and hosts: a message whose
 * handling throws is dropped (ioredis would re-throw it and end the process),
 * and the log gets the first failure and every thousandth, never the message.
 */
import { describe, expect, it } from 'vitest';
import { safeListener } from '../dist/src/remote/messages.js';

describe('safeListener', () => {
  it('drops a throwing message, keeps handling the next ones, logs the 1st and the 1001st failure without the text', () => {
    const lines: string[] = [];
    const seen: string[] = [];
    const listener = safeListener(
      'front end',
      (l) => lines.push(l),
      (_channel, text) => {
        if (text.startsWith('bad')) throw new TypeError('boom');
        seen.push(text);
      },
    );
    for (let i = 0; i < 1001; i++) expect(() => listener('ch', `bad secret-${i}`)).not.toThrow();
    listener('ch', 'good');
    expect(seen).toEqual(['good']);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('ignored a message on the front end channel (12 bytes): boom; 1 so far');
    expect(lines[1]).toMatch(/; 1001 so far$/);
    expect(lines.join('\n')).not.toMatch(/secret/);
  });
});
