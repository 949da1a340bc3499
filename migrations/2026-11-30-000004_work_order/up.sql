-- Instructions a routing rule attaches for the agent (queue action's work_order).
ALTER TABLE todos ADD COLUMN work_order text CHECK (octet_length(work_order) <= 4096);
