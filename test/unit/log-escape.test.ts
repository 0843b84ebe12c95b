/**
 * Issue 64, defect 3: a value from the wire (a tool name, an id, a reason) cannot write a line of its own or an
 * escape sequence into the server's log, in either format, and a long one is capped.
 */
import { describe, expect, it } from 'vitest';
import { LOG_FIELD_CAP, LOG_MESSAGE_CAP, Logger } from '../../src/log/logger.js';

/** What no line may hold raw: C0 controls but the line's own newline, DEL, C1, separators, the RLO override. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202e]/;
const forged = 'spin\n[mcp-cancel-pool] FORGED: admin token accepted\r\x1b[31mred\x1b[0m\u009b2J\u2028next\u202eevil';

function lines(format: 'text' | 'json', write: (log: Logger) => void): string {
  let out = '';
  write(new Logger({ format, level: 'debug', write: (line) => void (out += line) }));
  return out;
}

describe('log lines nobody can forge (issue 64)', () => {
  it('text: control characters in the message and fields are written escaped, one line per call', () => {
    const out = lines('text', (log) => log.warn(`unknown tool ${forged}`, { tool: forged, request_id: 'a\nb' }));
    expect(out.split('\n')).toHaveLength(2); // one line and its newline
    expect(out).not.toMatch(RAW);
    expect(out).toContain('spin\\n[mcp-cancel-pool] FORGED');
    expect(out).toContain('\\x1b[31mred');
    expect(out).toContain('\\x9b2J');
    expect(out).toContain('\\u2028next');
    expect(out).toContain('\\u202eevil');
    expect(out).toContain(' request_id=a\\nb');
    expect(out.startsWith('[mcp-cancel-pool] unknown tool spin\\n')).toBe(true);
  });

  it('json: the line parses back to the same values, with no raw C1 control, separator or bidi override', () => {
    const out = lines('json', (log) => log.warn(`unknown tool ${forged}`, { tool: forged }));
    expect(out.split('\n')).toHaveLength(2);
    expect(out).not.toMatch(RAW);
    const parsed = JSON.parse(out) as { msg: string; tool: string; level: string };
    expect(parsed.msg).toBe(`unknown tool ${forged}`);
    expect(parsed.tool).toBe(forged);
    expect(parsed.level).toBe('warn');
  });

  it('both formats cap a long message and a long field, saying how much was cut', () => {
    for (const format of ['text', 'json'] as const) {
      const out = lines(format, (log) => log.info('m'.repeat(LOG_MESSAGE_CAP + 10), { f: 'f'.repeat(100_000) }));
      expect(out.length).toBeLessThan(LOG_MESSAGE_CAP + LOG_FIELD_CAP + 200);
      expect(out).toContain('…[+10 chars]');
      expect(out).toContain(`…[+${100_000 - LOG_FIELD_CAP} chars]`);
    }
  });

  it('plain values read as before: bare when simple, quoted when they hold a space', () => {
    const out = lines('text', (log) => log.info('listening', { port: 3000, host: '127.0.0.1', why: 'a b' }));
    expect(out).toBe('[mcp-cancel-pool] listening port=3000 host=127.0.0.1 why="a b"\n');
  });
});
