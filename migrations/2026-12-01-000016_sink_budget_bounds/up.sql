-- A sink's own budget is bounded by the operator's settings
-- (SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR, SWITCHBOARD_SINK_BURST_MAX), checked by the
-- service; the table keeps only the hard ceilings those settings may reach.
ALTER TABLE sinks DROP CONSTRAINT sinks_budget_per_hour_check;
ALTER TABLE sinks DROP CONSTRAINT sinks_burst_check;
ALTER TABLE sinks ADD CONSTRAINT sinks_budget_per_hour_check CHECK (budget_per_hour BETWEEN 1 AND 3600000);
ALTER TABLE sinks ADD CONSTRAINT sinks_burst_check CHECK (burst BETWEEN 1 AND 100000);
