/**
 * The shares in force, for one dimension of the budget (messages or bytes per second), pure.
 *
 * RULE. A share DEcrease applies at once; an INcrease only once it has been the target for
 * `delayMs` (the share in force is the smallest target of the last `delayMs`). A producer's slots
 * are reserved at most the budget's horizon ahead, at the share in force when reserved; with
 * delayMs ≥ horizon + one cadence (the replicas read the targets up to a cadence apart), what a
 * producer was given before a decrease has left before anyone is given more: the shares in force,
 * with what is still reserved at older ones, never add up to more than the budget.
 *
 * A producer with no share yet (new, or back from idle) is granted part of what is free at once:
 * the budget plus `reserve` (a fraction) minus every share given within the last `delayMs`, split
 * between the replicas (each grants at most its part); each newcomer takes half of what this
 * replica has left, so any number of them stay within it — but never less than FLOOR of an equal
 * share. Its grant holds until its target reaches it (an increase, so after delayMs).
 */

interface Entry {
  at: number;
  value: number;
}

export interface ShareLedger {
  /** A cadence's targets (producers with demand); the others have none. */
  update(now: number, budget: number, targets: ReadonlyMap<string, number>, members: number): void;
  /** The share in force, or a grant from what is free when it has none (recorded). */
  shareOf(producer: string, now: number): number;
  /** The shares in force now, for status and metrics. */
  inForce(): ReadonlyMap<string, number>;
  /** What this replica may still grant to newcomers before the next update. */
  grantable(): number;
}

/**
 * A grant never goes below this fraction of an equal share of the budget (this replica's part):
 * a producer decided at a tiny rate would have its refusals spread a tiny rate apart, far into
 * the future. What this may give above the budget lasts until the others' reservations at their
 * older shares have left (delayMs): at most FLOOR ÷ (producers + 1) of the budget for half a second
 * per producer that joins; those joining at one update share one FLOOR of the budget.
 */
export const FLOOR = 0.25;

export const createShareLedger = ({ delayMs, reserve }: { delayMs: number; reserve: number }): ShareLedger => {
  const history = new Map<string, Entry[]>();
  const current = new Map<string, number>();
  let left = 0;
  let budget = 0;
  let replicas = 1;

  const push = (producer: string, at: number, value: number): void => {
    let entries = history.get(producer);
    if (!entries) history.set(producer, (entries = []));
    entries.push({ at, value });
  };

  /** Drops entries wholly before the window, keeping the one in force at its start. */
  const prune = (entries: Entry[], since: number): void => {
    let drop = 0;
    while (drop + 1 < entries.length && entries[drop + 1].at <= since) drop += 1;
    if (drop > 0) entries.splice(0, drop);
  };

  /** The smallest value since the last zero (idle resets it); 0 when the last value is 0. */
  const smallestSinceIdle = (entries: readonly Entry[]): number => {
    let least = Infinity;
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      if (entries[i].value === 0) break;
      least = Math.min(least, entries[i].value);
    }
    return least === Infinity ? 0 : least;
  };

  /** A newcomer's grant: half of what is left here, never less than FLOOR of an equal share among `among` producers (recorded). */
  const grantFrom = (producer: string, now: number, among: number): number => {
    const grant = Math.max(left / 2, (budget * FLOOR) / Math.max(1, among) / replicas);
    left = Math.max(0, left - grant);
    push(producer, now, grant);
    current.set(producer, grant);
    return grant;
  };

  return {
    update(now, total, targets, members) {
      budget = total;
      replicas = Math.max(1, members);
      const since = now - delayMs;
      for (const [producer, target] of targets) {
        const entries = history.get(producer);
        const live = entries !== undefined && entries.length > 0 && entries[entries.length - 1].value > 0;
        if (live) push(producer, now, target);
      }
      for (const [producer, entries] of history) {
        if (!targets.has(producer) && entries[entries.length - 1].value !== 0) push(producer, now, 0);
      }
      let given = 0;
      current.clear();
      for (const [producer, entries] of history) {
        prune(entries, since);
        if (entries.length === 1 && entries[0].value === 0 && entries[0].at <= since) {
          history.delete(producer);
          continue;
        }
        let most = 0;
        for (const entry of entries) most = Math.max(most, entry.value);
        given += most;
        const share = smallestSinceIdle(entries);
        if (share > 0) current.set(producer, share);
      }
      left = Math.max(0, total * (1 + reserve) - given) / Math.max(1, members);
      // Producers with a target and no share here yet are newcomers: granted now, in name order,
      // each at least FLOOR of an equal share among all who hold one after this update (so
      // together at most FLOOR of the budget above it, however many join at once).
      const newcomers = [...targets.keys()].filter((p) => !current.has(p)).sort();
      const among = current.size + newcomers.length;
      for (const producer of newcomers) {
        const grant = Math.min(targets.get(producer) as number, grantFrom(producer, now, among));
        current.set(producer, grant);
        const entries = history.get(producer) as Entry[];
        entries[entries.length - 1].value = grant;
      }
    },
    shareOf(producer, now) {
      return current.get(producer) ?? grantFrom(producer, now, current.size + 1);
    },
    inForce: () => current,
    grantable: () => left,
  };
};
