/** The broker's configuration files (pure): server.properties and the logging config. */
import { usesLog4j2 } from './versions';

export interface BrokerPorts {
  port: number;
  controllerPort: number;
}

/** A single combined broker+controller node with a static quorum (works on 3.9 and 4.x). */
export const serverProperties = ({ port, controllerPort }: BrokerPorts, dataDir: string): string =>
  [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}`,
    'inter.broker.listener.name=PLAINTEXT',
    'controller.listener.names=CONTROLLER',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${dataDir}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'min.insync.replicas=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=1',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'transaction.state.log.num.partitions=1',
    'group.initial.rebalance.delay.ms=0',
    'log.cleaner.dedupe.buffer.size=2097152',
    'num.network.threads=2',
    'num.io.threads=4',
    '',
  ].join('\n');

/** Loggers kept at INFO: the line that says the server started, and the servers' own. */
const INFO_LOGGERS = ['kafka.server.KafkaRaftServer', 'kafka.server.BrokerServer', 'kafka.server.ControllerServer'];

const log4jProperties = (): string =>
  [
    'log4j.rootLogger=WARN, stdout',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
    ...INFO_LOGGERS.map((name) => `log4j.logger.${name}=INFO`),
    '',
  ].join('\n');

const log4j2Properties = (): string =>
  [
    'status = warn',
    'appender.stdout.type = Console',
    'appender.stdout.name = STDOUT',
    'appender.stdout.layout.type = PatternLayout',
    'appender.stdout.layout.pattern = [%d] %p %m (%c)%n',
    'rootLogger.level = WARN',
    'rootLogger.appenderRef.stdout.ref = STDOUT',
    ...INFO_LOGGERS.flatMap((name, i) => [`logger.l${i}.name = ${name}`, `logger.l${i}.level = INFO`]),
    '',
  ].join('\n');

/** The logging config file for `version` and the JVM option that points to it. */
export const loggingConfig = (version: string, file: (name: string) => string) => {
  if (usesLog4j2(version)) {
    const path = file('log4j2.properties');
    return { path, content: log4j2Properties(), jvmOption: `-Dlog4j2.configurationFile=${path}` };
  }
  const path = file('log4j.properties');
  return { path, content: log4jProperties(), jvmOption: `-Dlog4j.configuration=file:${path}` };
};
