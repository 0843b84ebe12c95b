/**
 * The timing of one cancel sample, shared by the scenarios that time a cancel
 * (1: cancel-latency, 5: tasks-cancel), so that their plain-call numbers
 * measure the same thing.
 */

/** Long enough that no mechanism gets out of it by the call simply ending. */
export const A_MS = 3000;
/** Time between sending A and cancelling it (plus a random phase). */
export const LEAD_MS = 15;
/** Zero-work calls before each sample (the last one timed as the idle-server call). */
export const WARM_CALLS = 10;
/** Ours: how long a cancelled call may ignore its checkpoints before the hard stop. */
export const GRACE_MS = 100;
