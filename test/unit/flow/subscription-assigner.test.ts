import { assignBySubscription } from '../../../src/flow/subscription-assigner';

const partitions: Record<string, number[]> = { 'r.1s': [0, 1, 2], 'r.1m': [0, 1], dlq: [0, 1] };

describe('when members of retry.group subscribe to different topics', () => {
  it('gives each topic only to the members subscribed to it', () => {
    const result = assignBySubscription(
      new Map([
        ['sidecar-a', ['r.1s', 'r.1m']],
        ['sidecar-b', ['r.1s', 'r.1m']],
        ['drain', ['dlq']],
      ]),
      (t) => partitions[t],
    );
    expect(result.get('drain')).toEqual({ dlq: [0, 1] });
    const a = result.get('sidecar-a') as Record<string, number[]>;
    const b = result.get('sidecar-b') as Record<string, number[]>;
    expect([...(a['r.1s'] ?? []), ...(b['r.1s'] ?? [])].sort()).toEqual([0, 1, 2]);
    expect([...(a['r.1m'] ?? []), ...(b['r.1m'] ?? [])].sort()).toEqual([0, 1]);
  });

  it('assigns every partition exactly once when all share one subscription', () => {
    const result = assignBySubscription(new Map([['m1', ['r.1s']], ['m2', ['r.1s']]]), (t) => partitions[t]);
    expect([...result.values()].flatMap((a) => a['r.1s'] ?? []).sort()).toEqual([0, 1, 2]);
  });
});
