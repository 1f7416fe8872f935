export { loadConfig, type LoadConfigOptions } from './load-config';
export { maskUrl } from './redact';
export { settingsTable, settingsMarkdown, type SettingRow } from './settings-table';
export { parseDuration, formatDuration, parseByteSize } from './units';
export type { Config, RetryTier, HostPort, Mode, OnStoreError, LogLevel, SaslMechanism } from './types';
export { unknownEnvironment } from './unknown-environment';
