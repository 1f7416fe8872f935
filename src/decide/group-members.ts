/**
 * How many members the ingress group has now, refreshed every few seconds: the `local`
 * store-error fallback gives each replica quota ÷ members. Until the first answer (or when
 * the broker does not answer) the last known count stays, 1 at first.
 */
import type { Admin } from 'kafkajs';
import type { Logger } from 'pino';

export interface GroupMembers {
  count(): number;
  refresh(): Promise<void>;
  stop(): void;
}

export const watchGroupMembers = ({
  admin,
  group,
  logger,
  intervalMs = 5000,
}: {
  admin: Pick<Admin, 'describeGroups'>;
  group: string;
  logger: Logger;
  intervalMs?: number;
}): GroupMembers => {
  let members = 1;
  const refresh = async (): Promise<void> => {
    try {
      const { groups } = await admin.describeGroups([group]);
      const n = groups[0]?.members.length ?? 0;
      if (n > 0) members = n;
    } catch (error) {
      logger.debug({ err: error, group }, 'could not count the ingress group members; keeping the last count');
    }
  };
  const timer = setInterval(() => void refresh(), intervalMs);
  timer.unref();
  return { count: () => members, refresh, stop: () => clearInterval(timer) };
};
