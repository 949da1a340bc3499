DROP TABLE IF EXISTS sink_subscriptions;
DROP TABLE IF EXISTS sinks;
DROP TABLE IF EXISTS connections;
