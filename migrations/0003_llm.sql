-- LLM cleanup (issue 3): which backend and model ran, what came of it, and the server's own
-- timings. `outcome` stays about the dictation (ok / no_speech / error); the LLM's outcome is
-- its own column: 'cleaned' (guard accepted: text = the cleanup), 'rejected' (guard said no,
-- reason in llm_reject_reason: text = raw_text), 'failed' (timeout, refused connection, HTTP
-- error, malformed answer; message in llm_error: text = raw_text), 'disabled'.
ALTER TABLE dictations ADD COLUMN llm_backend TEXT;
ALTER TABLE dictations ADD COLUMN llm_model TEXT;
ALTER TABLE dictations ADD COLUMN llm_outcome TEXT
    CHECK (llm_outcome IS NULL OR llm_outcome IN ('cleaned', 'rejected', 'failed', 'disabled'));
ALTER TABLE dictations ADD COLUMN llm_reject_reason TEXT;
ALTER TABLE dictations ADD COLUMN llm_error TEXT;
ALTER TABLE dictations ADD COLUMN llm_prompt_eval_ms REAL;
ALTER TABLE dictations ADD COLUMN llm_eval_ms REAL;

CREATE INDEX dictations_llm_outcome ON dictations (llm_outcome);
