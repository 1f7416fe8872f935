/**
 * The per-producer usage history: counted in memory by each replica, written to Redis once a
 * second per producer at every resolution of `usage.resolutions`, read back per bucket.
 */
export { createUsageRecorder, type UsageRecorder, type UsageRecorderOptions } from './usage-recorder';
export { withUsage } from './usage-metrics';
export { readUsage, type ReadUsageOptions } from './read-usage';
export { createUsageQuery, type UsageAnswer, type UsageQuery } from './usage-query';
export { parseResolutions, findResolution, formatResolutions, type Resolution } from '../config/usage-resolutions';
export { USAGE_COUNTERS, type UsageCounter, type UsageCounts, type UsageRow } from './usage-counters';
