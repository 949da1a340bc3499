DROP TABLE IF EXISTS queue_deferrals;
DROP TABLE IF EXISTS queue_admission;
