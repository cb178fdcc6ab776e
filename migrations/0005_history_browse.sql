-- History browser (issue 5): newest-first keyset paging on (created_at_ms, id), optionally
-- filtered by app or outcome, walks an index with no sort step. Ascending indexes, walked
-- backwards, give `created_at_ms DESC, id DESC` (the rowid is the index's last column); the
-- DESC indexes of 0001/0003 sorted ties by ascending id and forced a temp B-tree, so they go.
DROP INDEX IF EXISTS dictations_created_at;
DROP INDEX IF EXISTS dictations_outcome;
DROP INDEX IF EXISTS dictations_llm_outcome;
CREATE INDEX dictations_created ON dictations (created_at_ms);
CREATE INDEX dictations_app_created ON dictations (app_class, created_at_ms);
CREATE INDEX dictations_outcome_created ON dictations (outcome, created_at_ms);
CREATE INDEX dictations_llm_outcome_created ON dictations (llm_outcome, created_at_ms);
