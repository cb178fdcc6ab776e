-- Where a dictation's row is in its life (issue 39, store/row.rs): 0 started (pending),
-- 1 transcribed (raw words stored before typing), 2 cleaned (the finished row), 3 delivered
-- (typed, or ended before the stages). The one writer refuses an update of a lower state than
-- the row's, in the same transaction, so a late result never overwrites a delivered row.
-- Rows from before are 0: any update applies to them, as it did.
ALTER TABLE dictations ADD COLUMN row_state INTEGER NOT NULL DEFAULT 0;
