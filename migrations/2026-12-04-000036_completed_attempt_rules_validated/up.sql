-- Proves every stored row meets the rules migration `completed_attempt_on_the_row` added
-- NOT VALID. VALIDATE CONSTRAINT takes SHARE UPDATE EXCLUSIVE: claims, completions and
-- intake go on writing while the table is read.
ALTER TABLE todos VALIDATE CONSTRAINT todos_valid_2;
