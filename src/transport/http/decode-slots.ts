/**
 * How many compressed bodies are decoded at once, per caller and in total. A decoder holds state the body's few
 * bytes do not pay for (a brotli window of up to 4 MiB, zlib's 32 KiB plus its tables), so a caller may hold at most
 * `perCaller` of them and the process `total`; a body beyond either is refused at once (503 + Retry-After), before
 * any byte is decoded. Identity bodies take no slot: their cost is their size, which the body limit bounds.
 */

/** Which bound refused a slot. */
export type DecodeRefusal = 'caller' | 'total';

/** Counts decoders in use, per caller and in total (see the module comment). */
export class DecodeSlots {
  private inUse = 0;
  private readonly byCaller = new Map<string, number>();

  constructor(
    /** Decoders the whole process may run at once. */
    readonly total: number,
    /** Decoders one caller may run at once (the anonymous caller: {@link DecodeSlots.total}). */
    readonly perCaller: number,
  ) {
    if (!Number.isInteger(total) || total < 1) throw new RangeError('decode slots: total must be a positive integer');
    if (!Number.isInteger(perCaller) || perCaller < 1)
      throw new RangeError('decode slots: perCaller must be a positive integer');
  }

  /** Takes a slot for `caller`: its release (call once), or which bound is full. */
  take(caller: string): (() => void) | DecodeRefusal {
    const mine = this.byCaller.get(caller) ?? 0;
    if (mine >= this.perCaller) return 'caller';
    if (this.inUse >= this.total) return 'total';
    this.inUse++;
    this.byCaller.set(caller, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const left = (this.byCaller.get(caller) ?? 1) - 1;
      if (left === 0) this.byCaller.delete(caller);
      else this.byCaller.set(caller, left);
    };
  }

  /** Decoders running now. */
  get active(): number {
    return this.inUse;
  }
}

/**
 * The window a brotli stream asks for, from its first byte (RFC 7932 §9.2: WBITS, the window being 2^WBITS − 16
 * bytes), or `'large'` for the large-window extension's marker, which standard brotli does not allow.
 */
export function brotliWindowBits(first: number): number | 'large' {
  if ((first & 1) === 0) return 16;
  const n = (first >> 1) & 7;
  if (n !== 0) return 17 + n;
  const m = (first >> 4) & 7;
  if (m === 1) return 'large';
  return m === 0 ? 17 : 8 + m;
}
