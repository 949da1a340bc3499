DROP TABLE agent_notify_calls;
