/** One progress bar on stderr for the whole run. */
import cliProgress from 'cli-progress';

export class Progress {
  private readonly bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: ' {bar} {percentage}% | {scenario} | elapsed {duration_formatted} | eta {eta_formatted}',
      hideCursor: true,
      noTTYOutput: true,
      notTTYSchedule: 5000,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  private scenario = '';

  start(total: number): void {
    this.bar.start(total, 0, { scenario: 'starting' });
  }

  phase(name: string): void {
    this.scenario = name;
    this.bar.update({ scenario: name });
  }

  /** Advances by `n` units of estimated work (milliseconds). */
  tick(n: number): void {
    this.bar.increment(n, { scenario: this.scenario });
  }

  /** Adjusts the total when a scenario learns how many steps it will really take. */
  grow(n: number): void {
    this.bar.setTotal(this.bar.getTotal() + n);
  }

  stop(): void {
    this.bar.stop();
  }
}
