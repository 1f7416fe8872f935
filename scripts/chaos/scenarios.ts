/** Every scenario of `npm run chaos`, in the order they run (CHAOS_SCENARIOS=name,… picks some). */
import type { Scenario } from './harness';
import { brokerPause, topicDeleted } from './scenarios-kafka';
import { bigRecords, forgedHeaders, manyIds } from './scenarios-input';
import { poisonRecords, sharedChannel } from './scenarios-hostile';
import { brokerPauseRejoin, budgetChurn, rebalanceStoppedOwner } from './scenarios-rebalance';
import { flushall, redisPause } from './scenarios-redis';
import { sigkill, sigterm } from './scenarios-stop';

export const SCENARIOS: readonly Scenario[] = [
  sigterm, sigkill, flushall, redisPause, brokerPause, topicDeleted, manyIds, forgedHeaders, bigRecords, poisonRecords, sharedChannel,
  brokerPauseRejoin, rebalanceStoppedOwner, budgetChurn,
];
