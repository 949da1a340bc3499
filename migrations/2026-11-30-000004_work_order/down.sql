ALTER TABLE todos DROP COLUMN work_order;
