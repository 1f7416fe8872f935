import { parkTopicWarnings, createdTopicConfig, downstreamWarnings, parkTopicProblems } from '../../../src/topics/topic-requirements';

const good = { cleanupPolicy: 'delete', retentionMs: 604_800_000, maxMessageBytes: 1_049_612, timestampType: 'LogAppendTime' };

describe('when a retry tier or dead-letter topic is checked', () => {
  it('accepts delete cleanup, a long enough retention and room for sluice headers', () => {
    expect(parkTopicProblems(good, 1_048_588, 3_600_000)).toEqual([]);
    expect(parkTopicProblems({ ...good, retentionMs: -1 }, 1_048_588, 3_600_000)).toEqual([]);
  });

  it('names each problem with the value found and the value expected', () => {
    const problems = parkTopicProblems({ cleanupPolicy: 'compact,delete', retentionMs: 3_600_000, maxMessageBytes: 1_048_588, timestampType: 'CreateTime' }, 1_048_588, 3_600_000);
    expect(problems).toEqual([
      'cleanup.policy is "compact,delete", expected "delete"',
      'retention.ms is 3600000, expected more than the largest retry tier (3600000)',
      'max.message.bytes is 1048588, expected at least 1049612 (ingress\'s 1048588 plus 1024 for sluice\'s headers)',
    ]);
  });
});

describe('when the downstream topic takes smaller messages than ingress', () => {
  it('warns', () => {
    expect(downstreamWarnings({ ...good, maxMessageBytes: 1000 }, 2000)).toHaveLength(1);
    expect(downstreamWarnings(good, 2000)).toEqual([]);
  });
});

describe('when sluice creates a parking topic', () => {
  it('creates it so that it passes its own check, a tier with the broker\'s append time (no warning) and the dead-letter topic with the writer\'s', () => {
    for (const tier of [true, false]) {
      const entries = Object.fromEntries(createdTopicConfig(1_048_588, 3_600_000, { tier }).map((e) => [e.name, e.value]));
      const config = { cleanupPolicy: entries['cleanup.policy'], retentionMs: Number(entries['retention.ms']), maxMessageBytes: Number(entries['max.message.bytes']), timestampType: entries['message.timestamp.type'] ?? 'CreateTime' };
      expect(parkTopicProblems(config, 1_048_588, 3_600_000)).toEqual([]);
      expect(parkTopicWarnings(config)).toHaveLength(tier ? 0 : 1);
    }
  });
});
