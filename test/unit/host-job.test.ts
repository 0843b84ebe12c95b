/**
 * The worker host's side of a remote call, {@link HostJob}, against a fake
 * local job: every transition of its drawing, and the rule that a stop which
 * reaches a job still being taken is never dropped (defect 3 of issue 20).
 */
import { describe, expect, it } from 'vitest';
import { HostJob, type LocalJob } from '../../dist/src/remote/host/host-job.js';
import type { JobOutcome } from '../../dist/src/backend/backend.js';

class FakeLocal implements LocalJob {
  state: LocalJob['state'] = 'running';
  cancels = 0;
  readonly outcome = new Promise<JobOutcome>(() => undefined);
  constructor(private readonly casWins: boolean) {}
  tryCancel(): boolean {
    this.cancels++;
    if (this.casWins) this.state = 'cancelled';
    return this.casWins;
  }
}

const released = async (job: HostJob) => {
  let done = false;
  void job.released.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
};

describe('HostJob', () => {
  it('taking → running → settled{answered}; the BullMQ slot is released only then', async () => {
    const job = new HostJob('j1', 't1', 'f1');
    expect(job.state.kind).toBe('taking');
    expect(job.taken()).toBe(true);
    job.running(new FakeLocal(true));
    expect(job.state.kind).toBe('running');
    expect(await released(job)).toBe(false);
    job.responded(true);
    expect(job.state).toEqual({ kind: 'settled', end: 'answered' });
    expect(await released(job)).toBe(true);
  });

  it('a stop during the take is kept, and the take then returns into settled{stopped}: the job never runs', async () => {
    const job = new HostJob('j2', 't2', 'f1');
    expect(job.stop('cancelled in Redis')).toBe(true);
    expect(job.stop('a second reason')).toBe(true);
    expect(job.state).toEqual({ kind: 'taking', stop: 'cancelled in Redis' });
    expect(job.taken()).toBe(false);
    expect(job.state).toEqual({ kind: 'settled', end: 'stopped' });
    const local = new FakeLocal(true);
    job.running(local); // too late to run: ignored
    expect(job.state.kind).toBe('settled');
    expect(await released(job)).toBe(true);
  });

  it('running, a stop whose local CAS wins: stopping (slot released at once), then settled{stopped} when the thread is back', async () => {
    const job = new HostJob('j3', 't3', 'f1');
    job.taken();
    const local = new FakeLocal(true);
    job.running(local);
    expect(job.stop('cancel message')).toBe(true);
    expect(local.cancels).toBe(1);
    expect(job.state).toMatchObject({ kind: 'stopping', why: 'cancel message' });
    expect(await released(job)).toBe(true);
    expect(job.stop('again')).toBe(false); // one stop
    job.responded(true); // a completion that lost: nothing changes
    expect(job.state.kind).toBe('stopping');
    job.stopped();
    expect(job.state).toEqual({ kind: 'settled', end: 'stopped' });
  });

  it('running, a stop whose local CAS loses (completion won): still running, then settled{dropped} if Redis refuses the answer', () => {
    const job = new HostJob('j4', 't4', 'f1');
    job.taken();
    const local = new FakeLocal(false);
    job.running(local);
    expect(job.stop('cancel message')).toBe(false);
    expect(job.state.kind).toBe('running');
    job.responded(false);
    expect(job.state).toEqual({ kind: 'settled', end: 'dropped' });
    job.stopped(); // not stopping: ignored
    expect(job.state).toEqual({ kind: 'settled', end: 'dropped' });
  });

  it('a lost take: settled{skipped}; nothing afterwards moves it', async () => {
    const job = new HostJob('j5', 't5', 'f1');
    job.skipped();
    expect(job.state).toEqual({ kind: 'settled', end: 'skipped' });
    expect(job.taken()).toBe(false);
    expect(job.stop('late')).toBe(false);
    expect(await released(job)).toBe(true);
  });
});
