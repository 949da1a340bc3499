ALTER TABLE sinks DROP CONSTRAINT sinks_budget_per_hour_check;
ALTER TABLE sinks DROP CONSTRAINT sinks_burst_check;
UPDATE sinks SET budget_per_hour = least(budget_per_hour, 3600), burst = least(burst, 100);
ALTER TABLE sinks ADD CONSTRAINT sinks_budget_per_hour_check CHECK (budget_per_hour BETWEEN 1 AND 3600);
ALTER TABLE sinks ADD CONSTRAINT sinks_burst_check CHECK (burst BETWEEN 1 AND 100);
