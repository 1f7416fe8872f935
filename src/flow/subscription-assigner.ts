/**
 * The partition assigner of retry.group. kafkajs's round-robin assigner hands every member
 * the leader's subscription, so a `sluice drain --topic <dead-letter>` joining while sidecars
 * drain the tiers would get nothing (or take tier partitions it then drops). This one reads
 * every member's own subscription and spreads each topic's partitions round-robin over the
 * members that subscribed to it. The sidecar's drainer and `sluice drain` both use it.
 */
import { AssignerProtocol, type Assigner, type PartitionAssigner } from 'kafkajs';

export const ASSIGNER_NAME = 'SluiceSubscriptionRoundRobin';

/** Pure: members' subscriptions and each topic's partition ids → partitions per member. */
export const assignBySubscription = (
  subscriptions: ReadonlyMap<string, readonly string[]>,
  partitionsOf: (topic: string) => readonly number[],
): Map<string, Record<string, number[]>> => {
  const result = new Map<string, Record<string, number[]>>([...subscriptions.keys()].map((m) => [m, {}]));
  const topics = [...new Set([...subscriptions.values()].flat())].sort();
  let turn = 0;
  for (const topic of topics) {
    const members = [...subscriptions].filter(([, ts]) => ts.includes(topic)).map(([m]) => m).sort();
    for (const partition of [...partitionsOf(topic)].sort((a, b) => a - b)) {
      const member = members[turn++ % members.length];
      const assignment = result.get(member) as Record<string, number[]>;
      (assignment[topic] ??= []).push(partition);
    }
  }
  return result;
};

export const subscriptionAssigner: PartitionAssigner = ({ cluster }) => {
  const assigner: Assigner = {
    name: ASSIGNER_NAME,
    version: 0,
    async assign({ members }) {
      const subscriptions = new Map(
        members.map(({ memberId, memberMetadata }) => [memberId, AssignerProtocol.MemberMetadata.decode(memberMetadata)?.topics ?? []]),
      );
      await cluster.addMultipleTargetTopics([...new Set([...subscriptions.values()].flat())]);
      const partitionsOf = (topic: string): number[] => cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
      return [...assignBySubscription(subscriptions, partitionsOf)].map(([memberId, assignment]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: assigner.version, assignment, userData: Buffer.alloc(0) }),
      }));
    },
    protocol: ({ topics }) => ({
      name: ASSIGNER_NAME,
      metadata: AssignerProtocol.MemberMetadata.encode({ version: assigner.version, topics, userData: Buffer.alloc(0) }),
    }),
  };
  return assigner;
};
