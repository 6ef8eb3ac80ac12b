// A circuit breaker per webhook subscription, so that a receiver that does not answer stops
// costing delivery time (issue 40 §3). An attempt that gets no answer at all (time-out, connection
// refused or reset, DNS failure, address refused) counts; any answer, even a 500, shows the
// receiver alive and clears the count (quick error answers cost little and are handled by the
// retries and by disabling). After PAUSE_AFTER_UNANSWERED unanswered attempts in a row the
// subscription is paused for PAUSE_SECONDS: its deliveries wait for the pause's end without an
// attempt (nothing logged, no attempt used up). Then one delivery goes as a probe while the others
// wait for its outcome: an answer closes the breaker, none pauses it again.
//
// Kept in each process's memory: a restart or another worker process learns it again after a few
// unanswered attempts, which is all it costs.

/** Unanswered attempts in a row that pause a subscription. */
export const PAUSE_AFTER_UNANSWERED = 3;
/** How long a paused subscription's deliveries wait before a probe. */
export const PAUSE_SECONDS = 60;

interface BreakerState {
  unanswered: number;
  /** Epoch ms until which deliveries wait (a pause, or a probe under way). */
  waitUntil: number;
}

export class CircuitBreaker {
  private readonly states = new Map<number, BreakerState>();

  constructor(
    /** How long a probe may take (the delivery time limit): the others wait that long for its outcome. */
    private readonly probeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds a delivery to `subscription` must wait now (0: none). */
  waitSeconds(subscription: number): number {
    const state = this.states.get(subscription);
    if (!state) return 0;
    return Math.max(0, Math.ceil((state.waitUntil - this.now()) / 1000));
  }

  /**
   * Whether a delivery may be attempted now: true unless paused; after a pause, true for one
   * delivery (the probe), whose outcome the others wait for.
   */
  admit(subscription: number): boolean {
    const state = this.states.get(subscription);
    if (!state || state.unanswered < PAUSE_AFTER_UNANSWERED) return true;
    if (state.waitUntil > this.now()) return false;
    state.waitUntil = this.now() + this.probeMs + 1000;
    return true;
  }

  /** An attempt got an answer (any status). */
  answered(subscription: number): void {
    this.states.delete(subscription);
  }

  /** An attempt got no answer; true when this pauses the subscription. */
  unanswered(subscription: number): boolean {
    const state = this.states.get(subscription) ?? { unanswered: 0, waitUntil: 0 };
    state.unanswered++;
    this.states.set(subscription, state);
    if (state.unanswered < PAUSE_AFTER_UNANSWERED) return false;
    state.waitUntil = this.now() + PAUSE_SECONDS * 1000;
    return true;
  }

  /** The subscription is gone or enabled again: forget it. */
  forget(subscription: number): void {
    this.states.delete(subscription);
  }
}
