-- The text around the cursor (issue 41, [context]): what it did at typing ("joined", "as
-- heard", "not read: a password field", "unavailable: ..."), how long reading it took, and
-- whether the LLM was given the place the text goes ("sent", "not sent: why"). The text
-- itself is never stored. Null for rows from before, and where nothing was looked at.
ALTER TABLE dictations ADD COLUMN context TEXT;
ALTER TABLE dictations ADD COLUMN context_ms REAL;
ALTER TABLE dictations ADD COLUMN llm_context TEXT;
