/**
 * Every key sluice writes has a TTL, so under a volatile-* policy (and any allkeys-* one)
 * Redis may evict a producer's bucket when memory runs short: the producer's backlog is
 * forgotten and it may send at full rate again. Checked once at start: a warning unless every
 * master answers maxmemory-policy = noeviction. Managed Redis often refuses CONFIG: then the
 * check says so at debug and start-up goes on.
 */
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '../logger';

const policyOf = async (node: Redis): Promise<string> => {
  const reply = (await node.config('GET', 'maxmemory-policy')) as unknown as string[];
  const value = reply[1];
  if (typeof value !== 'string') throw new Error(`CONFIG GET maxmemory-policy answered ${JSON.stringify(reply)}`);
  return value;
};

const nodesOf = (redis: Redis | Cluster): Redis[] => ('nodes' in redis ? redis.nodes('master') : [redis]);

/** Resolves with the policy of each master (undefined when Redis refused to say); never throws. */
export const checkEvictionPolicy = async (redis: Redis | Cluster, logger: Logger): Promise<string[] | undefined> => {
  let policies: string[];
  try {
    policies = await Promise.all(nodesOf(redis).map(policyOf));
  } catch (error) {
    logger.debug({ err: error }, 'could not read Redis maxmemory-policy (CONFIG GET refused?); make sure it is noeviction');
    return undefined;
  }
  const evicting = [...new Set(policies.filter((policy) => policy !== 'noeviction'))];
  if (evicting.length > 0) {
    logger.warn(
      { maxmemoryPolicy: evicting },
      `Redis maxmemory-policy is ${evicting.join(', ')}: every sluice key has a TTL, so Redis may evict producers' buckets when memory runs short and forget their backlog; set maxmemory-policy noeviction`,
    );
  }
  return policies;
};
